package diff

import (
	"encoding/json"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// An Installation change reaches the Linux routes only through bgp and
// Felix's Linux rules only through linuxDataplane; every change reaches the Windows nodes.
func TestAnInstallationChangeRecompilesOnlyTheDataplanePartsThatReadTheField(t *testing.T) {
	base := build(t, true)
	for _, tc := range []struct {
		name   string
		change func(*operator.Installation)
		want   parts
	}{
		{"windowsDataplane reaches only the Windows nodes", func(in *operator.Installation) {
			v := "Disabled"
			in.Spec.CalicoNetwork.WindowsDataplane = &v
		}, parts{windows: true}},
		{"serviceCIDRs reach only the Windows nodes", func(in *operator.Installation) {
			in.Spec.ServiceCIDRs = append(in.Spec.ServiceCIDRs, "10.200.0.0/16")
		}, parts{windows: true}},
		{"bgp reaches only the Windows nodes when every pool has VXLAN", func(in *operator.Installation) {
			v := "Enabled"
			if b := in.Spec.CalicoNetwork.BGP; b != nil && *b == "Enabled" {
				v = "Disabled"
			}
			in.Spec.CalicoNetwork.BGP = &v
		}, parts{windows: true}},
		{"linuxDataplane reaches Felix's Linux rules and the Windows nodes", func(in *operator.Installation) {
			v := "Iptables"
			in.Spec.CalicoNetwork.LinuxDataplane = &v
		}, parts{policy: true, windows: true}},
		{"no change reaches nothing", func(*operator.Installation) {}, parts{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := json.Marshal(base.Installation)
			if err != nil {
				t.Fatal(err)
			}
			in := &operator.Installation{}
			if err := json.Unmarshal(raw, in); err != nil {
				t.Fatal(err)
			}
			tc.change(in)
			after := *base
			after.Installation = in
			if got := changedParts(newDigest(base, nil), newDigest(&after, nil)); got != tc.want {
				t.Errorf("changed parts %+v, want %+v", got, tc.want)
			}
		})
	}
}

// The Linux compilers declare what they read of the IP pools
// (linux.ReadSettings): the encapsulation reaches the routes only, the
// CIDR and natOutgoing Felix's table; a ConfigMap reaches no Linux part.
func TestAPoolOrConfigMapChangeRecompilesOnlyTheDataplanePartsThatReadIt(t *testing.T) {
	base := build(t, true)
	if len(base.IPPools) == 0 {
		t.Fatal("the lab has no IP pool")
	}
	for _, tc := range []struct {
		name   string
		change func(*model.Cluster)
		want   parts
	}{
		{"a pool's encapsulation reaches the Linux routes and the Windows nodes", func(c *model.Cluster) {
			cp := *c.IPPools[0]
			p := &cp
			p.Spec.VXLANMode = "CrossSubnet"
			c.IPPools = append([]*calico.IPPool{p}, c.IPPools[1:]...)
		}, parts{routing: true, windows: true}},
		{"a pool's natOutgoing reaches Felix's Linux rules and the Windows nodes", func(c *model.Cluster) {
			cp := *c.IPPools[0]
			p := &cp
			p.Spec.NATOutgoing = !p.Spec.NATOutgoing
			c.IPPools = append([]*calico.IPPool{p}, c.IPPools[1:]...)
		}, parts{policy: true, windows: true}},
		{"a pool's node selector reaches only the Windows nodes", func(c *model.Cluster) {
			cp := *c.IPPools[0]
			p := &cp
			p.Spec.NodeSelector = "kubernetes.io/os == 'linux'"
			c.IPPools = append([]*calico.IPPool{p}, c.IPPools[1:]...)
		}, parts{windows: true}},
		{"a new ConfigMap reaches only the Windows nodes", func(c *model.Cluster) {
			c.ConfigMaps = append(slices.Clone(c.ConfigMaps), &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Namespace: "tigera-operator", Name: "kubernetes-services-endpoint"},
				Data:       map[string]string{"KUBERNETES_SERVICE_HOST": "192.168.0.10", "KUBERNETES_SERVICE_PORT": "6443"},
			})
		}, parts{windows: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			after := *base
			tc.change(&after)
			if got := changedParts(newDigest(base, nil), newDigest(&after, nil)); got != tc.want {
				t.Errorf("changed parts %+v, want %+v", got, tc.want)
			}
		})
	}
}

// BIRD's routes exist only for pools without VXLAN: there bgp reaches the
// Linux routes.
func TestBGPReachesTheLinuxRoutesOfAPoolWithoutVXLAN(t *testing.T) {
	withBGP := func(bgp string) *model.Cluster {
		c := *build(t, true)
		cp := *c.IPPools[0]
		cp.Spec.VXLANMode = "Never"
		c.IPPools = append([]*calico.IPPool{&cp}, c.IPPools[1:]...)
		in := *c.Installation
		cn := *in.Spec.CalicoNetwork
		cn.BGP = &bgp
		in.Spec.CalicoNetwork = &cn
		c.Installation = &in
		return &c
	}
	if got, want := changedParts(newDigest(withBGP("Enabled"), nil), newDigest(withBGP("Disabled"), nil)), (parts{routing: true, windows: true}); got != want {
		t.Errorf("changed parts %+v, want %+v", got, want)
	}
}

// The Windows compiler reads the Windows kube-proxy pod's flags and
// environment: a change to them in place (a rollout of its DaemonSet
// keeps the pods' names) reaches the Windows node's load balancers.
func TestAnInPlaceChangeOfTheWindowsKubeProxysFlagsReachesTheWindowsNode(t *testing.T) {
	base := build(t, true)
	i := slices.IndexFunc(base.Pods, func(p *corev1.Pod) bool {
		ref := metav1.GetControllerOf(p)
		return p.Spec.HostNetwork && ref != nil && ref.Kind == "DaemonSet" && ref.Name == "kube-proxy-windows"
	})
	if i < 0 {
		t.Fatal("the lab has no kube-proxy-windows pod")
	}
	after := *base
	withPod(&after, i, func(p *corev1.Pod) {
		p.Spec.Containers[0].Args = append(p.Spec.Containers[0].Args, "--enable-dsr=false")
	})
	r, err := Compare(base, &after, Options{NoReach: true})
	if err != nil {
		t.Fatal(err)
	}
	node := base.Pods[i].Spec.NodeName
	j := slices.IndexFunc(r.Nodes, func(n NodeDiff) bool { return n.Node == node })
	if j < 0 || len(r.Nodes[j].LoadBalancers.Added) == 0 {
		t.Fatalf("node changes %+v, want %s's load balancers changed (DSR off)", r.Nodes, node)
	}
}
