package powershell

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows"
)

// native runs hnsdiag or vfpctrl.
func (n node) native(name string, args []string) (string, string, int) {
	if name == "hnsdiag" {
		return n.hnsdiag(args)
	}
	return n.vfpctrl(args)
}

// hnsdiagKey pads a key the way hnsdiag lines up its fields: the key in a
// 17-character column, then ": " (seed 000 "Load Balancer    : …", Rancher's
// RKE2 notes "Endpoint         : …", "    Name             : …").
func hnsdiagKey(indent, key string) string {
	return indent + key + strings.Repeat(" ", max(0, 17-len(key))) + ": "
}

// hnsdiag emulates `hnsdiag list <kind>` in Windows Server 2022/2025's
// per-object layout. The load balancer fields (Virtual IPs, Direct IP IDs,
// continuation lines under the first ID) come from seed 000 and the
// endpoint ones (Name, IP Address) from observed output; the network and
// namespace fields are the older tabular output's columns in the newer
// layout, which stderr says.
func (n node) hnsdiag(args []string) (string, string, int) {
	if len(args) != 2 || !strings.EqualFold(args[0], "list") {
		return "", fmt.Sprintf("hnsdiag %s is not emulated. kubectl-hybrid emulates: %s\n", strings.Join(args, " "), strings.Join(emulatedList(), ", ")), 1
	}
	var sb strings.Builder
	line := func(indent, key, val string) {
		sb.WriteString(strings.TrimRight(hnsdiagKey(indent, key)+val, " ") + "\n")
	}
	multi := func(key string, vals []string) {
		if len(vals) == 0 {
			line("    ", key, "")
			return
		}
		line("    ", key, vals[0])
		for _, v := range vals[1:] {
			sb.WriteString(strings.Repeat(" ", 4+17+2) + v + "\n")
		}
	}
	kinds := []string{strings.ToLower(args[1])}
	if kinds[0] == "all" {
		// hnsdiag's help lists All as valid only with list: every kind in
		// turn (the order of the sections is the twin's).
		kinds = []string{"networks", "endpoints", "namespaces", "loadbalancers"}
	}
	var notes []string
	for _, kind := range kinds {
		switch kind {
		case "loadbalancers":
			for _, lb := range n.LoadBalancers() {
				line("", "Load Balancer", lb.ID)
				multi("Virtual IPs", lb.FrontendVIPs)
				multi("Direct IP IDs", lb.EndpointIDs)
			}
		case "endpoints":
			for _, ep := range n.Endpoints() {
				line("", "Endpoint", ep.ID)
				line("    ", "Name", ep.Name)
				line("    ", "IP Address", ep.IPAddress)
			}
		case "networks":
			for _, nw := range n.Networks() {
				line("", "Network", nw.ID)
				line("    ", "Name", nw.Name)
				line("    ", "Type", nw.Type)
			}
			notes = append(notes, "kubectl-hybrid: hnsdiag's per-network fields after the ID are reconstructed (not confirmed by observed output)\n")
		case "namespaces":
			for _, ns := range n.Namespaces {
				line("", "Namespace", ns.ID)
				multi("Endpoint IDs", ns.EndpointIDs)
			}
			notes = append(notes, "kubectl-hybrid: hnsdiag's per-namespace fields after the ID are reconstructed (not confirmed by observed output)\n")
		default:
			return "", fmt.Sprintf("hnsdiag list %s is not emulated. kubectl-hybrid emulates: %s\n", args[1], strings.Join(emulatedList(), ", ")), 1
		}
	}
	if len(kinds) > 1 {
		notes = append(notes, "kubectl-hybrid: hnsdiag list all prints the kinds in the order networks, endpoints, namespaces, load balancers (not confirmed by observed output)\n")
	}
	note := strings.Join(notes, "")
	return sb.String(), note, 0
}

