package console

import (
	"fmt"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dns"
	"net/netip"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// The DNS tools read internal/dns's answers.
//
// nsLookup prints what the tools print. busybox 1.37 (networking/nslookup.c)
// does not use the resolver: it appends search domains only to names without
// a dot and never sends such a name bare, ignores ndots, asks A and AAAA,
// prints "Server:\t\t<ns>" and "Address:\t<ns>:53", one block per reply
// (an empty line after each, "** server can't find <name>: NXDOMAIN" and
// exit 1 for an error); -type=srv prints "service = <prio> <weight> <port>
// <target>". busybox prints no TTLs, not even with -debug, which adds each
// query's latency (not modeled). nslookup.exe names its server by PTR (CoreDNS:
// kube-dns.kube-system.svc.cluster.local; "UnKnown" without one) and appends
// the search list even to dotted names, then tries the name as given. Nano
// Server has no nslookup: under cmd /c, cmd.exe's "is not recognized"
// error, errorlevel 9009; a plain exec fails in the container runtime.
//
// resolveDNSName prints the DnsClient cmdlet's records with their TTLs:
// answer and additional sections, a table for the first record's type and
// lists for the others.

// exitNotModeled is nsLookup's exit code when the twin cannot produce the
// tool's output; stderr then says why.
const exitNotModeled = -1

// exitCmdNotFound is cmd.exe's errorlevel for "is not recognized as an
// internal or external command" (MSG_DIR_BAD_COMMAND_OR_FILE, 9009), which
// `cmd /c` exits with.
const exitCmdNotFound = 9009

// Tools nsLookup can be.
const (
	toolBusybox    = "busybox"
	toolWindows    = "nslookup.exe"
	toolNanoServer = "nanoserver"
)

// nsLookup runs `nslookup args…` in the source and returns what it prints
// and its exit code:
//   - in busybox and alpine images, busybox 1.37's nslookup
//     (networking/nslookup.c, FEATURE_NSLOOKUP_BIG);
//   - in Windows images other than Nano Server, and on Windows nodes,
//     nslookup.exe;
//   - in Nano Server images, which ship no nslookup, cmd.exe's not-found
//     error with errorlevel 9009 — what `cmd /c nslookup` prints; a plain
//     `kubectl exec … -- nslookup` never reaches cmd.exe and fails in the
//     container runtime instead (internal/trace).
//
// Anything else (Linux nodes' bind9 nslookup, images whose tools are
// unknown, answers outside the model) gives exitNotModeled.
func nsLookup(c *model.Cluster, from dns.Source, args []string) (stdout, stderr string, exit int) {
	if len(args) > 0 && (strings.EqualFold(args[0], "nslookup") || strings.EqualFold(args[0], "nslookup.exe")) {
		args = args[1:]
	}
	cfg, err := dns.ConfigFor(c, from)
	if err != nil {
		return "", err.Error() + "\n", exitNotModeled
	}
	k := dns.NewAsker(c)
	switch toolOf(cfg.OS, from) {
	case toolBusybox:
		return busyboxNSLookup(k, cfg, args)
	case toolWindows:
		return windowsNSLookup(k, cfg, args)
	case toolNanoServer:
		return "", "'nslookup' is not recognized as an internal or external command,\noperable program or batch file.\n", exitCmdNotFound
	}
	what := "the image " + from.Image
	if from.IsNode() {
		what = "node " + from.Node
	}
	return "", fmt.Sprintf("not modeled: which nslookup %s has\n", what), exitNotModeled
}

func toolOf(os string, src dns.Source) string {
	switch src.NSLookup {
	case "busybox":
		return toolBusybox
	case "nslookup.exe":
		return toolWindows
	case "none":
		return toolNanoServer
	}
	img := strings.ToLower(src.Image)
	if os == hybrid.OSWindows {
		if !src.IsNode() && strings.Contains(img, "nanoserver") {
			return toolNanoServer
		}
		return toolWindows
	}
	if !src.IsNode() && (strings.Contains(img, "busybox") || strings.Contains(img, "alpine")) {
		return toolBusybox
	}
	return ""
}

type bbQuery struct {
	name  string
	qtype uint16
}

// busyboxNSLookup follows nslookup_main of busybox 1.37: the search domains
// of resolv.conf are appended only to names without a dot (one query per
// domain, never the bare name: add_query_with_search), ndots is ignored, and
// without -type both A and AAAA are asked. All queries go out at once and
// each reply is printed as it arrives — "** server can't find NAME: RCODE"
// for an error (exit 1), the records otherwise (preceded by
// "Non-authoritative answer:" when the AA bit is clear), and an empty line
// after every reply. Arrival order is not knowable; the twin prints the
// replies in the reverse of the send order, which reproduces seed 000's
// transcript (its `| tail -3` ends Name, Address, empty line).
func busyboxNSLookup(k dns.Asker, cfg dns.Config, args []string) (string, string, int) {
	var types []uint16
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		opt, val, _ := strings.Cut(args[0][1:], "=")
		switch opt {
		case "type", "querytype":
			t, ok := dns.ParseType(val)
			if !ok || t == dns.TypeANY || t == dns.TypeSOA || t == dns.TypeNS || t == dns.TypeMX {
				return "", "not modeled: busybox nslookup -type=" + val + "\n", exitNotModeled
			}
			types = append(types, t)
		case "debug":
			// parse_reply prints no TTL even with -debug; what -debug adds
			// is each query's latency ("Query #0 completed in 1ms:").
			return "", "not modeled: busybox nslookup -debug prints how long each query took, which the twin does not know; it prints no TTLs (networking/nslookup.c parse_reply)\n", exitNotModeled
		default:
			return "", "not modeled: busybox nslookup option -" + opt + "\n", exitNotModeled
		}
		args = args[1:]
	}
	if len(args) == 0 || len(args) > 2 {
		return "", "not modeled: busybox nslookup usage message\n", exitNotModeled
	}
	host := args[0]
	servers := cfg.Nameservers
	if len(args) == 2 {
		servers = []string{args[1]}
	}
	if len(servers) == 0 {
		servers = []string{"127.0.0.1"}
	}
	search := ""
	if len(cfg.Searches) > 0 {
		search = strings.Join(cfg.Searches, " ")
	}
	if search == "." {
		search = ""
	}
	var queries []bbQuery
	addWithSearch := func(t uint16, name string) {
		if t == dns.TypePTR || search == "" || strings.Contains(name, ".") {
			queries = append(queries, bbQuery{name, t})
			return
		}
		for _, d := range strings.Fields(search) {
			queries = append(queries, bbQuery{name + "." + d, t})
		}
	}
	if ip, err := netip.ParseAddr(host); err == nil && len(types) == 0 {
		queries = append(queries, bbQuery{dns.ReverseName(ip), dns.TypePTR})
	} else if len(types) == 0 {
		addWithSearch(dns.TypeA, host)
		addWithSearch(dns.TypeAAAA, host)
	} else {
		// The applet walks its type table in order (qtypes[]: SOA, NS, A,
		// AAAA, CNAME, MX, TXT, SRV, PTR, ANY).
		for _, t := range []uint16{dns.TypeA, dns.TypeAAAA, dns.TypeCNAME, dns.TypeTXT, dns.TypeSRV, dns.TypePTR} {
			for _, want := range types {
				if want == t {
					addWithSearch(t, host)
				}
			}
		}
	}
	for _, ns := range servers {
		answers := make([]dns.Answer, len(queries))
		reached := false
		for i, q := range queries {
			answers[i] = k.Ask(ns, q.name, q.qtype)
			switch answers[i].Rcode {
			case dns.NotModeled:
				return "", answers[i].Why + "\n", exitNotModeled
			case dns.NoServer:
			default:
				reached = true
			}
		}
		if !reached {
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "Server:\t\t%s\n", ns)
		fmt.Fprintf(&b, "Address:\t%s\n\n", hostPort(ns))
		exit := 0
		for i := len(queries) - 1; i >= 0; i-- {
			a := answers[i]
			if a.Rcode != dns.NoError {
				fmt.Fprintf(&b, "** server can't find %s: %s\n", queries[i].name, a.Rcode)
				exit = 1
			} else {
				if !a.Authoritative {
					b.WriteString("Non-authoritative answer:\n")
				}
				for _, r := range a.Records {
					switch r.Type {
					case dns.TypeA, dns.TypeAAAA:
						fmt.Fprintf(&b, "Name:\t%s\nAddress: %s\n", r.Name, r.Data)
					case dns.TypeCNAME:
						fmt.Fprintf(&b, "%s\tcanonical name = %s\n", r.Name, r.Data)
					case dns.TypePTR:
						fmt.Fprintf(&b, "%s\tname = %s\n", r.Name, r.Data)
					case dns.TypeTXT:
						fmt.Fprintf(&b, "%s\ttext = \"%s\"\n", r.Name, r.Data)
					case dns.TypeSRV:
						// ns_name_uncompress writes the target without
						// its final dot; the additional section (the
						// targets' addresses) is not printed.
						fmt.Fprintf(&b, "%s\tservice = %s\n", r.Name, strings.TrimSuffix(r.Data, "."))
					}
				}
			}
			b.WriteString("\n")
		}
		return b.String(), "", exit
	}
	return ";; connection timed out; no servers could be reached\n\n", "", 1
}

