package plan

import (
	"encoding/json"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// Proof is the plan applied to the twin as a what-if (simulated).
type Proof struct {
	Nodes []NodeProof `json:"nodes"`
	// Check is `check` on the predicted cluster: findings by severity.
	Check    []Finding    `json:"check"`
	Traces   []TraceProof `json:"traces"`
	Rejected []string     `json:"rejected,omitempty"`
	Notes    []string     `json:"notes,omitempty"`
	// Clean: no error finding and every node Ready.
	Clean bool `json:"clean"`
	// Cluster is the predicted twin, for the runbook's answers.
	Cluster *model.Cluster `json:"-"`
}

// NodeProof is what a joined node will show.
type NodeProof struct {
	Name            string   `json:"name"`
	Block           string   `json:"block"`
	TunnelAddress   string   `json:"tunnelAddress"`
	VTEPMAC         string   `json:"vtepMAC"`
	AllocatablePods int      `json:"allocatablePods"`
	Ready           bool     `json:"ready"`
	Taints          []string `json:"taints"`
	// Pods are the node agents' pods: name and phase.
	Pods []string `json:"pods"`
}

// TraceProof is one trace on the predicted twin.
type TraceProof struct {
	From      string `json:"from"`
	To        string `json:"to"`
	Outcome   string `json:"outcome"`
	Delivered bool   `json:"delivered"`
	Reason    string `json:"reason,omitempty"`
	// RequestTTL and ReplyTTL are the TTLs the request and the reply
	// arrive with; TTLSteps explains the reply's.
	RequestTTL int    `json:"requestTTL,omitempty"`
	ReplyTTL   int    `json:"replyTTL,omitempty"`
	TTLSteps   string `json:"ttlSteps,omitempty"`
}

// vtepUnknown: the Windows VTEP MAC is the DrPort adapter's, which HNS makes
// when Calico creates the network; no input holds it before the join.
// notTraced is a trace the twin could not set up.
const notTraced = "not traced"

const vtepUnknown = "<assigned by HNS at join>"

func (p *Proof) node(name string) *NodeProof {
	for i := range p.Nodes {
		if p.Nodes[i].Name == name {
			return &p.Nodes[i]
		}
	}
	return nil
}

// prove layers the plan's objects and hosts on the input and builds the
// twin again.
func prove(in Input, b *Bundle, nodes []NodeRequest) (*Proof, error) {
	snap, err := whatIf(in, b, nodes)
	if err != nil {
		return nil, err
	}
	c, err := engine.Build(snap)
	if err != nil {
		return nil, fmt.Errorf("the plan applied to the twin: %w", err)
	}
	p := &Proof{Cluster: c, Clean: true}
	for _, r := range c.Rejected {
		p.Rejected = append(p.Rejected, r.Message)
	}
	for _, n := range nodes {
		np := nodeProof(c, n.Name)
		if !np.Ready {
			p.Clean = false
		}
		p.Nodes = append(p.Nodes, np)
	}
	rep, err := check.Run(c, check.Options{ExpectWindows: true})
	if err != nil {
		return nil, fmt.Errorf("check on the predicted cluster: %w", err)
	}
	for _, f := range rep.Findings {
		p.Check = append(p.Check, Finding{ID: f.RuleID, Severity: string(f.Severity), Object: f.Object.String(), Message: f.Message})
		if f.Severity == check.Error {
			p.Clean = false
		}
	}
	for _, n := range c.Notes {
		if n.Object.Kind == "Node" && isPlanned(nodes, n.Object.Name) {
			p.Notes = append(p.Notes, n.Object.Name+": "+n.Message)
		}
	}
	p.Traces = traces(c, nodes, !strings.HasPrefix(b.Inputs.NodeCIDR, "<"))
	for _, t := range p.Traces {
		// A trace not set up (no pod to trace from) proves nothing either way.
		if !t.Delivered && t.Outcome != notTraced {
			p.Clean = false
		}
	}
	return p, nil
}

func patched(ps []DSPatch, ns, name string) bool {
	for _, p := range ps {
		if p.Namespace == ns && p.Name == name {
			return true
		}
	}
	return false
}

func isPlanned(nodes []NodeRequest, name string) bool {
	for _, n := range nodes {
		if n.Name == name {
			return true
		}
	}
	return false
}

// whatIf is the input snapshot with the plan's objects added or replacing
// theirs, and the new hosts in the Cluster kind.
func whatIf(in Input, b *Bundle, nodes []NodeRequest) (*model.Snapshot, error) {
	var files []File
	files = append(files, b.Cluster...)
	for _, n := range b.Nodes {
		files = append(files, n.Files...)
	}
	var objs []*model.Object
	for _, f := range files {
		if !f.Object {
			continue
		}
		o, err := Decode(f.Path, f.Body)
		if err != nil {
			return nil, err
		}
		objs = append(objs, o...)
	}
	out := Layer(in.Snapshot, objs...)
	// The DaemonSet patches of the cluster step: the Linux node selector.
	for i, o := range out.Objects {
		ds, ok := o.Typed.(*appsv1.DaemonSet)
		if !ok || !patched(b.Patches, ds.Namespace, ds.Name) {
			continue
		}
		ds = ds.DeepCopy()
		if ds.Spec.Template.Spec.NodeSelector == nil {
			ds.Spec.Template.Spec.NodeSelector = map[string]string{}
		}
		ds.Spec.Template.Spec.NodeSelector[corev1.LabelOSStable] = hybrid.OSLinux
		cp := *o
		cp.Typed, cp.Raw = ds, nil
		out.Objects[i] = &cp
	}
	cl, err := clusterKind(in, b, nodes)
	if err != nil {
		return nil, err
	}
	out = Layer(out, cl)
	return out, nil
}

// clusterKind is the input's Cluster kind (or one made from its nodes)
// with the planned hosts, their DNS names and their firewall rules.
func clusterKind(in Input, b *Bundle, nodes []NodeRequest) (*model.Object, error) {
	var cl *hybrid.Cluster
	key := model.Key{Group: hybrid.Group, Kind: "Cluster", Name: "cluster"}
	for _, o := range in.Snapshot.Objects {
		if t, ok := o.Typed.(*hybrid.Cluster); ok {
			raw, err := json.Marshal(t)
			if err != nil {
				return nil, fmt.Errorf("cluster kind: %w", err)
			}
			cl = &hybrid.Cluster{}
			if err := json.Unmarshal(raw, cl); err != nil {
				return nil, fmt.Errorf("cluster kind: %w", err)
			}
			key = o.Key
		}
	}
	if cl == nil {
		cl = &hybrid.Cluster{}
		cl.APIVersion, cl.Kind, cl.Name = hybrid.Group+"/"+hybrid.Version, "Cluster", "cluster"
		cl.Spec.Hosts = append(cl.Spec.Hosts, in.Cluster.Hosts...)
		if !strings.HasPrefix(b.Inputs.NodeCIDR, "<") {
			cl.Spec.Network.CIDR = b.Inputs.NodeCIDR
		}
	}
	v := b.Inputs
	sources := firewallSources(v)
	var names []string
	for _, n := range nodes {
		names = append(names, n.Name)
		h := hybrid.Host{Name: n.Name, Address: n.Address, OS: hybrid.OSWindows, Arch: "amd64",
			OSImage: "Windows Server " + windowsBuilds[n.WindowsBuild], KernelVersion: n.WindowsBuild,
			KubeletVersion: v.Version, Join: n.Name, Patches: []string{"kubeletconfiguration"},
			CPU: n.CPU, Memory: n.Memory}
		if !strings.HasPrefix(v.Containerd, "<") {
			h.ContainerRuntime = "containerd://" + v.Containerd
		}
		if v.Domain != "" {
			h.FQDN = n.Name + "." + v.Domain
			cl.Spec.Network.DNS = append(cl.Spec.Network.DNS, hybrid.DNSRecord{Name: h.FQDN, Address: n.Address})
		}
		cl.Spec.Hosts = append(cl.Spec.Hosts, h)
	}
	// The rules the firewall and kubelet steps leave (PrepareNode.ps1's
	// kubelet rule, narrowed).
	cl.Spec.Network.Firewall = append(cl.Spec.Network.Firewall,
		hybrid.FirewallRule{Name: "kubelet", Hosts: names, Protocol: "TCP", Ports: []int32{10250}, From: sources, Action: "Allow"},
		hybrid.FirewallRule{Name: "kube-proxy-health", Hosts: names, Protocol: "TCP", Ports: []int32{10256}, From: sources, Action: "Allow"})
	return &model.Object{GVK: cl.GroupVersionKind(), Key: key, Typed: cl, Origin: model.Origin{File: "plan:hosts"}}, nil
}

func nodeProof(c *model.Cluster, name string) NodeProof {
	np := NodeProof{Name: name, VTEPMAC: vtepUnknown}
	for _, n := range c.Nodes {
		if n.Name != name {
			continue
		}
		np.TunnelAddress = n.Annotations[calico.AnnotationIPv4VXLANTunnelAddr]
		// A placeholder (hybrid.VTEPMACPlaceholderAnnotation) is the twin's
		// stand-in until the join records the DrPort's MAC: not a prediction.
		if mac := n.Annotations[calico.AnnotationVXLANTunnelMACAddr]; mac != "" && n.Annotations[hybrid.VTEPMACPlaceholderAnnotation] == "" {
			np.VTEPMAC = mac
		}
		if q, ok := n.Status.Allocatable[corev1.ResourcePods]; ok {
			np.AllocatablePods = int(q.Value())
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady {
				np.Ready = cond.Status == corev1.ConditionTrue
			}
		}
		for _, t := range n.Spec.Taints {
			np.Taints = append(np.Taints, fmt.Sprintf("%s=%s:%s", t.Key, t.Value, t.Effect))
		}
	}
	for _, a := range c.BlockAffinities {
		if a.Spec.Node == name && a.Spec.State == "confirmed" {
			np.Block = a.Spec.CIDR
		}
	}
	for _, p := range c.Pods {
		if p.Spec.NodeName != name {
			continue
		}
		for _, ref := range p.OwnerReferences {
			if ref.Kind == "DaemonSet" && (ref.Name == "calico-node-windows" || ref.Name == "kube-proxy-windows") {
				np.Pods = append(np.Pods, fmt.Sprintf("%s/%s %s", p.Namespace, p.Name, p.Status.Phase))
			}
		}
	}
	return np
}

// traces walks a Linux pod to a Windows pod on a planned node, to its
// Service, and back, on the predicted twin. Without a Windows pod on a
// planned node, it walks a Linux pod to each planned node's kubelet (TCP
// 10250: the underlay and the firewall rules the plan writes).
func traces(c *model.Cluster, nodes []NodeRequest, nodeNetwork bool) []TraceProof {
	e, err := trace.New(c)
	if err != nil {
		return []TraceProof{{Outcome: "not modeled", Reason: err.Error()}}
	}
	linux, win := pickPods(c, nodes)
	if linux == nil {
		return []TraceProof{{Outcome: notTraced, Reason: "no Running pod on the pod network of a Linux node"}}
	}
	ref := func(p *corev1.Pod) string { return "pod/" + p.Namespace + "/" + p.Name }
	type pair struct {
		from, to string
		port     int
	}
	var pairs []pair
	if win != nil {
		pairs = append(pairs, pair{ref(linux), ref(win), 0})
		if svc := serviceOf(c, win); svc != "" {
			pairs = append(pairs, pair{ref(linux), svc, 0})
		}
		pairs = append(pairs, pair{ref(win), ref(linux), 0})
	} else if !nodeNetwork {
		// The twin routes to node addresses through the node network.
		return []TraceProof{{Outcome: notTraced, Reason: "no Windows pod on a new node, and the node network is not in the input (a Cluster kind, or projectcalico.org/IPv4Address on the Nodes): the twin cannot route to the nodes' addresses"}}
	} else {
		for _, n := range nodes {
			pairs = append(pairs, pair{ref(linux), "node/" + n.Name, 10250})
		}
	}
	var out []TraceProof
	for _, pr := range pairs {
		tp := TraceProof{From: pr.from, To: pr.to}
		src, err1 := e.ParseSource(pr.from, "")
		dst, err2 := e.ParseTarget(pr.to, "")
		if err1 != nil || err2 != nil {
			tp.Outcome, tp.Reason = notTraced, fmt.Sprint(err1, err2)
			out = append(out, tp)
			continue
		}
		port := pr.port
		if port == 0 {
			port = e.DefaultPort(dst, trace.TCP)
		}
		tp.To += fmt.Sprintf(":%d", port)
		r := e.Trace(src, dst, trace.TCP, port)
		tp.Outcome, tp.Delivered, tp.Reason = string(r.Outcome), r.Delivered, r.Reason
		tp.RequestTTL, tp.ReplyTTL, tp.TTLSteps = r.RequestTTL, r.ReplyTTL, r.TTLSteps()
		if !r.Delivered {
			// An undelivered trace on the predicted cluster is not clean.
			tp.Reason = strings.TrimSpace(r.Reason + " " + r.Fix)
		}
		out = append(out, tp)
	}
	return out
}

func pickPods(c *model.Cluster, nodes []NodeRequest) (linux, win *corev1.Pod) {
	os := map[string]string{}
	for _, n := range c.Nodes {
		os[n.Name] = n.Labels[corev1.LabelOSStable]
	}
	for _, p := range c.Pods {
		if p.Spec.HostNetwork || p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" {
			continue
		}
		switch {
		case win == nil && isPlanned(nodes, p.Spec.NodeName):
			win = p
		case linux == nil && os[p.Spec.NodeName] == hybrid.OSLinux && !strings.HasPrefix(p.Namespace, "kube-") && !strings.HasPrefix(p.Namespace, "calico-"):
			linux = p
		}
	}
	return linux, win
}

// serviceOf is a Service selecting the pod, as svc/NS/NAME.
func serviceOf(c *model.Cluster, p *corev1.Pod) string {
	for _, s := range c.Services {
		if s.Namespace != p.Namespace || len(s.Spec.Selector) == 0 {
			continue
		}
		match := true
		for k, v := range s.Spec.Selector {
			if p.Labels[k] != v {
				match = false
			}
		}
		if match {
			return "svc/" + s.Namespace + "/" + s.Name
		}
	}
	return ""
}
