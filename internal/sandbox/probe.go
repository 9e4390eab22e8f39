package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/crash"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dns"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// Probe is one real probe and the trace it is compared with.
type Probe struct {
	Proto trace.Proto
	// DNS is set for a DNS query (Name to Server:53 over UDP).
	DNS bool
	// FromNS is the namespace the probe runs in; From is the trace
	// source (pod/NS/NAME or node/NAME).
	FromNS string
	From   string
	// To is the trace destination (pod/NS/NAME, node/NAME, svc/NS/NAME,
	// an address, a DNS name); Addr:Port is what the probe sends to.
	To   string
	Addr string
	Port int
	// Name and Server are a DNS probe's question and nameserver.
	Name   string
	Server string
}

func (p Probe) String() string {
	switch {
	case p.DNS:
		return fmt.Sprintf("dns %s → %s (nameserver %s)", p.From, p.Name, p.Server)
	case p.Proto == trace.ICMP:
		return fmt.Sprintf("ping %s → %s (%s)", p.From, p.To, p.Addr)
	}
	return fmt.Sprintf("%s %s → %s (%s:%d)", p.Proto, p.From, p.To, p.Addr, p.Port)
}

// StandIns are the nodes the plan plays by stand-ins.
func (p *Plan) StandIns() map[string]bool {
	out := map[string]bool{}
	for _, n := range p.Namespaces {
		if n.Kind == KindStandIn {
			out[n.Node] = true
		}
	}
	return out
}

// ProbeOptions choose how many probes test sends.
type ProbeOptions struct {
	// AllSources sends from every pod, not one pod per Linux node.
	AllSources bool
	// Max bounds the probes: beyond it an even sample of each kind (ping,
	// pod port, Service, NodePort, DNS) is kept; 0 means no bound.
	Max int
}

// DefaultMaxProbes keeps a test of a large cluster within minutes.
const DefaultMaxProbes = 400

// Probes chooses what test sends: from one pod of every Linux node (every
// pod with AllSources) and from every Linux node, ICMP to every pod and
// Linux node; from the pods, TCP and UDP to every served pod port, every
// Service port through its ClusterIP, every NodePort on every Linux node,
// and an A query for every Service name to the pod's nameserver. The
// second result is how many there were before sampling.
func Probes(p *Plan, c *model.Cluster, o ProbeOptions) ([]Probe, int) {
	var srcPods, nodes, dstPods []Namespace
	// One source per node: its first workload pod, else its first pod.
	srcOn := map[string]int{}
	for _, n := range p.Namespaces {
		switch n.Kind {
		case KindNode:
			nodes = append(nodes, n)
		case KindPod:
			i, ok := srcOn[n.Node]
			switch {
			case o.AllSources:
				srcPods = append(srcPods, n)
			case !ok:
				srcOn[n.Node] = len(srcPods)
				srcPods = append(srcPods, n)
			case systemNamespace(srcPods[i].Pod) && !systemNamespace(n.Pod):
				srcPods[i] = n
			}
			dstPods = append(dstPods, n)
		case KindStandInPod:
			dstPods = append(dstPods, n)
		}
	}
	ref := func(n Namespace) string {
		if n.Pod != "" {
			return "pod/" + n.Pod
		}
		return "node/" + n.Node
	}
	var out []Probe
	for _, src := range append(append([]Namespace(nil), srcPods...), nodes...) {
		for _, dst := range append(append([]Namespace(nil), dstPods...), nodes...) {
			if dst.Name == src.Name {
				continue
			}
			out = append(out, Probe{Proto: trace.ICMP, FromNS: src.Name, From: ref(src), To: ref(dst), Addr: dst.Addr.String()})
		}
	}
	served := map[string]Server{}
	for _, s := range p.Servers {
		served[s.Namespace] = s
	}
	for _, src := range srcPods {
		for _, dst := range dstPods {
			if dst.Name == src.Name {
				continue
			}
			s := served[dst.Name]
			for _, port := range s.TCP {
				out = append(out, Probe{Proto: trace.TCP, FromNS: src.Name, From: ref(src), To: ref(dst), Addr: dst.Addr.String(), Port: port})
			}
			for _, port := range s.UDP {
				out = append(out, Probe{Proto: trace.UDP, FromNS: src.Name, From: ref(src), To: ref(dst), Addr: dst.Addr.String(), Port: port})
			}
		}
	}
	// A Service is probed only when the sandbox plays every endpoint the
	// kernel's DNAT may pick.
	played := map[string]bool{}
	for _, n := range p.Namespaces {
		if n.Addr.IsValid() {
			played[n.Addr.String()] = true
		}
	}
	incomplete := map[string]bool{}
	for _, sl := range c.EndpointSlices {
		svc := sl.Namespace + "/" + sl.Labels["kubernetes.io/service-name"]
		for _, ep := range sl.Endpoints {
			for _, a := range ep.Addresses {
				if !played[a] {
					incomplete[svc] = true
				}
			}
		}
	}
	byClusterIP := map[string]string{}
	for _, svc := range c.Services {
		byClusterIP[svc.Spec.ClusterIP] = svc.Namespace + "/" + svc.Name
	}
	svcs := append([]*corev1.Service(nil), c.Services...)
	sort.Slice(svcs, func(i, j int) bool {
		return svcs[i].Namespace+"/"+svcs[i].Name < svcs[j].Namespace+"/"+svcs[j].Name
	})
	for _, src := range srcPods {
		for _, svc := range svcs {
			ip := svc.Spec.ClusterIP
			key := svc.Namespace + "/" + svc.Name
			if ip == "" || ip == corev1.ClusterIPNone || incomplete[key] {
				continue
			}
			for _, sp := range svc.Spec.Ports {
				proto := trace.Proto(strings.ToLower(string(orTCP(sp.Protocol))))
				if proto != trace.TCP && proto != trace.UDP {
					continue
				}
				out = append(out, Probe{Proto: proto, FromNS: src.Name, From: ref(src), To: "svc/" + svc.Namespace + "/" + svc.Name, Addr: ip, Port: int(sp.Port)})
				if sp.NodePort == 0 {
					continue
				}
				for _, n := range nodes {
					out = append(out, Probe{Proto: proto, FromNS: src.Name, From: ref(src), To: n.Addr.String(), Addr: n.Addr.String(), Port: int(sp.NodePort)})
				}
			}
		}
		if len(p.Zone) == 0 {
			continue
		}
		ns, name, _ := strings.Cut(strings.TrimPrefix(ref(src), "pod/"), "/")
		srcDNS, ok := dns.FindPod(c, ns, name)
		if !ok {
			continue
		}
		cfg, err := dns.ConfigFor(c, srcDNS)
		if err != nil || len(cfg.Nameservers) == 0 || incomplete[byClusterIP[cfg.Nameservers[0]]] {
			continue
		}
		for _, z := range p.Zone {
			out = append(out, Probe{Proto: trace.UDP, DNS: true, FromNS: src.Name, From: ref(src), To: z.Name, Name: z.Name, Server: cfg.Nameservers[0]})
		}
	}
	return sample(out, o.Max), len(out)
}

