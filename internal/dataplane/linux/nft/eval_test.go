package nft

import (
	"net/netip"
	"testing"
)

// The rendered rules' own matches, read back.
func TestARenderedRuleMatchesWhatItSays(t *testing.T) {
	pk := Packet{Src: netip.MustParseAddr("10.0.1.5"), Dst: netip.MustParseAddr("10.0.2.7"), Proto: "tcp", DPort: 8080}
	for _, tc := range []struct {
		rule  string
		match bool
	}{
		{`ip saddr { 10.0.1.0/24, 10.9.0.1 } tcp dport 8080 accept comment "x"`, true},
		{`ip saddr 10.0.0.0/16 ip saddr != { 10.0.1.0/24 } accept`, false},
		{`meta l4proto udp accept`, false},
		{`meta l4proto != udp th dport { 80, 8000-9000 } drop`, true},
		{`ip daddr . tcp dport { 10.0.2.7 . 8080 } accept`, true},
		{`ip daddr . tcp dport { 10.0.2.7 . 80 } accept`, false},
		{`ct state established,related accept`, false},
		{`icmp type 8 accept`, false},
		{`meta mark & 0x00010000 == 0x00000000 tcp dport 8080 drop`, true},
		{`meta mark & 0x00010000 == 0x00010000 accept`, false},
		{`ip daddr 10.0.2.7 meta mark set meta mark | 0x00010000 return`, true},
		{`iifname "cali*" jump x`, false},
		{`oifname != "cali*" jump x`, true},
	} {
		ok, verdict, err := matchRule(nftTokens(tc.rule), pk)
		if err != nil || ok != tc.match || len(verdict) == 0 {
			t.Errorf("%s: match %t %v (%v), want %t", tc.rule, ok, verdict, err, tc.match)
		}
	}
}

// Reading any rule text gives an answer or an error, never a panic.
func FuzzMatchRule(f *testing.F) {
	for _, s := range []string{`ip saddr { 10.0.1.0/24 } tcp dport 80 accept comment "a b"`, `meta l4proto != tcp drop`,
		`ip daddr . tcp dport { 10.0.2.7 . 8080 } accept`, `icmp type != 8 icmp code 0 log prefix "calico-packet: "`, `jump x`,
		`meta mark & 0x00010000 == 0x00010000 accept comment "Policy explicitly accepted packet."`,
		`ip daddr 10.0.2.7 meta mark set meta mark | 0x00010000 return`, `iifname vmap { "cali1" : goto a, "cali2" : goto b }`, `oifname != "cali*" drop`} {
		f.Add(s)
	}
	pk := Packet{Src: netip.MustParseAddr("10.0.1.5"), Dst: netip.MustParseAddr("10.0.2.7"), Proto: "tcp", DPort: 8080}
	f.Fuzz(func(t *testing.T, rule string) {
		_, _, _ = matchRule(nftTokens(rule), pk)
	})
}
