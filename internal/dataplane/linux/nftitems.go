package linux

import "github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux/nft"

// NFTItem is one piece of a node's nftables ruleset as a comparison reads
// it: a set's or chain's declaration, a set or map element, or a rule. Two
// rulesets hold the same items when nft list ruleset would print the same
// declarations, elements and rules (elements in any order; a chain's rules
// are compared in order by the caller if it needs to).
type NFTItem struct {
	// Table is "family name" ("ip kube-proxy", "ip calico").
	Table string
	// In is the set, map or chain the item belongs to ("set cluster-ips",
	// "map service-ips", "chain services"); empty for the table itself.
	In string
	// Kind is "table", "set", "map", "chain", "element" or "rule".
	Kind string
	// Text is the declaration (type, hook, priority, flags), the element
	// as nft prints it (key, and " : value" for a map) or the rule.
	Text string
}

// NFTItems lists the node's nftables tables item by item, in the order
// nft list ruleset prints them: kube-proxy's tables, then Felix's.
func (n *Node) NFTItems() []NFTItem {
	return append(n.KubeProxyNFT(), n.FelixNFT()...)
}

// KubeProxyNFT lists kube-proxy's tables (ip and ip6 kube-proxy) item by
// item; nil when kube-proxy does not run on the node.
func (n *Node) KubeProxyNFT() []NFTItem {
	if n.kp == nil {
		return nil
	}
	return nftItems(n.kp.Table("ip"), n.kp.Table("ip6"))
}

// KubeProxyNFTOf is KubeProxyNFT holding, of the Services, only the ports
// of those named ("namespace/name"). A Service's items are its own chains
// and its elements in the table's sets and maps; a set keeps the first of
// two equal elements, so a caller comparing two tables by the Services
// that differ names every Service sharing an address or node port with
// one of them too.
func (n *Node) KubeProxyNFTOf(services map[string]bool) []NFTItem {
	if n.kp == nil {
		return nil
	}
	return nftItems(n.kp.TableOf("ip", services), n.kp.TableOf("ip6", services))
}

// FelixNFT lists Felix's table (ip calico) item by item; nil when
// Calico's Linux dataplane is not nftables (Felix then programs iptables,
// noted on the node). Rendering it reads every policy
// that selects the node's pods and the members of their IP sets.
func (n *Node) FelixNFT() []NFTItem {
	if n.cal == nil {
		return nil
	}
	t, _ := n.cal.table(n.calc)
	return nftItems(t)
}

func nftItems(tables ...*nft.Table) []NFTItem {
	var out []NFTItem
	for _, t := range tables {
		table := t.Family + " " + t.Name
		out = append(out, NFTItem{Table: table, Kind: "table", Text: t.Comment})
		for _, s := range t.Sets {
			kind, typ := "set", s.KeyType
			if s.IsMap {
				kind, typ = "map", typ+" : "+s.ValType
			}
			in := kind + " " + s.Name
			decl := "type " + typ
			if len(s.Flags) > 0 {
				decl += " flags"
				for _, f := range s.Flags {
					decl += " " + f
				}
			}
			if s.Timeout != "" {
				decl += " timeout " + s.Timeout
			}
			out = append(out, NFTItem{Table: table, In: in, Kind: kind, Text: decl})
			for _, e := range s.Elems {
				text := e.Key
				if s.IsMap {
					text += " : " + e.Value
				}
				out = append(out, NFTItem{Table: table, In: in, Kind: "element", Text: text})
			}
		}
		for _, c := range t.Chains {
			in := "chain " + c.Name
			decl := ""
			if c.Type != "" {
				decl = "type " + c.Type + " hook " + c.Hook + " priority " + c.Priority
			}
			out = append(out, NFTItem{Table: table, In: in, Kind: "chain", Text: decl})
			for _, r := range c.Rules {
				out = append(out, NFTItem{Table: table, In: in, Kind: "rule", Text: r})
			}
		}
	}
	return out
}