// sample keeps at most max probes, an even share of each kind taken at an
// even stride, in the original order.
func sample(ps []Probe, max int) []Probe {
	if max <= 0 || len(ps) <= max {
		return ps
	}
	kind := func(p Probe) string {
		switch {
		case p.DNS:
			return "dns"
		case p.Proto == trace.ICMP:
			return "icmp"
		case strings.HasPrefix(p.To, "svc/"):
			return "svc"
		case strings.HasPrefix(p.To, "pod/"):
			return "pod"
		}
		return "nodeport"
	}
	byKind := map[string][]int{}
	var kinds []string
	for i, p := range ps {
		k := kind(p)
		if byKind[k] == nil {
			kinds = append(kinds, k)
		}
		byKind[k] = append(byKind[k], i)
	}
	keep := make([]bool, len(ps))
	share := max / len(kinds)
	for _, k := range kinds {
		idx := byKind[k]
		n := min(share, len(idx))
		for j := 0; j < n; j++ {
			keep[idx[j*len(idx)/n]] = true
		}
	}
	var out []Probe
	for i, p := range ps {
		if keep[i] {
			out = append(out, p)
		}
	}
	return out
}

// systemNamespace says whether a pod (namespace/name) belongs to the
// cluster's own components rather than to a workload.
func systemNamespace(pod string) bool {
	ns, _, _ := strings.Cut(pod, "/")
	return ns == "kube-system" || ns == "calico-system" || ns == "tigera-operator" || ns == "calico-apiserver"
}

func orTCP(p corev1.Protocol) corev1.Protocol {
	if p == "" {
		return corev1.ProtocolTCP
	}
	return p
}

// Real is what a probe saw on the real kernel.
type Real struct {
	Delivered bool
	// Outcome is the client's word: delivered, refused, timeout,
	// unreachable.
	Outcome string
	// TTL is the echo reply's TTL (ICMP).
	TTL int
	// Answerer is who replied ("pod ns/name", "node NAME").
	Answerer string
	// Addrs are a DNS answer's addresses; Rcode its code.
	Addrs []string
	Rcode int
	Err   string
}

// Runner runs probes inside the sandbox's namespaces.
type Runner struct {
	// Self is the kubectl-hybrid binary (sandbox probe); os.Executable
	// when empty.
	Self string
}

var ttlRE = regexp.MustCompile(`ttl=(\d+)`)

