package gen

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	yamlv3 "go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/calico/ipam"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/report"
)

// small is a cluster that exercises every part of the generator in
// milliseconds: Linux and Windows workers, the node agent, several Services
// per app and every policy shape.
var small = Options{Nodes: 8, WindowsNodes: 2, Namespaces: 4, Pods: 300, Services: 60, Policies: 40, Seed: 7}

func with(o Options, f func(*Options)) Options { f(&o); return o }

// generate writes o into a fresh directory and returns it.
func generate(t *testing.T, o Options) (string, Summary) {
	t.Helper()
	dir := t.TempDir()
	sum, err := WriteDir(dir, o)
	if err != nil {
		t.Fatalf("WriteDir: %v", err)
	}
	return dir, sum
}

// build loads a directory with the loader the CLI uses and builds the twin.
func build(t *testing.T, dir string) (*model.Snapshot, *model.Cluster) {
	t.Helper()
	snap, err := load.Load(load.Options{Filenames: []string{dir}})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	c, err := engine.Build(snap)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	return snap, c
}

// systemNamespaces hold the pods the twin derives on its own.
var systemNamespaces = map[string]bool{"kube-system": true, "calico-system": true, "calico-apiserver": true, "tigera-operator": true}

func readAll(t *testing.T, dir string) []byte {
	t.Helper()
	var all []byte
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		all = append(append(all, e.Name()...), b...)
	}
	return all
}

func TestTheSameSeedGivesTheSameBytes(t *testing.T) {
	tests := []struct {
		name string
		o    Options
	}{
		{"the Cluster kind in YAML with pods left to the twin", small},
		{"the Cluster kind in YAML with observed addresses", with(small, func(o *Options) { o.ObservedIPs = true })},
		{"plain Node objects in JSON with observed addresses", with(small, func(o *Options) { o.PlainNodes, o.ObservedIPs, o.Format = true, true, FormatJSON })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, _ := generate(t, tt.o)
			b, _ := generate(t, tt.o)
			if !bytes.Equal(readAll(t, a), readAll(t, b)) {
				t.Fatal("two runs with the same options wrote different bytes")
			}
		})
	}
}

func TestADifferentSeedGivesADifferentCluster(t *testing.T) {
	a, _ := generate(t, small)
	b, _ := generate(t, with(small, func(o *Options) { o.Seed++ }))
	if bytes.Equal(readAll(t, a), readAll(t, b)) {
		t.Fatal("seeds 7 and 8 wrote the same bytes")
	}
}

