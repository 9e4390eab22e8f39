package check

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

func TestDottedServiceNames(t *testing.T) {
	c := &model.Cluster{Services: []*corev1.Service{{ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "demo"}}}}
	x := NewContext(c, false, nil)
	cases := []struct {
		name string
		text string
		want []string
	}{
		{"a URL with name.namespace is reported", "http://hello.demo/healthz", []string{"hello.demo"}},
		{"name.namespace.svc is still partial", "hello.demo.svc:80", []string{"hello.demo.svc"}},
		{"the full name is fine", "http://hello.demo.svc.cluster.local/healthz", nil},
		{"the full name with a trailing dot is fine", "hello.demo.svc.cluster.local.", nil},
		{"a bare name without a dot is fine", "http://hello/", nil},
		{"a dotted name of no Service is not reported", "api.example.com", nil},
		{"a version number is not a name", "v1.2.3", nil},
		{"upper case is normalized", "HTTP://HELLO.DEMO/", []string{"hello.demo"}},
		{"two names in one value are both reported", "hello.demo,hello.demo.svc", []string{"hello.demo", "hello.demo.svc"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			x.scanText(tc.text, "cluster.local", func(tok, _ string) { got = append(got, tok) })
			if !slices.Equal(got, tc.want) {
				t.Errorf("scanText(%q) = %v, want %v", tc.text, got, tc.want)
			}
		})
	}
}

func TestWindowsVersions(t *testing.T) {
	cases := []struct {
		name        string
		kernel, lbl string
		build       string
		rev         int
	}{
		{"the kubelet's kernel version gives build and revision", "10.0.26100.33438", "", "10.0.26100", 33438},
		{"the windows-build label wins for the build", "10.0.26100.33438", "10.0.26100", "10.0.26100", 33438},
		{"no revision is -1", "10.0.17763", "", "10.0.17763", -1},
		{"an empty kernel version gives nothing", "", "", "", -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{}}}
			n.Status.NodeInfo.KernelVersion = tc.kernel
			if tc.lbl != "" {
				n.Labels[corev1.LabelWindowsBuild] = tc.lbl
			}
			b, r := windowsVersion(n)
			if b != tc.build || r != tc.rev {
				t.Errorf("windowsVersion = %q, %d; want %q, %d", b, r, tc.build, tc.rev)
			}
		})
	}
	for _, v := range []struct {
		have, want string
		ok         bool
	}{{"v3.33.0", "v3.33", true}, {"v3.34.1", "v3.33", true}, {"v4.0.0", "v3.33", true}, {"v3.30.2", "v3.33", false}, {"", "v3.33", false}} {
		if got := calicoAtLeast(v.have, v.want); got != v.ok {
			t.Errorf("calicoAtLeast(%q, %q) = %v", v.have, v.want, got)
		}
	}
}

func TestContainerRuntimeVersions(t *testing.T) {
	cases := []struct {
		in           string
		name         string
		major, minor int
		ok           bool
	}{
		{"containerd://2.2.2", "containerd", 2, 2, true},
		{"containerd://1.6.0-rc.1", "containerd", 1, 6, true},
		{"docker://20.10.7", "docker", 20, 10, true},
		{"containerd", "", 0, 0, false},
	}
	for _, tc := range cases {
		name, major, minor, ok := runtimeVersion(tc.in)
		if name != tc.name || major != tc.major || minor != tc.minor || ok != tc.ok {
			t.Errorf("runtimeVersion(%q) = %q %d %d %v", tc.in, name, major, minor, ok)
		}
	}
}

