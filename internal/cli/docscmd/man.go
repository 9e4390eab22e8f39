package docscmd

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/cmdutil"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// DocsManOptions is `kubectl-hybrid docs man DIR`.
type DocsManOptions struct {
	Dir     string
	root    *cobra.Command
	version string
	streams genericiooptions.IOStreams
}

// NewCmdDocsMan writes a man page (section 1) for every command. The
// pages are roff written here rather than with cobra/doc, which would
// bring go-md2man and blackfriday into the module for a few lines of
// output.
func NewCmdDocsMan(streams genericiooptions.IOStreams, root *cobra.Command, version string) *cobra.Command {
	o := &DocsManOptions{root: root, streams: streams, version: version}
	return &cobra.Command{
		Use:   "man DIR",
		Short: "Write a man page for every command into DIR",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			o.Dir = args[0]
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run()
		},
	}
}

// Validate refuses an empty directory name.
func (o *DocsManOptions) Validate() error {
	if strings.TrimSpace(o.Dir) == "" {
		return cmdutil.UsageError("docs man needs a directory")
	}
	return nil
}

// Run writes the pages and names each on stdout.
func (o *DocsManOptions) Run() error {
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return err
	}
	pages := ManPages(o.root, o.version)
	for _, p := range pages {
		path := filepath.Join(o.Dir, p.File)
		if err := os.WriteFile(path, []byte(p.Text), 0o644); err != nil {
			return err
		}
		fmt.Fprintln(o.streams.Out, path)
	}
	return nil
}

// ManPage is one command's page.
type ManPage struct {
	File string // kubectl-hybrid-plan-migrate.1
	Text string
}

// ManPages renders a page for the root and every visible command, the
// same on every machine (as writeDocs: $HOME, not this home directory).
func ManPages(root *cobra.Command, ver string) []ManPage {
	restore := portableTree(root)
	defer restore()
	var pages []ManPage
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || (c.Name() == "help" && c.Parent() == root) {
			return
		}
		pages = append(pages, ManPage{File: manName(c) + ".1", Text: renderMan(c, ver)})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return pages
}

// manName is the page's name: the command path joined by dashes, as
// git's pages are (git-commit for `git commit`).
func manName(c *cobra.Command) string {
	return strings.ReplaceAll(c.CommandPath(), " ", "-")
}

// renderMan writes one page in the man(7) macros.
func renderMan(c *cobra.Command, ver string) string {
	// Merging the parents' persistent flags first makes the synopsis
	// ([flags] or not) the same whichever page is rendered first.
	c.InheritedFlags()
	var b strings.Builder
	name := manName(c)
	// No date: the page is the same whenever it is generated.
	fmt.Fprintf(&b, ".TH %q \"1\" \"\" %q \"kubectl-hybrid Manual\"\n", strings.ToUpper(name), "kubectl-hybrid "+ver)
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", RoffEscape(name), RoffEscape(c.Short))
	fmt.Fprintf(&b, ".SH SYNOPSIS\n.B %s\n", roffLine(c.UseLine()))
	b.WriteString(".SH DESCRIPTION\n")
	desc := c.Long
	if strings.TrimSpace(desc) == "" {
		desc = c.Short
	}
	roffParagraphs(&b, desc)
	if subs := visibleSubcommands(c); len(subs) > 0 {
		b.WriteString(".SH COMMANDS\n")
		for _, s := range subs {
			fmt.Fprintf(&b, ".TP\n\\fB%s\\fR(1)\n%s\n", RoffEscape(manName(s)), RoffEscape(s.Short))
		}
	}
	roffFlags(&b, "OPTIONS", c.NonInheritedFlags())
	roffFlags(&b, "OPTIONS INHERITED FROM PARENT COMMANDS", c.InheritedFlags())
	if ex := strings.TrimRight(c.Example, "\n"); ex != "" {
		b.WriteString(".SH EXAMPLES\n.PP\n.RS\n.nf\n")
		for _, line := range strings.Split(ex, "\n") {
			b.WriteString(roffLine(strings.TrimPrefix(line, "  ")) + "\n")
		}
		b.WriteString(".fi\n.RE\n")
	}
	var see []string
	if p := c.Parent(); p != nil {
		see = append(see, fmt.Sprintf("\\fB%s\\fR(1)", RoffEscape(manName(p))))
	}
	for _, s := range visibleSubcommands(c) {
		see = append(see, fmt.Sprintf("\\fB%s\\fR(1)", RoffEscape(manName(s))))
	}
	if len(see) > 0 {
		fmt.Fprintf(&b, ".SH SEE ALSO\n%s\n", strings.Join(see, ", "))
	}
	return b.String()
}

