package console

import (
	"fmt"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dns"
	"net/netip"
	"strconv"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// resolveDNSName runs the DnsClient module's Resolve-DnsName cmdlet on a
// Windows node or in a Windows pod that has PowerShell, and returns what
// Windows PowerShell 5.1 prints and the exit code powershell.exe gives (1
// when the cmdlet wrote an error).
//
// Parameters: -Name (or the first positional argument), -Type (or the
// second; A, AAAA, CNAME, PTR, SRV, TXT), -Server, and the switches
// -DnsOnly, -NoHostsFile, -QuickTimeout, which change nothing the twin
// models. Without -Server the first DNS server of the source's
// configuration is asked, and a name without a dot gets the suffix search
// list, as the Windows DNS client does; a name with a dot is sent once.
//
// Output: every record of the answer, then of the additional section (the
// addresses of SRV targets, which CoreDNS adds), each with its TTL. The
// first record's type picks the table view; records of another type are
// written as lists, as PowerShell's formatter does for objects of a type
// other than the table's. The column widths are the twin's record of the
// DnsClient module's table views, not verified against a Windows host.
//
// Not modeled: answers without records (the cmdlet prints the SOA of the
// authority section), TTLs of answers from outside the cluster (the
// upstream's TTL, capped by CoreDNS's cache, is not known), LLMNR and
// NetBIOS for single-label names.
func resolveDNSName(c *model.Cluster, from dns.Source, args []string) (stdout, stderr string, exit int) {
	if len(args) > 0 && strings.EqualFold(args[0], "Resolve-DnsName") {
		args = args[1:]
	}
	name, qtype, server, err := parseResolveDNSName(args)
	if err != "" {
		return "", err + "\n", exitNotModeled
	}
	cfg, cerr := dns.ConfigFor(c, from)
	if cerr != nil {
		return "", cerr.Error() + "\n", exitNotModeled
	}
	if cfg.OS != hybrid.OSWindows {
		return "", "not modeled: Resolve-DnsName runs on Windows\n", exitNotModeled
	}
	if server == "" {
		if len(cfg.Nameservers) == 0 {
			return "", "not modeled: Resolve-DnsName without a DNS server\n", exitNotModeled
		}
		server = cfg.Nameservers[0]
	}
	k := dns.NewAsker(c)
	cands := dns.Candidates(dns.ResolverWindows, name, cfg)
	if ip, perr := netip.ParseAddr(name); perr == nil {
		cands, qtype = []string{dns.ReverseName(ip)}, dns.TypePTR
	}
	if len(cands) == 0 {
		return "", "not modeled: Resolve-DnsName of an empty name\n", exitNotModeled
	}
	var last dns.Answer
	for _, cand := range cands {
		a := k.Ask(server, cand, qtype)
		last = a
		switch a.Rcode {
		case dns.NotModeled:
			return "", a.Why + "\n", exitNotModeled
		case dns.NoServer:
			return "", "not modeled: Resolve-DnsName timing out on " + server + "\n", exitNotModeled
		case dns.NoError:
		default:
			continue
		}
		if len(a.Records) == 0 {
			return "", "not modeled: Resolve-DnsName of a name without " + dns.TypeString(qtype) + " records prints the SOA of the authority section (" + a.Why + ")\n", exitNotModeled
		}
		for _, r := range append(append([]dns.Record(nil), a.Records...), a.Extra...) {
			if a.Path != dns.PathKubernetes || r.TTL == 0 {
				return "", "not modeled: the TTL of " + r.Name + ", an answer from outside the cluster (the upstream's, capped by CoreDNS's cache)\n", exitNotModeled
			}
		}
		return formatDNSRecords(a), "", 0
	}
	return "", resolveDNSNameError(name, args, last), 1
}

// parseResolveDNSName reads the cmdlet's parameters; a parameter name may
// be shortened to any unambiguous prefix, as PowerShell allows.
func parseResolveDNSName(args []string) (name string, qtype uint16, server, errText string) {
	qtype = dns.TypeA
	var positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || len(a) < 2 {
			positional = append(positional, a)
			continue
		}
		p := strings.ToLower(strings.TrimPrefix(a, "-"))
		value := func() (string, bool) {
			if i+1 >= len(args) {
				return "", false
			}
			i++
			return args[i], true
		}
		switch {
		case strings.HasPrefix("name", p):
			v, ok := value()
			if !ok {
				return "", 0, "", "not modeled: Resolve-DnsName -Name without a value"
			}
			name = v
		case strings.HasPrefix("type", p) && len(p) >= 2:
			v, ok := value()
			t, known := dns.ParseType(v)
			if !ok || !known || t == dns.TypeANY || t == dns.TypeSOA || t == dns.TypeNS || t == dns.TypeMX {
				return "", 0, "", "not modeled: Resolve-DnsName -Type " + v
			}
			qtype = t
		case strings.HasPrefix("server", p) && len(p) >= 2:
			v, ok := value()
			if _, err := netip.ParseAddr(v); !ok || err != nil {
				return "", 0, "", "not modeled: Resolve-DnsName -Server " + v + " (an address is needed)"
			}
			server = v
		case p == "dnsonly", p == "nohostsfile", p == "quicktimeout":
		default:
			return "", 0, "", "not modeled: Resolve-DnsName parameter " + a
		}
	}
	if name == "" && len(positional) > 0 {
		name, positional = positional[0], positional[1:]
	}
	if len(positional) > 0 {
		t, known := dns.ParseType(positional[0])
		if !known || len(positional) > 1 {
			return "", 0, "", "not modeled: Resolve-DnsName arguments " + strings.Join(positional, " ")
		}
		qtype = t
	}
	if name == "" {
		return "", 0, "", "not modeled: Resolve-DnsName prompts for -Name"
	}
	return name, qtype, server, ""
}

