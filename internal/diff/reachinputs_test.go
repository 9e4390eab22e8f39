package diff

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/gen"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach"
)

// generated builds a small generated cluster: workloads, Services and
// NetworkPolicies on Linux nodes (and windows Windows nodes).
func generated(t testing.TB, windows int) *model.Cluster {
	t.Helper()
	dir := t.TempDir()
	o := gen.Options{Nodes: 4 + windows, WindowsNodes: windows, Namespaces: 2, Pods: 24, Services: 6, Policies: 2, Seed: 1, ObservedIPs: true}
	if _, err := gen.WriteDir(dir, o); err != nil {
		t.Fatal(err)
	}
	return build(t, false, dir)
}

// forcedReach is the reach difference computed from both twins' matrices
// whatever their inputs' hashes say.
func forcedReach(t *testing.T, a, b *model.Cluster) *ReachDiff {
	t.Helper()
	ta := NewTwin(a)
	tb := NewTwin(b)
	tb.digestAfter(ta.digest())
	rd, err := compareReach(ta, tb, reach.Options{AllNamespaces: true})
	if err != nil {
		t.Fatal(err)
	}
	return rd
}

// portPod is the index of the first running pod-network pod of a
// generated workload namespace that declares a port and that no
// NetworkPolicy isolates for ingress: the other pods reach it, so a
// policy that comes to select it changes cells of other pods than its own.
func portPod(t testing.TB, c *model.Cluster) int { return portPodIsolated(t, c, false) }

// portPodIsolated is the index of the first running pod-network pod of a
// generated workload namespace that declares a port and that a
// NetworkPolicy isolates for ingress, or not, as isolated says.
func portPodIsolated(t testing.TB, c *model.Cluster, isolated bool) int {
	for i, p := range c.Pods {
		if !p.Spec.HostNetwork && workloadNamespace(p.Namespace) && p.Status.PodIP != "" &&
			len(p.Spec.Containers) > 0 && len(p.Spec.Containers[0].Ports) > 0 && isolatedForIngress(t, c, p) == isolated {
			return i
		}
	}
	t.Fatalf("no workload pod with a port that a policy isolates: %t", isolated)
	return -1
}

// isolatedForIngress says whether a NetworkPolicy of p's namespace selects
// p for ingress.
func isolatedForIngress(t testing.TB, c *model.Cluster, p *corev1.Pod) bool {
	for _, np := range c.NetworkPolicies {
		if np.Namespace != p.Namespace {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
		if err != nil {
			t.Fatal(err)
		}
		ingress := len(np.Spec.PolicyTypes) == 0 || slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress)
		if ingress && sel.Matches(labels.Set(p.Labels)) {
			return true
		}
	}
	return false
}

// workloadNamespace says whether ns is one of the generated workloads'
// (not the system's).
func workloadNamespace(ns string) bool {
	return ns != "default" && ns != "tigera-operator" && !strings.HasPrefix(ns, "kube-") && !strings.HasPrefix(ns, "calico-")
}

// hostPod is the index of the first host-network pod of the DaemonSet
// named.
func hostPod(t testing.TB, c *model.Cluster, ds string) int {
	for i, p := range c.Pods {
		if ref := metav1.GetControllerOf(p); p.Spec.HostNetwork && ref != nil && ref.Kind == "DaemonSet" && ref.Name == ds {
			return i
		}
	}
	t.Fatalf("no host-network pod of DaemonSet %s", ds)
	return -1
}

// withPod replaces the i-th pod of c with a changed copy.
func withPod(c *model.Cluster, i int, change func(*corev1.Pod)) {
	p := c.Pods[i].DeepCopy()
	change(p)
	c.Pods = slices.Clone(c.Pods)
	c.Pods[i] = p
}

func withInstallation(c *model.Cluster, change func(*operator.Installation)) {
	in := *c.Installation
	cn := *in.Spec.CalicoNetwork
	in.Spec.CalicoNetwork = &cn
	change(&in)
	c.Installation = &in
}

