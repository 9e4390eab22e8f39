package console

import (
	"fmt"
	"io"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"text/template"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// A Script is a verification: commands run on targets of the twin, each
// with the properties its answer must have. Commands, headings and
// expectations are text/template texts whose functions read the twin
// (podOf, clusterIP), so an address is never written into the
// script: a what-if that moves a pod or a Service moves the commands that
// reach it.
type Script struct {
	Title string
	Steps []Step
}

// A Step is one command and what it must show.
type Step struct {
	// Heading starts a group of steps (printed after a blank line).
	Heading string
	// Prompt is the command line as the user types it, printed after "$ ".
	Prompt string
	Target Target
	// Run: the target pod is the one `kubectl run` creates for the step
	// (see RunPods).
	Run *RunPod
	// Argv is the command; a Probe step has none.
	Argv []string
	// Filters run in the user's own shell on kubectl's output (`| tail -3`).
	Filters []string
	// Probe walks one connection without a tool: there is no transcript,
	// only whether the twin delivers it.
	Probe *Probe
	// After is printed after the output; it may use .Node and .Addr, where
	// the target runs.
	After []string
	// TTLTo explains the TTL of a ping reply from this address, and checks
	// that the TTL the command printed is the responder's initial TTL less
	// one for each routing step of the walk back.
	TTLTo  string
	Expect Expect
}

// RunPod is the pod `kubectl run -i --rm NAME --image=IMAGE --restart=Never
// -- ARGV...` creates for a step.
type RunPod struct {
	Name  string
	Image string
}

// Probe is a connection from the target to an address.
type Probe struct {
	// What names the probe in the verdict.
	What  string
	Proto trace.Proto
	Dst   string
	Port  int
}

// Expect is what a step's answer must be.
type Expect struct {
	// Fail: the step is there to show a failure (a non-zero exit, a
	// connection not delivered).
	Fail bool
	// Holds are texts the output must contain.
	Holds []string
}

// funcs are the template functions that read the twin.
func funcs(tw Twin) template.FuncMap {
	return template.FuncMap{
		// podOf is the address of the Deployment's running pod on a node.
		"podOf": func(ns, name, node string) (string, error) {
			e, err := tw.Engine()
			if err != nil {
				return "", err
			}
			pods, _ := e.DeploymentPods(ns, name)
			for _, p := range pods {
				if p.Spec.NodeName == node && p.Status.Phase == corev1.PodRunning {
					return podIP(p)
				}
			}
			return "", fmt.Errorf("no running pod of deployment %s/%s on node %s", ns, name, node)
		},
		// clusterIP is a Service's virtual address.
		"clusterIP": func(ns, name string) (string, error) {
			for _, s := range tw.Cluster().Services {
				if s.Namespace == ns && s.Name == name {
					if s.Spec.ClusterIP == "" || s.Spec.ClusterIP == corev1.ClusterIPNone {
						return "", fmt.Errorf("service %s/%s has no cluster IP", ns, name)
					}
					return s.Spec.ClusterIP, nil
				}
			}
			return "", fmt.Errorf("service %s/%s not found", ns, name)
		},
	}
}

func podIP(p *corev1.Pod) (string, error) {
	if p.Status.PodIP == "" {
		return "", fmt.Errorf("pod %s/%s has no address", p.Namespace, p.Name)
	}
	return p.Status.PodIP, nil
}

// expand fills a text's references from the twin.
func expand(tw Twin, text string, data any) (string, error) {
	if !strings.Contains(text, "{{") {
		return text, nil
	}
	t, err := template.New("step").Funcs(funcs(tw)).Option("missingkey=error").Parse(text)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return "", err
	}
	return b.String(), nil
}

func expandAll(tw Twin, texts []string, data any) ([]string, error) {
	out := make([]string, len(texts))
	for i, s := range texts {
		x, err := expand(tw, s, data)
		if err != nil {
			return nil, err
		}
		out[i] = x
	}
	return out, nil
}

