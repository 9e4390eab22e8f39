package engine

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/calico/ipam"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// VTEPMAC is the MAC of a Linux node's vxlan.calico device when the Node
// does not record one: "66" and the first five bytes of SHA-1 of the node
// name (felix/calc/vxlan_resolver.go vtepMACForHost).
func VTEPMAC(node string) string {
	sum := sha1.Sum([]byte(node))
	return net.HardwareAddr(append([]byte("f"), sum[:5]...)).String()
}

// containerID is a stand-in for the pod sandbox's ID, which names the
// pod's IPAM handle ("k8s-pod-network.<id>"); containerd makes it random.
func containerID(p *corev1.Pod) string {
	sum := sha256.Sum256([]byte(p.Namespace + "/" + p.Name + "/" + string(p.UID)))
	return hex.EncodeToString(sum[:])
}

// network runs Calico IPAM: nodes claim their blocks as calico-node starts
// on them (join order), observed addresses are recorded, then every other
// pod on the pod network gets its address in creation order, as the CNI
// plugin asks for it (cni-plugin/pkg/ipamplugin/ipam_plugin.go).
func (b *builder) network() error {
	c := b.c
	nodeAddr := map[string]string{}
	for _, n := range c.Nodes {
		nodeAddr[n.Name] = addrOf(n)
	}
	// Host-network pods share the node's address (kubelet podIPs).
	for _, p := range c.Pods {
		if p.Spec.HostNetwork && p.Spec.NodeName != "" && p.Status.PodIP == "" {
			p.Status.PodIP = nodeAddr[p.Spec.NodeName]
		}
	}
	if len(c.IPPools) == 0 {
		if b.podsOnPodNetwork() > 0 {
			b.note(model.Warning, model.Key{}, "no Calico IPPool in the input: pod addresses are not derived")
		}
		return nil
	}
	var pools []ipam.Pool
	for _, p := range c.IPPools {
		pp, err := ipam.PoolFromCalico(p)
		if err != nil {
			return errorAt(c.Origins[poolKey(p.Name)], "%v", err)
		}
		pools = append(pools, pp)
	}
	cfg := ipam.ConfigFrom(c.IPAMConfig)
	cfg.Now = b.ref.Time
	m, err := ipam.New(pools, cfg)
	if err != nil {
		var pe *ipam.PoolError
		if errors.As(err, &pe) {
			o := c.Origins[poolKey(pe.Pool)]
			if o.File == "" && c.Installation != nil {
				// A pool the operator made from the Installation's ipPools.
				o = c.Origins[model.Key{Group: "operator.tigera.io", Kind: "Installation", Name: c.Installation.Name}]
			}
			return errorAt(o, "%v", err)
		}
		return errorAt(model.Origin{}, "%v", err)
	}
	for _, n := range c.Nodes {
		m.SetNode(n.Name, n.Labels)
	}
	if err := m.Load(c.IPAMBlocks, c.BlockAffinities); err != nil {
		return errorAt(model.Origin{}, "%v", err)
	}
	// Observed addresses first: they say which blocks history gave out.
	for _, p := range c.Pods {
		if p.Spec.HostNetwork || p.Status.PodIP == "" || p.Spec.NodeName == "" {
			continue
		}
		a, ok := parseAddr(p.Status.PodIP)
		if !ok || !inPools(pools, a) {
			continue
		}
		if err := m.AssignObserved(p.Spec.NodeName, a, ipam.PodHandle(containerID(p)), ipam.PodAttrs(p.Spec.NodeName, p.Namespace, p.Name)); err != nil {
			b.note(model.Warning, keyOf(p), "observed address %s does not fit Calico IPAM: %v", a, err)
		}
	}
	// calico-node startup on each node, in join order: the VXLAN tunnel
	// address (claiming the node's first block) on Linux, the block with the
	// Windows reservations on Windows (node/pkg/allocateip, startup_windows.go).
	for _, n := range b.joinOrder() {
		if b.calicoRuns(n) {
			b.tunnel(m, n)
		}
	}
	// Every other pod on the pod network, in creation order.
	for _, p := range c.Pods {
		if p.Spec.HostNetwork || p.Status.PodIP != "" || p.Spec.NodeName == "" || p.Status.Phase == corev1.PodPending {
			continue
		}
		n := b.nodeByName(p.Spec.NodeName)
		if n == nil || !b.calicoRuns(n) {
			b.sandboxFailed(p, "plugin type=\"calico\" failed (add): stat /var/lib/calico/nodename: no such file or directory: check that the calico/node container is running and has mounted /var/lib/calico/")
			continue
		}
		a, err := m.AssignPod(p.Spec.NodeName, ipam.PodHandle(containerID(p)), ipam.PodAttrs(p.Spec.NodeName, p.Namespace, p.Name))
		if err != nil {
			b.sandboxFailed(p, fmt.Sprintf("plugin type=\"calico\" failed (add): %v", err))
			continue
		}
		p.Status.PodIP = a.String()
		if c.Observed(keyOf(p)) {
			c.MarkDerived(keyOf(p), "status.podIP")
		}
	}
	c.IPAMBlocks = m.Blocks()
	c.BlockAffinities = m.Affinities()
	return nil
}

