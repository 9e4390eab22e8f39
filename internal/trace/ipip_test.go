package trace

import (
	"strings"
	"testing"

	labfs "github.com/kubectl-hybrid/kubectl-hybrid/examples/lab"
)

// labOnIPIP is the lab's Installation with its pool on IPIP and BGP on,
// as a cluster set up with the operator's defaults runs, and without the
// Windows dataplane, which the operator refuses with IPIP.
const labOnIPIP = `apiVersion: operator.tigera.io/v1
kind: Installation
metadata:
  name: default
spec:
  serviceCIDRs:
    - 10.96.0.0/12
  calicoNetwork:
    bgp: Enabled
    linuxDataplane: Nftables
    ipPools:
      - name: default-ipv4-ippool
        cidr: 172.21.0.0/16
        blockSize: 26
        encapsulation: IPIP
        natOutgoing: Enabled
        nodeSelector: all()
`

// On an IPIP pool a packet to another node's pod leaves through tunl0 as
// IP in IP to the owner's address and is decapsulated there; a host sends
// from its tunl0 address.
func TestTracesOnAnIPIPPoolGoThroughTunl0(t *testing.T) {
	e := buildWith(t, labOnIPIP)
	for _, tc := range []struct {
		name, src, ns, dst string
		proto              Proto
		port               int
		outcome            Outcome
		hops               []string // components the trace passes, in order
		reason             string   // in the verdict's reason
	}{
		{name: "a pod to a pod on another Linux node", src: "pod/check", ns: "default", dst: "172.21.211.25", proto: ICMP, outcome: Delivered,
			hops: []string{"tunl0", "host firewall", "tunl0"}},
		{name: "a Linux host to a pod on another node", src: "node/k8s-lab-node-1", dst: "172.21.172.4", proto: ICMP, outcome: Delivered,
			hops: []string{"tunl0", "host firewall", "tunl0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := traceOf(t, e, tc.src, tc.dst, tc.ns, tc.proto, tc.port)
			if r.Outcome != tc.outcome || !strings.Contains(r.Reason, tc.reason) {
				t.Fatalf("outcome %s (%s), want %s with %q:\n%s", r.Outcome, r.Reason, tc.outcome, tc.reason, textOf(r))
			}
			at := 0
			for _, h := range r.Hops {
				if at < len(tc.hops) && strings.HasPrefix(h.Component, tc.hops[at]) {
					at++
				}
			}
			if at < len(tc.hops) {
				t.Errorf("the trace does not pass %q in order:\n%s", tc.hops, textOf(r))
			}
			enc := hopWith(r, "tunl0")
			if enc == nil || enc.After == nil || enc.After.Outer == nil || !enc.After.Outer.IPIP || enc.After.Outer.DstPort != 0 {
				t.Fatalf("no IP-in-IP encapsulation at tunl0:\n%s", textOf(r))
			}
			if strings.HasPrefix(tc.src, "node/") {
				tunl, _ := e.p.LinuxIPIP("k8s-lab-node-1")
				if !tunl.IsValid() || r.Hops[0].Before.Src != tunl.String() {
					t.Errorf("the host sends from %s, want its tunl0 address %s", r.Hops[0].Before.Src, tunl)
				}
			}
		})
	}
}

// A host firewall that blocks IP protocol 4 drops the encapsulated packet
// where it arrives.
func TestAFirewallBlockingIPIPDropsTheTunnelledPacket(t *testing.T) {
	b, err := labfs.FS.ReadFile("00-cluster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rule := "      - name: no-ipip-into-node-1\n        hosts: [k8s-lab-node-1]\n        protocol: IPIP\n        action: Block\n"
	cluster := strings.Replace(string(b), "    firewall:\n", "    firewall:\n"+rule, 1)
	r := traceOf(t, buildWith(t, labOnIPIP, cluster), "pod/check", "172.21.211.25", "default", ICMP, 0)
	if r.Outcome != Dropped || !strings.Contains(r.Reason, `blocked by spec.network.firewall[0] "no-ipip-into-node-1"`) {
		t.Errorf("outcome %s (%s), want dropped by the rule:\n%s", r.Outcome, r.Reason, textOf(r))
	}
}
