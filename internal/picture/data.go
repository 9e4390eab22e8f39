package picture

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/wellknown"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// Report is everything the pictures show, gathered from the twin.
type Report struct {
	Topology Topology
	// Findings are check's, most severe first; NotRun lists the rules
	// that could not run, with the cause. Checked is false when no check
	// ran (the findings section then says so).
	Checked  bool
	Findings []Finding
	NotRun   []string
	// Reach is the reachability heat map; nil when none was computed.
	Reach  *Heat
	Traces []Trace
	// Notes are what the model says about itself (simulated values,
	// placeholders), shown under the topology.
	Notes []string
}

// Topology is the cluster's nodes, the VXLAN mesh between them and its
// Services.
type Topology struct {
	// Nodes: Linux first, then Windows, then any other OS; each group in
	// the cluster's order.
	Nodes    []Node
	Mesh     Mesh
	Services []Service
}

// Node is one node with what runs on it.
type Node struct {
	Name, OS, Role, IP string
	// Blocks are the Calico IPAM blocks affine to the node.
	Blocks []string
	// VTEP is the node's VXLAN tunnel endpoint; nil when it has none.
	VTEP *VTEP
	Pods []Pod
	// Findings counts the check findings on this Node object.
	Findings int
}

// VTEP is a node's VXLAN tunnel address and MAC, as its Node records them
// (Calico's projectcalico.org/IPv4VXLANTunnelAddr and VXLANTunnelMACAddr).
type VTEP struct {
	Addr, MAC string
	// Placeholder: the MAC is the twin's stand-in for a Windows DrPort
	// adapter's, which only a real join records.
	Placeholder bool
	// Derived: the Node records no MAC; this is the one Felix derives.
	Derived bool
}

// Pod is a pod on a node.
type Pod struct {
	Namespace, Name, IP string
	HostNetwork         bool
}

// Mesh is the VXLAN overlay: Felix on every node routes each remote block
// through the block's node's VTEP (felix/calc/vxlan_resolver.go), so every
// pair of members is a tunnel.
type Mesh struct {
	VNI, Port int
	// Members are the nodes with a VTEP, in Topology.Nodes' order.
	Members []string
}

// Service is a Service with its ports and the endpoints its
// EndpointSlices give.
type Service struct {
	Namespace, Name, Type, ClusterIP string
	Ports                            []string
	Backends                         []Backend
}

// Backend is one endpoint of a Service.
type Backend struct {
	Pod, Node, IP string
	Ready         bool
}

// Finding is one check finding.
type Finding struct {
	Severity, RuleID, Title, Object, Field, Message, Fix, Location string
}

// Heat is the reachability matrix as a heat map: a cell per source and
// destination, or, when Aggregated, per source and destination namespace.
type Heat struct {
	Aggregated bool
	Rows, Cols []string
	Cells      [][]HeatCell
	// Allowed, Denied, Partial and NA count the matrix's cells.
	Allowed, Denied, Partial, NA int
	Notes                        []string
}

// HeatCell is one cell: its verdict counts, its class (the colour) and
// what a reader sees when pointing at it.
type HeatCell struct {
	Allowed, Denied, Partial, NA int
	Class                        string
	Why                          string
}

// Trace is one walk drawn as hops in lanes, one lane per node.
type Trace struct {
	Title, Outcome, Reason, AtNode, Fix string
	Delivered                           bool
	Lanes                               []string
	Hops                                []Hop
}

// Hop is one step of a trace in its lane.
type Hop struct {
	Leg, Component, Action, Verdict, Before, After, Reason string
	Lane, Depth                                            int
}

// Aggregation limits: a matrix with more rows or columns than these is
// drawn per namespace.
const (
	maxHeatRows = 40
	maxHeatCols = 48
)

// Felix's VXLAN defaults (felix/config/config_params.go VXLANVNI,
// VXLANPort); the operator writes its own VNI into the default
// FelixConfiguration.
const (
	defaultVNI       = 4096
	defaultVXLANPort = 4789
)

