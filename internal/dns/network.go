package dns

import (
	"fmt"
	"net/netip"
	"strings"

	"golang.org/x/net/publicsuffix"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// NetworkDNS is the node network's DNS server: the router the hosts use (the
// seed sets it with Set-DnsClientServerAddress … 192.168.10.1, the gateway),
// answering from the Cluster kind's spec.network.dns records and recursing
// to the Internet for everything else.
type NetworkDNS struct {
	// IP of the server; empty when the Cluster kind names no gateway.
	IP      string
	records map[string][]string // name → addresses, in spec order
	ptr     map[string]string   // address → first name with it
}

// NewNetworkDNS reads the Cluster kind's network.
func NewNetworkDNS(c *model.Cluster) *NetworkDNS {
	n := &NetworkDNS{IP: c.Network.Gateway, records: map[string][]string{}, ptr: map[string]string{}}
	for _, r := range c.Network.DNS {
		name, _ := normalize(r.Name)
		n.records[name] = append(n.records[name], r.Address)
		if _, ok := n.ptr[r.Address]; !ok {
			n.ptr[r.Address] = name
		}
	}
	return n
}

// Query answers as the node network's DNS server would. Names it holds get
// their addresses. A name whose top-level domain is not delegated in the
// root zone gets NXDOMAIN, as from any recursive resolver (the ICANN section
// of the Public Suffix List stands in for the root zone's TLD list). Every
// other name is NotModeled: the twin does not know the Internet.
func (n *NetworkDNS) Query(name string, qtype uint16) Answer {
	name, _ = normalize(name)
	a := Answer{Name: name, Type: qtype, Path: PathNetwork}
	if n.IP == "" {
		a.Rcode = NotModeled
		a.Why = "not modeled: the Cluster kind names no gateway, so the node network's DNS server is unknown"
		return a
	}
	if qtype == TypePTR {
		if ip, ok := reverseAddr(name); ok {
			if host, ok := n.ptr[ip.String()]; ok {
				a.Records = []Record{{Name: name, Type: TypePTR, Data: host}}
				a.Why = fmt.Sprintf("the node network DNS holds %s → %s; the twin assumes the router answers the matching PTR", host, ip)
				return a
			}
		}
		a.Rcode = NotModeled
		a.Why = "not modeled: reverse name outside the cluster: " + name
		return a
	}
	if addrs, ok := n.records[name]; ok {
		if qtype == TypeA {
			for _, ad := range addrs {
				a.Records = append(a.Records, Record{Name: name, Type: TypeA, Data: ad})
			}
			a.Why = "record of the Cluster kind's spec.network.dns"
		} else {
			a.Why = "the Cluster kind's spec.network.dns lists only A records for " + name
		}
		return a
	}
	if tld := topLevel(name); tld != "" && !delegatedTLD(tld) {
		a.Rcode = NXDomain
		a.Why = fmt.Sprintf("%q is not a top-level domain of the root zone (ICANN section of the Public Suffix List): any recursive resolver answers NXDOMAIN", tld)
		return a
	}
	a.Rcode = NotModeled
	a.Why = "not modeled: external name " + name
	return a
}

// topLevel is the last label of a name.
func topLevel(name string) string {
	if i := strings.LastIndex(name, "."); i >= 0 {
		return name[i+1:]
	}
	return name
}

// delegatedTLD reports whether tld is a top-level domain ICANN delegates.
func delegatedTLD(tld string) bool {
	suffix, icann := publicsuffix.PublicSuffix(tld)
	return icann && suffix == tld
}

// reverseAddr reads an in-addr.arpa or ip6.arpa name.
func reverseAddr(name string) (netip.Addr, bool) {
	switch {
	case strings.HasSuffix(name, ".in-addr.arpa"):
		l := strings.Split(strings.TrimSuffix(name, ".in-addr.arpa"), ".")
		if len(l) != 4 {
			return netip.Addr{}, false
		}
		a, err := netip.ParseAddr(l[3] + "." + l[2] + "." + l[1] + "." + l[0])
		return a, err == nil
	case strings.HasSuffix(name, ".ip6.arpa"):
		l := strings.Split(strings.TrimSuffix(name, ".ip6.arpa"), ".")
		if len(l) != 32 {
			return netip.Addr{}, false
		}
		var b strings.Builder
		for i := 31; i >= 0; i-- {
			b.WriteString(l[i])
			if i%4 == 0 && i > 0 {
				b.WriteByte(':')
			}
		}
		a, err := netip.ParseAddr(b.String())
		return a, err == nil
	}
	return netip.Addr{}, false
}

// reverseName is the PTR question for an address.
func reverseName(a netip.Addr) string {
	if a.Is4() {
		b := a.As4()
		return fmt.Sprintf("%d.%d.%d.%d.in-addr.arpa", b[3], b[2], b[1], b[0])
	}
	b := a.As16()
	var s strings.Builder
	for i := 15; i >= 0; i-- {
		fmt.Fprintf(&s, "%x.%x.", b[i]&0xf, b[i]>>4)
	}
	s.WriteString("ip6.arpa")
	return s.String()
}
