package linux

import (
	"net"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
)

func TestVethName(t *testing.T) {
	// The seed's ip route on k8s-lab-node-2 names these interfaces.
	for _, tc := range []struct{ name, ns, pod, want string }{
		{"the csi-node-driver pod of node-2 is calid60012519f0", "calico-system", "csi-node-driver-w49wd", "calid60012519f0"},
		{"the CoreDNS pod of node-2 is caliad8a24266f7", "kube-system", "coredns-8f97fdbd9-9gc9h", "caliad8a24266f7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := VethName(tc.ns, tc.pod); got != tc.want {
				t.Errorf("VethName(%s, %s) = %s, want %s", tc.ns, tc.pod, got, tc.want)
			}
		})
	}
}

func TestLinkLocalIsEUI64OfTheMAC(t *testing.T) {
	for _, tc := range []struct{ name, mac, want string }{
		{"the universal/local bit of the first octet flips", "66:05:38:46:ab:ea", "fe80::6405:38ff:fe46:abea/64"},
		{"a cali interface's ee:ee... MAC gives fe80::ecee:eeff:feee:eeee", "ee:ee:ee:ee:ee:ee", "fe80::ecee:eeff:feee:eeee/64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := net.ParseMAC(tc.mac)
			if got := linkLocal(m).String(); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestLinks(t *testing.T) {
	f := newFixture()
	f.node("a", "10.0.0.11", 0, 0)
	f.node("b", "10.0.0.12", 1, 0)
	f.pod("ns", "second", "a", "10.244.0.3", nil)
	f.pod("ns", "first", "a", "10.244.0.2", nil)
	vni, mtu := 5000, 1400
	f.c.FelixConfigs = append(f.c.FelixConfigs, &calico.FelixConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: calico.FelixConfigurationSpec{VXLANVNI: &vni}})
	n := f.compile(t)["a"]
	ls := n.Links()
	t.Run("lo is 1, the NIC 2, vxlan.calico 5, pod veths from 6 in creation order", func(t *testing.T) {
		var got []string
		for _, l := range ls {
			got = append(got, fmtLink(l))
		}
		want := []string{"1 lo", "2 eth0", "5 vxlan.calico", "6 " + VethName("ns", "first"), "7 " + VethName("ns", "second")}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("links %v, want %v", got, want)
		}
	})
	t.Run("vxlan.calico takes the VNI from FelixConfiguration and the MTU from the NIC less 50", func(t *testing.T) {
		l, _ := n.Link("vxlan.calico")
		if l.VXLAN.VNI != 5000 || l.MTU != 1450 || l.VXLAN.DstPort != 4789 || l.VXLAN.Parent != "eth0" || l.VXLAN.Local.String() != "10.0.0.11" {
			t.Errorf("vxlan.calico = %+v %+v", l, l.VXLAN)
		}
		if l.MAC.String() != felix.VTEPMACForHost("a") {
			t.Errorf("VTEP MAC %s, want Felix's derived %s", l.MAC, felix.VTEPMACForHost("a"))
		}
	})
	t.Run("a per-node FelixConfiguration overrides the default", func(t *testing.T) {
		f.c.FelixConfigs = append(f.c.FelixConfigs, &calico.FelixConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "node.a"},
			Spec: calico.FelixConfigurationSpec{VXLANMTU: &mtu}})
		l, _ := f.compile(t)["a"].Link("vxlan.calico")
		if l.MTU != 1400 || l.VXLAN.VNI != 5000 {
			t.Errorf("vxlan.calico mtu %d vni %d, want 1400 5000", l.MTU, l.VXLAN.VNI)
		}
	})
	t.Run("the host's NIC MAC is used as given", func(t *testing.T) {
		l, _ := n.Link("eth0")
		if l.MAC.String() != "52:54:00:00:00:00" {
			t.Errorf("eth0 MAC %s", l.MAC)
		}
	})
	t.Run("a pod veth has Calico's ee:ee:ee:ee:ee:ee and the pod MTU", func(t *testing.T) {
		l, _ := n.Link(VethName("ns", "first"))
		if l.MAC.String() != "ee:ee:ee:ee:ee:ee" || l.MTU != 1450 || l.Peer.Pod != "ns/first" || !strings.HasPrefix(l.Peer.NetNS, "cni-") {
			t.Errorf("veth = %+v %+v", l, l.Peer)
		}
	})
}

func fmtLink(l Link) string { return strconv.Itoa(l.Index) + " " + l.Name }

func TestNoTunnelAddressMeansNoVXLANDevice(t *testing.T) {
	f := newFixture()
	nd := f.node("a", "10.0.0.11", 0, 0)
	delete(nd.Annotations, calico.AnnotationIPv4VXLANTunnelAddr)
	n := f.compile(t)["a"]
	if _, ok := n.Link("vxlan.calico"); ok {
		t.Error("vxlan.calico exists without a tunnel address")
	}
	if !strings.Contains(strings.Join(n.Notes(), "\n"), "no VXLAN tunnel address") {
		t.Errorf("notes %q", n.Notes())
	}
	if out := n.IPNeighAll(); out != "" {
		t.Errorf("ip neigh without a VXLAN device = %q", out)
	}
}

func TestNeighbourAndFDBOrder(t *testing.T) {
	f := newFixture()
	f.node("self", "10.0.0.10", 0, 10)
	f.node("old", "10.0.0.20", 1, 0)   // exists before self: learned at self's creation
	f.node("twin", "10.0.0.30", 2, 10) // created with self: same batch
	f.node("late", "10.0.0.40", 3, 60) // learned later
	n := f.compile(t)["self"]
	var neigh, fdb []string
	for _, e := range n.Neighbors() {
		neigh = append(neigh, e.Node)
	}
	for _, e := range n.FDB() {
		fdb = append(fdb, e.Node)
	}
	t.Run("peers learned together are listed by tunnel address, later peers after them", func(t *testing.T) {
		if got := strings.Join(neigh, ","); got != "old,twin,late" {
			t.Errorf("neigh order %s", got)
		}
	})
	t.Run("in the FDB the same batch is listed by MAC", func(t *testing.T) {
		macOld, _ := net.ParseMAC(felix.VTEPMACForHost("old"))
		macTwin, _ := net.ParseMAC(felix.VTEPMACForHost("twin"))
		want := "old,twin,late"
		if macTwin.String() < macOld.String() {
			want = "twin,old,late"
		}
		if got := strings.Join(fdb, ","); got != want {
			t.Errorf("fdb order %s, want %s", got, want)
		}
	})
	t.Run("the FDB points each VTEP MAC at its node's address", func(t *testing.T) {
		for _, e := range n.FDB() {
			if e.Node == "late" && (e.Dst.String() != "10.0.0.40" || e.MAC.String() != felix.VTEPMACForHost("late")) {
				t.Errorf("fdb entry %+v", e)
			}
		}
	})
}