// FromTwin gathers the pictures' data. rep, m and traces may be nil or
// empty: their sections then say nothing was computed.
func FromTwin(c *model.Cluster, rep *check.Report, m *reach.Matrix, traces []*trace.Result) *Report {
	r := &Report{Topology: topology(c)}
	for _, n := range c.Notes {
		note := string(n.Severity) + ": "
		if n.Object.Name != "" {
			note += check.ObjectString(n.Object) + ": "
		}
		r.Notes = append(r.Notes, note+n.Message)
	}
	if rep != nil {
		r.Checked = true
		titles := map[string]string{}
		for _, rule := range rep.Rules {
			titles[rule.ID] = rule.Title
		}
		perNode := map[string]int{}
		for _, f := range rep.Findings {
			loc := ""
			if f.Location.File != "" {
				loc = f.Location.String()
			}
			r.Findings = append(r.Findings, Finding{
				Severity: string(f.Severity), RuleID: f.RuleID, Title: titles[f.RuleID],
				Object: check.ObjectString(f.Object), Field: f.Field, Message: f.Message, Fix: f.Remediation, Location: loc,
			})
			if f.Object.Kind == "Node" {
				perNode[f.Object.Name]++
			}
		}
		for i := range r.Topology.Nodes {
			r.Topology.Nodes[i].Findings = perNode[r.Topology.Nodes[i].Name]
		}
		for _, g := range rep.NotRun {
			ids := make([]string, len(g.Rules))
			for i, rule := range g.Rules {
				ids[i] = rule.ID
			}
			r.NotRun = append(r.NotRun, fmt.Sprintf("%s: %s", strings.Join(ids, ", "), g.Cause))
		}
	}
	if m != nil {
		r.Reach = heat(m)
	}
	for _, t := range traces {
		if t != nil {
			r.Traces = append(r.Traces, traceOf(t))
		}
	}
	return r
}

func nodeOS(n *corev1.Node) string {
	if os := hybrid.NodeOS(n); os != "" {
		return os
	}
	return "unknown"
}

func osRank(os string) int {
	switch os {
	case "linux":
		return 0
	case "windows":
		return 1
	}
	return 2
}

func topology(c *model.Cluster) Topology {
	var t Topology
	blocks := map[string][]string{}
	for _, b := range c.IPAMBlocks {
		if b.Spec.Affinity != nil && !b.Spec.Deleted {
			if host, ok := strings.CutPrefix(*b.Spec.Affinity, "host:"); ok {
				blocks[host] = append(blocks[host], b.Spec.CIDR)
			}
		}
	}
	pods := map[string][]Pod{}
	for _, p := range c.Pods {
		if p.Spec.NodeName == "" {
			continue
		}
		pods[p.Spec.NodeName] = append(pods[p.Spec.NodeName], Pod{Namespace: p.Namespace, Name: p.Name, IP: p.Status.PodIP, HostNetwork: p.Spec.HostNetwork})
	}
	for _, n := range c.Nodes {
		node := Node{Name: n.Name, OS: nodeOS(n), Role: "worker", Blocks: blocks[n.Name], Pods: pods[n.Name]}
		if _, ok := n.Labels[wellknown.LabelControlPlane]; ok {
			node.Role = "control-plane"
		}
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				node.IP = a.Address
				break
			}
		}
		if addr := n.Annotations[calico.AnnotationIPv4VXLANTunnelAddr]; addr != "" {
			_, placeholder := n.Annotations[hybrid.VTEPMACPlaceholderAnnotation]
			node.VTEP = &VTEP{Addr: addr, MAC: n.Annotations[calico.AnnotationVXLANTunnelMACAddr], Placeholder: placeholder}
			if node.VTEP.MAC == "" && node.OS == "linux" {
				// Felix gives vxlan.calico the MAC it derives from the
				// node name when the Node records none.
				node.VTEP.MAC, node.VTEP.Derived = felix.VTEPMACForHost(n.Name), true
			}
		}
		slices.Sort(node.Blocks)
		slices.SortFunc(node.Pods, func(a, b Pod) int {
			return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
		})
		t.Nodes = append(t.Nodes, node)
	}
	slices.SortStableFunc(t.Nodes, func(a, b Node) int { return cmp.Compare(osRank(a.OS), osRank(b.OS)) })
	t.Mesh = Mesh{VNI: defaultVNI, Port: defaultVXLANPort}
	for _, f := range c.FelixConfigs {
		if f.Name == "default" {
			if f.Spec.VXLANVNI != nil {
				t.Mesh.VNI = *f.Spec.VXLANVNI
			}
			if f.Spec.VXLANPort != nil {
				t.Mesh.Port = *f.Spec.VXLANPort
			}
		}
	}
	for _, n := range t.Nodes {
		if n.VTEP != nil {
			t.Mesh.Members = append(t.Mesh.Members, n.Name)
		}
	}
	t.Services = services(c)
	return t
}

