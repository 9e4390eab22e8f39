package console

import (
	"fmt"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dns"
	"strings"
)

// winSession is one run of nslookup.exe: the queries it sends, numbered
// from 1 as its header ids are, and with -debug each reply printed as it
// comes.
type winSession struct {
	k      dns.Asker
	server string
	debug  bool
	out    *strings.Builder
	id     int
	// notModeled is set when -debug would print what the twin does not
	// know: the TTLs and authority records of answers from outside the
	// cluster.
	notModeled string
}

func (w *winSession) ask(name string, qtype uint16) dns.Answer {
	a := w.k.Ask(w.server, name, qtype)
	w.id++
	if !w.debug || a.Rcode == dns.NotModeled || a.Rcode == dns.NoServer || w.notModeled != "" {
		return a
	}
	if a.Path != dns.PathKubernetes {
		w.notModeled = "not modeled: nslookup.exe -debug of an answer from outside the cluster DNS (" + name +
			"): the upstream's TTLs and authority records are not known to the twin"
		return a
	}
	winDebug(w.out, w.id, a)
	return a
}

// winDebug prints one reply as nslookup.exe -debug does. The layout —
// the dashed rules, "Got answer:", the HEADER lines, QUESTIONS, ANSWERS,
// AUTHORITY RECORDS and ADDITIONAL RECORDS with "->  owner" entries, the
// flag names ("auth. answer", "recursion avail." with its period), TTLs as
// "ttl = N (1 min 7 secs)" and the SOA fields — is taken from published
// transcripts of Windows nslookup. Not confirmed by a sample: the SRV
// entry's lines (written like the SOA's fields, ttl last as for A, PTR and
// CNAME), "1 sec" and "0 secs" in the TTL text, the AAAA entry of the
// additional section. CoreDNS's kubernetes plugin sets AA and leaves RA
// clear (plugin/kubernetes/handler.go), so its replies show "response,
// auth. answer, want recursion". The SOA serial is printed as 0 and marked
// simulated: CoreDNS uses the time of the last change it saw
// (plugin/kubernetes/kubernetes.go Serial).
func winDebug(b *strings.Builder, id int, a dns.Answer) {
	flags := []string{"response"}
	if a.Authoritative {
		flags = append(flags, "auth. answer")
	}
	flags = append(flags, "want recursion")
	b.WriteString("------------\nGot answer:\n    HEADER:\n")
	fmt.Fprintf(b, "        opcode = QUERY, id = %d, rcode = %s\n", id, a.Rcode)
	fmt.Fprintf(b, "        header flags:  %s\n", strings.Join(flags, ", "))
	fmt.Fprintf(b, "        questions = 1,  answers = %d,  authority records = %d,  additional = %d\n\n",
		len(a.Records), len(a.Authority), len(a.Extra))
	b.WriteString("    QUESTIONS:\n")
	fmt.Fprintf(b, "        %s, type = %s, class = IN\n", a.Name, dns.TypeString(a.Type))
	section := func(title string, rs []dns.Record) {
		if len(rs) == 0 {
			return
		}
		fmt.Fprintf(b, "    %s:\n", title)
		for _, r := range rs {
			winRecord(b, r)
		}
	}
	section("ANSWERS", a.Records)
	section("AUTHORITY RECORDS", a.Authority)
	section("ADDITIONAL RECORDS", a.Extra)
	b.WriteString("\n------------\n")
}

func winRecord(b *strings.Builder, r dns.Record) {
	fmt.Fprintf(b, "    ->  %s\n", r.Name)
	ttl := fmt.Sprintf("        ttl = %d (%s)\n", r.TTL, winDuration(r.TTL))
	switch r.Type {
	case dns.TypeA:
		fmt.Fprintf(b, "        internet address = %s\n%s", r.Data, ttl)
	case dns.TypeAAAA:
		fmt.Fprintf(b, "        AAAA IPv6 address = %s\n%s", r.Data, ttl)
	case dns.TypeCNAME:
		fmt.Fprintf(b, "        canonical name = %s\n%s", strings.TrimSuffix(r.Data, "."), ttl)
	case dns.TypePTR:
		fmt.Fprintf(b, "        name = %s\n%s", strings.TrimSuffix(r.Data, "."), ttl)
	case dns.TypeSRV:
		f := strings.Fields(r.Data)
		if len(f) == 4 {
			fmt.Fprintf(b, "        priority       = %s\n        weight         = %s\n        port           = %s\n        svr hostname   = %s\n%s",
				f[0], f[1], f[2], strings.TrimSuffix(f[3], "."), ttl)
		}
	case dns.TypeSOA:
		f := strings.Fields(r.Data)
		if len(f) == 7 {
			b.WriteString(ttl)
			fmt.Fprintf(b, "        primary name server = %s\n", strings.TrimSuffix(f[0], "."))
			fmt.Fprintf(b, "        responsible mail addr = %s\n", strings.TrimSuffix(f[1], "."))
			fmt.Fprintf(b, "        serial  = %s (simulated: CoreDNS's serial is the time of the last change it saw)\n", f[2])
			for i, label := range []string{"refresh", "retry  ", "expire "} {
				v := parseUint(f[3+i])
				fmt.Fprintf(b, "        %s = %d (%s)\n", label, v, winDuration(v))
			}
			v := parseUint(f[6])
			fmt.Fprintf(b, "        default TTL = %d (%s)\n", v, winDuration(v))
		}
	}
}

func parseUint(s string) uint32 {
	var v uint32
	fmt.Sscan(s, &v)
	return v
}

// winDuration is nslookup.exe's reading of a TTL: days, hours, mins and
// secs, the zero parts left out ("1 day", "1 min 7 secs", "22 hours 16
// mins 44 secs").
func winDuration(s uint32) string {
	if s == 0 {
		return "0 secs"
	}
	var parts []string
	for _, u := range []struct {
		n    uint32
		name string
	}{{86400, "day"}, {3600, "hour"}, {60, "min"}, {1, "sec"}} {
		if v := s / u.n; v > 0 {
			name := u.name
			if v != 1 {
				name += "s"
			}
			parts = append(parts, fmt.Sprintf("%d %s", v, name))
			s %= u.n
		}
	}
	return strings.Join(parts, " ")
}