// recordView is the DnsClient module's view of one record type: the
// table's columns after Name, Type, TTL and Section, and the list's
// properties after Name, QueryType, TTL and Section.
type recordView struct {
	nameWidth int
	columns   []string // table headers of the record data
	widths    []int    // their widths; 0 for the last, unbounded
	values    func(r dns.Record) []string
}

var recordViews = map[uint16]recordView{
	dns.TypeA:     {nameWidth: 46, columns: []string{"IPAddress"}, widths: []int{0}, values: func(r dns.Record) []string { return []string{r.Data} }},
	dns.TypeAAAA:  {nameWidth: 46, columns: []string{"IPAddress"}, widths: []int{0}, values: func(r dns.Record) []string { return []string{r.Data} }},
	dns.TypeCNAME: {nameWidth: 30, columns: []string{"NameHost"}, widths: []int{0}, values: func(r dns.Record) []string { return []string{r.Data} }},
	dns.TypePTR:   {nameWidth: 30, columns: []string{"NameHost"}, widths: []int{0}, values: func(r dns.Record) []string { return []string{r.Data} }},
	dns.TypeTXT:   {nameWidth: 30, columns: []string{"Strings"}, widths: []int{0}, values: func(r dns.Record) []string { return []string{"{" + r.Data + "}"} }},
	dns.TypeSRV: {nameWidth: 40, columns: []string{"NameTarget", "Priority", "Weight", "Port"}, widths: []int{30, 8, 6, 0},
		values: func(r dns.Record) []string {
			f := strings.Fields(r.Data)
			if len(f) != 4 {
				return []string{r.Data, "", "", ""}
			}
			return []string{strings.TrimSuffix(f[3], "."), f[0], f[1], f[2]}
		}},
}

// listProperty is the name of a record's data in the list view.
func listProperties(t uint16) []string {
	switch t {
	case dns.TypeA:
		return []string{"IP4Address"}
	case dns.TypeAAAA:
		return []string{"IP6Address"}
	case dns.TypeSRV:
		return []string{"NameTarget", "Priority", "Weight", "Port"}
	case dns.TypeTXT:
		return []string{"Strings"}
	}
	return []string{"NameHost"}
}

