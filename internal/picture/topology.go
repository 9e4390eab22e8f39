package picture

import (
	"fmt"
	"strings"
)

// Topology layout, in pixels.
const (
	margin      = 20
	nodeW       = 270
	nodeGap     = 28
	perRow      = 5
	lineH       = 14
	maxPodLines = 10
	busGap      = 46
	svcRowH     = 16
	maxSvcRows  = 80
)

// osTitle is the heading of an OS group.
func osTitle(os string) string {
	switch os {
	case "linux":
		return "Linux nodes"
	case "windows":
		return "Windows nodes"
	}
	return os + " nodes"
}

// nodeLines are the text lines of a node's box after its name.
func nodeLines(n *Node) (lines []string, classes []string) {
	add := func(s, class string) {
		lines = append(lines, s)
		classes = append(classes, class)
	}
	add(fmt.Sprintf("%s · %s · %s", n.OS, n.Role, orDash(n.IP)), "small")
	if len(n.Blocks) == 0 {
		add("blocks: none", "small")
	}
	for _, b := range n.Blocks {
		add("block "+b, "")
	}
	if n.VTEP != nil {
		add("VTEP "+n.VTEP.Addr, "")
		mac := "MAC " + orDash(n.VTEP.MAC)
		switch {
		case n.VTEP.Placeholder:
			mac += " (placeholder)"
		case n.VTEP.Derived:
			mac += " (Felix's, derived)"
		}
		add(mac, "small")
	} else {
		add("no VTEP", "warnText")
	}
	host := 0
	var shown []Pod
	for _, p := range n.Pods {
		if p.HostNetwork {
			host++
			continue
		}
		shown = append(shown, p)
	}
	add(fmt.Sprintf("pods: %d + %d host-network", len(shown), host), "head")
	for i, p := range shown {
		if i == maxPodLines {
			add(fmt.Sprintf("… %d more", len(shown)-maxPodLines), "small")
			break
		}
		add(fmt.Sprintf("%s %s/%s", orDash(p.IP), p.Namespace, p.Name), "small")
	}
	return lines, classes
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// drawTopology lays the nodes out by OS — Linux above the VXLAN mesh,
// Windows below it, any other OS after — with a tap from each VTEP to the
// mesh, and the Services under them.
func drawTopology(t *Topology) *canvas {
	c := &canvas{ID: "topology", Title: "Cluster topology: nodes by OS, Calico blocks, VTEPs and the VXLAN mesh, pods per node, Services"}
	var groups [][]int
	var names []string
	for i, n := range t.Nodes {
		if len(names) == 0 || names[len(names)-1] != n.OS {
			names = append(names, n.OS)
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], i)
	}
	cols := min(perRow, max(len(t.Nodes), 1))
	width := max(2*margin+cols*nodeW+(cols-1)*nodeGap, 760)
	y := margin
	meta := c.add(&group{Class: "legend"})
	meta.text(margin, y+14, fmt.Sprintf("%d nodes, %d Services, VXLAN VNI %d on UDP %d", len(t.Nodes), len(t.Services), t.Mesh.VNI, t.Mesh.Port), "big", 0)
	y += 30
	busY := 0
	var taps []*group
	type tapAt struct{ x, y int }
	var tapPoints []tapAt
	for gi, idx := range groups {
		if gi == 1 {
			// The mesh runs between the first OS group and the rest.
			busY = y + busGap/2
			y += busGap
		}
		heading := c.add(&group{Class: "os", Kind: "os", Name: names[gi]})
		heading.text(margin, y+14, osTitle(names[gi]), "big", 0)
		y += 24
		top := y
		for r := 0; r*perRow < len(idx); r++ {
			rowH := 0
			for k, i := range idx[r*perRow : min(len(idx), (r+1)*perRow)] {
				n := &t.Nodes[i]
				x := margin + k*(nodeW+nodeGap)
				lines, classes := nodeLines(n)
				h := 28 + len(lines)*lineH + 6
				g := c.add(&group{Class: "k8s-node", Kind: "node", Name: n.Name, Title: nodeTitle(n)})
				g.rect(x, y, nodeW, h, "node "+n.OS)
				g.text(x+8, y+18, n.Name, "big", nodeW-16)
				if n.Findings > 0 {
					label := fmt.Sprintf("%d", n.Findings)
					bw := textWidth(label, "") + 8
					g.rect(x+nodeW-bw-4, y+4, bw, 16, "badge")
					g.textAnchor(x+nodeW-bw/2-4, y+16, label, "badge", "middle", 0)
				}
				for li, l := range lines {
					g.text(x+8, y+28+(li+1)*lineH-2, l, classes[li], nodeW-16)
				}
				if n.VTEP != nil {
					tapY := y + 28 + vtepLine(lines)*lineH - 6
					g.rect(x-5, tapY-5, 10, 10, "vtep")
					taps = append(taps, g)
					tapPoints = append(tapPoints, tapAt{x, tapY})
				}
				rowH = max(rowH, h)
			}
			y += rowH + nodeGap
		}
		c.add(&group{Class: "os-frame"}).rect(margin/2, top-32, width-margin, y-top+32-nodeGap/2, "os")
	}
	if len(groups) == 1 {
		busY = y + busGap/2 - nodeGap/2
		y += busGap
	}
	// The mesh: a bus every VTEP taps; each pair of taps is a tunnel.
	if len(t.Mesh.Members) > 0 {
		mesh := c.add(&group{Class: "mesh", Kind: "mesh", Name: "vxlan",
			Title: fmt.Sprintf("VXLAN mesh, VNI %d, UDP %d: %s", t.Mesh.VNI, t.Mesh.Port, strings.Join(t.Mesh.Members, ", "))})
		mesh.line(margin/2, busY, width-margin/2, busY, "mesh")
		mesh.text(width-margin-textWidth(meshLabel(t), "small"), busY-5, meshLabel(t), "small", 0)
		for i, g := range taps {
			p := tapPoints[i]
			gx := p.x - nodeGap/2
			g.line(p.x-5, p.y, gx, p.y, "tap")
			g.line(gx, p.y, gx, busY, "tap")
		}
	}
	// Services.
	y += 8
	sv := c.add(&group{Class: "services", Kind: "services"})
	sv.text(margin, y+14, fmt.Sprintf("Services (%d)", len(t.Services)), "big", 0)
	y += 26
	for i, s := range t.Services {
		if i == maxSvcRows {
			sv.text(margin, y+12, fmt.Sprintf("… %d more Services (the HTML report lists them all)", len(t.Services)-maxSvcRows), "small", 0)
			y += svcRowH
			break
		}
		g := c.add(&group{Class: "svc", Kind: "service", Name: s.Namespace + "/" + s.Name, Title: serviceTitle(&s)})
		g.rect(margin, y, 10, 10, "svc")
		g.text(margin+16, y+10, fmt.Sprintf("%s/%s  %s %s  %s  → %s", s.Namespace, s.Name, s.Type, orDash(s.ClusterIP), strings.Join(s.Ports, ","), backendSummary(s.Backends)), "", width-2*margin-16)
		y += svcRowH
	}
	c.W, c.H = width, y+margin
	return c
}

