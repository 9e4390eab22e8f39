package trace

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteText prints a trace: a header line, one indented line per hop
// grouped by leg, the Service translations, the verdict and, on failure,
// the fix.
func (r *Result) WriteText(w io.Writer) error {
	var b strings.Builder
	to := r.To.String()
	if r.To.Given != "" && r.To.Kind != KindExternal && r.To.Given != r.To.IP {
		to = r.To.Given
		if r.To.IP != "" {
			to += " (" + r.To.IP + ")"
		}
	}
	flow := string(r.Proto)
	if r.Proto != ICMP {
		flow = fmt.Sprintf("%s/%d", r.Proto, r.Port)
	}
	fmt.Fprintf(&b, "trace %s → %s %s\n", r.From, to, flow)
	leg := ""
	for _, h := range r.Hops {
		if h.Leg != leg {
			leg = h.Leg
			fmt.Fprintf(&b, "%s:\n", leg)
		}
		b.WriteString(h.line())
		b.WriteString("\n")
	}
	if len(r.Translations) > 0 {
		b.WriteString("translations:\n")
		for _, t := range r.Translations {
			var cands []string
			for i, c := range t.Candidates {
				s := c.Addr
				if c.Pod != "" {
					s += " (" + c.Pod + ")"
				}
				if i == t.Chosen {
					s = "*" + s
				}
				cands = append(cands, s)
			}
			fmt.Fprintf(&b, "  %s  %s %s → %s\n", t.Node, t.Service, t.VIP, strings.Join(cands, ", "))
		}
		b.WriteString("  (* chosen: " + r.Translations[0].Rule + ")\n")
	}
	if len(r.ACLs) > 0 {
		b.WriteString("windows endpoints:\n")
		for _, a := range r.ACLs {
			fmt.Fprintf(&b, "  %s  %s %s: %d HNS ACL rules\n", a.Node, a.Pod, a.IP, a.Count)
		}
	}
	if r.Delivered {
		fmt.Fprintf(&b, "verdict: delivered — %s", r.Reason)
		if r.DeliveredTo != nil && r.DeliveredTo.IP != r.To.IP {
			fmt.Fprintf(&b, " (at %s)", r.DeliveredTo)
		}
		if r.RequestTTL > 0 {
			fmt.Fprintf(&b, "; the request arrives with ttl %d", r.RequestTTL)
		}
		if r.ReplyTTL > 0 {
			fmt.Fprintf(&b, ", the reply with ttl %d", r.ReplyTTL)
		}
		b.WriteString("\n")
		if r.Assumed {
			b.WriteString("note: the destination is outside the cluster; that it answers is assumed\n")
		}
	} else {
		at := ""
		if r.AtNode != "" || r.AtComp != "" {
			at = " at " + strings.TrimSpace(r.AtNode+" "+r.AtComp)
		}
		fmt.Fprintf(&b, "verdict: not delivered (%s)%s: %s\n", r.Outcome, at, r.Reason)
		if r.Fix != "" {
			fmt.Fprintf(&b, "fix: %s\n", r.Fix)
		}
	}
	for _, x := range r.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", x)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (h Hop) line() string {
	var b strings.Builder
	b.WriteString(strings.Repeat("  ", h.Depth+1))
	node := h.Node
	if node == "" {
		node = "-"
	}
	fmt.Fprintf(&b, "%s  %s: %s", node, h.Component, h.Action)
	if h.Before.Src != "" || h.Before.Dst != "" {
		fmt.Fprintf(&b, "  %s", h.Before)
		if h.After != nil {
			fmt.Fprintf(&b, " ⇒ %s", *h.After)
		}
	}
	fmt.Fprintf(&b, "  [%s]", h.Verdict)
	if h.Reason != "" {
		fmt.Fprintf(&b, " %s", h.Reason)
	}
	return b.String()
}

// WriteJSON prints the trace as indented JSON.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// TTLSteps explains the TTL the reply arrives with: what the responder's
// OS starts at and every routing step on the way back that decrements it.
func (r *Result) TTLSteps() string {
	start := 0
	var steps []string
	for _, h := range r.Hops {
		if h.Leg != LegReply {
			continue
		}
		if start == 0 && h.Before.TTL > 0 {
			start = h.Before.TTL
		}
		if h.After != nil && h.After.TTL < h.Before.TTL && h.After.TTL > 0 {
			where := h.Component
			if h.Node != "" {
				where += " on " + h.Node
			}
			steps = append(steps, fmt.Sprintf("-%d at %s", h.Before.TTL-h.After.TTL, where))
		}
	}
	if start == 0 || r.ReplyTTL == 0 {
		return ""
	}
	os := "Linux"
	if start == ttlWindows {
		os = "Windows"
	}
	s := fmt.Sprintf("the reply starts at ttl %d (%s)", start, os)
	if len(steps) > 0 {
		s += ", " + strings.Join(steps, ", ")
	} else {
		s += ", no routing step decrements it"
	}
	return s + fmt.Sprintf(": ttl %d", r.ReplyTTL)
}