// Run sends one probe.
func (r *Runner) Run(p Probe) Real {
	if p.Proto == trace.ICMP && !p.DNS {
		out, err := exec.Command("ip", "netns", "exec", p.FromNS, "ping", "-n", "-c", "1", "-W", "1", p.Addr).CombinedOutput()
		real := Real{Delivered: err == nil, Outcome: OutDelivered}
		if err != nil {
			real.Outcome, real.Err = OutTimeout, strings.TrimSpace(lastLine(string(out)))
		}
		if m := ttlRE.FindStringSubmatch(string(out)); m != nil {
			real.TTL, _ = strconv.Atoi(m[1])
		}
		return real
	}
	self := r.Self
	if self == "" {
		self, _ = os.Executable()
	}
	argv := []string{"ip", "netns", "exec", p.FromNS, self, "sandbox", "probe"}
	switch {
	case p.DNS:
		argv = append(argv, "dns", p.Server+":53", p.Name)
	default:
		argv = append(argv, string(p.Proto), p.Addr+":"+strconv.Itoa(p.Port))
	}
	out, err := exec.Command(argv[0], argv[1:]...).Output()
	var pr ProbeResult
	if err != nil || json.Unmarshal(out, &pr) != nil {
		return Real{Outcome: "error", Err: fmt.Sprintf("%s: %v", shellJoin(argv), err)}
	}
	real := Real{Delivered: pr.Outcome == OutDelivered, Outcome: pr.Outcome, Addrs: pr.Addrs, Rcode: pr.Rcode, Err: pr.Error}
	if pr.Reply != "" {
		real.Answerer, _, _ = strings.Cut(pr.Reply, " from ")
	}
	return real
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, "\n"); i >= 0 {
		return s[i+1:]
	}
	return s
}

// Result is one probe compared with trace.
type Result struct {
	Probe Probe
	Real  Real
	// Twin is trace's answer in a few words; Agree whether they match;
	// Why says where they differ.
	Twin  string
	Agree bool
	Why   string
	// Skipped says why the probe is not compared: trace cannot say, or
	// the outcome is decided on a Windows node, which a stand-in does not
	// play (HNS, VFP, the Windows host).
	Skipped string
}

// Tracer is what RunProbes asks: trace.Engine.
type Tracer interface {
	ParseSource(s, ns string) (trace.Source, error)
	ParseTarget(s, ns string) (trace.Target, error)
	Trace(src trace.Source, dst trace.Target, proto trace.Proto, port int) *trace.Result
}

// RunProbes sends every probe (a few at once: most wait for a reply) and
// compares each with trace. standIns are the nodes played by stand-ins.
func RunProbes(ps []Probe, e Tracer, r *Runner, standIns map[string]bool) []Result {
	return RunProbesContext(context.Background(), ps, e, r, standIns)
}

// RunProbesContext is RunProbes that sends no more probes once ctx is
// done; the probes not sent are left out of the results.
func RunProbesContext(ctx context.Context, ps []Probe, e Tracer, r *Runner, standIns map[string]bool) []Result {
	return runProbes(ctx, ps, e, r.Run, standIns)
}

// runProbes is RunProbesContext with the probes sent by run. A panic in
// a worker is raised again here once the workers end (internal/crash),
// so that the command reports it rather than the process dying.
func runProbes(ctx context.Context, ps []Probe, e Tracer, run func(Probe) Real, standIns map[string]bool) []Result {
	reals := make([]Real, len(ps))
	sent := make([]bool, len(ps))
	work := make(chan int)
	var wg sync.WaitGroup
	var crashed crash.Group
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A worker that panicked still takes its share of the probes,
			// unsent, so that the sender never blocks.
			defer func() {
				for range work {
				}
			}()
			defer crashed.Recover()
			for i := range work {
				if ctx.Err() == nil {
					reals[i], sent[i] = run(ps[i]), true
				}
			}
		}()
	}
	for i := range ps {
		work <- i
	}
	close(work)
	wg.Wait()
	crashed.Repanic()
	out := make([]Result, 0, len(ps))
	for i, p := range ps {
		if sent[i] {
			out = append(out, Compare(p, reals[i], twinOf(e, p), standIns))
		}
	}
	return out
}

func twinOf(e Tracer, p Probe) *trace.Result {
	src, err := e.ParseSource(p.From, "default")
	if err != nil {
		return &trace.Result{Outcome: trace.NotModeled, Reason: err.Error()}
	}
	dst, err := e.ParseTarget(p.To, "default")
	if err != nil {
		return &trace.Result{Outcome: trace.NotModeled, Reason: err.Error()}
	}
	return e.Trace(src, dst, p.Proto, p.Port)
}

