package sandbox

import (
	"sort"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dns"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Zone is the twin's CoreDNS answer to an A query for every Service's
// name, which the sandbox's CoreDNS pods serve. Names the twin cannot
// answer (not modeled, no server) are left out: the sandbox answers them
// NXDOMAIN and the probes do not ask them.
func Zone(c *model.Cluster) []ZoneEntry {
	s := dns.NewServer(c)
	domain := ""
	for _, z := range s.Zones {
		if !strings.HasSuffix(z, ".arpa") && !strings.HasSuffix(z, ".arpa.") {
			domain = strings.TrimSuffix(z, ".")
			break
		}
	}
	if domain == "" {
		return nil
	}
	var out []ZoneEntry
	for _, svc := range c.Services {
		name := svc.Name + "." + svc.Namespace + ".svc." + domain
		a := s.Query(name, dns.TypeA)
		if a.Rcode < 0 {
			continue
		}
		var addrs []string
		for _, r := range a.Records {
			if r.Type == dns.TypeA {
				addrs = append(addrs, r.Data)
			}
		}
		out = append(out, ZoneEntry{Name: name, Rcode: int(a.Rcode), Addrs: addrs})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