// hostPort is how busybox prints the server's socket address.
func hostPort(ip string) string {
	if a, err := netip.ParseAddr(ip); err == nil && a.Is6() && !a.Is4In6() {
		return "[" + ip + "]:53"
	}
	return ip + ":53"
}

// windowsNSLookup follows nslookup.exe. It first names its server by a PTR
// query for the server's address ("UnKnown" when that fails; CoreDNS
// answers kube-dns.kube-system.svc.cluster.local for the kube-dns
// ClusterIP). Unlike the Windows DNS client it appends the DNS suffix
// search list to every name that does not end with a dot, dotted or not,
// trying the suffixed names first and the name as given last (Windows
// Server docs "nslookup set search"; KB 200525) — so `nslookup hello.demo`
// in a Windows pod finds hello.demo.svc.cluster.local where curl.exe
// fails. "Non-authoritative answer:" and the "***" errors go to stderr.
// The exit code on failure (1) is not verified against Windows.
//
// -type=srv prints each SRV record as a "SRV service location:" block and
// the targets' addresses from the additional section, as Windows Server's
// samples show; the empty line after them is assumed from the A output.
// -debug prints every reply ("Got answer:", see winDebug).
func windowsNSLookup(k dns.Asker, cfg dns.Config, args []string) (string, string, int) {
	qtype := dns.TypeA
	debug := false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		opt, val, _ := strings.Cut(args[0][1:], "=")
		switch strings.ToLower(opt) {
		case "type", "querytype", "q", "ty":
			t, ok := dns.ParseType(val)
			if !ok || (t != dns.TypeA && t != dns.TypePTR && t != dns.TypeSRV) {
				return "", "not modeled: nslookup.exe -" + opt + "=" + val + "\n", exitNotModeled
			}
			qtype = t
		case "debug", "deb":
			debug = true
		default:
			return "", "not modeled: nslookup.exe option -" + opt + "\n", exitNotModeled
		}
		args = args[1:]
	}
	if len(args) == 0 {
		return "", "not modeled: interactive nslookup.exe\n", exitNotModeled
	}
	if len(args) > 2 {
		return "", "not modeled: nslookup.exe usage message\n", exitNotModeled
	}
	host := args[0]
	server := ""
	if len(args) == 2 {
		server = args[1]
	} else if len(cfg.Nameservers) > 0 {
		server = cfg.Nameservers[0]
	}
	sip, err := netip.ParseAddr(server)
	if err != nil {
		return "", "not modeled: nslookup.exe without a server address\n", exitNotModeled
	}
	var out, errOut strings.Builder
	w := winSession{k: k, server: server, debug: debug, out: &out}
	ptr := w.ask(dns.ReverseName(sip), dns.TypePTR)
	switch ptr.Rcode {
	case dns.NotModeled:
		return "", ptr.Why + "\n", exitNotModeled
	case dns.NoServer:
		return "", "not modeled: nslookup.exe timing out on " + server + "\n", exitNotModeled
	}
	if w.notModeled != "" {
		return "", w.notModeled + "\n", exitNotModeled
	}
	serverName := "UnKnown"
	for _, r := range ptr.Records {
		if r.Type == dns.TypePTR {
			serverName = r.Data
			break
		}
	}
	fmt.Fprintf(&out, "Server:  %s\nAddress:  %s\n\n", serverName, server)

	if ip, err := netip.ParseAddr(host); err == nil || qtype == dns.TypePTR {
		q := host
		if err == nil {
			q = dns.ReverseName(ip)
		}
		a := w.ask(q, dns.TypePTR)
		if a.Rcode == dns.NotModeled {
			return "", a.Why + "\n", exitNotModeled
		}
		if w.notModeled != "" {
			return "", w.notModeled + "\n", exitNotModeled
		}
		if a.Rcode != dns.NoError || len(a.Records) == 0 {
			fmt.Fprintf(&errOut, "*** %s can't find %s: %s\n", serverName, host, windowsRcode(a))
			return out.String(), errOut.String(), 1
		}
		if !a.Authoritative {
			errOut.WriteString("Non-authoritative answer:\n")
		}
		fmt.Fprintf(&out, "Name:    %s\nAddress:  %s\n\n", a.Records[0].Data, host)
		return out.String(), errOut.String(), 0
	}

	n, absolute := dns.Normalize(host)
	var cands []string
	if !absolute {
		for _, sfx := range cfg.Searches {
			d, _ := dns.Normalize(sfx)
			if d != "" && d != "." {
				cands = append(cands, n+"."+d)
			}
		}
	}
	cands = dns.OmitDuplicates(append(cands, n))
	var last dns.Answer
	for _, cand := range cands {
		a := w.ask(cand, qtype)
		last = a
		switch a.Rcode {
		case dns.NotModeled:
			return "", a.Why + "\n", exitNotModeled
		case dns.NoServer:
			return "", "not modeled: nslookup.exe timing out on " + server + "\n", exitNotModeled
		}
		if w.notModeled != "" {
			return "", w.notModeled + "\n", exitNotModeled
		}
		if a.Rcode != dns.NoError || !a.HasType(qtype) {
			continue
		}
		if !a.Authoritative {
			errOut.WriteString("Non-authoritative answer:\n")
		}
		if qtype == dns.TypeSRV {
			writeSRV(&out, a)
			return out.String(), errOut.String(), 0
		}
		if debug {
			// The default query type is A+AAAA: the AAAA question for the
			// name that answered follows (nslookup.exe -debug samples).
			w.ask(cand, dns.TypeAAAA)
			if w.notModeled != "" {
				return "", w.notModeled + "\n", exitNotModeled
			}
		}
		canon := cand
		var aliases []string
		for _, r := range a.Records {
			if r.Type == dns.TypeCNAME {
				aliases = append(aliases, r.Name)
				canon = r.Data
			}
		}
		fmt.Fprintf(&out, "Name:    %s\n", canon)
		writeList(&out, "Address:  ", "Addresses:  ", a.Addresses())
		if len(aliases) > 0 {
			writeList(&out, "Aliases:  ", "Aliases:  ", aliases)
		}
		out.WriteString("\n")
		return out.String(), errOut.String(), 0
	}
	if last.Rcode == dns.NoError {
		return "", "not modeled: nslookup.exe's message for a name without " + dns.TypeString(qtype) + " records\n", exitNotModeled
	}
	fmt.Fprintf(&errOut, "*** %s can't find %s: %s\n", serverName, host, windowsRcode(last))
	return out.String(), errOut.String(), 1
}