func TestGeneratedClustersLoadAndBuildWithTheCountsAsked(t *testing.T) {
	tests := []struct {
		name string
		o    Options
	}{
		{"a hybrid cluster whose pods the twin schedules", small},
		{"a hybrid cluster with observed pod addresses", with(small, func(o *Options) { o.ObservedIPs = true })},
		{"plain Node objects with observed addresses in JSON", with(small, func(o *Options) { o.PlainNodes, o.ObservedIPs, o.Format = true, true, FormatJSON })},
		{"plain Node objects with pods left to the twin", with(small, func(o *Options) { o.PlainNodes = true })},
		{"a Linux-only cluster", Options{Nodes: 4, Namespaces: 2, Pods: 120, Services: 10, Policies: 9, Seed: 3, ObservedIPs: true}},
		{"a Windows-heavy cluster where Windows takes all it can", Options{Nodes: 5, WindowsNodes: 3, Namespaces: 2, Pods: 274, Services: 5, Policies: 3, Seed: 4, ObservedIPs: true}},
		{"a control plane alone", Options{Nodes: 1, Seed: 5}},
		{"more Services than apps", Options{Nodes: 3, WindowsNodes: 1, Namespaces: 1, Pods: 12, Services: 40, Policies: 2, Seed: 6, ObservedIPs: true}},
		{"more namespaces than apps", Options{Nodes: 3, Namespaces: 9, Pods: 4, Services: 2, Policies: 20, Seed: 8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, sum := generate(t, tt.o)
			snap, c := build(t, dir)
			o := tt.o
			if len(snap.Warnings) > 0 {
				t.Errorf("loader warnings: %q", snap.Warnings)
			}
			for _, r := range c.Rejected {
				t.Errorf("rejected: %s", r.Message)
			}
			for _, n := range c.Notes {
				if n.Severity == model.Warning {
					t.Errorf("warning note: %s: %s", n.Object, n.Message)
				}
			}

			windowsNodes := map[string]bool{}
			for _, n := range c.Nodes {
				if n.Labels["kubernetes.io/os"] == "windows" {
					windowsNodes[n.Name] = true
				}
			}
			if len(c.Nodes) != o.Nodes || len(windowsNodes) != o.WindowsNodes {
				t.Errorf("nodes: got %d (%d Windows), asked %d (%d Windows)", len(c.Nodes), len(windowsNodes), o.Nodes, o.WindowsNodes)
			}

			pool := netip.MustParsePrefix(sum.PodCIDR)
			workload, onNode := 0, map[string]int{}
			for _, p := range c.Pods {
				onNode[p.Spec.NodeName]++
				if systemNamespaces[p.Namespace] {
					continue
				}
				workload++
				if p.Status.Phase != corev1.PodRunning {
					t.Errorf("pod %s/%s is %s, not Running", p.Namespace, p.Name, p.Status.Phase)
				}
				if a, err := netip.ParseAddr(p.Status.PodIP); err != nil || !pool.Contains(a) {
					t.Errorf("pod %s/%s has address %q outside the pod network %s", p.Namespace, p.Name, p.Status.PodIP, pool)
				}
				windowsPod := p.Spec.OS != nil && p.Spec.OS.Name == corev1.Windows
				if windowsPod != windowsNodes[p.Spec.NodeName] {
					t.Errorf("pod %s/%s (windows=%t) landed on %s", p.Namespace, p.Name, windowsPod, p.Spec.NodeName)
				}
			}
			if workload != o.Pods || sum.Pods != o.Pods {
				t.Errorf("workload pods: built %d, summary %d, asked %d", workload, sum.Pods, o.Pods)
			}
			for node, n := range onNode {
				limit := LinuxMaxPods
				if windowsNodes[node] {
					limit = WindowsMaxPods
				}
				if n > limit {
					t.Errorf("node %s runs %d pods, more than its %d", node, n, limit)
				}
			}

			services := 0
			for _, s := range c.Services {
				if !systemNamespaces[s.Namespace] && s.Namespace != "default" {
					services++
					if len(s.Spec.Selector) == 0 || s.Spec.ClusterIP == "" {
						t.Errorf("service %s/%s: selector %v, clusterIP %q", s.Namespace, s.Name, s.Spec.Selector, s.Spec.ClusterIP)
					}
				}
			}
			if services != o.Services {
				t.Errorf("services: got %d, asked %d", services, o.Services)
			}
			if got := len(c.NetworkPolicies) + len(c.CalicoPolicies); got != o.Policies {
				t.Errorf("network policies: got %d, asked %d", got, o.Policies)
			}
		})
	}
}

func TestObservedAddressesAreTheOnesTheTwinKeeps(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
	}{
		{"with strictAffinity and VXLAN", with(small, func(o *Options) { o.ObservedIPs = true })},
		// IPAM without strictAffinity may borrow; the twin's replay must
		// still give every pod the address written.
		{"before the migration, without strictAffinity", with(small, func(o *Options) {
			o.ObservedIPs, o.BeforeMigration, o.WindowsNodes, o.Pods = true, true, 0, 500
		})},
	} {
		t.Run(tc.name, func(t *testing.T) { observedAddressesKept(t, tc.o) })
	}
}

