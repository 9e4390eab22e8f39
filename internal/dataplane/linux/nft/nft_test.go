package nft

import (
	"net/netip"
	"strconv"
	"strings"
	"testing"
)

// Chain names published upstream: pkg/proxy/nftables/proxier_test.go
// (TestOverallNFTablesRules, Test_servicePortChainNameBase,
// Test_servicePortEndpointChainNameBase) and a live v1.36.2 ruleset.
func TestNFTPriority(t *testing.T) {
	for _, tc := range []struct {
		name, hook string
		prio       int
		want       string
	}{
		{"dstnat-10 on prerouting is named", "prerouting", -110, "dstnat - 10"},
		{"dstnat-10 on output is named since nft 1.0.9", "output", -110, "dstnat - 10"},
		{"dstnat on output is named since nft 1.0.9", "output", -100, "dstnat"},
		{"dstnat is not valid on forward, so the number prints", "forward", -100, "-100"},
		{"0 is filter on every hook", "input", 0, "filter"},
		{"100 on postrouting is srcnat", "postrouting", 100, "srcnat"},
		{"a value far from every standard priority prints as a number", "input", -50, "-50"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Priority(tc.hook, tc.prio); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNFTSetListing(t *testing.T) {
	a := func(s string) Elem {
		ip := netip.MustParseAddr(s)
		return Elem{Key: s, SortKey: KeyAddr(ip)}
	}
	t.Run("addresses are sorted by value and printed two per line", func(t *testing.T) {
		s := &Set{Name: "cluster-ips", KeyType: "ipv4_addr", Comment: "Active ClusterIPs",
			Elems: []Elem{a("10.102.98.171"), a("10.96.0.10"), a("10.97.141.163"), a("10.96.0.1"), a("10.99.144.34")}}
		var b strings.Builder
		s.print(&b)
		want := "\tset cluster-ips {\n\t\ttype ipv4_addr\n\t\tcomment \"Active ClusterIPs\"\n" +
			"\t\telements = { 10.96.0.1, 10.96.0.10,\n\t\t\t     10.97.141.163, 10.99.144.34,\n\t\t\t     10.102.98.171 }\n\t}\n"
		if b.String() != want {
			t.Errorf("got\n%s\nwant\n%s", b.String(), want)
		}
	})
	t.Run("concatenations are sorted field by field in network order, one per line", func(t *testing.T) {
		k := func(ip, proto string, port int) Elem {
			x := netip.MustParseAddr(ip)
			return Elem{Key: ip + " . " + proto + " . " + strconv.Itoa(port), SortKey: Key(KeyAddr(x), KeyU8(ProtoNum(proto)), KeyU16(port)), Value: "drop"}
		}
		s := &Set{IsMap: true, Name: "m", KeyType: "ipv4_addr . inet_proto . inet_service", ValType: "verdict",
			Elems: []Elem{k("10.96.0.10", "udp", 53), k("10.96.0.10", "tcp", 9153), k("10.96.0.10", "tcp", 53), k("10.96.0.1", "tcp", 443)}}
		var b strings.Builder
		s.print(&b)
		want := "\t\telements = { 10.96.0.1 . tcp . 443 : drop,\n\t\t\t     10.96.0.10 . tcp . 53 : drop,\n\t\t\t     10.96.0.10 . tcp . 9153 : drop,\n\t\t\t     10.96.0.10 . udp . 53 : drop }\n"
		if !strings.Contains(b.String(), want) {
			t.Errorf("got\n%s", b.String())
		}
	})
}
