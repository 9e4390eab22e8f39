package cli

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"
)

// The mutation test: structural mutations of the examples, every command
// run on each mutant. Whatever a mutant holds, no command may panic, hang
// or exit with anything but 0, 1 or 2 (and 4 from check, which could not
// judge the input).
var (
	mutants        = flag.Int("mutants", 24, "mutants per example in TestNoCommandPanicsOnMutatedExamples")
	mutationSeed   = flag.Uint64("mutation-seed", 1, "seed of the first mutant")
	mutationBudget = flag.Duration("mutation-budget", 45*time.Second, "time after which TestNoCommandPanicsOnMutatedExamples makes no new mutant")
	mutationOnly   = flag.String("mutation-example", "", "mutate only the examples whose path contains this")
)

// mutationExamples are the inputs mutated: the lab (read with -f, as a
// plain cluster), a plain dump and the main cluster.
var mutationExamples = []string{"../../examples/lab", "../../examples/plain", "../../examples/main-cluster"}

func TestNoCommandPanicsOnMutatedExamples(t *testing.T) {
	n := *mutants
	if testing.Short() {
		n = 4
	}
	deadline := time.Now().Add(*mutationBudget)
	ran := 0
	tally := map[string]*[3]int{}
	defer func() {
		// How far the mutants got: a mutator whose every mutant fails to
		// load would test the loader only.
		var lines []string
		for c, n := range tally {
			lines = append(lines, fmt.Sprintf("%-8s exit 0: %3d  exit 1: %3d  exit 2: %3d", c, n[0], n[1], n[2]))
		}
		sort.Strings(lines)
		t.Logf("exit codes of the mutants' commands:\n%s", strings.Join(lines, "\n"))
	}()
	for i := 0; i < n; i++ {
		for _, ex := range mutationExamples {
			if !strings.Contains(ex, *mutationOnly) {
				continue
			}
			if time.Now().After(deadline) {
				t.Logf("mutation budget %s spent after %d mutants", *mutationBudget, ran)
				return
			}
			seed := *mutationSeed + uint64(i)
			for c, code := range runMutant(t, runChild, ex, seed) {
				if tally[c] == nil {
					tally[c] = &[3]int{}
				}
				if code >= 0 && code <= 2 {
					tally[c][code]++
				}
			}
			ran++
		}
	}
	t.Logf("%d mutants, every command on each", ran)
}

// FuzzCommandsOnMutatedExamples lets the fuzzer pick the mutations: the
// input is the seed of the mutator and the example it mutates. The
// commands run in the fuzzing process, so that its coverage guides the
// choice; Execute's recover turns a panic into exit 3, which fails, and a
// command that does not end within the timeout fails too.
func FuzzCommandsOnMutatedExamples(f *testing.F) {
	for i, seed := range []uint64{1, 2, 3} {
		f.Add(seed, uint8(i))
	}
	f.Fuzz(func(t *testing.T, seed uint64, example uint8) {
		runMutant(t, runInProcess, mutationExamples[int(example)%len(mutationExamples)], seed)
	})
}

// runInProcess runs kubectl-hybrid args through Execute in this process,
// with no kubeconfig.
func runInProcess(t testing.TB, timeout time.Duration, args ...string) childResult {
	t.Helper()
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	done := make(chan int, 1)
	go func() { done <- Execute(streams, args) }()
	select {
	case code := <-done:
		return childResult{command: args[0], code: code, stdout: out.String(), stderr: errOut.String()}
	case <-time.After(timeout):
		// The command goes on in its goroutine; the test fails now.
		t.Fatalf("kubectl-hybrid %s did not end within %s", strings.Join(args, " "), timeout)
		return childResult{}
	}
}

// runMutant mutates an example with a seed and runs every command on it;
// it returns the exit code of each command, by its name.
func runMutant(t *testing.T, run runner, example string, seed uint64) map[string]int {
	t.Helper()
	docs, err := readDocs(example)
	if err != nil {
		t.Fatal(err)
	}
	m := mutator{r: rand.New(rand.NewPCG(seed, 0x6b68)), docs: docs}
	var applied []string
	for k := 1 + m.r.IntN(3); k > 0; k-- {
		applied = append(applied, m.mutate())
	}
	dir := t.TempDir()
	if err := m.write(dir); err != nil {
		t.Fatal(err)
	}
	codes := map[string]int{}
	for _, args := range caseCommands(t, run, dir, []string{"-f", dir}) {
		r := run(t, commandTimeout, args...)
		codes[args[0]] = max(codes[args[0]], r.code)
		if why := r.crashed(); why != "" {
			keep := filepath.Join(os.TempDir(), fmt.Sprintf("kubectl-hybrid-mutant-%s-%d", filepath.Base(example), seed))
			_ = os.RemoveAll(keep)
			_ = os.CopyFS(keep, os.DirFS(dir))
			t.Errorf("mutant %d of %s (%s), kept in %s:\nkubectl-hybrid %s: %s",
				seed, example, strings.Join(applied, "; "), keep, strings.Join(args, " "), why)
		}
	}
	return codes
}

// doc is one YAML document of an example.
type doc struct {
	file string
	v    any
}

// readDocs reads every document of the example's .yaml files, generically.
func readDocs(dir string) ([]doc, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []doc
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		for _, part := range strings.Split("\n"+string(b), "\n---") {
			var v any
			if err := yaml.Unmarshal([]byte(part), &v); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if v != nil {
				out = append(out, doc{file: filepath.Base(name), v: v})
			}
		}
	}
	return out, nil
}

// mutator changes the structure of documents: it deletes fields and
// documents, empties values, swaps their types, puts numbers out of range
// and strings out of shape, and duplicates documents.
type mutator struct {
	r    *rand.Rand
	docs []doc
}

