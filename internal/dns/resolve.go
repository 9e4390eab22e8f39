package dns

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Stub resolvers the twin models.
const (
	// ResolverGlibc: glibc's res_search (resolv/res_query.c
	// __res_context_search): a name with at least ndots dots is tried as is
	// first, then with each search domain; a name with fewer dots goes
	// through the search list first and is tried as is last. A trailing dot
	// means as is only.
	// A NOERROR answer with any record, even a lone CNAME, ends the search
	// (__res_context_query counts only an error rcode or an empty answer
	// section as a failure).
	ResolverGlibc = "glibc"
	// ResolverMusl: musl's name_from_dns_search (src/network/lookup_name.c):
	// a name with at least ndots dots, or a trailing dot, is tried as is
	// only — never with the search list; otherwise the search domains, then
	// the name as is. NXDOMAIN moves on to the next candidate; an answer
	// without addresses (NODATA for A and AAAA) or a server failure stops
	// the search.
	ResolverMusl = "musl"
	// ResolverWindows: the Windows DNS client. Suffixes are appended only to
	// names without any dot; a name with a dot is queried as is, once
	// (Kubernetes docs "DNS resolution on Windows nodes": partially
	// qualified names such as kubernetes.default do not resolve; seed 001
	// "Короткие имена с точкой не разрешаются").
	ResolverWindows = "windows"
)

// Outcome of a resolution.
type Outcome string

// Outcomes.
const (
	Resolved Outcome = "resolved"
	// NotFound: every name tried failed; curl reports exit code 6.
	NotFound Outcome = "not found"
	// Unknown: an answer on the way is not modeled.
	Unknown Outcome = "not modeled"
)

// Step is one query a resolver sent.
type Step struct {
	Name   string
	Type   uint16
	Server string
	Answer Answer
}

// Result is a name resolution: every query tried, in order, and how it
// ended.
type Result struct {
	Source   Source
	Name     string
	Resolver string
	Config   Config
	Steps    []Step
	Outcome  Outcome
	// Addresses and Canonical (the owner of the addresses, after CNAMEs)
	// when Resolved.
	Addresses []string
	Canonical string
	// Reason says why it ended as it did.
	Reason string
}

// Resolved reports whether the name resolved to addresses.
func (r Result) Resolved() bool { return r.Outcome == Resolved }

// CurlExit is the exit code curl gives for the name lookup alone: 0 when it
// resolves, 6 ("Could not resolve host") when it does not; ok is false when
// the outcome is not modeled.
func (r Result) CurlExit() (code int, ok bool) {
	switch r.Outcome {
	case Resolved:
		return 0, true
	case NotFound:
		return 6, true
	}
	return 0, false
}

// String is the trace, one line per query.
func (r Result) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "resolve %q from %s (%s, %s resolver)\n", r.Name, r.Source, orUnknown(r.Config.OS), orUnknown(r.Resolver))
	if r.Config.Origin != "" {
		fmt.Fprintf(&b, "  config: %s\n", r.Config.Origin)
		fmt.Fprintf(&b, "  nameserver %s; search %s", strings.Join(r.Config.Nameservers, " "), orNone(r.Config.Searches))
		if r.Resolver != ResolverWindows {
			fmt.Fprintf(&b, "; ndots %d", r.Config.Ndots)
		}
		b.WriteString("\n")
	}
	for i, s := range r.Steps {
		fmt.Fprintf(&b, "  %d. %s %s @%s → %s", i+1, s.Name, TypeString(s.Type), orUnknown(s.Server), s.Answer.Rcode)
		if addrs := s.Answer.Addresses(); len(addrs) > 0 {
			fmt.Fprintf(&b, " %s", strings.Join(addrs, " "))
		} else if s.Answer.Rcode == NoError {
			b.WriteString(" (no address)")
		}
		fmt.Fprintf(&b, " [%s] %s\n", s.Answer.Path, s.Answer.Why)
		if s.Answer.Cache != "" {
			fmt.Fprintf(&b, "     cache: %s\n", s.Answer.Cache)
		}
	}
	switch r.Outcome {
	case Resolved:
		fmt.Fprintf(&b, "  → %s %s\n", r.Canonical, strings.Join(r.Addresses, " "))
	case Unknown:
		fmt.Fprintf(&b, "  → %s: %s\n", r.Outcome, strings.TrimPrefix(r.Reason, "not modeled: "))
	default:
		fmt.Fprintf(&b, "  → %s: %s\n", r.Outcome, r.Reason)
	}
	return b.String()
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "(none)"
	}
	return strings.Join(s, " ")
}

// resolverOf picks the stub resolver: the Windows DNS client on Windows;
// on Linux nodes (Ubuntu) glibc; in Linux containers musl when the image
// says so (alpine, *-musl tags), else glibc.
func resolverOf(os string, src Source) string {
	if os == hybrid.OSWindows {
		return ResolverWindows
	}
	img := strings.ToLower(src.Image)
	if !src.IsNode() && (strings.Contains(img, "musl") || strings.Contains(img, "alpine")) {
		return ResolverMusl
	}
	return ResolverGlibc
}