func str(s string) *string { return &s }

// denyIngress is a NetworkPolicy of ns that selects the pods labelled
// reach-test=denied and allows them no ingress.
func denyIngress(ns string) *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "reach-test-deny"},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"reach-test": "denied"}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
		},
	}
}

// reachCase is a change to a twin, and what it does to the reach matrix.
type reachCase struct {
	name    string
	change  func(*model.Cluster)
	reaches int
	// onWindows: an input only the Windows dataplane reads, which moves
	// the hash of a twin with a Windows node alone.
	onWindows bool
	// base changes both twins first.
	base func(*model.Cluster)
}

// clusters are base with the case's base change made to both, and with
// its change made to the second.
func (tc reachCase) clusters(base *model.Cluster) (before, after *model.Cluster) {
	b := *base
	if tc.base != nil {
		tc.base(&b)
	}
	a := b
	tc.change(&a)
	return &b, &a
}

const (
	hashOnly = iota // the hash moves; the matrices may not differ
	differs         // the matrices differ in a verdict, a row or a column
	fails           // the after twin's trace engine fails
)

// reachCases are changes to the inputs the reach matrix reads, one
// input each, on base, which they change to hold a NetworkPolicy that
// selects no pod yet.
func reachCases(t *testing.T, base *model.Cluster) []reachCase {
	wp := portPod(t, base)
	ns := base.Pods[wp].Namespace
	// The trace engine makes the Windows compiler, which refuses a pool
	// with a bad CIDR, only for a cluster with a Windows node.
	badPool := hashOnly
	if hasWindowsNode(NewTwin(base)) {
		badPool = fails
	}
	base.NetworkPolicies = append(slices.Clone(base.NetworkPolicies), denyIngress(ns))
	return []reachCase{
		{"a pod's label a policy selects", func(c *model.Cluster) {
			withPod(c, wp, func(p *corev1.Pod) { p.Labels["reach-test"] = "denied" })
		}, differs, false, nil},
		{"a pod's declared port", func(c *model.Cluster) {
			withPod(c, wp, func(p *corev1.Pod) { p.Spec.Containers[0].Ports[0].ContainerPort++ })
		}, differs, false, nil},
		{"a NetworkPolicy", func(c *model.Cluster) {
			np := denyIngress(ns)
			np.Name, np.Spec.PodSelector = "deny-all", metav1.LabelSelector{}
			c.NetworkPolicies = append(slices.Clone(c.NetworkPolicies), np)
		}, differs, false, nil},
		{"a Calico GlobalNetworkPolicy", func(c *model.Cluster) {
			c.GlobalNetworkPolicies = append(slices.Clone(c.GlobalNetworkPolicies), &calico.GlobalNetworkPolicy{
				ObjectMeta: metav1.ObjectMeta{Name: "deny-app"},
				Spec: calico.PolicySpec{Selector: fmt.Sprintf("projectcalico.org/namespace == '%s'", ns),
					Types: []string{"Ingress"}, Ingress: []calico.Rule{{Action: "Deny"}}},
			})
		}, differs, false, nil},
		{"a Namespace's labels", func(c *model.Cluster) {
			i := slices.IndexFunc(c.Namespaces, func(n *corev1.Namespace) bool { return n.Name == ns })
			n := c.Namespaces[i].DeepCopy()
			n.Labels["reach-test"] = "x"
			c.Namespaces = slices.Clone(c.Namespaces)
			c.Namespaces[i] = n
		}, hashOnly, false, nil},
		{"a ServiceAccount", func(c *model.Cluster) {
			c.ServiceAccounts = append(slices.Clone(c.ServiceAccounts), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "reach-test"}})
		}, hashOnly, false, nil},
		{"a Service's port", func(c *model.Cluster) {
			i := slices.IndexFunc(c.Services, func(s *corev1.Service) bool { return s.Namespace == ns })
			s := c.Services[i].DeepCopy()
			s.Spec.Ports[0].Port++
			c.Services = slices.Clone(c.Services)
			c.Services[i] = s
		}, differs, false, nil},
		{"an EndpointSlice's endpoints", func(c *model.Cluster) {
			// A Service whose pods no policy selects: allowed before.
			selected := func(svc string) bool {
				return slices.ContainsFunc(c.NetworkPolicies, func(np *networkingv1.NetworkPolicy) bool {
					return np.Namespace == ns && slices.Contains(slices.Collect(maps.Values(np.Spec.PodSelector.MatchLabels)), svc)
				})
			}
			i := slices.IndexFunc(c.EndpointSlices, func(s *discoveryv1.EndpointSlice) bool {
				return s.Namespace == ns && len(s.Endpoints) > 0 && !selected(s.Labels[discoveryv1.LabelServiceName])
			})
			s := c.EndpointSlices[i].DeepCopy()
			s.Endpoints = nil
			c.EndpointSlices = slices.Clone(c.EndpointSlices)
			c.EndpointSlices[i] = s
		}, differs, false, nil},
		{"a ReplicaSet", func(c *model.Cluster) {
			rs := c.ReplicaSets[0].DeepCopy()
			rs.OwnerReferences = nil
			c.ReplicaSets = slices.Clone(c.ReplicaSets)
			c.ReplicaSets[0] = rs
		}, hashOnly, false, nil},
		{"a node's address", func(c *model.Cluster) {
			n := c.Nodes[1].DeepCopy()
			for j, a := range n.Status.Addresses {
				if a.Type == corev1.NodeInternalIP {
					n.Status.Addresses[j].Address = "192.0.2.77"
				}
			}
			c.Nodes = slices.Clone(c.Nodes)
			c.Nodes[1] = n
		}, hashOnly, false, nil},
		{"a host-network pod's declared port", func(c *model.Cluster) {
			withPod(c, hostPod(t, c, "calico-node"), func(p *corev1.Pod) {
				p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports, corev1.ContainerPort{ContainerPort: 9999})
			})
		}, hashOnly, false, nil},
		{"a pool's natOutgoing", func(c *model.Cluster) {
			p := *c.IPPools[0]
			p.Spec.NATOutgoing = !p.Spec.NATOutgoing
			c.IPPools = slices.Clone(c.IPPools)
			c.IPPools[0] = &p
		}, hashOnly, false, nil},
		{"a pool with a bad CIDR, which the Linux compiler skips", func(c *model.Cluster) {
			c.IPPools = append(slices.Clone(c.IPPools), &calico.IPPool{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Spec: calico.IPPoolSpec{CIDR: "10.300.0.0/16"}})
		}, badPool, false, nil},
		{"an IPAM block marked deleted", func(c *model.Cluster) {
			b := *c.IPAMBlocks[0]
			b.Spec.Deleted = true
			c.IPAMBlocks = slices.Clone(c.IPAMBlocks)
			c.IPAMBlocks[0] = &b
		}, hashOnly, false, nil},
		{"an IPAM block's affinity", func(c *model.Cluster) {
			b := *c.IPAMBlocks[0]
			b.Spec.Affinity = str("host:elsewhere")
			c.IPAMBlocks = slices.Clone(c.IPAMBlocks)
			c.IPAMBlocks[0] = &b
		}, hashOnly, false, nil},
		{"a FelixConfiguration", func(c *model.Cluster) {
			c.FelixConfigs = append(slices.Clone(c.FelixConfigs), &calico.FelixConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "node.reach-test"}})
		}, hashOnly, false, nil},
		{"the Installation's Linux dataplane", func(c *model.Cluster) {
			withInstallation(c, func(in *operator.Installation) { in.Spec.CalicoNetwork.LinuxDataplane = str("Iptables") })
		}, hashOnly, false, nil},
		{"the node network", func(c *model.Cluster) {
			c.Network.Gateway = "192.0.2.1"
		}, hashOnly, false, nil},
		{"the Installation's bgp on a pool without VXLAN", func(c *model.Cluster) {
			withInstallation(c, func(in *operator.Installation) {
				bgp := "Enabled"
				if in.Spec.CalicoNetwork.BGP != nil && *in.Spec.CalicoNetwork.BGP == bgp {
					bgp = "Disabled"
				}
				in.Spec.CalicoNetwork.BGP = &bgp
			})
		}, hashOnly, false, func(c *model.Cluster) {
			p := *c.IPPools[0]
			p.Spec.VXLANMode = calico.ModeNever
			c.IPPools = slices.Clone(c.IPPools)
			c.IPPools[0] = &p
		}},
		{"the Installation's serviceCIDRs", func(c *model.Cluster) {
			withInstallation(c, func(in *operator.Installation) { in.Spec.ServiceCIDRs = append(in.Spec.ServiceCIDRs, "10.200.0.0/16") })
		}, hashOnly, true, nil},
		{"the Windows kube-proxy's environment", func(c *model.Cluster) {
			withPod(c, hostPod(t, c, "kube-proxy-windows"), func(p *corev1.Pod) {
				p.Spec.Containers[0].Env = append(p.Spec.Containers[0].Env, corev1.EnvVar{Name: "KUBE_NETWORK", Value: "other"})
			})
		}, hashOnly, true, nil},
	}
}