// vfpctrl emulates the listing commands of vfpctrl. Output follows the
// layout observed in vfpctrl listings (" ITEM LIST", "===========", items
// with "Key : value" lines, "Command <verb> succeeded!"); see vfp.go for
// what of the content is confirmed.
func (n node) vfpctrl(args []string) (string, string, int) {
	opts := map[string]string{}
	verb := ""
	for i := 0; i < len(args); i++ {
		a := strings.ToLower(args[i])
		switch a {
		case "/port", "/layer", "/group":
			if i+1 >= len(args) {
				return "", fmt.Sprintf("ERROR: %s needs a value\n", args[i]), 1
			}
			opts[a] = args[i+1]
			i++
		case "/list-vmswitch-port", "/list-layer", "/list-group", "/list-rule":
			verb = a
		default:
			return "", fmt.Sprintf("vfpctrl %s is not emulated. kubectl-hybrid emulates: %s\n", args[i], strings.Join(emulatedList(), ", ")), 1
		}
	}
	if verb == "" {
		return "", fmt.Sprintf("vfpctrl %s is not emulated. kubectl-hybrid emulates: %s\n", strings.Join(args, " "), strings.Join(emulatedList(), ", ")), 1
	}
	var sb strings.Builder
	sb.WriteString(" ITEM LIST\n===========\n\n")
	if verb == "/list-vmswitch-port" {
		for _, p := range n.Ports() {
			kv := func(k, v string) { sb.WriteString(k + strings.Repeat(" ", 22-len(k)) + ": " + v + "\n") }
			kv("Port name", p.Name)
			kv("Port Friendly name", p.FriendlyName)
			kv("Switch name", p.SwitchName)
			kv("Switch Friendly name", p.SwitchFriendlyName)
			kv("PortId", strconv.Itoa(p.PortID))
			kv("VMQ Usage", "0")
			kv("SR-IOV Usage", "0")
			sb.WriteString("\n")
		}
		sb.WriteString("Command list-vmswitch-port succeeded!\n")
		return sb.String(), "", 0
	}
	port := n.port(opts["/port"])
	if port == nil {
		return "", fmt.Sprintf("ERROR: failed to find port %q\n", opts["/port"]), 1
	}
	note := ""
	for _, l := range port.Layers {
		if !l.Confirmed {
			note = "kubectl-hybrid: layers other than ACL_ENDPOINT_LAYER, their priorities and rule contents are a model (names from VFP tooling; placement on HNS container ports not confirmed)\n"
		}
	}
	if verb == "/list-layer" {
		for _, l := range port.Layers {
			fmt.Fprintf(&sb, "  LAYER : %s\n      Friendly name : %s\n      Flags : %s\n      Priority : %d\n\n", l.Name, l.Name, l.Flags, l.Priority)
		}
		sb.WriteString("Command list-layer succeeded!\n")
		return sb.String(), note, 0
	}
	layer := layerOf(port, opts["/layer"])
	if layer == nil {
		return "", fmt.Sprintf("ERROR: failed to find layer %q on port %s\n", opts["/layer"], port.Name), 1
	}
	if !layer.Confirmed {
		note = fmt.Sprintf("kubectl-hybrid: %s on an HNS container port, its priority and its rules are a model (not confirmed upstream)\n", layer.Name)
	} else {
		note = ""
	}
	groups := layer.Groups
	if g := opts["/group"]; g != "" {
		groups = nil
		for _, x := range layer.Groups {
			if strings.EqualFold(x.Name, g) {
				groups = append(groups, x)
			}
		}
		if len(groups) == 0 {
			return "", fmt.Sprintf("ERROR: failed to find group %q in layer %s\n", g, layer.Name), 1
		}
	}
	for _, g := range groups {
		fmt.Fprintf(&sb, "  GROUP : %s\n      Friendly name : %s\n      Priority : %d\n      Direction : %s\n      Type : IPv4\n        Conditions:\n            <none>\n      Match type : Priority-based match\n\n",
			g.Name, g.Name, g.Priority, g.Direction)
		if verb != "/list-rule" {
			continue
		}
		for _, r := range g.Rules {
			fmt.Fprintf(&sb, "    RULE : %s\n        Friendly name : %s\n        Priority : %d\n        Flags : %s \n        Type : %s\n        Conditions:\n",
				r.Name, r.FriendlyName, r.Priority, r.Flags, r.Type)
			if len(r.Conditions) == 0 {
				sb.WriteString("            <none>\n")
			}
			for _, c := range r.Conditions {
				fmt.Fprintf(&sb, "            %s : %s\n", c.Key, c.Value)
			}
			if len(r.Data) > 0 {
				sb.WriteString("        Rule Data:\n")
				for _, d := range r.Data {
					sb.WriteString("            " + d + "\n")
				}
			}
			sb.WriteString("        Flow TTL: 240\n        FlagsEx : 0 \n\n")
		}
	}
	if verb == "/list-rule" {
		sb.WriteString("Command list-rule succeeded!\n")
	} else {
		sb.WriteString("Command list-group succeeded!\n")
	}
	return sb.String(), note, 0
}

func (n node) port(name string) *windows.VFPPort {
	for _, p := range n.Ports() {
		if strings.EqualFold(p.Name, name) || strings.EqualFold(p.FriendlyName, name) {
			return p
		}
	}
	return nil
}

func layerOf(p *windows.VFPPort, name string) *windows.VFPLayer {
	for _, l := range p.Layers {
		if strings.EqualFold(l.Name, name) {
			return l
		}
	}
	return nil
}
