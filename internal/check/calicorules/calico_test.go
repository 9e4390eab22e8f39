package calicorules

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/rule"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

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
			b, r := rule.WindowsVersion(n)
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
			got := ruleEncapsulation.Check(rule.NewContext(tc.c, false, nil))
			if len(got) != 1 || got[0].Field != tc.field {
				t.Fatalf("findings %+v, want one on %s", got, tc.field)
			}
			if refuses := strings.Contains(got[0].Message, "the operator refuses IPIP"); refuses != tc.refuses {
				t.Errorf("message %q: says the operator refuses = %v, want %v", got[0].Message, refuses, tc.refuses)
			}
		})
	}
}
