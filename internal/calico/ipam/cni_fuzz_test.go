package ipam

import (
	"net/netip"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
)

// FuzzPodAnnotations feeds arbitrary ipv4pools and ipAddrs annotation values
// to CNI ADD: an error or an address of a configured pool, never a panic.
func FuzzPodAnnotations(f *testing.F) {
	for _, s := range [][2]string{
		{`["default-ipv4-ippool"]`, ""},
		{`["10.9.0.0/16"]`, ""},
		{"", `["172.21.5.77"]`},
		{"", `["172.21.5.77","fd00::1"]`},
		{`[""]`, `["::ffff:172.21.5.1"]`},
		{`nope`, `[1]`},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pools, addrs string) {
		other := Pool{Name: "other", CIDR: netip.MustParsePrefix("10.9.0.0/16")}
		m, err := New([]Pool{labPool(), other}, strict())
		if err != nil {
			t.Fatal(err)
		}
		m.SetNode("n", linux)
		ann := map[string]string{}
		if pools != "" {
			ann[calico.AnnotationIPv4Pools] = pools
		}
		if addrs != "" {
			ann[calico.AnnotationIPAddrs] = addrs
		}
		a, err := m.AssignPodRequest(PodRequest{Node: "n", Handle: "h", PodAnnotations: ann})
		if err == nil && !labPool().CIDR.Contains(a) && !other.CIDR.Contains(a) {
			t.Errorf("address %s outside every pool (pools %q, ipAddrs %q)", a, pools, addrs)
		}
	})
}
