package sandbox

import (
	"fmt"
	"io"
	"strings"
)

// WriteScript writes the plan as the shell script it amounts to: the
// namespaces, then every step with its reason as a comment, nft scripts as
// here-documents, then the servers and notes as comments.
func (p *Plan) WriteScript(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# sandbox plan, prefix %s: %d namespaces, %d commands\n", p.Prefix, len(p.Namespaces), len(p.Steps))
	for _, n := range p.Namespaces {
		what := string(n.Kind)
		if n.Kind == KindStandIn || n.Kind == KindStandInPod {
			what = "STAND-IN " + what
		}
		fmt.Fprintf(&b, "#   %-48s %s %s", n.Name, what, orStr(n.Pod, n.Node))
		if n.Addr.IsValid() {
			fmt.Fprintf(&b, " %s", n.Addr)
		}
		b.WriteString("\n")
	}
	for _, s := range p.Steps {
		if s.Why != "" {
			fmt.Fprintf(&b, "\n# %s\n", s.Why)
		}
		b.WriteString(shellJoin(s.Argv))
		if s.Stdin != "" {
			b.WriteString(" <<'EOF'\n")
			b.WriteString(s.Stdin)
			if !strings.HasSuffix(s.Stdin, "\n") {
				b.WriteString("\n")
			}
			b.WriteString("EOF")
		}
		b.WriteString("\n")
	}
	b.WriteString("\n# servers (kubectl-hybrid sandbox serve, one per namespace)\n")
	for _, s := range p.Servers {
		fmt.Fprintf(&b, "#   %s (%s): tcp %v udp %v dns %v\n", s.Namespace, s.Name, s.TCP, s.UDP, s.DNS)
	}
	if len(p.Zone) > 0 {
		fmt.Fprintf(&b, "# zone the CoreDNS pods answer from: %d names\n", len(p.Zone))
		for _, z := range p.Zone {
			fmt.Fprintf(&b, "#   %s rcode %d %s\n", z.Name, z.Rcode, strings.Join(z.Addrs, ","))
		}
	}
	for _, n := range p.Notes {
		fmt.Fprintf(&b, "# note: %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// shellJoin quotes what a shell would split.
func shellJoin(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$*?;&|<>(){}[]#~`") {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		} else {
			out[i] = a
		}
	}
	return strings.Join(out, " ")
}