func TestFirewallFirstMatchWins(t *testing.T) {
	hosts := []hybrid.Host{
		{Name: "a", Address: "192.168.10.1"},
		{Name: "b", Address: "192.168.10.2"},
		{Name: "w", Address: "192.168.10.3"},
	}
	cases := []struct {
		name  string
		rules []hybrid.FirewallRule
		want  []string // "src>dst"
	}{
		{"no rules allow everything", nil, nil},
		{"a block for one host blocks the others to it", []hybrid.FirewallRule{{Hosts: []string{"w"}, Protocol: "udp", Ports: []int32{4789}, Action: "Block"}}, []string{"a>w", "b>w"}},
		{"an earlier allow wins over a later block", []hybrid.FirewallRule{
			{Hosts: []string{"w"}, Protocol: "UDP", Ports: []int32{4789}, From: []string{"192.168.10.1/32"}, Action: "Allow"},
			{Hosts: []string{"w"}, Protocol: "UDP", Ports: []int32{4789}, Action: "Block"},
		}, []string{"b>w"}},
		{"a block of another port does not matter", []hybrid.FirewallRule{{Protocol: "UDP", Ports: []int32{53}, Action: "Block"}}, nil},
		{"a block of another protocol does not matter", []hybrid.FirewallRule{{Protocol: "TCP", Ports: []int32{4789}, Action: "Block"}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			x := NewContext(&model.Cluster{Hosts: hosts, Network: hybrid.Network{Firewall: tc.rules}}, false, nil)
			var got []string
			for _, f := range x.blockedFlows("UDP", 4789, hosts, hosts) {
				for _, s := range f.srcs {
					got = append(got, s+">"+f.dst)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("blocked %v, want %v", got, tc.want)
			}
		})
	}
}

func TestUsableAddressesOfAWindowsBlock(t *testing.T) {
	for bits, want := range map[int]int{26: 60, 27: 28, 24: 252} {
		if got := usableWindows(bits); got != want {
			t.Errorf("usableWindows(/%d) = %d, want %d", bits, got, want)
		}
	}
}

func TestARulePanicIsAnErrorNotAVerdict(t *testing.T) {
	reg, err := NewRegistry(Rule{ID: "HYB900", Name: "boom", Title: "t", Severity: Error,
		Check: func(*Context) []Finding { panic("bug") }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(&model.Cluster{}, Options{Registry: reg}); err == nil {
		t.Error("a panicking rule gives no error")
	}
}

// The operator refuses a non-VXLAN encapsulation only on the first IPv4
// pool (tigera/operator validation.go through render.GetIPv4Pool); HYB001
// still reports a later IPIP pool, without claiming the operator refuses it.
func TestHYB001SaysTheOperatorRefusesOnlyTheFirstIPv4Pool(t *testing.T) {
	inst := func(pools ...operator.IPPool) *model.Cluster {
		i := &operator.Installation{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
		i.Spec.CalicoNetwork = &operator.CalicoNetworkSpec{IPPools: pools}
		return &model.Cluster{Installation: i}
	}
	v6 := operator.IPPool{Name: "v6", CIDR: "fd00::/64", Encapsulation: operator.EncapNone}
	vx := operator.IPPool{Name: "vx", CIDR: "172.21.0.0/16", Encapsulation: operator.EncapVXLAN}
	ipip := operator.IPPool{Name: "ipip", CIDR: "172.22.0.0/16", Encapsulation: operator.EncapIPIP}
	cases := []struct {
		name    string
		c       *model.Cluster
		field   string
		refuses bool
	}{
		{"an IPIP first pool is refused by the operator", inst(ipip, vx), "spec.calicoNetwork.ipPools[0].encapsulation", true},
		{"an IPv6 pool before it does not count as first", inst(v6, ipip), "spec.calicoNetwork.ipPools[1].encapsulation", true},
		{"an IPIP second pool is accepted by the operator but still reported", inst(vx, ipip), "spec.calicoNetwork.ipPools[1].encapsulation", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ruleEncapsulation.Check(NewContext(tc.c, false, nil))
			if len(got) != 1 || got[0].Field != tc.field {
				t.Fatalf("findings %+v, want one on %s", got, tc.field)
			}
			if refuses := strings.Contains(got[0].Message, "the operator refuses IPIP"); refuses != tc.refuses {
				t.Errorf("message %q: says the operator refuses = %v, want %v", got[0].Message, refuses, tc.refuses)
			}
		})
	}
}
