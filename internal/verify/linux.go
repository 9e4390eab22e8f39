package verify

import (
	"net/netip"
	"strings"
)

// Producers of what a Linux node holds.
const (
	prodFelix     = "Felix (calico-node)"
	prodKubeProxy = "kube-proxy"
	prodHost      = "host network configuration (outside Kubernetes)"
)

// routeTypes are the route types `ip route` prints before the prefix
// (iproute2 ip/iproute.c, print_route: rtnl_rtntype_n2a).
var routeTypes = map[string]bool{
	"unicast": true, "local": true, "broadcast": true, "anycast": true, "multicast": true,
	"blackhole": true, "unreachable": true, "prohibit": true, "throw": true, "nat": true,
}

// routeProtos are the numeric protocols iproute2 names from rt_protos, so
// "proto 2" and "proto kernel" are one thing.
var routeProtos = map[string]string{"2": "kernel", "3": "boot", "4": "static", "16": "dhcp", "12": "bird"}

// routeIgnored are per-route words that are timers or kernel state, not
// configuration: expires counts down, linkdown and the offload flags follow
// the carrier and the NIC.
var routeIgnored = map[string]bool{"expires": true, "linkdown": true, "offload": true, "trap": true, "rt_offload": true, "rt_trap": true, "offload_failed": true, "dead": true, "used": true, "age": true, "cache": true}

// routeFlags are single words (no value) that are configuration.
var routeFlags = map[string]bool{"onlink": true, "pervasive": true, "notify": true}

// ParseIPRoute reads `ip route` (iproute2): one item per route, keyed by
// type, prefix and table; a host address without a length is a /32 or /128.
func ParseIPRoute(out string) ([]Item, error) {
	var items []Item
	for n, line := range lines(out) {
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Fields(line)
		if line[0] == ' ' || line[0] == '\t' {
			// A multipath route's "nexthop via … dev … weight 1" lines.
			if len(items) == 0 || f[0] != "nexthop" {
				return nil, parseErr(n+1, "continuation line %q without a route before it", strings.TrimSpace(line))
			}
			items[len(items)-1].Value += " nexthop(" + attrs(routeAttrs(f[1:])) + ")"
			continue
		}
		typ := "unicast"
		if routeTypes[f[0]] {
			typ, f = f[0], f[1:]
		}
		if len(f) == 0 {
			return nil, parseErr(n+1, "route type %s without a destination", typ)
		}
		dst, err := routeDst(f[0])
		if err != nil {
			return nil, parseErr(n+1, "destination %q: %v", f[0], err)
		}
		a := routeAttrs(f[1:])
		key := typ + " " + dst
		if t := a["table"]; t != "" && t != "main" {
			key += " table " + t
		}
		delete(a, "table")
		items = append(items, Item{Kind: "route", Key: key, Value: attrs(a), Producer: routeProducer(typ, a)})
	}
	return items, nil
}

func routeDst(s string) (string, error) {
	if s == "default" {
		return s, nil
	}
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return "", err
		}
		return p.String(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return "", err
	}
	return netip.PrefixFrom(a, a.BitLen()).String(), nil
}

func routeAttrs(f []string) map[string]string {
	a := map[string]string{}
	for i := 0; i < len(f); i++ {
		w := f[i]
		switch {
		case routeIgnored[w]:
			if w == "expires" || w == "used" || w == "age" {
				i++
			}
		case routeFlags[w]:
			a[w] = "yes"
		case i+1 < len(f):
			v := f[i+1]
			if w == "proto" {
				if name, ok := routeProtos[v]; ok {
					v = name
				}
			}
			if w == "metric" && v == "0" {
				v = ""
			}
			a[w] = v
			i++
		default:
			a[w] = "yes"
		}
	}
	return a
}

// routeProducer: Felix writes the routes through vxlan.calico, to the
// cali* workload interfaces and the blackhole of its own block with
// protocol 80 (felix/routetable/route_table.go, felix/dataplane/linux/
// vxlan_mgr.go); everything else is the host's own configuration.
func routeProducer(typ string, a map[string]string) string {
	dev := a["dev"]
	if dev == "vxlan.calico" || strings.HasPrefix(dev, "cali") || (typ == "blackhole" && a["proto"] == "80") {
		return prodFelix
	}
	return prodHost
}