func visibleSubcommands(c *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	for _, s := range c.Commands() {
		if s.Hidden || s.Name() == "help" {
			continue
		}
		out = append(out, s)
	}
	return out
}

// roffParagraphs writes text's paragraphs (blank-line separated), filled,
// except those with an indented line, which keep their lines as written.
func roffParagraphs(w io.StringWriter, text string) {
	for _, para := range strings.Split(strings.TrimSpace(text), "\n\n") {
		para = strings.Trim(para, "\n")
		if para == "" {
			continue
		}
		lines := strings.Split(para, "\n")
		indented := false
		for _, l := range lines {
			if strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") {
				indented = true
			}
		}
		if indented {
			_, _ = w.WriteString(".PP\n.nf\n")
		} else {
			_, _ = w.WriteString(".PP\n")
		}
		for _, l := range lines {
			_, _ = w.WriteString(roffLine(l) + "\n")
		}
		if indented {
			_, _ = w.WriteString(".fi\n")
		}
	}
}

// roffFlags lists the visible flags as tagged paragraphs.
func roffFlags(w io.StringWriter, title string, fs *pflag.FlagSet) {
	var items []string
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		varname, usage := pflag.UnquoteUsage(f)
		tag := ""
		if f.Shorthand != "" && f.ShorthandDeprecated == "" {
			tag = fmt.Sprintf("\\fB\\-%s\\fR, ", RoffEscape(f.Shorthand))
		}
		tag += fmt.Sprintf("\\fB\\-\\-%s\\fR", RoffEscape(f.Name))
		if varname != "" {
			tag += fmt.Sprintf(" \\fI%s\\fR", RoffEscape(varname))
		}
		if !zeroDefault(f) {
			usage += fmt.Sprintf(" (default %s)", flagDefault(f))
		}
		items = append(items, fmt.Sprintf(".TP\n%s\n%s\n", tag, roffLine(usage)))
	})
	if len(items) == 0 {
		return
	}
	_, _ = w.WriteString(".SH " + title + "\n")
	for _, it := range items {
		_, _ = w.WriteString(it)
	}
}

// zeroDefault says whether the flag's default is its type's zero value,
// which pflag's own usage leaves out.
func zeroDefault(f *pflag.Flag) bool {
	switch f.DefValue {
	case "", "0", "false", "[]", "<nil>", "0s":
		return true
	}
	return false
}

func flagDefault(f *pflag.Flag) string {
	if f.Value.Type() == "string" {
		return fmt.Sprintf("%q", f.DefValue)
	}
	return f.DefValue
}

// RoffEscape makes text literal in roff: backslashes, the hyphens that
// are minus signs in options (groff would set them as hyphens), and
// characters beyond ASCII as \[uXXXX], which groff and mandoc read
// whatever the input encoding (groff_char(7)).
func RoffEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\e`)
		case r == '-':
			b.WriteString(`\-`)
		case r > 0x7e:
			fmt.Fprintf(&b, `\[u%04X]`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// roffLine escapes a line of text and keeps a leading . or ' from being
// read as a request.
func roffLine(s string) string {
	s = RoffEscape(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}