func observedAddressesKept(t *testing.T, o Options) {
	dir, _ := generate(t, o)
	snap, c := build(t, dir)
	given := map[string]string{}
	for _, o := range snap.Objects {
		if p, ok := o.Typed.(*corev1.Pod); ok {
			given[p.Namespace+"/"+p.Name] = p.Status.PodIP
		}
	}
	if len(given) != o.Pods {
		t.Fatalf("%d pod stubs written, want %d", len(given), o.Pods)
	}
	seen := map[string]string{}
	for _, p := range c.Pods {
		if ip, ok := given[p.Namespace+"/"+p.Name]; ok {
			if p.Status.PodIP != ip {
				t.Errorf("pod %s/%s: twin has %s, generator wrote %s", p.Namespace, p.Name, p.Status.PodIP, ip)
			}
			if c.Derived(model.Key{Kind: "Pod", Namespace: p.Namespace, Name: p.Name}, "status.podIP") {
				t.Errorf("pod %s/%s: address marked derived", p.Namespace, p.Name)
			}
			delete(given, p.Namespace+"/"+p.Name)
		}
		if p.Status.PodIP != "" && !p.Spec.HostNetwork {
			if other, dup := seen[p.Status.PodIP]; dup {
				t.Errorf("address %s given to %s and %s/%s", p.Status.PodIP, other, p.Namespace, p.Name)
			}
			seen[p.Status.PodIP] = p.Namespace + "/" + p.Name
		}
	}
	if len(given) > 0 {
		t.Errorf("%d generated pods are missing from the twin", len(given))
	}
	// Every observed EndpointSlice names pods the twin has, at their addresses.
	byName := map[string]*corev1.Pod{}
	for _, p := range c.Pods {
		byName[p.Namespace+"/"+p.Name] = p
	}
	slices := 0
	for _, es := range c.EndpointSlices {
		if systemNamespaces[es.Namespace] || es.Namespace == "default" {
			continue
		}
		slices++
		for _, ep := range es.Endpoints {
			p := byName[es.Namespace+"/"+ep.TargetRef.Name]
			if p == nil || p.Status.PodIP != ep.Addresses[0] || p.Spec.NodeName != *ep.NodeName {
				t.Errorf("endpoint slice %s/%s: endpoint %s at %s on %s does not match the pod", es.Namespace, es.Name, ep.TargetRef.Name, ep.Addresses[0], *ep.NodeName)
			}
		}
	}
	if slices != o.Services {
		t.Errorf("%d EndpointSlices, want one per Service (%d)", slices, o.Services)
	}
}

func TestAClusterBeforeTheMigrationHasTheSettingsPlanMigrateStartsFrom(t *testing.T) {
	o := with(small, func(o *Options) { o.WindowsNodes, o.BeforeMigration = 0, true })
	dir, _ := generate(t, o)
	snap, c := build(t, dir)
	// The Installation as written (the twin's is the operator's defaulted
	// one).
	var in *operator.Installation
	for _, obj := range snap.Objects {
		if v, ok := obj.Typed.(*operator.Installation); ok {
			in = v
		}
	}
	if in == nil {
		t.Fatal("no Installation written")
	}
	cn := in.Spec.CalicoNetwork
	if cn.BGP == nil || *cn.BGP != "Enabled" || cn.WindowsDataplane != nil || cn.IPPools[0].Encapsulation != "VXLANCrossSubnet" || len(in.Spec.ServiceCIDRs) != 0 {
		t.Errorf("installation: bgp %v, windowsDataplane %v, pools %+v, serviceCIDRs %v", cn.BGP, cn.WindowsDataplane, cn.IPPools, in.Spec.ServiceCIDRs)
	}
	if c.IPAMConfig == nil || c.IPAMConfig.Spec.StrictAffinity {
		t.Errorf("IPAM configuration %+v, want strictAffinity off", c.IPAMConfig)
	}
	// The operator renders the pool from the Installation.
	if len(c.IPPools) != 1 || c.IPPools[0].Spec.VXLANMode != "CrossSubnet" {
		t.Errorf("IP pools %+v, want one in VXLAN mode CrossSubnet", c.IPPools)
	}
	for _, obj := range snap.Objects {
		if obj.Key.Kind == "ConfigMap" && obj.Key.Name == "kubernetes-services-endpoint" {
			t.Errorf("%s is written; a cluster before the migration has none", obj.Key)
		}
	}
	// Without the option the same seed writes the settings Windows needs.
	after, _ := generate(t, with(o, func(o *Options) { o.BeforeMigration = false }))
	_, ca := build(t, after)
	if ca.IPPools[0].Spec.VXLANMode != "Always" || !ca.IPAMConfig.Spec.StrictAffinity {
		t.Errorf("without --before-migration: pool %+v, strictAffinity %v", ca.IPPools[0].Spec, ca.IPAMConfig.Spec.StrictAffinity)
	}
}

