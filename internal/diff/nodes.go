package diff

import (
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/crash"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plane"
)

// state is one node's dataplane as sets of entries, each in the form the
// node's tool prints it (IDs that HNS picks at random left out).
type state struct {
	os                            string
	routes, neigh, fdb, kp, felix []string
	networks, endpoints, lbs, vfp []string
	chains                        map[string][]string // "table chain" → rules in order
}

func nodeOS(n *corev1.Node) string {
	if n.Labels[corev1.LabelOSStable] == hybrid.OSWindows {
		return hybrid.OSWindows
	}
	return hybrid.OSLinux
}

// parts says which parts of the dataplane may differ: those whose inputs'
// hashes differ (see digest).
type parts struct{ routing, proxy, policy, windows bool }

func changedParts(a, b *digest) parts {
	return parts{routing: a.routing != b.routing, proxy: a.proxy != b.proxy, policy: a.policy != b.policy, windows: a.windows != b.windows}
}

// everything is every part, for a node only one twin has.
var everything = parts{true, true, true, true}

// compareNodes compares every node's dataplane, on all cores, in the parts
// that may differ: Linux routes, neighbours and FDB when routing inputs
// differ, kube-proxy's table when its inputs do, Felix's table (the
// costliest: every policy and IP set of the node's pods) when policy
// inputs do; a Windows node's HNS state, made all at once, when any does.
// Nodes only one twin has list their whole state as added or removed.
// With gate, a Linux node whose own inputs (its Node, its pods) are the
// same in both twins renders a part only when the inputs all nodes share
// for it differ (see nodeInputs), and kube-proxy's table only for the
// Services that differ; without it every part in p is rendered whole.
func compareNodes(before, after *Twin, p parts, gate, keepNAT bool) ([]NodeDiff, error) {
	if !mayDiffer(before, after, p) {
		return nil, nil
	}
	// The twins' planes compile a node's dataplane only when a part of it
	// is read below.
	ea, err := before.comparedPlane()
	if err != nil {
		return nil, fmt.Errorf("the before twin: %w", err)
	}
	eb, err := after.comparedPlane()
	if err != nil {
		return nil, fmt.Errorf("the after twin: %w", err)
	}
	// A twin with Windows nodes fails here as its trace engine would (its
	// Windows compiler cannot read a pool or block CIDR).
	for _, tw := range []struct {
		name string
		t    *Twin
		p    *plane.Plane
	}{{"before", before, ea}, {"after", after, eb}} {
		if hasWindowsNode(tw.t) {
			if _, err := tw.p.WindowsCompiler(); err != nil {
				return nil, fmt.Errorf("the %s twin: compiling the Windows dataplane: %w", tw.name, err)
			}
		}
	}
	type pair struct {
		a, b   *corev1.Node
		ia, ib int // their indexes in the twins' node lists
	}
	byName := map[string]*pair{}
	for i, n := range before.c.Nodes {
		byName[n.Name] = &pair{a: n, ia: i}
	}
	for i, n := range after.c.Nodes {
		if p, ok := byName[n.Name]; ok {
			p.b, p.ib = n, i
		} else {
			byName[n.Name] = &pair{b: n, ib: i}
		}
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	// Routes and Felix's table are rendered only on the nodes whose inputs
	// for them differ: the inputs all nodes share are compared once here.
	ia, ib := before.inputs(), after.inputs()
	sameRouting := ia.routing == ib.routing
	samePolicy := false
	if p.policy && gate {
		pa, err := ia.policy(before)
		if err != nil {
			return nil, fmt.Errorf("the before twin: %w", err)
		}
		pb, err := ib.policy(after)
		if err != nil {
			return nil, fmt.Errorf("the after twin: %w", err)
		}
		samePolicy = pa == pb
	}
	// kube-proxy's table is rendered, on a node whose own inputs are the
	// same, only for the Services whose inputs differ.
	da, db := before.digest(), after.digest()
	var services map[string]bool
	if p.proxy && gate && da.extra == db.extra {
		services = changedServices(ia, ib)
	}
	// A node whose kube-proxy table is compared by Services only: its own
	// inputs the same in both twins, or its Node.
	byServices := func(pr *pair, name string) bool {
		return gate && pr.a != nil && pr.b != nil &&
			(ia.own[name] == ib.own[name] || da.sumOf("Node", pr.ia).sum == db.sumOf("Node", pr.ib).sum)
	}
	var kp *kpClass
	if len(services) > 0 {
		kp = newKPClass(before, after, ea, eb, services, names, func(name string) bool { return byServices(byName[name], name) })
	}
	pairs := &pairCache{}
	out := make([]*NodeDiff, len(names))
	var wg sync.WaitGroup
	var crashed crash.Group
	next := make(chan int)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A worker that panicked still takes its share of the nodes,
			// unread, so that the sender never blocks.
			defer func() {
				for range next {
				}
			}()
			defer crashed.Recover()
			for i := range next {
				pr := byName[names[i]]
				want := p
				var only map[string]bool
				if pr.a == nil || pr.b == nil {
					want = everything
				} else if gate && ia.own[names[i]] == ib.own[names[i]] {
					want.routing = want.routing && !sameRouting
					want.policy = want.policy && !samePolicy
					only = services
				} else if gate && da.sumOf("Node", pr.ia).sum == db.sumOf("Node", pr.ib).sum {
					// Only the node's pods differ: kube-proxy's table reads of
					// the node its name and address alone (kubeProxyNode), and
					// of the pods only the EndpointSlices, so it differs only
					// for the Services that do.
					only = services
				}
				var kpa, kpb *nftPart
				if only != nil && kp.serves(names[i]) {
					kpa, kpb = kp.a, kp.b
				}
				// The routing part of a node both twins have is compared
				// through the lines all nodes share (routing.go).
				var pre *routingDiff
				if want.routing && gate && pr.a != nil && pr.b != nil && nodeOS(pr.a) == hybrid.OSLinux && nodeOS(pr.b) == hybrid.OSLinux {
					if la, lb := ea.Linux(names[i]), eb.Linux(names[i]); la != nil && lb != nil {
						pre = &routingDiff{}
						pre.routes, pre.neigh, pre.fdb = routingLines(before, after, pairs, names[i], la, lb)
						want.routing = false
					}
				}
				var sa, sb *state
				if pr.a != nil {
					sa = nodeState(before, ea, pr.a, want, only, kpa)
				}
				if pr.b != nil {
					sb = nodeState(after, eb, pr.b, want, only, kpb)
				}
				if keepNAT && sa != nil && sb != nil && sb.os == hybrid.OSWindows {
					keepExistingNAT(sa, sb)
				}
				out[i] = diffStateWith(names[i], sa, sb, pre)
			}
		}()
	}
	for i := range names {
		next <- i
	}
	close(next)
	wg.Wait()
	crashed.Repanic()
	var res []NodeDiff
	for _, d := range out {
		if d != nil {
			res = append(res, *d)
		}
	}
	return res, nil
}

