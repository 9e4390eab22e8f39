package linux

import (
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux/nft"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
)

// CalicoVerdict is the verdict of the rendered table ip calico.
type CalicoVerdict = nft.Verdict

// EvalCalico evaluates the node's rendered table ip calico (what `nft list
// table ip calico` prints) for a new connection of a local pod: the pod's
// cali-tw chain for ingress from f.Peer, its cali-fw chain for egress to
// it. The chain allows when it returns with Felix's accept mark set. It
// reads the printed rules, not the calculation they were rendered from,
// so that a test can hold trace's decisions to the ruleset shown.
func (n *Node) EvalCalico(pod *corev1.Pod, dir Direction, f felix.Flow) (CalicoVerdict, error) {
	ev, err := n.calicoEval()
	if err != nil {
		return CalicoVerdict{}, err
	}
	local, err := netip.ParseAddr(pod.Status.PodIP)
	if err != nil {
		return CalicoVerdict{}, fmt.Errorf("pod %s/%s has no address", pod.Namespace, pod.Name)
	}
	pk := nft.Packet{Src: f.Peer, Dst: local, Proto: strings.ToLower(f.Proto), DPort: f.DstPort, SPort: f.SrcPort}
	name := "filter-cali-tw-" + VethName(pod.Namespace, pod.Name)
	if dir == Egress {
		pk.Src, pk.Dst = local, f.Peer
		name = "filter-cali-fw-" + VethName(pod.Namespace, pod.Name)
	}
	ev.Packet = pk
	v, done, err := ev.Run(name, 0)
	if err != nil || done {
		return v, err
	}
	if ev.Packet.Mark&nft.MarkAccept != 0 {
		return CalicoVerdict{Allowed: true, Chain: ev.MarkChain, Rule: ev.MarkRule}, nil
	}
	return CalicoVerdict{Chain: name, Rule: "returned without the accept mark"}, nil
}

// CalicoPacket is the first packet of a new connection as a base chain
// of table ip calico sees it: the hook ("forward" or "input") and the
// interfaces it came in and goes out by.
type CalicoPacket struct {
	Hook     string
	IIF, OIF string
	Src, Dst netip.Addr
	// Proto is tcp, udp, sctp or icmp.
	Proto            string
	DstPort, SrcPort int32
}

// EvalCalicoHook evaluates the node's rendered table ip calico for a
// packet from the hook's base chain on, as the kernel does: a verdict
// ends the hook, a base chain that runs out applies its policy (accept).
func (n *Node) EvalCalicoHook(p CalicoPacket) (CalicoVerdict, error) {
	ev, err := n.calicoEval()
	if err != nil {
		return CalicoVerdict{}, err
	}
	ev.Packet = nft.Packet{Src: p.Src, Dst: p.Dst, Proto: strings.ToLower(p.Proto), DPort: p.DstPort, SPort: p.SrcPort, IIF: p.IIF, OIF: p.OIF}
	base := ""
	for _, c := range ev.Order {
		if c.Hook == p.Hook {
			base = c.Name
			break
		}
	}
	if base == "" {
		return CalicoVerdict{Allowed: true, Rule: "no " + p.Hook + " hook in the table"}, nil
	}
	v, done, err := ev.Run(base, 0)
	if err != nil || done {
		return v, err
	}
	return CalicoVerdict{Allowed: true, Chain: base, Rule: "policy accept"}, nil
}

func (n *Node) calicoEval() (*nft.Eval, error) {
	if n.cal == nil {
		return nil, fmt.Errorf("node %s has no table ip calico (Felix programs iptables)", n.Name)
	}
	t, _ := n.cal.table(n.calc)
	ev := &nft.Eval{Chains: map[string]*nft.Chain{}, Order: t.Chains}
	for _, c := range t.Chains {
		ev.Chains[c.Name] = c
	}
	return ev, nil
}