// tunnel records the node's VXLAN tunnel address and VTEP MAC as Calico
// annotates the Node (libcalico-go k8s conversion: projectcalico.org/*).
// What a Node records (itself or through a Calico Node resource) wins; an
// observed Node gets what it lacks, marked derived, as calico-node would
// have written it.
func (b *builder) tunnel(m *ipam.IPAM, n *corev1.Node) {
	// An observed Node that records its tunnel address but no MAC is a
	// calico-node-windows that has not published its VTEP: kept as it is
	// (check HYB071). One whose address the engine derives gets the placeholder.
	hadAddr := n.Annotations[annoVXLANAddr] != ""
	if a, ok := parseAddr(n.Annotations[annoVXLANAddr]); ok && !isWindows(n) {
		err := m.AssignIP(ipam.AssignIPArgs{IP: a, Handle: ipam.VXLANTunnelHandle(n.Name),
			Attrs: map[string]string{ipam.AttrNode: n.Name, ipam.AttrType: ipam.AttrTypeVXLAN}, Host: n.Name, Use: ipam.UseTunnel})
		if err != nil {
			b.note(model.Warning, keyOf(n), "observed VXLAN tunnel address %s does not fit Calico IPAM: %v", a, err)
		}
		if addr, ok := b.ipv4Address(n); ok {
			b.fillAnnotation(n, annoIPv4Address, addr)
		}
		return
	}
	a, err := m.VXLANTunnelAddress(n.Name)
	if err != nil {
		b.note(model.Warning, keyOf(n), "calico-node cannot start: %v", err)
		return
	}
	if addr, ok := b.ipv4Address(n); ok {
		b.fillAnnotation(n, annoIPv4Address, addr)
	}
	if a.IsValid() {
		b.fillAnnotation(n, annoVXLANAddr, a.String())
	}
	if _, ok := n.Annotations[annoVXLANMAC]; ok {
		return // recorded by the Node or a Calico Node resource
	}
	if !isWindows(n) {
		return // Felix derives a Linux VTEP's MAC from the node name
	}
	if hadAddr && b.c.Observed(keyOf(n)) {
		return // a tunnel address without its MAC: not published (HYB071)
	}
	// On Windows the VTEP is the HNS network's distributed router port;
	// calico-node-windows records its MAC, which only the host knows.
	if h := b.hostByName(n.Name); h != nil && h.Observed.VXLANTunnelMAC != "" {
		n.Annotations[annoVXLANMAC] = h.Observed.VXLANTunnelMAC
		return
	}
	b.windowsVTEP(n)
}

// windowsVTEP gives a Windows node with a VXLAN tunnel address and no
// recorded VTEP MAC its placeholder MAC, once, so that every view (Felix's
// routes and neighbours on the other nodes, the node's own HNS network and
// adapters) sees the same VTEP. calico-node-windows records the DrPort
// adapter's MAC as projectcalico.org/VXLANTunnelMACAddr when it creates the
// Calico network (cni-plugin/pkg/dataplane/windows/dataplane_windows.go
// EnsureVXLANTunnelAddr); HNS picks that MAC, so the twin cannot derive it.
func (b *builder) windowsVTEP(n *corev1.Node) {
	if !isWindows(n) || n.Annotations[annoVXLANAddr] == "" || n.Annotations[annoVXLANMAC] != "" {
		return
	}
	mac := WindowsVTEPPlaceholder(n.Name)
	n.Annotations[annoVXLANMAC] = mac
	n.Annotations[hybrid.VTEPMACPlaceholderAnnotation] = "placeholder: the DrPort adapter's MAC is not observed"
	if b.c.Observed(keyOf(n)) {
		b.c.MarkDerived(keyOf(n), "metadata.annotations["+annoVXLANMAC+"]")
	}
	b.note(model.Info, keyOf(n), "the Windows VTEP MAC (the DrPort adapter's) is not observed: %s is a placeholder every node uses until the join records the real one (give hosts[].observed.vxlanTunnelMAC)", mac)
}

// WindowsVTEPPlaceholder is the placeholder VTEP MAC of a Windows node whose
// DrPort adapter's MAC is not observed: in Hyper-V's 00:15:5d range, the
// rest from SHA-1 of the node name. Only the engine writes it (windowsVTEP);
// every view reads the node's annotation.
func WindowsVTEPPlaceholder(node string) string {
	sum := sha1.Sum([]byte("drport/" + node))
	return net.HardwareAddr{0x00, 0x15, 0x5d, sum[0], sum[1], sum[2]}.String()
}

// joinOrder is every node in the order it joined: the planned hosts first,
// then nodes the Cluster kind does not list, as the input gave them.
func (b *builder) joinOrder() []*corev1.Node {
	var out []*corev1.Node
	seen := map[string]bool{}
	for _, h := range b.hosts {
		if n := b.nodeByName(h.Name); n != nil {
			out = append(out, n)
			seen[n.Name] = true
		}
	}
	for _, n := range b.c.Nodes {
		if !seen[n.Name] {
			out = append(out, n)
		}
	}
	return out
}

// calicoRuns reports whether Calico's node agent runs on the node: an
// observed node is taken to have it; a derived one needs the agent's pod.
func (b *builder) calicoRuns(n *corev1.Node) bool {
	if h := b.hostByName(n.Name); h == nil || h.observed != nil {
		return true
	}
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

func (b *builder) sandboxFailed(p *corev1.Pod, msg string) {
	p.Status.Phase = corev1.PodPending
	b.note(model.Warning, keyOf(p), "Failed to create pod sandbox: %s", msg)
}

func (b *builder) podsOnPodNetwork() int {
	n := 0
	for _, p := range b.c.Pods {
		if !p.Spec.HostNetwork {
			n++
		}
	}
	return n
}

func inPools(pools []ipam.Pool, a netip.Addr) bool {
	for _, p := range pools {
		if p.CIDR.Contains(a) {
			return true
		}
	}
	return false
}

func poolKey(name string) model.Key {
	return model.Key{Group: "projectcalico.org", Kind: "IPPool", Name: name}
}