// nodeState reads the parts p of a node's compiled dataplane from the
// twin's engine; the parts left out stay empty on both sides. Each part is
// read once per twin and kept: a plan compares twin k with k-1 and then
// with k+1, and reading Felix's table is the costliest part of both.
//
// With only non-nil, kube-proxy's table holds only those Services' items
// (see changedServices), made for this comparison and not kept; with kp
// non-nil too, it is kp, the table of the node's class (see kpClass).
func nodeState(t *Twin, e *plane.Plane, n *corev1.Node, p parts, only map[string]bool, kp *nftPart) *state {
	s := &state{os: nodeOS(n), chains: map[string][]string{}}
	if s.os == hybrid.OSWindows {
		// Windows compiles the node: only when its inputs differ.
		if !p.windows {
			return s
		}
		c := t.nodeCache(n.Name)
		if c.win == nil {
			c.win = &state{os: s.os, chains: s.chains}
			// An error is the compiler's, returned by compareNodes.
			if w, err := e.Windows(n.Name); err == nil && w != nil {
				windowsState(c.win, w)
			}
		}
		return c.win
	}
	// Linux compiles the node: only when a part of it is read, other than
	// kube-proxy's table of its class.
	if !p.routing && !p.proxy && !p.policy {
		return s
	}
	if kp != nil && only != nil && !p.routing && !p.policy {
		if e.HasLinux(n.Name) {
			s.kp = kp.add(s.chains)
		}
		return s
	}
	lx := e.Linux(n.Name)
	if lx == nil {
		return s
	}
	c := t.nodeCache(n.Name)
	if p.routing {
		if c.routing == nil {
			r := &routingPart{}
			for _, rt := range lx.Routes() {
				r.routes = append(r.routes, rt.String())
			}
			for _, e := range lx.Neighbors() {
				r.neigh = append(r.neigh, neighLine(e))
			}
			for _, e := range lx.FDB() {
				r.fdb = append(r.fdb, fdbLine(e))
			}
			c.routing = r
		}
		s.routes, s.neigh, s.fdb = c.routing.routes, c.routing.neigh, c.routing.fdb
	}
	if p.proxy && only != nil {
		if kp != nil {
			s.kp = kp.add(s.chains)
		} else if len(only) > 0 {
			s.kp = newNFTPart(lx.KubeProxyNFTOf(only)).add(s.chains)
		}
	} else if p.proxy {
		if c.kp == nil {
			c.kp = newNFTPart(lx.KubeProxyNFT())
		}
		s.kp = c.kp.add(s.chains)
	}
	if p.policy {
		if c.felix == nil {
			c.felix = newNFTPart(lx.FelixNFT())
		}
		s.felix = c.felix.add(s.chains)
	}
	return s
}