func services(c *model.Cluster) []Service {
	bySvc := map[string][]*discoveryv1.EndpointSlice{}
	for _, s := range c.EndpointSlices {
		key := s.Namespace + "/" + s.Labels[discoveryv1.LabelServiceName]
		bySvc[key] = append(bySvc[key], s)
	}
	var out []Service
	for _, s := range c.Services {
		svc := Service{Namespace: s.Namespace, Name: s.Name, Type: string(s.Spec.Type), ClusterIP: s.Spec.ClusterIP}
		if svc.Type == "" {
			svc.Type = string(corev1.ServiceTypeClusterIP)
		}
		for _, p := range s.Spec.Ports {
			proto := p.Protocol
			if proto == "" {
				proto = corev1.ProtocolTCP
			}
			port := fmt.Sprintf("%d/%s", p.Port, proto)
			if tp := p.TargetPort.String(); tp != "0" && tp != "" && tp != fmt.Sprint(p.Port) {
				port += "→" + tp
			}
			svc.Ports = append(svc.Ports, port)
		}
		for _, es := range bySvc[s.Namespace+"/"+s.Name] {
			for _, ep := range es.Endpoints {
				b := Backend{Ready: ep.Conditions.Ready == nil || *ep.Conditions.Ready}
				if ep.TargetRef != nil {
					b.Pod = ep.TargetRef.Name
				}
				if ep.NodeName != nil {
					b.Node = *ep.NodeName
				}
				if len(ep.Addresses) > 0 {
					b.IP = ep.Addresses[0]
				}
				svc.Backends = append(svc.Backends, b)
			}
		}
		sortBackends(svc.Backends)
		out = append(out, svc)
	}
	sortServices(out)
	return out
}

func sortBackends(b []Backend) {
	slices.SortFunc(b, func(x, y Backend) int {
		return cmp.Or(cmp.Compare(x.Node, y.Node), cmp.Compare(x.Pod, y.Pod), cmp.Compare(x.IP, y.IP))
	})
}

func sortServices(s []Service) {
	slices.SortFunc(s, func(x, y Service) int {
		return cmp.Or(cmp.Compare(x.Namespace, y.Namespace), cmp.Compare(x.Name, y.Name))
	})
}