type sectioned struct {
	dns.Record
	section string
}

// formatDNSRecords writes the answer and additional records as PowerShell
// does: a table for the records of the first record's type, a list for
// each other record.
func formatDNSRecords(a dns.Answer) string {
	var recs []sectioned
	for _, r := range a.Records {
		recs = append(recs, sectioned{r, "Answer"})
	}
	for _, r := range a.Extra {
		recs = append(recs, sectioned{r, "Additional"})
	}
	tableType := recs[0].Type
	view := recordViews[tableType]
	var b strings.Builder
	b.WriteString("\n")
	head := []string{"Name", "Type", "TTL", "Section"}
	widths := []int{view.nameWidth, 6, 5, 10}
	head = append(head, view.columns...)
	widths = append(widths, view.widths...)
	dashes := make([]string, len(head))
	for i, h := range head {
		dashes[i] = strings.Repeat("-", len(h))
	}
	writeRow(&b, head, widths)
	writeRow(&b, dashes, widths)
	var lists []sectioned
	for _, r := range recs {
		if r.Type != tableType {
			lists = append(lists, r)
			continue
		}
		row := []string{r.Name, dns.TypeString(r.Type), strconv.Itoa(int(r.TTL)), r.section}
		writeRow(&b, append(row, view.values(r.Record)...), widths)
	}
	b.WriteString("\n")
	for _, r := range lists {
		labels := append([]string{"Name", "QueryType", "TTL", "Section"}, listProperties(r.Type)...)
		values := []string{r.Name, dns.TypeString(r.Type), strconv.Itoa(int(r.TTL)), r.section}
		values = append(values, recordViews[r.Type].values(r.Record)...)
		w := 0
		for _, l := range labels {
			w = max(w, len(l))
		}
		for i, l := range labels {
			fmt.Fprintf(&b, "%-*s : %s\n", w, l, values[i])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// writeRow pads each cell to its column and cuts a longer one to the
// width with "..." (Windows PowerShell 5.1); the last column is not cut.
func writeRow(b *strings.Builder, cells []string, widths []int) {
	var parts []string
	for i, c := range cells {
		w := widths[i]
		if i == len(cells)-1 || w == 0 {
			parts = append(parts, c)
			break
		}
		if len(c) > w {
			c = c[:w-3] + "..."
		}
		parts = append(parts, fmt.Sprintf("%-*s", w, c))
	}
	b.WriteString(strings.TrimRight(strings.Join(parts, " "), " ") + "\n")
}

// resolveDNSNameError is the error record Windows PowerShell 5.1 writes
// for a failed query (DnsQueryEx's Win32 error as a Win32Exception): the
// message, the invocation ("At line:1 char:1" for powershell -Command),
// the category and the error id.
func resolveDNSNameError(name string, args []string, a dns.Answer) string {
	msg, id := "DNS server failure", "DNS_ERROR_RCODE_SERVER_FAILURE"
	switch a.Rcode {
	case dns.NXDomain:
		msg, id = "DNS name does not exist", "DNS_ERROR_RCODE_NAME_ERROR"
	case dns.Refused:
		msg, id = "DNS request refused", "DNS_ERROR_RCODE_REFUSED"
	}
	line := strings.TrimSpace("Resolve-DnsName " + strings.Join(args, " "))
	var b strings.Builder
	fmt.Fprintf(&b, "Resolve-DnsName : %s : %s\n", name, msg)
	b.WriteString("At line:1 char:1\n")
	fmt.Fprintf(&b, "+ %s\n", line)
	fmt.Fprintf(&b, "+ %s\n", strings.Repeat("~", len(line)))
	fmt.Fprintf(&b, "    + CategoryInfo          : ResourceUnavailable: (%s:String) [Resolve-DnsName], Win32Exception\n", name)
	fmt.Fprintf(&b, "    + FullyQualifiedErrorId : %s,Microsoft.DnsClient.Commands.ResolveDnsName\n", id)
	return b.String()
}