// Each input the reach matrix reads (reachKinds) moves the reach hash, and
// where the change reaches a verdict, the matrices' difference is not
// empty: the hash never hides a difference the matrices hold.
func TestEachInputTheReachMatrixReadsChangesTheReachHash(t *testing.T) {
	for _, windows := range []int{0, 1} {
		base := generated(t, windows)
		tests := reachCases(t, base)
		for _, tc := range tests {
			if tc.onWindows && windows == 0 {
				continue
			}
			t.Run(fmt.Sprintf("%s (%d Windows nodes)", tc.name, windows), func(t *testing.T) {
				before, after := tc.clusters(base)
				ta, tb := NewTwin(before), NewTwin(after)
				tb.digestAfter(ta.digest())
				if sameReachInputs(ta, tb) {
					t.Errorf("the reach hashes are the same")
				}
				switch tc.reaches {
				case fails:
					if _, err := compareReach(ta, tb, reach.Options{AllNamespaces: true}); err == nil {
						t.Errorf("the after twin's reach matrix was computed: the change is no example of an input the trace engine fails on")
					}
				case differs:
					if rd := forcedReach(t, before, after); len(rd.Changes) == 0 && len(rd.Notes) == 0 {
						t.Errorf("the matrices do not differ: the change is no example of an input reach reads")
					}
				}
			})
		}
	}
}