// writeSRV prints an SRV answer as nslookup.exe does: per record the owner,
// a tab and "SRV service location:", the four fields on continuation lines,
// then each target's address from the additional section ("<name>
// internet address = <ip>"; the tab after the name, like the continuation
// lines' tab and two spaces, is read from samples whose whitespace was
// reflowed, and not confirmed).
func writeSRV(b *strings.Builder, a dns.Answer) {
	for _, r := range a.Records {
		if r.Type != dns.TypeSRV {
			continue
		}
		f := strings.Fields(r.Data)
		if len(f) != 4 {
			continue
		}
		fmt.Fprintf(b, "%s\tSRV service location:\n", r.Name)
		fmt.Fprintf(b, "\t  priority       = %s\n\t  weight         = %s\n\t  port           = %s\n\t  svr hostname   = %s\n",
			f[0], f[1], f[2], strings.TrimSuffix(f[3], "."))
	}
	for _, r := range a.Extra {
		switch r.Type {
		case dns.TypeA:
			fmt.Fprintf(b, "%s\tinternet address = %s\n", r.Name, r.Data)
		case dns.TypeAAAA:
			fmt.Fprintf(b, "%s\tAAAA IPv6 address = %s\n", r.Name, r.Data)
		}
	}
	b.WriteString("\n")
}

// writeList prints nslookup.exe's address or alias list: the label, then
// further entries on continuation lines indented with a tab and two spaces.
func writeList(b *strings.Builder, one, many string, items []string) {
	label := one
	if len(items) > 1 {
		label = many
	}
	fmt.Fprintf(b, "%s%s\n", label, items[0])
	for _, it := range items[1:] {
		fmt.Fprintf(b, "\t  %s\n", it)
	}
}

// windowsRcode is nslookup.exe's wording of an error rcode.
func windowsRcode(a dns.Answer) string {
	switch a.Rcode {
	case dns.NXDomain:
		return "Non-existent domain"
	case dns.ServFail:
		return "Server failed"
	case dns.Refused:
		return "Query refused"
	}
	return a.Rcode.String()
}
