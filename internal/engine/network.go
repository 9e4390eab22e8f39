package engine

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/calico/ipam"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

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
	b.podsWithoutNetwork()
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
	// A pool calico-kube-controllers marks Allocatable=False (it overlaps
	// an older pool) is not used by IPAM (ipam.Allocatable).
	allocatable := ipam.Allocatable(c.IPPools)
	var pools []ipam.Pool
	for _, p := range c.IPPools {
		pp, err := ipamPool(p, allocatable)
		if err != nil {
			return errorAt(c.Origins[poolKey(p.Name)], "%v", err)
		}
		if pp.Unallocatable {
			why := "overlaps an older pool: calico-kube-controllers sets its Allocatable condition to False"
			if p.DeletionTimestamp != nil {
				why = "is being deleted"
			}
			b.note(model.Warning, poolKey(p.Name), "IP pool %s (%s) %s, and Calico IPAM assigns nothing from it (a node whose tunnel address would come from it gets none)", p.Name, p.Spec.CIDR, why)
		}
		if bits := pp.CIDR.Addr().BitLen(); pp.BlockSize == bits && !p.Spec.Disabled {
			b.note(model.Info, poolKey(p.Name), "IP pool %s has blocks of one address (/%d): Calico seeds the walk over them from the clock (ipam_block_reader_writer.go determineSeed), so which addresses nodes get is not predictable; the twin's are one possible outcome", p.Name, bits)
		}
		pools = append(pools, pp)
	}
	// IPReservations are not modelled: upstream IPAM skips the reserved
	// addresses (ipam_block.go autoAssign's reservations filter), the twin
	// does not.
	for _, o := range c.NotModeled {
		if o.GVK.Kind == "IPReservation" && strings.HasSuffix(o.GVK.Group, "projectcalico.org") {
			b.note(model.Warning, o.Key, "IPReservation %s is not modelled: Calico IPAM hands out no address it reserves, the twin's derived addresses may fall inside it", o.Key.Name)
		}
	}
	// Each claim is stamped with the node's join time (joinClock), which
	// decides whether a later node may reclaim an empty block
	// (ipam_block_reader_writer.go findUsableBlock); new pods come at the
	// reference time.
	order := b.joinOrder()
	joinedAt := map[string]time.Time{}
	var last time.Time
	for i, n := range order {
		last = joinClock(n.CreationTimestamp.Time, last, i)
		joinedAt[n.Name] = last
	}
	cfg := b.ipamConfig()
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
	// The observed history: the input's IPAM objects, then every observed
	// pod address; a derivation restores what the previous twin's replay
	// left when it would read the same.
	hist := b.history(pools, cfg, joinedAt)
	observed, restored, err := b.replay(m, &hist, joinedAt)
	if err != nil {
		var oe *ipam.ObjectError
		if errors.As(err, &oe) {
			return errorAt(c.Origins[model.Key{Group: "projectcalico.org", Kind: oe.Kind, Name: oe.Name}], "%v", err)
		}
		return errorAt(model.Origin{}, "%v", err)
	}
	nsByName := map[string]*corev1.Namespace{}
	for _, ns := range c.Namespaces {
		nsByName[ns.Name] = ns
	}
	// kept are the kept DaemonSet pods on the pod network IPAM answered
	// (derive_daemons.go): each asks once, in a new pod's turn.
	var kept map[*corev1.Pod]bool
	assign := func(p *corev1.Pod) {
		keep := b.d.keptOnPodNetwork(p)
		if keep {
			if kept == nil {
				kept = map[*corev1.Pod]bool{}
			}
			kept[p] = true
		}
		n := b.nodeByName(p.Spec.NodeName)
		if n == nil || !b.calicoRuns(n) {
			if keep {
				b.d.broken = true
				return
			}
			b.sandboxFailed(p, "plugin type=\"calico\" failed (add): stat /var/lib/calico/nodename: no such file or directory: check that the calico/node container is running and has mounted /var/lib/calico/")
			return
		}
		req := ipam.PodRequest{Node: p.Spec.NodeName, Handle: ipam.PodHandle(containerID(p)),
			Attrs: ipam.PodAttrs(p.Spec.NodeName, p.Namespace, p.Name), PodAnnotations: p.Annotations}
		if ns := nsByName[p.Namespace]; ns != nil {
			req.NamespaceLabels, req.NamespaceAnnotations = ns.Labels, ns.Annotations
		}
		a, err := m.AssignPodRequest(req)
		if err != nil {
			if keep {
				b.d.broken = true
				return
			}
			b.sandboxFailed(p, fmt.Sprintf("plugin type=\"calico\" failed (add): %v", err))
			return
		}
		if keep {
			if !b.keptAddress(p, a.String()) {
				return
			}
		} else {
			p.Status.PodIP = a.String()
		}
		if c.Observed(keyOf(p)) {
			b.markField(keyOf(p), "status.podIP")
		}
	}
	toAssign := func(p *corev1.Pod) bool {
		return !p.Spec.HostNetwork && (p.Status.PodIP == "" || (b.d.keptOnPodNetwork(p) && !kept[p])) &&
			p.Spec.NodeName != "" && p.Status.Phase != corev1.PodPending
	}
	podsOn := map[string][]*corev1.Pod{}
	for _, p := range c.Pods {
		if toAssign(p) && ownedByDaemonSet(p) {
			podsOn[p.Spec.NodeName] = append(podsOn[p.Spec.NodeName], p)
		}
	}
	// calico-node startup on each node, in join order, at its join time:
	// the tunnel addresses (the first claims the node's first block) on
	// Linux, the block with the Windows reservations on Windows
	// (node/pkg/allocateip, startup_windows.go). The node's DaemonSet pods
	// come right after: the DaemonSet controller creates them as the node
	// joins, and their sandboxes start once calico-node is up.
	for _, n := range order {
		m.SetNow(joinedAt[n.Name])
		if b.calicoRuns(n) {
			b.tunnel(m, n)
		}
		for _, p := range podsOn[n.Name] {
			assign(p)
		}
	}
	if last.Before(b.ref.Time) {
		last = b.ref.Time
	}
	m.SetNow(last)
	// What the observed addresses leave free below the highest one was
	// released before: reused last.
	m.SettleObserved()
	// Every other pod on the pod network, in creation order.
	for _, p := range c.Pods {
		if toAssign(p) {
			assign(p)
		}
	}
	b.render(m, hist, observed, restored)
	return nil
}