func TestNamespacesCarryPodSecurityLevelsThatThePodsPass(t *testing.T) {
	dir, _ := generate(t, with(small, func(o *Options) { o.Namespaces, o.ObservedIPs = 12, true }))
	_, c := build(t, dir)
	levels := map[string]int{}
	for _, ns := range c.Namespaces {
		if l := ns.Labels["pod-security.kubernetes.io/enforce"]; l != "" && !systemNamespaces[ns.Name] {
			levels[l]++
		}
	}
	if levels["restricted"] == 0 || levels["restricted"]+levels["baseline"] != 12 {
		t.Errorf("enforce levels of the 12 workload namespaces: %v", levels)
	}
	// No Pod Security warnings: baseline namespaces warn at restricted, so a
	// warning would show a pod that fails restricted.
	for _, n := range c.Notes {
		if strings.Contains(n.Message, "PodSecurity") {
			t.Errorf("%s: %s", n.Object, n.Message)
		}
	}
}

func TestNetworkPoliciesMixSelectorShapes(t *testing.T) {
	dir, _ := generate(t, with(small, func(o *Options) { o.Policies = 200 }))
	_, c := build(t, dir)
	has := map[string]bool{}
	for _, np := range c.NetworkPolicies {
		peers := func(ps []networkingv1.NetworkPolicyPeer) {
			for _, p := range ps {
				if p.IPBlock != nil && len(p.IPBlock.Except) > 0 {
					has["an ipBlock with except"] = true
				}
				if p.NamespaceSelector != nil && p.PodSelector != nil {
					has["a peer with namespace and pod selectors"] = true
				}
				if p.NamespaceSelector != nil && len(p.NamespaceSelector.MatchExpressions) > 0 {
					has["a namespaceSelector with expressions"] = true
				}
			}
		}
		ports := func(ps []networkingv1.NetworkPolicyPort) {
			for _, p := range ps {
				if p.Port != nil && p.Port.StrVal != "" {
					has["a named port"] = true
				}
				if p.EndPort != nil {
					has["a port range"] = true
				}
			}
		}
		for _, r := range np.Spec.Ingress {
			peers(r.From)
			ports(r.Ports)
		}
		for _, r := range np.Spec.Egress {
			has["an egress rule"] = true
			peers(r.To)
			ports(r.Ports)
		}
		if len(np.Spec.Ingress) > 0 && len(np.Spec.Egress) > 0 {
			has["a policy with both source and destination selectors"] = true
		}
		if len(np.Spec.PodSelector.MatchLabels) == 0 && len(np.Spec.PodSelector.MatchExpressions) == 0 {
			has["a policy selecting every pod"] = true
		}
	}
	for _, cp := range c.CalicoPolicies {
		for _, r := range cp.Spec.Ingress {
			if r.Source.Selector != "" && r.Destination.Selector != "" {
				has["a Calico rule with both source and destination selectors"] = true
			}
		}
	}
	for _, want := range []string{
		"an ipBlock with except", "a peer with namespace and pod selectors", "a namespaceSelector with expressions",
		"a named port", "a port range", "an egress rule", "a policy with both source and destination selectors",
		"a Calico rule with both source and destination selectors",
		"a policy selecting every pod",
	} {
		if !has[want] {
			t.Errorf("no policy has %s", want)
		}
	}
}

