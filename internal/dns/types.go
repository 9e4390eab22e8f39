package dns

import (
	"fmt"
	"strings"
)

// Record types, numbered as on the wire (RFC 1035, RFC 2782, RFC 3596).
const (
	TypeA     uint16 = 1
	TypeNS    uint16 = 2
	TypeCNAME uint16 = 5
	TypeSOA   uint16 = 6
	TypePTR   uint16 = 12
	TypeMX    uint16 = 15
	TypeTXT   uint16 = 16
	TypeAAAA  uint16 = 28
	TypeSRV   uint16 = 33
	TypeANY   uint16 = 255
)

var typeNames = map[uint16]string{
	TypeA: "A", TypeNS: "NS", TypeCNAME: "CNAME", TypeSOA: "SOA", TypePTR: "PTR",
	TypeMX: "MX", TypeTXT: "TXT", TypeAAAA: "AAAA", TypeSRV: "SRV", TypeANY: "ANY",
}

// TypeString is the mnemonic of a record type ("A", "AAAA", …, or "TYPE<n>").
func TypeString(t uint16) string {
	if s, ok := typeNames[t]; ok {
		return s
	}
	return fmt.Sprintf("TYPE%d", t)
}

// ParseType reads a record type mnemonic, case-insensitively.
func ParseType(s string) (uint16, bool) {
	for t, n := range typeNames {
		if strings.EqualFold(n, s) {
			return t, true
		}
	}
	return 0, false
}

// Rcode is a DNS response code, or one of the twin's two non-wire outcomes.
type Rcode int

// Response codes (RFC 1035 4.1.1) and the twin's explicit unknowns.
const (
	NoError  Rcode = 0
	FormErr  Rcode = 1
	ServFail Rcode = 2
	NXDomain Rcode = 3
	NotImp   Rcode = 4
	Refused  Rcode = 5
	// NotModeled: the twin does not know what the server would answer (a
	// name outside everything it models). Never a guess.
	NotModeled Rcode = -1
	// NoServer: nothing answers at the nameserver address; the client times
	// out.
	NoServer Rcode = -2
)

// String gives the mnemonic busybox nslookup and dig print.
func (r Rcode) String() string {
	switch r {
	case NoError:
		return "NOERROR"
	case FormErr:
		return "FORMERR"
	case ServFail:
		return "SERVFAIL"
	case NXDomain:
		return "NXDOMAIN"
	case NotImp:
		return "NOTIMP"
	case Refused:
		return "REFUSED"
	case NotModeled:
		return "not modeled"
	case NoServer:
		return "no server reached"
	}
	return fmt.Sprintf("RCODE%d", int(r))
}

// Record is one resource record of an answer. Names are lower case and
// without the trailing dot.
type Record struct {
	Name string
	Type uint16
	// TTL in seconds; 0 where the twin does not know it (answers from
	// outside the cluster).
	TTL uint32
	// Data is the address (A, AAAA), target (CNAME, PTR), text (TXT), or
	// "priority weight port target." (SRV, as dig prints it).
	Data string
}

func (r Record) String() string {
	return fmt.Sprintf("%s\t%d\tIN\t%s\t%s", r.Name, r.TTL, TypeString(r.Type), r.Data)
}

// Path says which part of the DNS answered.
type Path string

// Paths an answer can take.
const (
	// PathKubernetes: CoreDNS's kubernetes plugin (cluster.local and the
	// reverse zones).
	PathKubernetes Path = "kubernetes"
	// PathForward: CoreDNS's forward plugin, i.e. the node network's DNS
	// server from the CoreDNS pods' resolv.conf.
	PathForward Path = "forward"
	// PathNetwork: the node network's DNS server asked directly (nodes,
	// dnsPolicy Default).
	PathNetwork Path = "network"
	// PathNone: no server answered.
	PathNone Path = "none"
)

// Answer is what one query got.
type Answer struct {
	// Name and Type are the question.
	Name string
	Type uint16
	// Rcode of the response; NotModeled or NoServer when there is none the
	// twin can state.
	Rcode Rcode
	// Authoritative is the AA bit: CoreDNS's kubernetes plugin sets it; a
	// recursive resolver's answers do not carry it.
	Authoritative bool
	Records       []Record
	// Extra is the additional section: the addresses of SRV targets
	// (plugin/backend_lookup.go SRV).
	Extra []Record
	// Authority is the authority section: the zone's SOA that the
	// kubernetes plugin sends with an empty answer, NXDOMAIN or NODATA
	// (plugin/backend_lookup.go BackendError, SOA). Its serial is 0: the
	// twin does not know when CoreDNS last saw a change.
	Authority []Record
	Path      Path
	// Why says in one sentence which rule produced the answer.
	Why string
	// Cache says what the twin assumes of the cache plugin for a forwarded
	// answer ("" when no cache is in front of forward).
	Cache string
}

// NoData reports a NOERROR answer without records of the asked type.
func (a Answer) NoData() bool { return a.Rcode == NoError && !a.hasType(a.Type) }

func (a Answer) hasType(t uint16) bool {
	for _, r := range a.Records {
		if r.Type == t {
			return true
		}
	}
	return false
}

// Addresses are the A and AAAA data of the answer, in answer order.
func (a Answer) Addresses() []string {
	var out []string
	for _, r := range a.Records {
		if r.Type == TypeA || r.Type == TypeAAAA {
			out = append(out, r.Data)
		}
	}
	return out
}

func (a Answer) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s → %s", a.Name, TypeString(a.Type), a.Rcode)
	if a.Rcode == NoError && len(a.Records) == 0 {
		b.WriteString(" (no records)")
	}
	for _, r := range a.Records {
		if r.Type == TypeCNAME {
			fmt.Fprintf(&b, " CNAME %s", r.Data)
			continue
		}
		fmt.Fprintf(&b, " %s", r.Data)
	}
	fmt.Fprintf(&b, " [%s]", a.Path)
	return b.String()
}

// normalize lower-cases a name and strips the trailing dot; absolute tells
// whether it had one.
func normalize(name string) (n string, absolute bool) {
	n = strings.ToLower(strings.TrimSpace(name))
	if strings.HasSuffix(n, ".") && n != "." {
		return strings.TrimSuffix(n, "."), true
	}
	return n, false
}

// inZone reports whether name is zone or below it ("." holds everything).
func inZone(name, zone string) bool {
	if zone == "." || zone == "" {
		return true
	}
	return name == zone || strings.HasSuffix(name, "."+zone)
}
