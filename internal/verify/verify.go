package verify

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// InputError is an actual folder that cannot be read: the file, the line
// (0 when the whole file is meant) and what is wrong.
type InputError struct {
	File string
	Line int
	Msg  string
}

func (e *InputError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Output is one command's output on one node as collect writes it.
type Output struct {
	Node    string
	File    string
	Command Command
	// Typed is the command as the file's first line gives it.
	Typed string
	Text  string
	// Filtered: Typed is Command with a pipeline after it (or, when
	// Command.Parse is nil, a command verify does not read): the twin is
	// asked Typed whole and the two outputs are read leniently.
	Filtered bool
	// Subset: the output had "..." lines where it was cut short, so items
	// the twin has and it lacks are not differences.
	Subset bool
}

// maxFileBytes bounds one command's output; real ones are far smaller
// (a large node's nft ruleset is a few MB).
const maxFileBytes = 64 << 20

// ReadDir reads an actual folder: one folder per node, named like the
// node, holding one file per command whose first line is "# COMMAND".
func ReadDir(dir string) ([]Output, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, &InputError{File: dir, Msg: fmt.Sprintf("cannot read the folder: %v", errors.Unwrap(err))}
	}
	var outs []Output
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if !e.IsDir() {
			return nil, &InputError{File: path, Msg: "expected a folder per node, named like the node"}
		}
		if errs := validation.IsDNS1123Subdomain(e.Name()); len(errs) > 0 {
			return nil, &InputError{File: path, Msg: fmt.Sprintf("folder name is not a node name: %s", strings.Join(errs, "; "))}
		}
		files, err := os.ReadDir(path)
		if err != nil {
			return nil, &InputError{File: path, Msg: fmt.Sprintf("cannot read the folder: %v", errors.Unwrap(err))}
		}
		for _, f := range files {
			if strings.HasPrefix(f.Name(), ".") {
				continue
			}
			fp := filepath.Join(path, f.Name())
			if f.IsDir() {
				return nil, &InputError{File: fp, Msg: "expected a file per command, found a folder"}
			}
			o, err := readOutput(e.Name(), fp)
			if err != nil {
				return nil, err
			}
			outs = append(outs, o)
		}
	}
	if len(outs) == 0 {
		return nil, &InputError{File: dir, Msg: "no command outputs: expected DIR/NODE/FILE with \"# COMMAND\" on its first line"}
	}
	return outs, nil
}

func readOutput(node, path string) (Output, error) {
	st, err := os.Stat(path)
	if err != nil {
		return Output{}, &InputError{File: path, Msg: err.Error()}
	}
	if st.Size() > maxFileBytes {
		return Output{}, &InputError{File: path, Msg: fmt.Sprintf("file is %d bytes, more than the %d a command's output may have", st.Size(), maxFileBytes)}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Output{}, &InputError{File: path, Msg: err.Error()}
	}
	text := strings.TrimPrefix(string(data), "\ufeff")
	head, rest, _ := strings.Cut(text, "\n")
	head = strings.TrimSuffix(head, "\r")
	if !strings.HasPrefix(head, "#") {
		return Output{}, &InputError{File: path, Line: 1, Msg: "the first line must be \"# COMMAND\" (the command as typed)"}
	}
	typed := strings.TrimSpace(strings.TrimPrefix(head, "#"))
	if typed == "" {
		return Output{}, &InputError{File: path, Line: 1, Msg: "the first line must be \"# COMMAND\" (the command as typed); it names no command"}
	}
	o := Output{Node: node, File: path, Typed: typed}
	o.Text, o.Subset = dropElisions(rest)
	if cmd, ok := LookupCommand(typed); ok {
		o.Command = cmd
	} else if cmd, ok := lookupPipelineBase(typed); ok {
		o.Command, o.Filtered = cmd, true
	} else {
		// Not a command verify reads: its lines are compared with the
		// twin's answer if the twin emulates it, else it is listed as
		// not compared.
		o.Command, o.Filtered = Command{Typed: typed, File: filepath.Base(path), Emulated: true}, true
	}
	return o, nil
}

// Twin answers a command on a node as the twin emulates it.
type Twin interface {
	// Node says whether the twin has the node and whether it runs Windows.
	Node(name string) (known, windows bool)
	// Answer is the emulated command's standard output, or an error when
	// the twin cannot answer it.
	Answer(node, command string) (string, error)
}

// Note is an output that was read but not compared, and why.
type Note struct {
	Node    string `json:"node"`
	File    string `json:"file"`
	Command string `json:"command"`
	Reason  string `json:"reason"`
}

// Result is a whole verification.
type Result struct {
	Nodes         int           `json:"nodes"`
	Outputs       int           `json:"outputs"`
	Items         int           `json:"items"`
	Discrepancies []Discrepancy `json:"discrepancies"`
	NotCompared   []Note        `json:"notCompared"`
}