func TestOneStreamCarriesAPlainNodeCluster(t *testing.T) {
	tests := []struct {
		name   string
		format Format
	}{
		{"a YAML stream read from stdin builds", FormatYAML},
		{"a JSON List read from stdin builds", FormatJSON},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := with(small, func(o *Options) { o.PlainNodes, o.ObservedIPs, o.Format = true, true, tt.format })
			var buf bytes.Buffer
			if _, err := Generate(o, Outputs{Main: &buf}); err != nil {
				t.Fatal(err)
			}
			snap, err := load.Load(load.Options{Filenames: []string{"-"}, Stdin: &buf})
			if err != nil {
				t.Fatal(err)
			}
			c, err := engine.Build(snap)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Nodes) != o.Nodes || len(c.Rejected) > 0 {
				t.Errorf("%d nodes, %d rejected", len(c.Nodes), len(c.Rejected))
			}
			for _, n := range c.Nodes {
				if n.Labels["kubernetes.io/os"] == "windows" && n.Status.Allocatable.Pods().Value() != WindowsMaxPods {
					t.Errorf("Windows node %s allows %s pods", n.Name, n.Status.Allocatable.Pods())
				}
			}
		})
	}
}

func TestTheClusterKindNeedsAFileForTheKubeletPatch(t *testing.T) {
	var buf bytes.Buffer
	_, err := Generate(small, Outputs{Main: &buf})
	if !errors.Is(err, ErrPatchNeedsFile) {
		t.Fatalf("got %v, want ErrPatchNeedsFile", err)
	}
	dir, _ := generate(t, small)
	_, c := build(t, dir)
	for _, n := range c.Nodes {
		want := int64(LinuxMaxPods)
		if n.Labels["kubernetes.io/os"] == "windows" {
			want = WindowsMaxPods
		}
		if got := n.Status.Allocatable.Pods().Value(); got != want {
			t.Errorf("node %s allows %d pods, want %d (the kubelet patch)", n.Name, got, want)
		}
	}
}

func TestWindowsHostsJoinWithTheirTaintAndPatch(t *testing.T) {
	dir, _ := generate(t, small)
	_, c := build(t, dir)
	if len(c.Kubeadm.Joins) != small.WindowsNodes {
		t.Fatalf("%d JoinConfigurations, want one per Windows host", len(c.Kubeadm.Joins))
	}
	for _, j := range c.Kubeadm.Joins {
		if j.NodeRegistration.Taints == nil || len(*j.NodeRegistration.Taints) != 1 || (*j.NodeRegistration.Taints)[0].Key != "os" {
			t.Errorf("join %s: taints %v", j.NodeRegistration.Name, j.NodeRegistration.Taints)
		}
		if kc := c.Kubeadm.NodeKubelet[j.NodeRegistration.Name]; kc == nil || kc.MaxPods != WindowsMaxPods {
			t.Errorf("node %s: effective kubelet configuration %+v", j.NodeRegistration.Name, kc)
		}
	}
	inst := c.Installation.Spec
	if *inst.CalicoNetwork.BGP != "Disabled" || *inst.CalicoNetwork.WindowsDataplane != "HNS" || inst.CalicoNetwork.IPPools[0].Encapsulation != "VXLAN" || len(inst.ServiceCIDRs) != 1 {
		t.Errorf("installation: %+v", inst.CalicoNetwork)
	}
	if c.IPAMConfig == nil || !c.IPAMConfig.Spec.StrictAffinity {
		t.Error("strictAffinity is not on")
	}
}