// heat draws the matrix cell by cell when it is small enough to read,
// else per source and destination namespace.
func heat(m *reach.Matrix) *Heat {
	h := &Heat{Notes: m.Notes}
	agg := len(m.Sources) > maxHeatRows || len(m.Destinations) > maxHeatCols
	h.Aggregated = agg
	rowOf := make([]int, len(m.Sources))
	colOf := make([]int, len(m.Destinations))
	if agg {
		rows, cols := map[string]int{}, map[string]int{}
		for i, s := range m.Sources {
			rowOf[i] = index(rows, sourceGroup(s))
		}
		for j, d := range m.Destinations {
			colOf[j] = index(cols, d.Namespace)
		}
		h.Rows, h.Cols = sortedGroups(rows, rowOf), sortedGroups(cols, colOf)
	} else {
		for i, s := range m.Sources {
			rowOf[i] = i
			h.Rows = append(h.Rows, s.Label)
		}
		for j, d := range m.Destinations {
			colOf[j] = j
			h.Cols = append(h.Cols, destLabel(d))
		}
	}
	h.Cells = make([][]HeatCell, len(h.Rows))
	for i := range h.Cells {
		h.Cells[i] = make([]HeatCell, len(h.Cols))
	}
	// buf is always this function's own copy: a row that holds its
	// cells returns them from Row, and passing them back as the buffer
	// would let the next copied row overwrite the matrix.
	var buf []reach.Cell
	for i := range m.Sources {
		buf = append(buf[:0], m.Row(i, buf)...)
		for j, c := range buf {
			hc := &h.Cells[rowOf[i]][colOf[j]]
			switch c.Verdict {
			case reach.Allowed:
				hc.Allowed++
				h.Allowed++
			case reach.Denied:
				hc.Denied++
				h.Denied++
			case reach.Partial:
				hc.Partial++
				h.Partial++
			default:
				hc.NA++
				h.NA++
			}
			if !agg {
				reason, hop := m.Why(c)
				hc.Why = fmt.Sprintf("%s → %s: %s", m.Sources[i].Label, destLabel(m.Destinations[j]), c.Verdict)
				if hop != "" {
					hc.Why += " at " + hop
				}
				if reason != "" {
					hc.Why += ": " + reason
				}
			}
		}
	}
	for i := range h.Cells {
		for j := range h.Cells[i] {
			hc := &h.Cells[i][j]
			hc.Class = heatClass(hc)
			if agg {
				hc.Why = fmt.Sprintf("%s → %s: %d allowed, %d denied, %d partial, %d n/a", h.Rows[i], h.Cols[j], hc.Allowed, hc.Denied, hc.Partial, hc.NA)
			}
		}
	}
	return h
}

// sourceGroup is a row's namespace, or "nodes" for a node row.
func sourceGroup(s reach.Source) string {
	if s.Kind == "node" {
		return "(nodes)"
	}
	return s.Namespace
}

func destLabel(d reach.Destination) string {
	switch {
	case d.Proto == trace.ICMP:
		return d.Label + " icmp"
	case d.Port == 0:
		return d.Label
	}
	return fmt.Sprintf("%s %d/%s", d.Label, d.Port, d.Proto)
}

func index(m map[string]int, k string) int {
	if i, ok := m[k]; ok {
		return i
	}
	m[k] = len(m)
	return m[k]
}

// sortedGroups names the groups in order and renumbers at to that order.
func sortedGroups(m map[string]int, at []int) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	pos := map[int]int{}
	for i, k := range names {
		pos[m[k]] = i
	}
	for i := range at {
		at[i] = pos[at[i]]
	}
	return names
}

// heatClass is a cell's colour: its verdict when it holds one answer, the
// share allowed (in fifths) when it mixes them.
func heatClass(c *HeatCell) string {
	total := c.Allowed + c.Denied + c.Partial
	switch {
	case total == 0:
		return "na"
	case c.Allowed == total:
		return "allowed"
	case c.Denied == total:
		return "denied"
	case c.Partial == total:
		return "partial"
	}
	return fmt.Sprintf("mix%d", (c.Allowed*4+total/2)/total)
}

func traceOf(t *trace.Result) Trace {
	out := Trace{
		Title:   fmt.Sprintf("%s → %s", t.From, t.To),
		Outcome: string(t.Outcome), Delivered: t.Delivered, Reason: t.Reason, AtNode: t.AtNode, Fix: t.Fix,
	}
	if t.Proto == trace.ICMP {
		out.Title += " icmp"
	} else {
		out.Title += fmt.Sprintf(" %d/%s", t.Port, t.Proto)
	}
	lanes := map[string]int{}
	for _, h := range t.Hops {
		lane := h.Node
		if lane == "" {
			lane = "(network)"
		}
		i, ok := lanes[lane]
		if !ok {
			i = len(out.Lanes)
			lanes[lane] = i
			out.Lanes = append(out.Lanes, lane)
		}
		hop := Hop{Leg: h.Leg, Component: h.Component, Action: h.Action, Verdict: string(h.Verdict),
			Before: h.Before.String(), Reason: h.Reason, Lane: i, Depth: h.Depth}
		if h.After != nil {
			hop.After = h.After.String()
		}
		out.Hops = append(out.Hops, hop)
	}
	return out
}
