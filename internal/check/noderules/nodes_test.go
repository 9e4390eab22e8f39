package noderules

import (
	"slices"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/rule"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

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
			x := rule.NewContext(&model.Cluster{Hosts: hosts, Network: hybrid.Network{Firewall: tc.rules}}, false, nil)
			var got []string
			for _, f := range blockedFlows(x, "UDP", 4789, hosts, hosts) {
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