// RunPods are the pods the script's `kubectl run` steps create, as YAML
// documents, with their commands filled from tw (the twin before the pods
// exist). kubectl's generator labels the pod run=NAME, names its one
// container after it and passes the command as args.
func (s Script) RunPods(tw Twin) ([]string, error) {
	var docs []string
	for _, st := range s.Steps {
		if st.Run == nil {
			continue
		}
		argv, err := expandAll(tw, st.Argv, nil)
		if err != nil {
			// What the command names is not in the twin (a what-if left
			// no running pod there): the pod is not made, and Run reports
			// the step as not answered.
			continue
		}
		args := make([]string, len(argv))
		for i, a := range argv {
			args[i] = strconv.Quote(a)
		}
		docs = append(docs, fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
  namespace: %s
  labels:
    run: %s
spec:
  restartPolicy: Never
  containers:
    - name: %s
      image: %s
      stdin: true
      stdinOnce: true
      args: [%s]
`, st.Run.Name, st.Target.Namespace, st.Run.Name, st.Run.Name, st.Run.Image, strings.Join(args, ", ")))
	}
	return docs, nil
}

// where is a step's target in the messages of a failed step.
func (st Step) where() string {
	if st.Run != nil {
		return "kubectl run " + st.Run.Name
	}
	if st.Target.Kind == KindNode {
		return "node " + st.Target.Name
	}
	return st.Target.String()
}

// Run runs the script against the twin and writes the transcript: each
// command, its output, where a ping's TTL comes from, and a verdict. It
// returns the steps that did not answer as expected.
func (s Script) Run(w io.Writer, tw Twin) ([]string, error) {
	fmt.Fprintf(w, "\n== %s\n", s.Title)
	e, err := tw.Engine()
	if err != nil {
		return nil, err
	}
	r := &runner{w: w, tw: tw, e: e}
	for _, st := range s.Steps {
		if err := r.step(st); err != nil {
			return nil, err
		}
	}
	return r.failed, r.verdict()
}

type runner struct {
	w      io.Writer
	tw     Twin
	e      *trace.Engine
	checks int
	failed []string
}

// source is where a step's target runs, for the walk and the templates.
type source struct {
	Node string
	Addr string
	src  trace.Source
}

func (r *runner) fail(what string, err error) {
	fmt.Fprintf(r.w, "(%s: %v)\n", what, err)
	r.failed = append(r.failed, what)
}

func (r *runner) step(st Step) error {
	if st.Heading != "" {
		h, err := expand(r.tw, st.Heading, nil)
		if err != nil {
			r.fail(st.where(), err)
			return nil
		}
		fmt.Fprintf(r.w, "\n%s\n", h)
	}
	ref := st.Target.Kind + "/" + st.Target.Name
	if st.Target.Kind != KindNode {
		ref = st.Target.Kind + "/" + st.Target.Namespace + "/" + st.Target.Name
	}
	src, err := r.e.ParseSource(ref, st.Target.Namespace)
	if err != nil {
		r.fail(st.where(), err)
		return nil
	}
	data := source{Node: src.Node, Addr: src.Addr.String(), src: src}
	if st.Probe != nil {
		r.probe(st, data)
		return nil
	}
	prompt, err := expand(r.tw, st.Prompt, data)
	if err != nil {
		r.fail(st.where(), err)
		return nil
	}
	argv, err := expandAll(r.tw, st.Argv, data)
	if err != nil {
		r.fail(st.where(), err)
		return nil
	}
	fmt.Fprintf(r.w, "$ %s\n", prompt)
	r.checks++
	out, err := Exec(r.tw, st.Target, argv)
	if err != nil {
		r.fail("not answered: "+strings.Join(argv, " "), err)
		return nil
	}
	shown := strings.Join(strings.Fields(strings.Join(argv, " ")), " ")
	problem := ""
	if (out.Code != 0) != st.Expect.Fail {
		want := "succeed"
		if st.Expect.Fail {
			want = "fail"
		}
		problem = fmt.Sprintf("exit %d; expected to %s", out.Code, want)
	}
	stdout := out.Stdout
	for _, f := range st.Filters {
		// The user's shell runs the filter on kubectl's output.
		if o, _, ok := Filter(strings.Fields(f), stdout); ok {
			stdout = o
		}
	}
	fmt.Fprint(r.w, stdout)
	fmt.Fprint(r.w, out.Stderr)
	if out.Code != 0 && !out.NotStarted {
		fmt.Fprintf(r.w, "command terminated with exit code %d\n", out.Code)
	}
	after, err := expandAll(r.tw, st.After, data)
	if err != nil {
		return err
	}
	for _, a := range after {
		fmt.Fprintln(r.w, a)
	}
	if problem == "" {
		problem, err = r.holds(st, data, out.Stdout)
		if err != nil {
			return err
		}
	}
	if st.TTLTo != "" {
		p, err := r.ttl(data, st.TTLTo, out.Stdout, problem == "" && !st.Expect.Fail)
		if err != nil {
			return err
		}
		if problem == "" {
			problem = p
		}
	}
	if problem != "" {
		r.failed = append(r.failed, fmt.Sprintf("%s (%s)", shown, problem))
	}
	return nil
}

// holds checks the texts the output must contain.
func (r *runner) holds(st Step, data source, stdout string) (string, error) {
	want, err := expandAll(r.tw, st.Expect.Holds, data)
	if err != nil {
		return "", err
	}
	for _, h := range want {
		if !strings.Contains(stdout, h) {
			return fmt.Sprintf("the output lacks %q", h), nil
		}
	}
	return "", nil
}

// Initial TTLs of the responders: Linux's net.ipv4.ip_default_ttl
// (https://docs.kernel.org/networking/ip-sysctl.html) and Windows'
// DefaultTTL (https://learn.microsoft.com/en-us/troubleshoot/windows-server/networking/tcpip-and-nbt-configuration-parameters).
const (
	initialTTLLinux   = 64
	initialTTLWindows = 128
)

var ttlRE = regexp.MustCompile(`(?i)\bttl=(\d+)`)

// ttl prints where a ping reply's TTL comes from and, when check is set,
// compares each TTL the command printed with the one the twin derives:
// the responder's initial TTL (by its node's operating system) less every
// routing step of the reply's walk.
func (r *runner) ttl(data source, dstText, stdout string, check bool) (string, error) {
	dst, err := expand(r.tw, dstText, data)
	if err != nil {
		return "", err
	}
	a, err := netip.ParseAddr(dst)
	if err != nil {
		return "", fmt.Errorf("ttl of %q: %w", dst, err)
	}
	res := r.e.Trace(data.src, trace.Target{Kind: "ip", Addr: a, Given: dst}, trace.ICMP, 0)
	if s := res.TTLSteps(); s != "" && !res.Assumed {
		fmt.Fprintf(r.w, "  ttl: %s\n", s)
	}
	for _, x := range res.Warnings {
		fmt.Fprintf(r.w, "  note: %s\n", x)
	}
	if !check || !res.Delivered {
		return "", nil
	}
	start := r.initialTTL(a)
	if start == 0 {
		return "", nil // outside the cluster: the twin does not know its OS
	}
	want := start
	for _, h := range res.Hops {
		if h.Leg == trace.LegReply && h.After != nil && h.After.TTL > 0 && h.After.TTL < h.Before.TTL {
			want -= h.Before.TTL - h.After.TTL
		}
	}
	got := ttlRE.FindAllStringSubmatch(stdout, -1)
	if len(got) == 0 {
		return fmt.Sprintf("no reply TTL printed; expected ttl %d from the hops", want), nil
	}
	for _, m := range got {
		if n, _ := strconv.Atoi(m[1]); n != want {
			return fmt.Sprintf("ttl %d; expected %d from the hops", n, want), nil
		}
	}
	return "", nil
}

// initialTTL is the initial TTL of the host at a: a pod's or node's
// operating system, 0 outside the cluster.
func (r *runner) initialTTL(a netip.Addr) int {
	c := r.tw.Cluster()
	node := ""
	for _, p := range c.Pods {
		if p.Status.PodIP == a.String() && !p.Spec.HostNetwork {
			node = p.Spec.NodeName
		}
	}
	for _, n := range c.Nodes {
		for _, na := range n.Status.Addresses {
			if na.Type == corev1.NodeInternalIP && na.Address == a.String() {
				node = n.Name
			}
		}
	}
	n := nodeNamed(c, node)
	if n == nil {
		return 0
	}
	if n.Labels[corev1.LabelOSStable] == hybrid.OSWindows {
		return initialTTLWindows
	}
	return initialTTLLinux
}

// probe walks a connection and checks whether it is delivered.
func (r *runner) probe(st Step, data source) {
	dst, err := expand(r.tw, st.Probe.Dst, data)
	if err == nil {
		_, err = netip.ParseAddr(dst)
	}
	what, werr := expand(r.tw, st.Probe.What, data)
	if err == nil {
		err = werr
	}
	if err != nil {
		r.fail(st.where(), err)
		return
	}
	r.checks++
	a := netip.MustParseAddr(dst)
	res := r.e.Trace(data.src, trace.Target{Kind: "ip", Addr: a, Given: dst}, st.Probe.Proto, st.Probe.Port)
	if res.Delivered {
		fmt.Fprintf(r.w, "  delivered: %s\n", res.Reason)
		if st.Expect.Fail {
			r.failed = append(r.failed, what+" (delivered; expected to fail)")
		}
		return
	}
	fmt.Fprintf(r.w, "  not delivered (%s): %s\n", res.Outcome, res.Reason)
	if !st.Expect.Fail {
		r.failed = append(r.failed, what+" (not delivered; expected to succeed)")
	}
}

// verdict ends the transcript: how many commands answered as expected.
func (r *runner) verdict() error {
	if len(r.failed) == 0 {
		_, err := fmt.Fprintf(r.w, "\nVerdict: all %d commands answered as expected\n", r.checks)
		return err
	}
	fmt.Fprintf(r.w, "\nVerdict: %d of %d commands did not answer as expected:\n", len(r.failed), r.checks)
	for _, f := range r.failed {
		fmt.Fprintf(r.w, "  %s\n", f)
	}
	return nil
}
