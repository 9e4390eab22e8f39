#!/usr/bin/env bash
# scripts/check-floor.sh: `check` as a whole process against the decode floor.
#
# Generates, with `kubectl-hybrid gen -o json`, the two inputs of the
# benchmark ladder's rung N (N nodes, 10% Windows, 30*N pods, 2*N Services,
# 0.4*N NetworkPolicies, N/10 namespaces) as one JSON List each:
#
#   scheduled  controllers only: the twin schedules and addresses every pod
#   dump       Node objects and every pod observed with its node and address
#              (--observed-ips), as a dump of a live cluster
#
# and times, on each, in turns: Python's json.load of the file (the floor any
# reader of the file pays), `kubectl-hybrid check -f FILE` of this checkout,
# and, with CHECK_FLOOR_BASE=COMMIT, check of that commit too (its binary
# built from `git archive`), so that both are measured under the same load.
# /usr/bin/time gives each process's wall time, CPU time (user+system) and
# peak RSS. The table has the median of the rounds and the ratios the target
# of issue 20 reads: check's time over json.load's (target: at most 3x) and
# check's peak RSS against 2.5x the input size plus 100 MiB.
#
# Usage: scripts/check-floor.sh [NODES]          default: 1000
#   CHECK_FLOOR_ROUNDS=N    rounds per input (default 3)
#   CHECK_FLOOR_BASE=COMMIT also measure check at COMMIT
#   CHECK_FLOOR_OUT=FILE    also write the table to FILE
#
# Needs Go, python3, GNU time (/usr/bin/time) and a checkout.
set -euo pipefail
cd "$(dirname "$0")/.."

nodes=${1:-1000}
rounds=${CHECK_FLOOR_ROUNDS:-3}
base=${CHECK_FLOOR_BASE:-}
out=${CHECK_FLOOR_OUT:-}
work=$(mktemp -d)
trap '[ -n "${CHECK_FLOOR_KEEP:-}" ] || rm -rf "$work"' EXIT

for tool in python3 /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "check-floor: $tool is needed" >&2; exit 2; }
done

# The commit the binary is built from, before anything can move on.
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if ! git diff --quiet HEAD 2>/dev/null; then
	commit="$commit, with local changes"
fi
go build -o "$work/new" ./cmd/kubectl-hybrid
bins=(new)
if [ -n "$base" ]; then
	mkdir "$work/base-src"
	git archive "$base" | tar -x -C "$work/base-src"
	(cd "$work/base-src" && go build -o "$work/base" ./cmd/kubectl-hybrid)
	bins=(base new)
fi

gen=(--nodes "$nodes" --windows-nodes $((nodes / 10)) --namespaces $((nodes > 10 ? nodes / 10 : 1))
	--pods $((30 * nodes)) --services $((2 * nodes)) --policies $((2 * nodes / 5)) -o json)
"$work/new" gen "${gen[@]}" >"$work/scheduled.json"
"$work/new" gen "${gen[@]}" --observed-ips >"$work/dump.json"

# measure NAME INPUT CMD...: one run, appended to $work/runs as
# "name input wall cpu maxrss-kB exit".
measure() {
	local name=$1 input=$2
	shift 2
	local rc=0
	/usr/bin/time -f '%e %U %S %M' -o "$work/time" "$@" >/dev/null 2>"$work/stderr" || rc=$?
	if [ "$rc" -gt 1 ]; then
		echo "check-floor: $name on $input exited $rc:" >&2
		cat "$work/stderr" >&2
		exit 1
	fi
	# GNU time puts "Command exited with non-zero status N" first.
	read -r wall user sys rss < <(tail -n 1 "$work/time")
	echo "$name $input $wall $(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }') $rss $rc" >>"$work/runs"
}

: >"$work/runs"
for r in $(seq "$rounds"); do
	for input in scheduled dump; do
		f="$work/$input.json"
		echo "round $r: $input" >&2
		measure json.load "$input" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$f"
		for b in "${bins[@]}"; do
			measure "check-$b" "$input" "$work/$b" check -f "$f"
		done
	done
done

{
	echo "Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) CPUs, $(free -h | awk '/^Mem:/ {print $2}') RAM; $(go version | cut -d' ' -f3-); $(date -u '+%Y-%m-%d %H:%M UTC')."
	echo "Command: scripts/check-floor.sh $nodes (rounds $rounds${base:+, base $base}); commit $commit; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
	echo
	echo "| process | input | size | wall | CPU | peak RSS | wall / json.load | CPU / json.load | RSS / (2.5 size + 100 MiB) |"
	echo "|---|---|--:|--:|--:|--:|--:|--:|--:|"
	for input in scheduled dump; do
		size=$(stat -c %s "$work/$input.json")
		for name in json.load $(printf 'check-%s ' "${bins[@]}"); do
			awk -v name="$name" -v input="$input" -v size="$size" -v runs="$work/runs" '
				function median(a, n,   i, j, t) {
					for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
					return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
				}
				$1 == "json.load" && $2 == input { fw[++nf] = $3; fc[nf] = $4 }
				$1 == name && $2 == input { w[++n] = $3; c[n] = $4; m[n] = $5 }
				END {
					fwall = median(fw, nf); fcpu = median(fc, nf)
					wall = median(w, n); cpu = median(c, n); rss = median(m, n) * 1024
					limit = 2.5 * size + 100 * 1048576
					printf "| %s | %s | %.1f MiB | %.2f s | %.2f s | %.0f MiB | %.1fx | %.1fx | %.2f |\n",
						name, input, size / 1048576, wall, cpu, rss / 1048576, wall / fwall, cpu / fcpu, rss / limit
				}' "$work/runs"
		done
	done
	echo
	echo "Each figure is the median of $rounds runs; check's exit code was 0 or 1 (findings) in every run."
} >"$work/table.md"

[ -z "$out" ] || cp "$work/table.md" "$out"
cat "$work/table.md"
[ -z "${CHECK_FLOOR_KEEP:-}" ] || echo "runs: $work/runs" >&2
