package trace

import (
	"strings"
	"testing"
)

// A trace follows one connection between two hosts: addresses that name no
// single host are refused as bad input, not walked to a verdict.
func TestATraceRefusesAddressesThatAreNotUnicast(t *testing.T) {
	e := buildWith(t, `apiVersion: v1
kind: Node
metadata:
  name: bare
  labels: {kubernetes.io/os: linux}
`)
	for _, c := range []struct {
		name     string
		src, dst string
		want     string // "" when accepted
	}{
		{"the unspecified destination is refused", "pod/check", "0.0.0.0", "destination 0.0.0.0 is the unspecified address, not a unicast address"},
		{"the limited broadcast destination is refused", "pod/check", "255.255.255.255", "destination 255.255.255.255 is the limited broadcast address, not a unicast address"},
		{"a multicast destination is refused", "pod/check", "224.0.0.1", "destination 224.0.0.1 is a multicast address, not a unicast address"},
		{"an IPv6 multicast destination is refused", "pod/check", "ff02::1", "destination ff02::1 is a multicast address, not a unicast address"},
		{"the node network's broadcast destination is refused", "pod/check", "192.168.10.255", "destination 192.168.10.255 is the broadcast address of the node network 192.168.10.0/24, not a unicast address"},
		{"a multicast source is refused", "239.1.1.1", "pod/check", "source 239.1.1.1 is a multicast address, not a unicast address"},
		{"the unspecified source is refused", "0.0.0.0", "pod/check", "source 0.0.0.0 is the unspecified address, not a unicast address"},
		{"a node without an address is refused as destination", "pod/check", "node/bare", "destination node bare has no InternalIP address"},
		{"a node without an address is refused as source", "node/bare", "pod/check", "source node bare has no InternalIP address"},
		{"a unicast address outside the cluster is accepted", "pod/check", "192.0.2.10", ""},
		{"a node's own address is accepted", "pod/check", "192.168.10.24", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.ParseSource(c.src, "default")
			if err == nil {
				_, err = e.ParseTarget(c.dst, "default")
			}
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && err == nil:
				t.Fatalf("accepted, want %q", c.want)
			case c.want != "" && !strings.HasPrefix(err.Error(), c.want):
				t.Fatalf("got %q, want %q…", err, c.want)
			case c.want != "" && !IsInputError(err):
				t.Fatalf("%v is not an input error", err)
			}
		})
	}
}