// mayDiffer says whether any node's state may differ: a node only one
// twin has, a Linux part whose inputs differ, or the Windows part where a
// Windows node is. Else no node is compiled at all (a change to the
// operator's or the IPAM settings alone, or to an agent's spec).
func mayDiffer(before, after *Twin, p parts) bool {
	if p.routing || p.proxy || p.policy {
		return true
	}
	if p.windows && (hasWindowsNode(before) || hasWindowsNode(after)) {
		return true
	}
	in := map[string]int{} // 1: before, 2: after, 3: both
	for _, n := range before.c.Nodes {
		in[n.Name] |= 1
	}
	for _, n := range after.c.Nodes {
		in[n.Name] |= 2
	}
	for _, v := range in {
		if v != 3 {
			return true
		}
	}
	return false
}

// hasWindowsNode says whether the twin has a node labelled Windows.
func hasWindowsNode(t *Twin) bool { return hybrid.HasWindowsNode(t.c.Nodes) }

// nodeParts are the parts of one node's state read so far from a twin.
// One comparison reads a node in one goroutine, and comparisons of a twin
// run one at a time (see Twin), so the fields need no lock of their own.
type nodeParts struct {
	routing   *routingPart
	own       []string // routes but those to other nodes' blocks (routing.go)
	kp, felix *nftPart
	win       *state // a Windows node's state, read whole
}

type routingPart struct{ routes, neigh, fdb []string }

// nftPart is one nftables table as lines, and its chains' rules in order.
type nftPart struct {
	lines  []string
	chains map[string][]string
}

func newNFTPart(items []linux.NFTItem) *nftPart {
	s := &state{chains: map[string][]string{}}
	return &nftPart{lines: s.nft(items), chains: s.chains}
}

// add puts the part's chains into chains (after any already there, as
// reading the tables in turn does) and returns its lines.
func (p *nftPart) add(chains map[string][]string) []string {
	for k, rules := range p.chains {
		chains[k] = append(chains[k], rules...)
	}
	return p.lines
}

// nodeCache is the node's parts read from the twin so far.
func (t *Twin) nodeCache(name string) *nodeParts {
	t.nodesMu.Lock()
	defer t.nodesMu.Unlock()
	if t.nodes == nil {
		t.nodes = map[string]*nodeParts{}
	}
	c := t.nodes[name]
	if c == nil {
		c = &nodeParts{}
		t.nodes[name] = c
	}
	return c
}

// nft turns nftables items into lines, keeping each chain's rules in order.
func (s *state) nft(items []linux.NFTItem) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, nftLine(it))
		if it.Kind == "rule" {
			k := it.Table + " " + it.In
			s.chains[k] = append(s.chains[k], it.Text)
		}
	}
	return out
}