// candidates are the names a resolver tries, in order. A "." in the search
// list stands for the name as is (glibc's root_on_list).
func candidates(resolver, name string, cfg Config) []string {
	n, absolute := normalize(name)
	if n == "" || n == "." {
		return nil
	}
	dots := strings.Count(n, ".")
	var search []string
	rootOnList := false
	for _, s := range cfg.Searches {
		d, _ := normalize(s)
		switch {
		case d == "":
		case d == ".":
			rootOnList = true
			search = append(search, n)
		default:
			search = append(search, n+"."+d)
		}
	}
	switch resolver {
	case ResolverWindows:
		if absolute || dots > 0 {
			return []string{n}
		}
		return omitDuplicates(search)
	case ResolverMusl:
		if absolute || dots >= cfg.Ndots {
			return []string{n}
		}
		return omitDuplicates(append(search, n))
	}
	if absolute {
		return []string{n}
	}
	var out []string
	triedAsIs := dots >= cfg.Ndots
	if triedAsIs {
		out = append(out, n)
	}
	out = append(out, search...)
	if !triedAsIs && !rootOnList {
		out = append(out, n)
	}
	return omitDuplicates(out)
}

// asker sends queries to the nameservers a source can reach.
type asker struct {
	server  *Server
	network *NetworkDNS
}

func (k asker) ask(ns, name string, qtype uint16) Answer {
	switch {
	case ns != "" && (ns == k.server.IP || k.server.isPod(ns)):
		return k.server.Query(name, qtype)
	case ns != "" && ns == k.network.IP:
		return k.network.Query(name, qtype)
	}
	if a, err := netip.ParseAddr(ns); err == nil && a.IsLoopback() {
		return Answer{Name: name, Type: qtype, Rcode: NoServer, Path: PathNone,
			Why: "nothing listens on " + ns + ":53 in the pod"}
	}
	return Answer{Name: name, Type: qtype, Rcode: NotModeled, Path: PathNone,
		Why: fmt.Sprintf("not modeled: nameserver %q is neither the cluster DNS nor the node network's", ns)}
}

// Resolve resolves name to IPv4 addresses from a pod or a node, the way the
// source's stub resolver does, and records each query. Only the A queries
// are listed: getaddrinfo sends AAAA alongside, and an IPv4-only cluster
// answers those with NODATA, which does not change the outcome.
func Resolve(c *model.Cluster, from Source, name string) Result {
	return resolve(NewServer(c), c, from, name)
}

// Resolve is the package's Resolve with a server built once (callers that
// resolve many names, such as the trace engine, keep one Server).
func (s *Server) Resolve(c *model.Cluster, from Source, name string) Result {
	return resolve(s, c, from, name)
}

func resolve(s *Server, c *model.Cluster, from Source, name string) Result {
	r := Result{Source: from, Name: name}
	cfg, err := ConfigFor(c, from)
	r.Config = cfg
	if err != nil {
		r.Outcome, r.Reason = Unknown, err.Error()
		return r
	}
	r.Resolver = resolverOf(cfg.OS, from)
	if len(cfg.Nameservers) == 0 {
		r.Outcome, r.Reason = NotFound, "no nameserver configured"
		return r
	}
	ns := cfg.Nameservers[0]
	k := asker{server: s, network: s.network}
	last := ""
	for _, cand := range candidates(r.Resolver, name, cfg) {
		a := k.ask(ns, cand, TypeA)
		r.Steps = append(r.Steps, Step{Name: cand, Type: TypeA, Server: ns, Answer: a})
		switch a.Rcode {
		case NotModeled:
			r.Outcome, r.Reason = Unknown, a.Why
			return r
		case NoServer:
			r.Outcome, r.Reason = NotFound, "no server could be reached: "+a.Why
			return r
		case NoError:
			var addrs []string
			canon := cand
			for _, rec := range a.Records {
				if rec.Type == TypeA {
					addrs = append(addrs, rec.Data)
					canon = rec.Name
				}
			}
			if len(addrs) > 0 {
				r.Outcome, r.Addresses, r.Canonical = Resolved, addrs, canon
				r.Reason = a.Why
				return r
			}
			if r.Resolver == ResolverGlibc && len(a.Records) > 0 {
				// res_query.c __res_context_query: only an error rcode or
				// an empty answer section is a failure, so an answer that
				// holds only a CNAME ends __res_context_search; getaddrinfo
				// then finds no address in it.
				r.Outcome = NotFound
				r.Reason = cand + ": the answer holds only " + onlyCNAMEs(a) + "; glibc ends the search on a non-empty answer (resolv/res_query.c __res_context_query)"
				return r
			}
			last = cand + ": no address (NODATA)"
			if r.Resolver == ResolverMusl {
				r.Outcome, r.Reason = NotFound, last+"; musl ends the search on an answer without addresses"
				return r
			}
		case ServFail, Refused:
			last = cand + ": " + a.Rcode.String()
			if r.Resolver == ResolverMusl {
				r.Outcome, r.Reason = NotFound, last+"; musl ends the search on a server failure"
				return r
			}
		default:
			last = cand + ": " + a.Rcode.String()
		}
	}
	r.Outcome = NotFound
	r.Reason = "every name tried failed (last " + last + ")"
	if last == "" {
		r.Reason = "no name to try"
	}
	if r.Resolver == ResolverWindows && !strings.Contains(strings.TrimSuffix(name, "."), ".") {
		r.Reason += "; LLMNR and NetBIOS fallbacks for single-label names are not modeled"
	}
	return r
}

// onlyCNAMEs describes an answer without addresses ("CNAME x").
func onlyCNAMEs(a Answer) string {
	var parts []string
	for _, r := range a.Records {
		parts = append(parts, TypeString(r.Type)+" "+r.Data)
	}
	return strings.Join(parts, ", ")
}
