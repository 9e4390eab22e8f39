package verify

import (
	"errors"
	"strings"
	"testing"
)

func TestParsersRefuseWhatIsNotTheirCommandsOutput(t *testing.T) {
	cases := []struct {
		name  string
		parse func(string) ([]Item, error)
		in    string
		line  int
		want  string
	}{
		{"a route whose destination is a word", ParseIPRoute, "default via 10.0.0.1 dev eth0\nnowhere dev eth0\n", 2, "destination"},
		{"a nexthop line with no route before it", ParseIPRoute, "\tnexthop via 10.0.0.1 dev eth0\n", 1, "continuation"},
		{"link details before the link line", ParseLinkVXLAN, "    link/ether 66:ee:f4:61:98:50\n", 1, "detail line"},
		{"a neighbour that is no address", ParseIPNeigh, "vxlan.calico lladdr 66:ee:f4:61:98:50 PERMANENT\n", 1, "neighbour address"},
		{"an FDB line without a MAC", ParseBridgeFDB, "dev vxlan.calico dst 10.0.0.1\n", 1, "MAC address"},
		{"nft text that is not a table", ParseNft, "chain services {\n}\n", 1, "table FAMILY NAME"},
		{"an nft table never closed", ParseNft, "table ip kube-proxy {\n\tset a {\n\t\ttype ipv4_addr\n\t}\n", 4, "never closed"},
		{"HNS JSON cut short", ParseHnsNetworkJSON, "[\n  {\n    \"Name\": \"Calico\",\n", 3, "invalid JSON"},
		{"an HNS network without a name", ParseHnsNetworkJSON, `[{"Type":"Overlay"}]`, 1, "no Name"},
		{"an HNS endpoint without an address", ParseHnsEndpointJSON, `{"Name":"Calico_ep"}`, 1, "no IPAddress"},
		{"hnsdiag fields before any object", ParseHnsdiag, "    Name             : Calico\n", 1, "Network|Endpoint"},
		{"a policy list line that is no field", ParseHnsPolicyList, "ID : 1\nnot a field\n", 2, "Field : value"},
		{"a Get-NetAdapter table without its dashes", ParseNetAdapter, "Name Status\nEthernet Up\n", 2, "dashes"},
		{"ipconfig with an unknown section", ParseIpconfig, "Windows IP Configuration\n\nSomething else:\n", 3, "adapter NAME"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.parse(tc.in)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want a ParseError", err)
			}
			if pe.Line != tc.line || !strings.Contains(pe.Msg, tc.want) {
				t.Fatalf("got line %d %q, want line %d with %q", pe.Line, pe.Msg, tc.line, tc.want)
			}
		})
	}
}

func TestComparisonIgnoresOrderAndNamesEachChangeOnce(t *testing.T) {
	route := func(key, val string) Item { return Item{Kind: "route", Key: key, Value: val} }
	cases := []struct {
		name     string
		exp, act []Item
		want     string
	}{
		{"the same items in another order are no difference",
			[]Item{route("a", "1"), route("b", "2")}, []Item{route("b", "2"), route("a", "1")}, ""},
		{"a value that differs is one change",
			[]Item{route("a", "1")}, []Item{route("a", "2")}, "changed a→a"},
		{"the same value under another key is one change of identity",
			[]Item{{Kind: "neighbour", Key: "10.0.0.1", Value: "lladdr=x"}}, []Item{{Kind: "neighbour", Key: "10.0.0.2", Value: "lladdr=x"}}, "changed 10.0.0.1→10.0.0.2"},
		{"the one rule of a chain that changed is one change",
			[]Item{{Kind: "nft rule", Key: "c: x", Group: "c"}}, []Item{{Kind: "nft rule", Key: "c: y", Group: "c"}}, "changed c: x→c: y"},
		{"two rules that changed in one chain stay apart",
			[]Item{{Kind: "nft rule", Key: "c: x", Group: "c"}, {Kind: "nft rule", Key: "c: x2", Group: "c"}},
			[]Item{{Kind: "nft rule", Key: "c: y", Group: "c"}, {Kind: "nft rule", Key: "c: y2", Group: "c"}},
			"missing c: x; missing c: x2; extra c: y; extra c: y2"},
		{"repeated items are counted",
			[]Item{route("a", ""), route("a", "")}, []Item{route("a", "")}, "missing a #2"},
		{"the children of a missing parent are folded into it",
			[]Item{{Kind: "nft set", Key: "s", Value: "type"}, {Kind: "nft element", Key: "s 1", Parent: parentRef("nft set", "s")}, {Kind: "nft element", Key: "s 2", Parent: parentRef("nft set", "s")}},
			nil, "missing s (2 children)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, d := range Compare("n", "c", tc.exp, tc.act) {
				switch d.Change {
				case Changed:
					got = append(got, "changed "+d.Expected.Key+"→"+d.Actual.Key)
				case Missing:
					s := "missing " + d.Expected.Key
					if d.Children > 0 {
						s += " (" + string(rune('0'+d.Children)) + " children)"
					}
					got = append(got, s)
				case Extra:
					got = append(got, "extra "+d.Actual.Key)
				}
			}
			if g := strings.Join(got, "; "); g != tc.want {
				t.Fatalf("got %q, want %q", g, tc.want)
			}
		})
	}
}