func TestWindowsHostsObserveNothingLikeAFreshJoin(t *testing.T) {
	cases := []struct {
		name  string
		plain bool
	}{
		{"the Cluster kind's Windows hosts get the twin's placeholder", false},
		{"plain Windows Nodes carry the MAC calico-node-windows recorded", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := generate(t, with(small, func(o *Options) { o.PlainNodes, o.ObservedIPs = tc.plain, true }))
			_, c := build(t, dir)
			wins := 0
			for _, h := range c.Hosts {
				if h.OS == "windows" && !tc.plain && (h.Observed.VXLANTunnelMAC != "" || h.Observed.DrPortName != "") {
					t.Errorf("host %s observes VTEP MAC %q and DrPort %q", h.Name, h.Observed.VXLANTunnelMAC, h.Observed.DrPortName)
				}
			}
			for _, n := range c.Nodes {
				if n.Labels["kubernetes.io/os"] != "windows" {
					continue
				}
				wins++
				mac := n.Annotations["projectcalico.org/VXLANTunnelMACAddr"]
				placeholder := n.Annotations["hybrid.kubectl-hybrid.io/vxlan-tunnel-mac"] != ""
				switch {
				case mac == "":
					t.Errorf("node %s has no VTEP MAC", n.Name)
				case tc.plain == placeholder:
					t.Errorf("node %s: VTEP MAC %s marked as a placeholder: %v", n.Name, mac, placeholder)
				case !tc.plain && mac != engine.WindowsVTEPPlaceholder(n.Name):
					t.Errorf("node %s: VTEP MAC %s, want the placeholder %s", n.Name, mac, engine.WindowsVTEPPlaceholder(n.Name))
				}
			}
			if wins != small.WindowsNodes {
				t.Errorf("%d Windows nodes, want %d", wins, small.WindowsNodes)
			}
		})
	}
}

func TestGetPrintsTheGeneratedCluster(t *testing.T) {
	dir, _ := generate(t, with(small, func(o *Options) { o.ObservedIPs = true }))
	_, c := build(t, dir)
	var out bytes.Buffer
	_, err := report.Get(&out, c, report.Request{Args: []string{"nodes,pods,svc,netpol"}, Options: report.Options{AllNamespaces: true, Now: time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)}})
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(out.String(), "\n"); lines < small.Nodes+small.Pods+small.Services+small.Policies {
		t.Errorf("get printed %d lines", lines)
	}
}

func TestOptionsThatCannotWorkAreRefused(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"no nodes", Options{}, "--nodes"},
		{"Windows nodes leave no room for the control plane", Options{Nodes: 2, WindowsNodes: 2}, "--windows-nodes"},
		{"pods beyond the workers' capacity", Options{Nodes: 3, WindowsNodes: 1, Namespaces: 1, Pods: 159}, "do not fit"},
		{"pods without a namespace", Options{Nodes: 3, Pods: 5}, "--namespaces"},
		{"services with nothing to select", Options{Nodes: 3, Namespaces: 1, Services: 1}, "--services"},
		{"an unknown format", Options{Nodes: 1, Format: "toml"}, "format"},
		{"negative counts", Options{Nodes: 1, Policies: -1}, "negative"},
		{"Windows nodes in a cluster before the migration", Options{Nodes: 3, WindowsNodes: 1, BeforeMigration: true}, "--windows-nodes must be 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.o.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error about %s", err, tt.want)
			}
		})
	}
	// The largest cluster that fits is accepted: 100 per Linux worker, 58 per Windows one.
	if err := (Options{Nodes: 3, WindowsNodes: 1, Namespaces: 1, Pods: 158}).Validate(); err != nil {
		t.Errorf("158 pods on one Linux and one Windows worker: %v", err)
	}
}

func TestThePodNetworkGrowsWithTheNodeCount(t *testing.T) {
	tests := []struct {
		name  string
		nodes int
		want  string
	}{
		{"a small cluster gets a /16", 100, "10.128.0.0/16"},
		{"a thousand nodes get a /14", 1000, "10.128.0.0/14"},
		{"Kubernetes' 5,000 nodes get a /11", 5000, "10.128.0.0/11"},
		{"the largest cluster gets a /9", MaxNodes, "10.128.0.0/9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := poolPrefix(tt.nodes)
			if p.String() != tt.want {
				t.Fatalf("got %s, want %s", p, tt.want)
			}
			if perNode := 1 << (24 - p.Bits()); perNode < tt.nodes {
				t.Errorf("%d /24 pod CIDRs for %d nodes", perNode, tt.nodes)
			}
		})
	}
}