// Verify parses every output, asks the twin for its answer to the same
// command on the same node, and compares the two. Bad input (an output
// that does not parse, a node the twin lacks, a command for the other
// OS) is an *InputError.
func Verify(outs []Output, twin Twin) (*Result, error) {
	res := &Result{Discrepancies: []Discrepancy{}, NotCompared: []Note{}}
	nodes := map[string]bool{}
	for _, o := range outs {
		known, windows := twin.Node(o.Node)
		if !known {
			return nil, &InputError{File: filepath.Dir(o.File), Msg: fmt.Sprintf("the twin's input has no node %q", o.Node)}
		}
		if o.Command.Parse != nil && o.Command.Windows != windows {
			os := "Linux"
			if windows {
				os = "Windows"
			}
			return nil, &InputError{File: o.File, Line: 1, Msg: fmt.Sprintf("%q does not run on %s node %s", o.Typed, os, o.Node)}
		}
		nodes[o.Node] = true
		res.Outputs++
		var actual []Item
		var err error
		if o.Filtered {
			actual = parseFiltered(o.Command.Parse, o.Text)
		} else {
			actual, err = o.Command.Parse(o.Text)
		}
		if err != nil {
			var pe *ParseError
			if errors.As(err, &pe) {
				return nil, &InputError{File: o.File, Line: pe.Line + 1, Msg: pe.Msg}
			}
			return nil, &InputError{File: o.File, Msg: err.Error()}
		}
		res.Items += len(actual)
		if !o.Command.Emulated {
			res.NotCompared = append(res.NotCompared, Note{Node: o.Node, File: rel(o), Command: o.Command.Typed, Reason: "the twin does not emulate this command; its output was parsed, not compared"})
			continue
		}
		// The command as reported: the base command's own spelling, or
		// the whole line when it is filtered.
		name := o.Command.Typed
		if o.Filtered {
			name = o.Typed
		}
		var answer string
		if o.Filtered {
			answer, err = twin.Answer(o.Node, o.Typed)
		} else {
			answer, err = twinAnswer(twin, o)
		}
		if err != nil {
			res.NotCompared = append(res.NotCompared, Note{Node: o.Node, File: rel(o), Command: name, Reason: "the twin does not answer it: " + err.Error()})
			continue
		}
		var expected []Item
		if o.Filtered {
			expected = parseFiltered(o.Command.Parse, answer)
		} else if expected, err = o.Command.Parse(answer); err != nil {
			return nil, fmt.Errorf("node %s: the twin's own answer to %q does not parse: %w", o.Node, o.Command.Typed, err)
		}
		if o.Subset {
			res.NotCompared = append(res.NotCompared, Note{Node: o.Node, File: rel(o), Command: name, Reason: "the output is cut short (\"...\"): only what it shows was compared, what it leaves out is not missing"})
		}
		if !o.Filtered && strings.HasPrefix(o.Command.Typed, "nft ") {
			var dropped bool
			expected, dropped = onlyKubeProxyTables(expected)
			var d2 bool
			actual, d2 = onlyKubeProxyTables(actual)
			if dropped || d2 {
				res.NotCompared = append(res.NotCompared, Note{Node: o.Node, File: rel(o), Command: o.Command.Typed, Reason: "tables other than kube-proxy's were not compared: the twin's view of Felix's nftables tables is simplified"})
			}
		}
		for _, d := range Compare(o.Node, name, expected, actual) {
			if o.Subset && d.Change == Missing {
				continue
			}
			d.File = rel(o)
			res.Discrepancies = append(res.Discrepancies, d)
		}
	}
	res.Nodes = len(nodes)
	sort.SliceStable(res.Discrepancies, func(i, j int) bool {
		a, b := res.Discrepancies[i], res.Discrepancies[j]
		if a.Node != b.Node {
			return a.Node < b.Node
		}
		return a.File < b.File
	})
	return res, nil
}

// onlyKubeProxyTables keeps the items of kube-proxy's tables, which the
// twin renders as kube-proxy writes them.
func onlyKubeProxyTables(items []Item) ([]Item, bool) {
	var keep []Item
	dropped := false
	for _, it := range items {
		if it.Producer == prodKubeProxy {
			keep = append(keep, it)
		} else {
			dropped = true
		}
	}
	return keep, dropped
}

// WriteOutput writes one command's output in the layout ReadDir reads.
func WriteOutput(dir, node string, cmd Command, text string) error {
	nd := filepath.Join(dir, node)
	if err := os.MkdirAll(nd, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(nd, cmd.File))
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, "# %s\n%s", cmd.Typed, text)
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// rel names an output's file within the actual folder, NODE/FILE.
func rel(o Output) string { return filepath.Join(o.Node, filepath.Base(o.File)) }

// twinAnswer asks the twin for its answer to an output's command. Of the
// whole ruleset only kube-proxy's tables are compared, so only they are
// asked for: rendering the twin's Felix tables costs most of a large
// node's time.
func twinAnswer(twin Twin, o Output) (string, error) {
	if o.Command.Typed != "nft list ruleset" {
		return twin.Answer(o.Node, o.Command.Typed)
	}
	var b strings.Builder
	for _, family := range []string{"ip", "ip6"} {
		t, err := twin.Answer(o.Node, "nft list table "+family+" kube-proxy")
		if err != nil {
			if family == "ip" {
				return "", err
			}
			continue // a single-stack node has no ip6 table
		}
		b.WriteString(t)
	}
	return b.String(), nil
}