// nftLine is one nftables item as a line: "table ip kube-proxy: chain
// services: rule …", "… set cluster-ips: element 10.96.0.1".
func nftLine(it linux.NFTItem) string {
	where := "table " + it.Table
	if it.In != "" {
		where += " " + it.In
	}
	switch it.Kind {
	case "table", "set", "map", "chain":
		if it.Text == "" {
			return where
		}
		return where + ": " + it.Text
	}
	return where + ": " + it.Kind + " " + it.Text
}

// windowsState lists a Windows node's HNS objects and VFP rules.
func windowsState(s *state, w *windows.Node) {
	for _, nw := range w.Networks() {
		head := fmt.Sprintf("network %s type %s", nw.Name, nw.Type)
		line := head
		if nw.NetworkAdapterName != "" {
			line += " adapter " + nw.NetworkAdapterName
		}
		line += " management " + nw.ManagementIP
		if nw.DrMacAddress != "" {
			line += " drmac " + nw.DrMacAddress
		}
		for _, sn := range nw.Subnets {
			line += fmt.Sprintf(" subnet %s gateway %s vsid %d", sn.AddressPrefix, sn.GatewayAddress, sn.VSID)
		}
		s.networks = append(s.networks, line)
		for _, p := range nw.Policies {
			pl := head + ": " + p.Type + " " + p.DestinationPrefix
			if p.ProviderAddress != "" {
				pl += " pa " + p.ProviderAddress
			}
			if p.DistributedRouterMacAddress != "" {
				pl += " drmac " + p.DistributedRouterMacAddress
			}
			if p.IsolationID != 0 {
				pl += fmt.Sprintf(" vsid %d", p.IsolationID)
			}
			s.networks = append(s.networks, pl)
		}
	}
	for _, ep := range w.Endpoints() {
		head := "endpoint " + ep.IPAddress
		if ep.Pod != "" {
			head += " pod " + ep.Pod
		} else if ep.Name != "" {
			head += " " + ep.Name
		}
		line := fmt.Sprintf("%s kind %s network %s mac %s remote %t", head, ep.Kind, ep.VirtualNetworkName, ep.MacAddress, ep.IsRemoteEndpoint)
		if ep.GatewayAddress != "" {
			line += " gateway " + ep.GatewayAddress
		}
		s.endpoints = append(s.endpoints, line)
		for _, p := range ep.Policies {
			s.endpoints = append(s.endpoints, head+": "+endpointPolicy(p))
		}
	}
	for _, lb := range w.LoadBalancers() {
		flags := ""
		if lb.DSR() {
			flags = " dsr"
		}
		s.lbs = append(s.lbs, fmt.Sprintf("%s %s/%s vips %s proto %d %d->%d source %s backends %s%s",
			lb.Kind, lb.Service, lb.PortName, strings.Join(lb.FrontendVIPs, ","), lb.Protocol, lb.ExternalPort, lb.InternalPort,
			lb.SourceVIP, strings.Join(lb.Backends, ","), flags))
	}
	// A port is named by what it serves (its endpoint's pod or address):
	// its name is an ID.
	epName := map[string]string{}
	for _, ep := range w.Endpoints() {
		if ep.Pod != "" {
			epName[ep.ID] = "pod " + ep.Pod
		} else {
			epName[ep.ID] = ep.IPAddress
		}
	}
	for _, p := range w.Ports() {
		port := epName[p.EndpointID]
		if port == "" {
			port = p.FriendlyName
		}
		if port == "" {
			port = p.Name
		}
		for _, l := range p.Layers {
			for _, g := range l.Groups {
				for _, r := range g.Rules {
					var conds []string
					for _, c := range r.Conditions {
						conds = append(conds, c.Key+"="+c.Value)
					}
					line := fmt.Sprintf("port %s layer %s group %s %s: rule %s priority %d type %s", port, l.Name, g.Name, g.Direction, r.Name, r.Priority, r.Type)
					if len(conds) > 0 {
						line += " " + strings.Join(conds, " ")
					}
					if len(r.Data) > 0 {
						line += " [" + strings.Join(r.Data, "; ") + "]"
					}
					s.vfp = append(s.vfp, line)
				}
			}
		}
	}
}