// Compare sets a real probe against trace: delivered or not; for ICMP the
// reply's TTL; for a Service the answering backend among trace's
// candidates (the one candidate when trace pins it); for DNS the address.
func Compare(p Probe, real Real, tw *trace.Result, standIns map[string]bool) Result {
	res := Result{Probe: p, Real: real, Agree: true}
	res.Twin = string(tw.Outcome)
	switch {
	case tw.Outcome == trace.NotModeled:
		res.Skipped = "trace cannot say: " + tw.Reason
		return res
	case !tw.Delivered && standIns[tw.AtNode]:
		res.Twin += " at " + tw.AtNode + " by " + tw.AtComp
		res.Skipped = "decided on the Windows node " + tw.AtNode + " (" + tw.Reason + "), which its stand-in does not play"
		return res
	}
	var why []string
	if p.DNS {
		twinAddr := tw.Resolved
		res.Twin = "resolves to " + orStr(twinAddr, "nothing")
		realAddr := ""
		if real.Delivered && real.Rcode == 0 && len(real.Addrs) > 0 {
			realAddr = real.Addrs[0]
		}
		if realAddr != twinAddr {
			why = append(why, fmt.Sprintf("the real answer is %s, trace resolves %s", orStr(realAddr, "none"), orStr(twinAddr, "nothing")))
		}
	} else {
		if real.Delivered != tw.Delivered {
			why = append(why, fmt.Sprintf("real %s, trace %s (%s)", real.Outcome, tw.Outcome, tw.Reason))
		}
		if p.Proto == trace.ICMP && real.Delivered && tw.Delivered && tw.ReplyTTL > 0 {
			res.Twin += fmt.Sprintf(" ttl=%d", tw.ReplyTTL)
			if real.TTL != tw.ReplyTTL {
				why = append(why, fmt.Sprintf("reply ttl real %d, trace %d", real.TTL, tw.ReplyTTL))
			}
		}
		if real.Delivered && tw.Delivered && p.Proto != trace.ICMP {
			if want := candidates(p, tw); len(want) > 0 {
				res.Twin += " by " + strings.Join(want, " or ")
				if !contains(want, real.Answerer) {
					why = append(why, fmt.Sprintf("answered by %s, trace has %s", real.Answerer, strings.Join(want, " or ")))
				}
			}
		}
	}
	if len(why) > 0 {
		res.Agree, res.Why = false, strings.Join(why, "; ")
	}
	return res
}

// candidates are who may answer as the servers name themselves: the
// Service translation's candidates, else the destination pod.
func candidates(p Probe, tw *trace.Result) []string {
	var out []string
	for _, t := range tw.Translations {
		for _, b := range t.Candidates {
			switch {
			case b.Pod != "":
				out = append(out, "pod "+b.Pod)
			case b.Node != "":
				out = append(out, "node "+b.Node)
			}
		}
	}
	if len(out) == 0 && strings.HasPrefix(p.To, "pod/") {
		out = append(out, "pod "+strings.TrimPrefix(p.To, "pod/"))
	}
	return out
}

// WriteResults prints each disagreement with both sides (with all, each
// agreement too), then the count.
func WriteResults(w io.Writer, rs []Result, all bool) error {
	var b strings.Builder
	agree, compared := 0, 0
	var skipped []Result
	for _, r := range rs {
		if r.Skipped != "" {
			skipped = append(skipped, r)
			continue
		}
		compared++
		word := "DISAGREE"
		if r.Agree {
			agree++
			if !all {
				continue
			}
			word = "agree"
		}
		fmt.Fprintf(&b, "%s %s\n  real:  %s", word, r.Probe, r.Real.Outcome)
		if r.Real.TTL > 0 {
			fmt.Fprintf(&b, " ttl=%d", r.Real.TTL)
		}
		if r.Real.Answerer != "" {
			fmt.Fprintf(&b, " by %s", r.Real.Answerer)
		}
		if len(r.Real.Addrs) > 0 {
			fmt.Fprintf(&b, " %s", strings.Join(r.Real.Addrs, ","))
		}
		if r.Real.Err != "" {
			fmt.Fprintf(&b, " (%s)", r.Real.Err)
		}
		fmt.Fprintf(&b, "\n  trace: %s\n", r.Twin)
		if r.Why != "" {
			fmt.Fprintf(&b, "  why:   %s\n", r.Why)
		}
	}
	for _, r := range skipped {
		fmt.Fprintf(&b, "NOT COMPARED %s\n  real:  %s\n  trace: %s\n  why:   %s\n", r.Probe, r.Real.Outcome, r.Twin, r.Skipped)
	}
	if len(skipped) > 0 {
		fmt.Fprintf(&b, "sandbox: %d probes not compared (above)\n", len(skipped))
	}
	fmt.Fprintf(&b, "sandbox: %d/%d probes agree\n", agree, compared)
	_, err := io.WriteString(w, b.String())
	return err
}