func meshLabel(t *Topology) string {
	return fmt.Sprintf("VXLAN mesh · VNI %d · UDP %d · %d VTEPs, %d tunnels", t.Mesh.VNI, t.Mesh.Port, len(t.Mesh.Members), len(t.Mesh.Members)*(len(t.Mesh.Members)-1)/2)
}

// vtepLine is the 1-based line of the VTEP address in a node's lines.
func vtepLine(lines []string) int {
	for i, l := range lines {
		if strings.HasPrefix(l, "VTEP ") {
			return i + 1
		}
	}
	return 1
}

func nodeTitle(n *Node) string {
	var b strings.Builder
	fmt.Fprintf(&b, "node %s (%s, %s) %s", n.Name, n.OS, n.Role, orDash(n.IP))
	if n.VTEP != nil {
		fmt.Fprintf(&b, "\nVTEP %s %s", n.VTEP.Addr, n.VTEP.MAC)
	}
	for _, bl := range n.Blocks {
		fmt.Fprintf(&b, "\nblock %s", bl)
	}
	fmt.Fprintf(&b, "\n%d pods", len(n.Pods))
	if n.Findings > 0 {
		fmt.Fprintf(&b, "\n%d check findings on this Node", n.Findings)
	}
	return b.String()
}

func serviceTitle(s *Service) string {
	var b strings.Builder
	fmt.Fprintf(&b, "service %s/%s %s %s %s", s.Namespace, s.Name, s.Type, orDash(s.ClusterIP), strings.Join(s.Ports, ","))
	for _, be := range s.Backends {
		fmt.Fprintf(&b, "\n%s %s on %s", orDash(be.IP), orDash(be.Pod), orDash(be.Node))
		if !be.Ready {
			b.WriteString(" (not ready)")
		}
	}
	return b.String()
}

// backendSummary counts a Service's endpoints per node (an endpoint on no
// node, such as the API server's host address, by its address).
func backendSummary(bs []Backend) string {
	if len(bs) == 0 {
		return "no endpoints"
	}
	where := func(b Backend) string {
		if b.Node != "" {
			return b.Node
		}
		return orDash(b.IP)
	}
	var parts []string
	count := 0
	for i, b := range bs {
		count++
		if i == len(bs)-1 || where(bs[i+1]) != where(b) {
			parts = append(parts, fmt.Sprintf("%s×%d", where(b), count))
			count = 0
		}
	}
	noun := "endpoints"
	if len(bs) == 1 {
		noun = "endpoint"
	}
	return fmt.Sprintf("%d %s: %s", len(bs), noun, strings.Join(parts, " "))
}