// endpointPolicy is one HNS endpoint policy as a line.
func endpointPolicy(p windows.EndpointPolicy) string {
	switch p.Type {
	case windows.PolicyACL:
		if a := p.ACL; a != nil {
			return fmt.Sprintf("ACL %s %s priority %d proto %d local %s remote %s %s",
				a.Direction, a.Action, a.Priority, a.Protocol, hostPorts(a.LocalAddresses, a.LocalPorts),
				hostPorts(a.RemoteAddresses, a.RemotePorts), a.RuleType)
		}
	case windows.PolicyOutBoundNAT:
		line := "OutBoundNAT"
		if len(p.ExceptionList) > 0 {
			line += " exceptions " + strings.Join(p.ExceptionList, ",")
		}
		if len(p.Destinations) > 0 {
			line += " destinations " + strings.Join(p.Destinations, ",")
		}
		return line
	case windows.PolicyRoute:
		return fmt.Sprintf("ROUTE %s encap %t", p.DestinationPrefix, p.NeedEncap)
	case windows.PolicyPA:
		return "PA " + p.PA
	}
	return p.Type
}

// hostPorts is an ACL side: addresses and ports, "any" where empty.
func hostPorts(addrs, ports string) string {
	if addrs == "" {
		addrs = "any"
	}
	if ports == "" {
		return addrs
	}
	return addrs + " port " + ports
}

// routingDiff is a node's routing part compared already (routingLines).
type routingDiff struct{ routes, neigh, fdb Lines }

// diffState compares two states of one node; nil when they hold the same.
func diffState(name string, a, b *state) *NodeDiff { return diffStateWith(name, a, b, nil) }

// diffStateWith is diffState with the routing part given when pre is not
// nil.
func diffStateWith(name string, a, b *state, pre *routingDiff) *NodeDiff {
	d := &NodeDiff{Node: name, Change: Changed}
	switch {
	case a == nil:
		a, d.Change, d.OS = &state{}, Added, b.os
	case b == nil:
		b, d.Change, d.OS = &state{}, Removed, a.os
	default:
		d.OS = b.os
	}
	if pre != nil {
		d.Routes, d.Neighbors, d.FDB = pre.routes, pre.neigh, pre.fdb
	} else {
		d.Routes = lines(a.routes, b.routes)
		d.Neighbors = lines(a.neigh, b.neigh)
		d.FDB = lines(a.fdb, b.fdb)
	}
	d.KubeProxy = lines(a.kp, b.kp)
	d.Felix = lines(a.felix, b.felix)
	d.Networks = lines(a.networks, b.networks)
	d.Endpoints = lines(a.endpoints, b.endpoints)
	d.LoadBalancers = lines(a.lbs, b.lbs)
	d.VFP = lines(a.vfp, b.vfp)
	for k, ra := range a.chains {
		rb, ok := b.chains[k]
		if !ok || slices.Equal(ra, rb) {
			continue
		}
		sa, sb := slices.Clone(ra), slices.Clone(rb)
		sort.Strings(sa)
		sort.Strings(sb)
		if slices.Equal(sa, sb) {
			d.RulesReordered = append(d.RulesReordered, k)
		}
	}
	sort.Strings(d.RulesReordered)
	if d.Change == Changed && len(d.RulesReordered) == 0 {
		empty := true
		for _, s := range d.Sections() {
			empty = empty && s.Lines.Empty()
		}
		if empty {
			return nil
		}
	}
	return d
}

// lines is the set difference of two lists of entries (a repeated entry
// counts as often as it appears).
func lines(a, b []string) Lines {
	count := map[string]int{}
	for _, s := range a {
		count[s]++
	}
	for _, s := range b {
		count[s]--
	}
	var l Lines
	for s, n := range count {
		for ; n > 0; n-- {
			l.Removed = append(l.Removed, s)
		}
		for ; n < 0; n++ {
			l.Added = append(l.Added, s)
		}
	}
	sort.Strings(l.Added)
	sort.Strings(l.Removed)
	return l
}
