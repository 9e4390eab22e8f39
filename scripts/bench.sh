#!/usr/bin/env bash
# scripts/bench.sh: the scale benchmark ladder of kubectl-hybrid.
#
# Generates clusters with internal/gen (the `gen` command's generator) and
# measures, per rung, each stage's time, CPU time, allocations and peak heap,
# and its CPU time over that of decoding the same input (x decode):
#
#   Load         load.Load of the generated directory, as -f DIR does
#   Generate     writing the directory (gen --output-dir)
#   Build        engine.Build of the loaded snapshot
#   GetPods      printing every pod (get pods -A -o wide) of the built twin
#   Compile      linux.Compile and windows.Compile of every node, holding
#                every result (kube-proxy's model once, each node's plan)
#   CompileEach  the same compilation, Windows nodes one at a time
#   RenderEach   every Windows node compiled and all its HNS objects and
#                VFP ports made, one node at a time (dump input): the size
#                of what every Windows node's HNS holds
#   Check        every rule of check on the built twin
#   Trace        one trace (parse source and target, walk): the median of
#                101 different traces, after trace.New
#   Reach        reach -A over the whole cluster (dump input), after
#                trace.New
#
# Each rung N has N nodes (10% Windows), 30*N pods, 2*N Services, 0.4*N
# NetworkPolicies and N/10 namespaces: 5000 is Kubernetes' documented limit
# (150,000 pods, 10,000 Services, 2,000 policies). Inputs: "dump" (Node
# objects and observed pods, as a live cluster's dump), "hosts" (the Cluster
# kind with observed pods) and "scheduled" (controllers only: the twin
# schedules and addresses every pod); hosts and scheduled up to
# HYBRID_BENCH_QUADRATIC_MAX nodes (default 5000).
#
# Usage: scripts/bench.sh [NODES...]          default: 100 1000
#   BENCH_OUT=FILE      also write the table to FILE (it always goes to stdout;
#                       progress and raw go test output go to stderr)
#   BENCH_TIME=Nx       -benchtime per rung (default 1x)
#   BENCH_STAGES=RE     only the stages matching RE (go test -bench; default .)
#   BENCH_PROFILE=DIR   write a CPU profile per rung to DIR and print the
#                       top functions of each (go tool pprof -top)
#
# Each rung runs in its own test process, so peak heaps do not mix. It needs
# only Go and a checkout: go test -c builds the benchmark binary.
set -euo pipefail
cd "$(dirname "$0")/.."

rungs=("$@")
[ ${#rungs[@]} -gt 0 ] || rungs=(100 1000)
out=${BENCH_OUT:-}
benchtime=${BENCH_TIME:-1x}
stages=${BENCH_STAGES:-.}
profile=${BENCH_PROFILE:-}
[ -z "$profile" ] || profile=$(realpath -m "$profile")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

go test -c -o "$work/gen.test" ./internal/gen

cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || true)
mem=$(free -h 2>/dev/null | awk '/^Mem:/ {print $2}' || true)
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if git rev-parse --git-dir >/dev/null 2>&1 && ! git diff --quiet HEAD 2>/dev/null; then
	commit="$commit, with local changes"
fi
{
	echo "# kubectl-hybrid scale benchmarks"
	echo
	echo "Machine: ${cpu:-unknown CPU}, $(nproc) CPUs, ${mem:-?} RAM; $(go version | cut -d' ' -f3-); $(date -u +%Y-%m-%d)."
	echo "Command: scripts/bench.sh ${rungs[*]} (benchtime $benchtime, stages $stages); commit $commit."
	echo
	echo "Load average before the run: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown). Time is wall clock; CPU is the process's user+system time (GC workers included), which other load on the machine inflates less. Trace rows are per trace: the median time of 101 traces, their mean CPU and allocations."
	echo
	echo "| stage | nodes | pods | services | policies | input | time | CPU | MB/s | allocated | allocs | peak heap | x decode |"
	echo "|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|"
} >"$work/table.md"

for n in "${rungs[@]}"; do
	args=(-test.run '^$' -test.bench "$stages" -test.benchtime "$benchtime" -test.count 1)
	if [ -n "$profile" ]; then
		mkdir -p "$profile"
		args+=(-test.cpuprofile "$profile/rung-$n.cpu")
	fi
	echo "rung $n nodes..." >&2
	start=$(date +%s)
	(cd "$work" && HYBRID_BENCH_NODES=$n ./gen.test "${args[@]}") | tee "$work/raw-$n.txt" >&2
	echo "rung $n nodes: $(($(date +%s) - start)) s, load average now $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)" >&2
	awk '
		function dur(t) { return (t >= 1) ? sprintf("%.2f s", t) : (t >= 0.001 ? sprintf("%.1f ms", t * 1000) : sprintf("%.0f µs", t * 1e6)) }
		/^Benchmark/ {
			name = $1; sub(/^Benchmark/, "", name); sub(/-[0-9]+$/, "", name)
			split(name, part, "/")
			stage = part[1]; nodes = part[2]; pods = part[3]; input = part[4]
			sub(/^nodes=/, "", nodes); sub(/^pods=/, "", pods)
			delete v
			for (i = 3; i < NF; i += 2) v[$(i + 1)] = $i
			mbs = ("MB/s" in v) ? v["MB/s"] : ""
			alloc = (v["B/op"] >= 1048576) ? sprintf("%.0f MB", v["B/op"] / 1048576) : sprintf("%.0f kB", v["B/op"] / 1024)
			allocs = (v["allocs/op"] >= 1e5) ? sprintf("%.1fM", v["allocs/op"] / 1e6) : sprintf("%.0f", v["allocs/op"])
			printf "| %s | %s | %s | %d | %d | %s | %s | %s | %s | %s | %s | %.0f MB | %.3g |\n", stage, nodes, pods, v["services"], v["policies"], input,
				dur(v["ns/op"] / 1e9), dur(v["cpu-ms/op"] / 1000), mbs, alloc, allocs, v["peak-heap-MB"], v["x-decode"]
		}
	' "$work/raw-$n.txt" >>"$work/table.md"
	if [ -n "$profile" ]; then
		go tool pprof -top -nodecount 25 "$work/gen.test" "$profile/rung-$n.cpu" >"$profile/rung-$n.top.txt" 2>/dev/null || true
		go tool pprof -top -cum -nodecount 80 "$work/gen.test" "$profile/rung-$n.cpu" 2>/dev/null |
			grep -E 'kubectl-hybrid|flat%' >"$profile/rung-$n.cum.txt" || true
		cp "$work/gen.test" "$profile/gen.test"
	fi
done

if [ -n "$out" ]; then
	cp "$work/table.md" "$out"
	echo "table written to $out" >&2
fi
cat "$work/table.md"
