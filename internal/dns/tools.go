package dns

import (
	"net/netip"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Views for the console's nslookup and Resolve-DnsName, which ask the
// twin's nameservers the way the tools do.

// Asker sends a query to a nameserver address of the twin: the cluster DNS
// Service or a CoreDNS pod, or the node network's DNS server.
type Asker struct{ k asker }

// NewAsker is an Asker for the cluster's nameservers.
func NewAsker(c *model.Cluster) Asker {
	s := NewServer(c)
	return Asker{asker{server: s, network: s.network}}
}

// Ask sends one query to the nameserver at ns.
func (a Asker) Ask(ns, name string, qtype uint16) Answer { return a.k.ask(ns, name, qtype) }

// ReverseName is the in-addr.arpa name of an address.
func ReverseName(a netip.Addr) string { return reverseName(a) }

// Normalize lower-cases a name and strips its final dot; absolute says
// whether it had one.
func Normalize(name string) (n string, absolute bool) { return normalize(name) }

// OmitDuplicates keeps the first of equal names.
func OmitDuplicates(in []string) []string { return omitDuplicates(in) }

// Candidates are the names a resolver tries for name, in order.
func Candidates(resolver, name string, cfg Config) []string { return candidates(resolver, name, cfg) }

// HasType says whether the answer holds a record of the type.
func (a Answer) HasType(t uint16) bool { return a.hasType(t) }
