package verify

import (
	"errors"
	"regexp"
	"strings"
)

// A command typed with a pipeline (`ip route | grep 172.21.41`,
// `Get-HnsEndpoint | Sort-Object … | Format-Table …`) prints a filtered
// view of what the base command prints. verify asks the twin the same
// whole command line and compares the two filtered views item by item:
// the items the base command's parser reads from it, and each line it
// cannot read as a line item.

// prodOutputLine is the producer of a line verify compares as text.
const prodOutputLine = "the node (an output line compared as text: verify does not read it into items)"

// splitPipeline cuts a command line at the "|" outside quotes ("||" is
// no pipe).
func splitPipeline(s string) []string {
	var out []string
	start := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '|':
			if i+1 < len(s) && s[i+1] == '|' {
				i++
				continue
			}
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// lookupPipelineBase finds the longest start of a pipeline that is a
// command verify reads: `ip route | grep x` is `ip route` filtered.
func lookupPipelineBase(typed string) (Command, bool) {
	stages := splitPipeline(typed)
	for i := len(stages) - 1; i >= 1; i-- {
		if cmd, ok := LookupCommand(strings.Join(stages[:i], "|")); ok {
			return cmd, true
		}
	}
	return Command{}, false
}

// elided reports whether a line is the "..." a person puts where they cut
// an output short; such an output shows only part of what the node holds.
func elided(line string) bool {
	t := strings.TrimSpace(line)
	return t == "..." || t == "…"
}

// dropElisions removes the "..." lines; subset says there were some.
func dropElisions(text string) (rest string, subset bool) {
	if !strings.Contains(text, "...") && !strings.Contains(text, "…") {
		return text, false
	}
	var b strings.Builder
	for _, l := range strings.SplitAfter(text, "\n") {
		if elided(strings.TrimRight(l, "\r\n")) {
			subset = true
			continue
		}
		b.WriteString(l)
	}
	return b.String(), subset
}

// Identifiers no algorithm derives: HNS object GUIDs and container
// sandbox IDs (64 hex digits) in adapter and endpoint names.
var (
	guidRE      = regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	sandboxIDRE = regexp.MustCompile(`(?i)\b[0-9a-f]{64}`)
)

// lineItem is a line compared as text: blanks collapsed (column widths
// are no difference), GUIDs and sandbox IDs replaced by a placeholder.
func lineItem(line string) (Item, bool) {
	t := strings.Join(strings.Fields(line), " ")
	if t == "" {
		return Item{}, false
	}
	t = guidRE.ReplaceAllString(t, "<guid>")
	t = sandboxIDRE.ReplaceAllString(t, "<sandbox-id>")
	// One group: the only missing and the only extra line are one line
	// that changed.
	return Item{Kind: "output line", Key: t, Producer: prodOutputLine, Group: "lines"}, true
}

// lineItems reads every line as a line item.
func lineItems(text string) []Item {
	var items []Item
	for _, l := range lines(text) {
		if it, ok := lineItem(l); ok {
			items = append(items, it)
		}
	}
	return items
}

// parseFiltered reads a filtered output with the base command's parser:
// a line the parser refuses becomes a line item and the rest is read
// again, so `ip route | grep x` gives routes and `ip -d link | grep -o
// 'vxlan id …'` gives the one line. A parser that fails without naming a
// line leaves the remaining lines as line items. parse nil: lines only.
func parseFiltered(parse func(string) ([]Item, error), text string) []Item {
	if parse == nil {
		return lineItems(text)
	}
	ls := lines(text)
	var asLines []Item
	for range ls {
		items, err := parse(strings.Join(ls, "\n") + "\n")
		if err == nil {
			return append(items, asLines...)
		}
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line < 1 || pe.Line > len(ls) || strings.TrimSpace(ls[pe.Line-1]) == "" {
			break
		}
		if it, ok := lineItem(ls[pe.Line-1]); ok {
			asLines = append(asLines, it)
		}
		ls[pe.Line-1] = ""
	}
	return append(asLines, lineItems(strings.Join(ls, "\n"))...)
}