// cleanupDeletedNodes simulates calico-kube-controllers' node cleanup for
// every node the IPAM state names that is not a Node of the input (deleted
// by a what-if or missing): kube-controllers/pkg/controllers/node/ipam.go
// checkAllocations, garbageCollectIPs and cleanupNode, as ipam
// CleanupDeletedNode does them. A pod allocation stays valid while the pod
// exists on that node (or has not yet reported its address) with that
// address (allocationIsValid). It reports whether IPAM named such a node.
func (b *builder) cleanupDeletedNodes(m *ipam.IPAM) bool {
	c := b.c
	known := map[string]bool{}
	for _, n := range c.Nodes {
		known[n.Name] = true
	}
	// The pods by name, indexed only when a node is missing (seldom).
	var pods map[string]*corev1.Pod
	valid := func(host string) func(ns, name string, a netip.Addr) bool {
		if pods == nil {
			pods = make(map[string]*corev1.Pod, len(c.Pods))
			for _, p := range c.Pods {
				pods[p.Namespace+"/"+p.Name] = p
			}
		}
		return func(ns, name string, a netip.Addr) bool {
			p := pods[ns+"/"+name]
			if p == nil || (p.Spec.NodeName != "" && p.Spec.NodeName != host) {
				return false
			}
			return p.Status.PodIP == "" || p.Status.PodIP == a.String()
		}
	}
	any := false
	for _, host := range m.Hosts() {
		if known[host] {
			continue
		}
		any = true
		r := m.CleanupDeletedNode(host, valid(host))
		key := model.Key{Kind: "Node", Name: host}
		var did []string
		if len(r.Released) > 0 {
			did = append(did, "released the addresses "+joinAddrs(r.Released))
		}
		if len(r.Affinities) > 0 {
			did = append(did, "released the block affinities of "+joinPrefixes(r.Affinities))
		}
		if len(r.DeletedBlocks) > 0 {
			did = append(did, "deleted the empty blocks "+joinPrefixes(r.DeletedBlocks))
		}
		const src = "(kube-controllers node/ipam.go checkAllocations, cleanupNode: https://github.com/projectcalico/calico/blob/release-v3.33/kube-controllers/pkg/controllers/node/ipam.go)"
		if len(did) > 0 {
			b.note(model.Info, key, "simulated: kube-controllers' node cleanup: node %s is not a Node of the input, so calico-kube-controllers %s %s", host, strings.Join(did, ", "), src)
		}
		if len(r.Kept) > 0 || len(r.Unknown) > 0 || len(r.NotEmpty) > 0 {
			var why []string
			if len(r.Kept) > 0 {
				why = append(why, "the addresses "+joinAddrs(r.Kept)+" belong to pods that still exist")
			}
			if len(r.Unknown) > 0 {
				why = append(why, "the addresses "+joinAddrs(r.Unknown)+" name no pod, so nothing says they are free")
			}
			if len(r.NotEmpty) > 0 {
				why = append(why, "the blocks "+joinPrefixes(r.NotEmpty)+" are not empty")
			}
			b.note(model.Warning, key, "node %s is not a Node of the input but keeps IPAM state: %s; calico-kube-controllers releases the node's tunnel addresses and block affinities only once nothing on it is in use %s", host, strings.Join(why, " and "), src)
		}
	}
	return any
}