// What the reach matrix does not read leaves the reach hash alone on a
// cluster without Windows nodes, and the matrices computed anyway are
// equal; CompareTwins then computes neither.
func TestWhatTheReachMatrixDoesNotReadLeavesItAlone(t *testing.T) {
	base := generated(t, 0)
	if slices.ContainsFunc(base.Nodes, func(n *corev1.Node) bool { return nodeOS(n) != "linux" }) {
		t.Fatal("the generated cluster has a Windows node")
	}
	tests := []struct {
		name   string
		change func(*model.Cluster)
	}{
		{"an agent's environment and probes, changed in place (a rollout)", func(c *model.Cluster) {
			for _, i := range []int{hostPod(t, c, "calico-node")} {
				withPod(c, i, func(p *corev1.Pod) {
					ct := &p.Spec.Containers[0]
					ct.Env = append(ct.Env, corev1.EnvVar{Name: "CALICO_NETWORKING_BACKEND", Value: "vxlan"})
					ct.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/calico-node", "-felix-ready"}}}}
					ct.LivenessProbe, ct.StartupProbe = nil, ct.ReadinessProbe
				})
			}
		}},
		{"a DaemonSet", func(c *model.Cluster) {
			ds := c.DaemonSets[0].DeepCopy()
			ds.Spec.Template.Labels["reach-test"] = "x"
			c.DaemonSets = slices.Clone(c.DaemonSets)
			c.DaemonSets[0] = ds
		}},
		{"a Deployment", func(c *model.Cluster) {
			c.Deployments = append(slices.Clone(c.Deployments), &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "reach-test"}})
		}},
		{"a ConfigMap", func(c *model.Cluster) {
			c.ConfigMaps = append(slices.Clone(c.ConfigMaps), &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Namespace: "calico-system", Name: "cni-config-windows"}, Data: map[string]string{"config": "{}"}})
		}},
		{"the Installation's Windows fields and bgp (every pool has VXLAN)", func(c *model.Cluster) {
			for _, p := range c.IPPools {
				if p.Spec.VXLANMode == "" || p.Spec.VXLANMode == calico.ModeNever {
					t.Fatalf("pool %s has no VXLAN", p.Name)
				}
			}
			withInstallation(c, func(in *operator.Installation) {
				cn := in.Spec.CalicoNetwork
				bgp := "Disabled"
				if cn.BGP != nil && *cn.BGP == bgp {
					bgp = "Enabled"
				}
				cn.WindowsDataplane, cn.BGP = str("HNS"), &bgp
				in.Spec.ServiceCIDRs = []string{"10.96.0.0/12"}
				in.Spec.WindowsNodes = &operator.WindowsNodeSpec{CNIBinDir: "/opt/cni/bin"}
			})
		}},
		{"a BGPConfiguration", func(c *model.Cluster) {
			c.BGPConfigs = append(slices.Clone(c.BGPConfigs), &calico.BGPConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "default"}})
		}},
		{"a RuntimeClass", func(c *model.Cluster) {
			c.RuntimeClasses = append(slices.Clone(c.RuntimeClasses), &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "reach-test"}, Handler: "runhcs-wcow-process"})
		}},
		{"the IPAM configuration", func(c *model.Cluster) {
			c.IPAMConfig = &calico.IPAMConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: calico.IPAMConfigurationSpec{StrictAffinity: true}}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			after := *base
			tc.change(&after)
			ta, tb := NewTwin(base), NewTwin(&after)
			r, err := CompareTwins(ta, tb, Options{NoDataplane: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Objects) == 0 {
				t.Fatal("the change changes no object")
			}
			if !sameReachInputs(ta, tb) {
				t.Errorf("the reach hashes differ")
			}
			if ta.matrix != nil || tb.matrix != nil {
				t.Errorf("CompareTwins computed a reach matrix")
			}
			if rd := forcedReach(t, base, &after); len(rd.Changes) != 0 || len(rd.Notes) != 0 {
				t.Errorf("the matrices computed anyway differ: %+v", rd)
			}
		})
	}
}

// A pod a policy comes to isolate leaves its class: in one twin its class
// holds other pods, in the other itself alone. The pod to itself is no
// connection in either, whatever the two classes' cells say, so it is no
// change (the comparison once listed it as one, "allowed" or "denied"
// against "a single pod to itself").
func TestAPodToItselfIsNoChangeWhenItsClassSplits(t *testing.T) {
	base := generated(t, 0)
	wp := portPodIsolated(t, base, true)
	p := base.Pods[wp]
	base.NetworkPolicies = append(slices.Clone(base.NetworkPolicies), denyIngress(p.Namespace))
	after := *base
	withPod(&after, wp, func(q *corev1.Pod) { q.Labels["reach-test"] = "denied" })
	rd := forcedReach(t, base, &after)
	self := p.Namespace + "/" + p.Name
	for _, c := range rd.Changes {
		if len(c.FromPods) == 1 && len(c.ToPods) == 1 && c.FromPods[0] == self && c.ToPods[0] == self {
			t.Errorf("%s to itself is listed as a change: %s -> %s", self, c.Before.Verdict, c.After.Verdict)
		}
	}
}