func TestYAMLScalarsReadBackAsWritten(t *testing.T) {
	tests := []struct {
		name  string
		value string
	}{
		{"a plain word stays a string", "linux"},
		{"yes is not a boolean", "yes"},
		{"an upper-case boolean word stays a string", "False"},
		{"null stays a string", "null"},
		{"a number-like string stays a string", "6443"},
		{"a float-like string stays a string", "1e3"},
		{"a version with dots stays a string", "10.0.26100"},
		{"a CIDR stays a string", "10.96.0.0/12"},
		{"an empty string stays empty", ""},
		{"a Windows path keeps its backslashes", `C:\k\patches`},
		{"a PowerShell variable keeps its dollar", "$env:CONTAINER_SANDBOX_MOUNT_POINT/x"},
		{"a selector with parentheses stays a string", "all()"},
		{"a value with a colon and space stays a string", "a: b"},
		{"a value ending in a colon stays a string", "key:"},
		{"a leading dash stays a string", "-x"},
		{"a memory quantity stays a string", "64Mi"},
		{"a timestamp stays a string", "2026-03-02T09:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			e := newEncoder(&buf, FormatYAML, "")
			e.put(map[string]any{"v": tt.value, tt.value: "k"})
			if err := e.close(); err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := yaml.Unmarshal(buf.Bytes(), &got); err != nil {
				t.Fatalf("%q: %v", buf.String(), err)
			}
			if got["v"] != tt.value || got[tt.value] != "k" {
				t.Errorf("YAML 1.1 (sigs.k8s.io/yaml): wrote %q, read back %#v", buf.String(), got)
			}
			var got3 map[string]any
			if err := yamlv3.Unmarshal(buf.Bytes(), &got3); err != nil {
				t.Fatalf("%q: %v", buf.String(), err)
			}
			if got3["v"] != tt.value || got3[tt.value] != "k" {
				t.Errorf("YAML 1.2 (the loader's yaml.v3): wrote %q, read back %#v", buf.String(), got3)
			}
		})
	}
}

func TestTunnelAddressesAreTheOnesCalicoNodeClaims(t *testing.T) {
	o := with(small, func(o *Options) { o.PlainNodes = true })
	p, err := newPlan(o)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ipam.New([]ipam.Pool{{Name: poolName, CIDR: p.pool, BlockSize: blockSize, NodeSelector: "all()", VXLANMode: "Always"}},
		ipam.Config{StrictAffinity: true, AutoAllocateBlocks: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range p.hosts {
		m.SetNode(h.name, map[string]string{"kubernetes.io/os": h.os()})
	}
	for _, h := range p.hosts {
		want, err := m.VXLANTunnelAddress(h.name)
		if err != nil {
			t.Fatal(err)
		}
		if h.tunnel != want {
			t.Errorf("%s: tunnel %s, calico-node would claim %s", h.name, h.tunnel, want)
		}
	}
}

func TestRewritingADirectoryLeavesOnlyTheNewFiles(t *testing.T) {
	dir := t.TempDir()
	if _, err := WriteDir(dir, small); err != nil {
		t.Fatal(err)
	}
	sum, err := WriteDir(dir, Options{Nodes: 3, Namespaces: 1, Pods: 20, Services: 2, Policies: 1, Seed: 1, Format: FormatJSON})
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 1 || names[0] != "cluster.json" || len(sum.Files) != 1 {
		t.Fatalf("files after rewriting as JSON without Windows nodes: %v", names)
	}
	if _, c := build(t, dir); len(c.Nodes) != 3 {
		t.Errorf("%d nodes read back", len(c.Nodes))
	}
}

func TestEveryJSONFileIsPlainJSON(t *testing.T) {
	for _, plain := range []bool{false, true} {
		dir := t.TempDir()
		o := small
		o.Format, o.PlainNodes = FormatJSON, plain
		if _, err := WriteDir(dir, o); err != nil {
			t.Fatal(err)
		}
		entries, _ := os.ReadDir(dir)
		jsonFiles := 0
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".json") {
				continue
			}
			jsonFiles++
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			var v any
			if err := json.Unmarshal(data, &v); err != nil {
				t.Errorf("plain nodes %t: %s: %v", plain, e.Name(), err)
			}
		}
		if jsonFiles < 2 && !plain {
			t.Errorf("plain nodes %t: %d JSON files, want the cluster and the kubelet patch", plain, jsonFiles)
		}
	}
}