func joinAddrs(as []netip.Addr) string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = a.String()
	}
	return strings.Join(s, ", ")
}

func joinPrefixes(ps []netip.Prefix) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, ", ")
}

// ownedByDaemonSet: the pod's controller is a DaemonSet.
func ownedByDaemonSet(p *corev1.Pod) bool {
	if r := metav1.GetControllerOf(p); r != nil {
		return r.Kind == "DaemonSet"
	}
	return false
}

// tunnel records the node's tunnel addresses and VTEP MAC as Calico
// annotates the Node (libcalico-go k8s conversion: projectcalico.org/*).
// What a Node records (itself or through a Calico Node resource) is kept
// while calico-node would keep it; an observed Node gets what it lacks,
// marked derived, as calico-node would have written it.
func (b *builder) tunnel(m *ipam.IPAM, n *corev1.Node) {
	if !isWindows(n) {
		b.linuxTunnels(m, n)
		return
	}
	// An observed Node that records its tunnel address but no MAC is a
	// calico-node-windows that has not published its VTEP: kept as it is
	// (check HYB071). One whose address the engine derives gets the placeholder.
	hadAddr := n.Annotations[calico.AnnotationIPv4VXLANTunnelAddr] != ""
	a, err := m.VXLANTunnelAddress(n.Name)
	if err != nil {
		b.note(model.Warning, keyOf(n), "calico-node cannot start: %v", err)
		return
	}
	if addr, ok := b.ipv4Address(n); ok {
		b.fillAnnotation(n, calico.AnnotationIPv4Address, addr)
	}
	if a.IsValid() {
		b.fillAnnotation(n, calico.AnnotationIPv4VXLANTunnelAddr, a.String())
	}
	if _, ok := n.Annotations[calico.AnnotationVXLANTunnelMACAddr]; ok {
		return // recorded by the Node or a Calico Node resource
	}
	if hadAddr && b.c.Observed(keyOf(n)) {
		return // a tunnel address without its MAC: not published (HYB071)
	}
	// On Windows the VTEP is the HNS network's distributed router port;
	// calico-node-windows records its MAC, which only the host knows.
	if h := b.hostByName(n.Name); h != nil && h.Observed.VXLANTunnelMAC != "" {
		n.Annotations[calico.AnnotationVXLANTunnelMACAddr] = h.Observed.VXLANTunnelMAC
		return
	}
	b.windowsVTEP(n)
}

// tunnelAnnotation is the Node annotation of each tunnel type
// (libcalico-go lib/backend/k8s/resources/node.go).
var tunnelAnnotation = map[string]string{ipam.AttrTypeIPIP: calico.AnnotationIPv4IPIPTunnelAddr, ipam.AttrTypeVXLAN: calico.AnnotationIPv4VXLANTunnelAddr}

// linuxTunnels is calico-node's tunnel address reconciliation on a Linux
// node (node/pkg/allocateip/allocateip.go reconcileTunnelAddrs): IPIP then
// VXLAN, each kept, (re)assigned or removed. An address the Node records
// is first entered in IPAM as calico-node's allocation, which is what a
// real cluster's IPAM holds for it.
func (b *builder) linuxTunnels(m *ipam.IPAM, n *corev1.Node) {
	if addr, ok := b.ipv4Address(n); ok {
		b.fillAnnotation(n, calico.AnnotationIPv4Address, addr)
	}
	for _, typ := range ipam.TunnelTypes {
		key := tunnelAnnotation[typ]
		cur, had := parseAddr(n.Annotations[key])
		var recordErr error
		if had {
			recordErr = m.AssignIP(ipam.AssignIPArgs{IP: cur, Handle: ipam.TunnelHandle(n.Name, typ),
				Attrs: map[string]string{ipam.AttrNode: n.Name, ipam.AttrType: typ}, Host: n.Name, Use: ipam.UseTunnel})
		}
		a, err := m.TunnelAddress(n.Name, typ, cur)
		if err != nil {
			b.note(model.Warning, keyOf(n), "calico-node cannot start: %v", err)
			return
		}
		switch {
		case !had && a.IsValid():
			b.fillAnnotation(n, key, a.String())
		case had && a == cur:
		case had && !a.IsValid():
			delete(n.Annotations, key)
			b.markDerived(n, key)
			b.note(model.Info, keyOf(n), "no enabled IP pool selecting the node has %s encapsulation: calico-node releases the tunnel address %s and removes %s", tunnelMode(typ), cur, key)
		case had:
			why := "it is not in an enabled IP pool with " + tunnelMode(typ) + " encapsulation that selects the node"
			if recordErr != nil && !strings.Contains(recordErr.Error(), "not in a configured pool") {
				why = "IPAM holds it for something else (" + recordErr.Error() + ")"
			}
			n.Annotations[key] = a.String()
			b.markDerived(n, key)
			b.note(model.Info, keyOf(n), "calico-node moves the %s tunnel address from %s to %s and updates %s: %s (allocateip.go ensureHostTunnelAddress)", tunnelMode(typ), cur, a, key, why)
		}
	}
}