// slot is a place holding a value: a key of a map or an index of a list.
type slot struct {
	path string
	m    map[string]any
	key  string
	l    []any
	i    int
}

func (s slot) get() any {
	if s.m != nil {
		return s.m[s.key]
	}
	return s.l[s.i]
}

func (s slot) set(v any) {
	if s.m != nil {
		s.m[s.key] = v
		return
	}
	s.l[s.i] = v
}

// slots lists every place in v, depth first, keys in order.
func slots(path string, v any, out []slot) []slot {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			s := slot{path: path + "." + k, m: x, key: k}
			out = slots(s.path, x[k], append(out, s))
		}
	case []any:
		for i := range x {
			s := slot{path: fmt.Sprintf("%s[%d]", path, i), l: x, i: i}
			out = slots(s.path, x[i], append(out, s))
		}
	}
	return out
}

// odd values a field may be set to when its type changes: empty, of
// another type, out of range.
var odd = []any{
	nil, "", 0, -1, 1, 65536, 2147483648, 1e300, 0.5, true,
	[]any{}, map[string]any{}, []any{"x"}, map[string]any{"x": "y"},
}

// oddStrings are strings out of shape for the fields that hold names,
// addresses, CIDRs and selectors.
var oddStrings = []string{
	"", "not valid!", "UPPER_case", "999.999.999.999/99", "10.0.0.0/8", "10.96.0.1", "0.0.0.0/0", "::1", "fd00::/8",
	"all()", "!has(", "windows", "linux", "Always", "Never", "None", strings.Repeat("a", 300),
}

// oddNumbers are numbers out of range for ports, sizes, counts and
// versions.
var oddNumbers = []float64{0, -1, 1, 19, 20, 29, 30, 31, 32, 33, 128, 4095, 65535, 65536, 2147483648, -9223372036854775808, 1e300}

// mutate applies one mutation and says what it did. Most keep the value's
// type — a mutant the decoder refuses tests the loader only — and draw
// strings from the example itself (another node's name, another CIDR),
// which makes objects that load but disagree with each other.
func (m *mutator) mutate() string {
	if len(m.docs) == 0 {
		return "nothing to mutate"
	}
	di := m.pickDoc()
	d := &m.docs[di]
	switch m.r.IntN(20) {
	case 0:
		m.docs = append(m.docs[:di], m.docs[di+1:]...)
		return fmt.Sprintf("deleted document %d of %s", di, d.file)
	case 1:
		// The copy is deep: mutating one must not change the other.
		b, _ := yaml.Marshal(d.v)
		var v any
		_ = yaml.Unmarshal(b, &v)
		m.docs = append(m.docs, doc{file: d.file, v: v})
		return fmt.Sprintf("duplicated document %d of %s", di, d.file)
	}
	ss := slots("", d.v, nil)
	if len(ss) == 0 {
		d.v = odd[m.r.IntN(len(odd))]
		return fmt.Sprintf("replaced document %d of %s", di, d.file)
	}
	s := ss[m.r.IntN(len(ss))]
	if s.m != nil && m.r.IntN(4) == 0 {
		delete(s.m, s.key)
		return fmt.Sprintf("deleted %s of %s", s.path, d.file)
	}
	var v any
	if m.r.IntN(6) == 0 {
		v = odd[m.r.IntN(len(odd))]
	} else {
		switch x := s.get().(type) {
		case string:
			if m.r.IntN(2) == 0 {
				v = m.someString()
			} else {
				v = oddStrings[m.r.IntN(len(oddStrings))]
			}
		case float64:
			v = []float64{-x, x + 1, x - 1, x * 1000, oddNumbers[m.r.IntN(len(oddNumbers))]}[m.r.IntN(5)]
		case bool:
			v = !x
		case map[string]any:
			v = map[string]any{}
		case []any:
			switch {
			case len(x) > 0 && m.r.IntN(2) == 0:
				v = append(append([]any{}, x...), x[m.r.IntN(len(x))])
			case len(x) > 1:
				v = x[1:]
			default:
				v = []any{}
			}
		default:
			v = odd[m.r.IntN(len(odd))]
		}
	}
	s.set(v)
	return fmt.Sprintf("set %s of %s to %.60v", s.path, d.file, v)
}

// pickDoc picks a file, then a document in it: a file of many small
// documents (the observed pods) would otherwise draw most mutations, and
// the one-document files (the Installation, the ConfigMaps) hold the
// settings a misconfiguration is made of.
func (m *mutator) pickDoc() int {
	var files []string
	seen := map[string]bool{}
	for _, d := range m.docs {
		if !seen[d.file] {
			seen[d.file] = true
			files = append(files, d.file)
		}
	}
	f := files[m.r.IntN(len(files))]
	var in []int
	for i, d := range m.docs {
		if d.file == f {
			in = append(in, i)
		}
	}
	return in[m.r.IntN(len(in))]
}

// someString is a string value of a random document.
func (m *mutator) someString() string {
	d := m.docs[m.r.IntN(len(m.docs))]
	var strs []string
	for _, s := range slots("", d.v, nil) {
		if x, ok := s.get().(string); ok {
			strs = append(strs, x)
		}
	}
	if len(strs) == 0 {
		return ""
	}
	return strs[m.r.IntN(len(strs))]
}

// write writes the documents back, one file per example file.
func (m *mutator) write(dir string) error {
	files := map[string]*strings.Builder{}
	for _, d := range m.docs {
		b, err := yaml.Marshal(d.v)
		if err != nil {
			return err
		}
		sb := files[d.file]
		if sb == nil {
			sb = &strings.Builder{}
			files[d.file] = sb
		}
		sb.WriteString("---\n")
		sb.Write(b)
	}
	for name, sb := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(sb.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}