// ParseLinkVXLAN reads `ip -d link show vxlan.calico`: the device's MTU,
// MAC and VXLAN parameters, one item each. The interface index, queue,
// promiscuity, GSO/GRO sizes, ageing and the like are not compared.
func ParseLinkVXLAN(out string) ([]Item, error) {
	var items []Item
	var dev string
	add := func(key, val string) {
		items = append(items, Item{Kind: "vxlan device", Key: dev + " " + key, Value: val, Producer: prodFelix})
	}
	for n, line := range lines(out) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if line[0] != ' ' && line[0] != '\t' {
			// "5: vxlan.calico: <BROADCAST,…> mtu 1450 qdisc … state UNKNOWN …"
			if len(f) < 2 || !strings.HasSuffix(f[0], ":") || !strings.HasSuffix(f[1], ":") {
				return nil, parseErr(n+1, "expected \"INDEX: NAME: <FLAGS> …\", got %q", line)
			}
			dev, _, _ = strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
			for i := 2; i+1 < len(f); i++ {
				if f[i] == "mtu" {
					add("mtu", f[i+1])
				}
			}
			continue
		}
		if dev == "" {
			return nil, parseErr(n+1, "detail line before the link line")
		}
		switch {
		case strings.HasPrefix(f[0], "link/"):
			if len(f) > 1 {
				add("address", normMAC(f[1]))
			}
		case f[0] == "vxlan":
			for i := 1; i < len(f); i++ {
				switch f[i] {
				case "id", "local", "dev", "dstport", "group", "remote":
					if i+1 < len(f) {
						add("vxlan "+f[i], f[i+1])
						i++
					}
				case "learning", "nolearning":
					add("vxlan learning", strings.TrimSuffix(f[i], "learning")+"learning")
				}
			}
		}
	}
	if dev == "" {
		return nil, parseErr(1, "no link line")
	}
	return items, nil
}

// neighDynamic are the states of entries the kernel learned; which of
// them an entry is in is a timer, not configuration.
var neighDynamic = map[string]bool{"REACHABLE": true, "STALE": true, "DELAY": true, "PROBE": true}

// ParseIPNeigh reads `ip neigh show dev vxlan.calico`: one item per
// address with its link-layer address and whether it is permanent (Felix
// writes permanent entries for every remote VTEP, felix/dataplane/linux/
// vxlan_mgr.go).
func ParseIPNeigh(out string) ([]Item, error) {
	var items []Item
	for n, line := range lines(out) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		ip, err := netip.ParseAddr(f[0])
		if err != nil {
			return nil, parseErr(n+1, "neighbour address %q: %v", f[0], err)
		}
		a := map[string]string{}
		key := ip.String()
		for i := 1; i < len(f); i++ {
			w := f[i]
			switch {
			case w == "lladdr" && i+1 < len(f):
				a["lladdr"] = normMAC(f[i+1])
				i++
			case w == "dev" && i+1 < len(f):
				key += " dev " + f[i+1]
				i++
			case w == "used" || w == "probes":
				i++
			case w == "router" || w == "proxy" || w == "extern_learn":
				a[w] = "yes"
			case strings.ToUpper(w) == w:
				state := w
				if neighDynamic[w] {
					state = "dynamic"
				}
				a["state"] = state
			}
		}
		items = append(items, Item{Kind: "neighbour", Key: key, Value: attrs(a), Producer: prodFelix})
	}
	return items, nil
}

// ParseBridgeFDB reads `bridge fdb show dev vxlan.calico`: one item per
// MAC (per MAC and destination for the all-zeros flood entry, which may
// repeat), with where it tunnels to.
func ParseBridgeFDB(out string) ([]Item, error) {
	var items []Item
	for n, line := range lines(out) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		mac := normMAC(f[0])
		if len(mac) != 17 || strings.Count(mac, ":") != 5 {
			return nil, parseErr(n+1, "FDB entry should start with a MAC address, got %q", f[0])
		}
		a := map[string]string{}
		key := mac
		for i := 1; i < len(f); i++ {
			w := f[i]
			switch w {
			case "dev", "dst", "vlan", "port", "vni", "src_vni", "via", "master", "nhid":
				if i+1 < len(f) {
					a[w] = f[i+1]
					i++
				}
			case "used", "updated":
				i++
			default:
				a["flags"] = strings.TrimPrefix(a["flags"]+","+w, ",")
			}
		}
		delete(a, "dev")
		if mac == "00:00:00:00:00:00" {
			key += " dst " + a["dst"]
		}
		items = append(items, Item{Kind: "fdb entry", Key: key, Value: attrs(a), Producer: prodFelix})
	}
	return items, nil
}