func tunnelMode(typ string) string {
	if typ == ipam.AttrTypeIPIP {
		return "IPIP"
	}
	return "VXLAN"
}

// markDerived marks an observed Node's annotation as the engine's.
func (b *builder) markDerived(n *corev1.Node, key string) {
	if k := keyOf(n); b.c.Observed(k) {
		b.markField(k, "metadata.annotations["+key+"]")
	}
}

// joinClock is when calico-node on the i-th node to join (in join order)
// claims its block: its Node's creationTimestamp, and never before the
// previous node's claim plus ipam.EmptyBlockMinReclaimAge. A kubeadm join,
// the kubelet's TLS bootstrap and the calico-node image pull on the next
// host take longer than that minute; Nodes the input gives the same
// creation time (derived ones get the reference time) still join one
// after another.
func joinClock(created, last time.Time, i int) time.Time {
	if i == 0 {
		return created
	}
	next := last.Add(ipam.EmptyBlockMinReclaimAge)
	if created.After(next) {
		return created
	}
	return next
}

// windowsVTEP gives a Windows node with a VXLAN tunnel address and no
// recorded VTEP MAC its placeholder MAC, once, so that every view (Felix's
// routes and neighbours on the other nodes, the node's own HNS network and
// adapters) sees the same VTEP. calico-node-windows records the DrPort
// adapter's MAC as projectcalico.org/VXLANTunnelMACAddr when it creates the
// Calico network (cni-plugin/pkg/dataplane/windows/dataplane_windows.go
// EnsureVXLANTunnelAddr); HNS picks that MAC, so the twin cannot derive it.
func (b *builder) windowsVTEP(n *corev1.Node) {
	if !isWindows(n) || n.Annotations[calico.AnnotationIPv4VXLANTunnelAddr] == "" || n.Annotations[calico.AnnotationVXLANTunnelMACAddr] != "" {
		return
	}
	mac := WindowsVTEPPlaceholder(n.Name)
	n.Annotations[calico.AnnotationVXLANTunnelMACAddr] = mac
	n.Annotations[hybrid.VTEPMACPlaceholderAnnotation] = "placeholder: the DrPort adapter's MAC is not observed"
	if b.c.Observed(keyOf(n)) {
		b.markField(keyOf(n), "metadata.annotations["+calico.AnnotationVXLANTunnelMACAddr+"]")
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
	// The kubelet's event carries the CRI error: containerd wraps the CNI
	// plugin's (internal/cri/server/sandbox_run.go "failed to setup network
	// for sandbox"), gRPC adds its status (pkg/kubelet/kuberuntime
	// kuberuntime_manager.go createPodSandbox → FailedCreatePodSandBox).
	b.event(p, corev1.EventTypeWarning, "FailedCreatePodSandBox", componentKubelet, p.Spec.NodeName,
		fmt.Sprintf("Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox %q: %s", containerID(p), msg))
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

// ipamPool is the pool as Calico IPAM reads it (ipam.PoolFromCalico),
// unallocatable where calico-kube-controllers marks it Allocatable=False
// (allocatable: ipam.Allocatable of the twin's pools).
func ipamPool(p *calico.IPPool, allocatable map[string]bool) (ipam.Pool, error) {
	pp, err := ipam.PoolFromCalico(p)
	if err != nil {
		return pp, err
	}
	if ok, known := allocatable[p.Name]; known && !ok && !p.Spec.Disabled {
		pp.Unallocatable = true
	}
	return pp, nil
}

// ipamConfig is IPAM's configuration from the IPAMConfiguration, at the
// reference time.
func (b *builder) ipamConfig() ipam.Config {
	cfg := ipam.ConfigFrom(b.c.IPAMConfig)
	cfg.Now = b.ref.Time
	return cfg
}
