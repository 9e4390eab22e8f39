package load

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/golden"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/names"
)

// loadStdin loads text given on stdin.
func loadStdin(text string, mode Validation) (*model.Snapshot, error) {
	return Load(Options{Filenames: []string{"-"}, Stdin: strings.NewReader(text), Validation: mode})
}

func TestObjectsTheAPIServerWouldRefuseAreRefusedWithTheirLine(t *testing.T) {
	for _, c := range []struct {
		name, text, want string
	}{
		{"a config map with no name is refused at the start of its metadata", `apiVersion: v1
kind: ConfigMap
metadata:
  namespace: demo
`, "<stdin>:4 (document 1): ConfigMap: metadata.name: Required value: name or generateName is required"},
		{"an invalid label key is refused at its key's line", `apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  labels:
    ok: "yes"
    "a b": x
`, `<stdin>:7 (document 1): ConfigMap default/c: metadata.labels: Invalid value: "a b": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`},
		{"a policy port out of range is refused at the port", `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: np}
spec:
  podSelector: {}
  egress:
  - ports:
    - port: 53
    - port: 70000
`, "<stdin>:9 (document 1): NetworkPolicy default/np: spec.egress[0].ports[1].port: Invalid value: 70000: must be between 1 and 65535, inclusive"},
		{"a node port outside the default range is refused", `apiVersion: v1
kind: Service
metadata: {name: s}
spec:
  type: NodePort
  ports:
  - port: 80
    nodePort: 1
`, "<stdin>:8 (document 1): Service default/s: spec.ports[0].nodePort: Invalid value: 1: provided port is not in the valid range. The range of valid ports is 30000-32767"},
		{"a node port outside the API server's configured range is refused", `apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
apiServer:
  extraArgs:
  - name: service-node-port-range
    value: 8000-9000
---
apiVersion: v1
kind: Service
metadata: {name: s}
spec:
  type: NodePort
  ports:
  - {port: 80, nodePort: 30080}
`, "<stdin>:14 (document 2): Service default/s: spec.ports[0].nodePort: Invalid value: 30080: provided port is not in the valid range. The range of valid ports is 8000-9000"},
		{"a Calico selector that does not parse is refused", `apiVersion: projectcalico.org/v3
kind: IPPool
metadata: {name: p}
spec:
  cidr: 10.0.0.0/16
  nodeSelector: "os in {"
`, "<stdin>:6 (document 1): IPPool p: spec.nodeSelector: Invalid value: \"os in {\": invalid selector: "},
		{"an overlapping pool is refused at its CIDR", `apiVersion: projectcalico.org/v3
kind: IPPool
metadata: {name: a}
spec: {cidr: 10.0.0.0/16}
---
apiVersion: projectcalico.org/v3
kind: IPPool
metadata: {name: b}
spec:
  cidr: 10.0.0.0/8
`, `<stdin>:10 (document 2): IPPool b: spec.cidr: Invalid value: "10.0.0.0/8": IPPool(b) CIDR overlaps with IPPool(a) CIDR 10.0.0.0/16`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := loadStdin(c.text, ValidateWarn)
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("got  %s\nwant %s", err, c.want)
			}
			if !IsBadInput(err) {
				t.Error("not bad input")
			}
		})
	}
}

func TestANodeAddressThatIsNotAnIPIsBadInputInEveryMode(t *testing.T) {
	text := `apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  addresses:
  - {type: Hostname, address: n1}
  - {type: InternalIP, address: 999.1.1.1}
`
	want := `<stdin>:7 (document 1): Node n1: status.addresses[1].address: "999.1.1.1" is not an IP address`
	for _, mode := range []Validation{ValidateWarn, ValidateIgnore} {
		_, err := loadStdin(text, mode)
		if err == nil || err.Error() != want {
			t.Errorf("mode %d: got %v, want %s", mode, err, want)
		}
	}
}

func TestUnknownFieldsWarnOrRefuseByMode(t *testing.T) {
	text := `apiVersion: projectcalico.org/v3
kind: IPPool
metadata: {name: p, colour: red}
spec:
  cidr: 10.60.0.0/16
  blocksize: 24
  someCalicoField: 1
`
	wantWarnings := []string{
		`<stdin>:3 (document 1): IPPool p: unknown field "metadata.colour"`,
		`<stdin>:6 (document 1): IPPool p: unknown field "spec.blocksize" (field names are case-sensitive: "blockSize" is declared; the value is dropped)`,
	}
	t.Run("warn reports unknown fields as warnings and keeps the object", func(t *testing.T) {
		s, err := loadStdin(text, ValidateWarn)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(s.Warnings, "\n") != strings.Join(wantWarnings, "\n") {
			t.Errorf("warnings\n got: %q\nwant: %q", s.Warnings, wantWarnings)
		}
		pool := s.Objects[0].Typed.(*calico.IPPool)
		if pool.Spec.BlockSize != 0 {
			t.Errorf("blocksize was read into blockSize (%d); the API server drops it", pool.Spec.BlockSize)
		}
	})
	t.Run("strict refuses unknown fields", func(t *testing.T) {
		_, err := loadStdin(text, ValidateStrict)
		var r *Refusals
		if !errors.As(err, &r) || err.Error() != strings.Join(wantWarnings, "\n") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("ignore keeps the object with warnings", func(t *testing.T) {
		s, err := loadStdin(text, ValidateIgnore)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Warnings) != 2 || !strings.HasSuffix(s.Warnings[1], "(kept: validation is off)") {
			t.Errorf("warnings %q", s.Warnings)
		}
	})
}

func TestIgnoreKeepsRefusedObjects(t *testing.T) {
	s, err := loadStdin("apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 70000}]}\n", ValidateIgnore)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Objects) != 1 || len(s.Warnings) != 1 {
		t.Fatalf("objects %d, warnings %q", len(s.Objects), s.Warnings)
	}
	want := "<stdin>:4 (document 1): Service default/s: spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive (kept: validation is off)"
	if s.Warnings[0] != want {
		t.Errorf("got  %s\nwant %s", s.Warnings[0], want)
	}
}

func TestAPoolReplacedByALaterFileDoesNotOverlapItself(t *testing.T) {
	_, err := Load(Options{Filenames: []string{"-", "testdata/good/ippool-v3.yaml"},
		Stdin: strings.NewReader("apiVersion: projectcalico.org/v3\nkind: IPPool\nmetadata: {name: default-ipv4-ippool}\nspec: {cidr: 172.21.0.0/16}\n")})
	if err != nil {
		t.Fatal(err)
	}
}

func TestDecodeForLiveReadsDoesNotValidate(t *testing.T) {
	// Objects read from a cluster were validated by its API server, which
	// may know fields this build does not.
	objs, err := DecodeDocuments(strings.NewReader("apiVersion: v1\nkind: Pod\nmetadata: {namespace: demo, newField: 1}\n"), "live")
	if err != nil || len(objs) != 1 {
		t.Fatalf("%v %d", err, len(objs))
	}
}

func TestJSONListItemsAreCheckedInInputOrder(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`{"apiVersion": "v1", "kind": "List", "items": [`)
	for i := 0; i < 700; i++ { // more than one batch of items decoded in parallel
		if i > 0 {
			b.WriteString(",\n")
		}
		name := "p" + strings.Repeat("x", i%3)
		if i%100 == 7 {
			name = "Bad" // refused
		}
		b.WriteString(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "` + name + `-` + itoa(i) + `"}, "extra": 1}`)
	}
	b.WriteString("]}\n")
	_, err := loadStdin(b.String(), ValidateWarn)
	var r *Refusals
	if !errors.As(err, &r) {
		t.Fatalf("got %v", err)
	}
	if len(r.Errors) != 7 || len(r.Warnings) != 700 {
		t.Fatalf("%d refusals, %d warnings", len(r.Errors), len(r.Warnings))
	}
	for i, e := range r.Errors {
		if want := "Bad-" + itoa(100*i+7); !strings.Contains(e.Error(), want) {
			t.Errorf("refusal %d is %s, want %s", i, e, want)
		}
	}
	for i, w := range r.Warnings {
		if !strings.HasPrefix(w, "<stdin>:"+itoa(i+1)+" ") {
			t.Fatalf("warning %d out of order: %s", i, w)
		}
	}
}

func itoa(i int) string { return fmtInt(i) }

func fmtInt(i int) string {
	if i == 0 {
		return "0"
	}
	var d []byte
	for ; i > 0; i /= 10 {
		d = append([]byte{byte('0' + i%10)}, d...)
	}
	return string(d)
}

// TestRefusalsGolden keeps the messages for a file of refused objects and
// for a JSON list with unknown fields, in each mode.
func TestRefusalsGolden(t *testing.T) {
	var b strings.Builder
	for _, mode := range []struct {
		name string
		v    Validation
	}{{"warn", ValidateWarn}, {"strict", ValidateStrict}, {"ignore", ValidateIgnore}} {
		for _, f := range []string{"testdata/refused/objects.yaml", "testdata/refused/unknown.json"} {
			b.WriteString("== " + f + " --validate=" + mode.name + "\n")
			s, err := Load(Options{Filenames: []string{f}, Validation: mode.v})
			var warnings []string
			var r *Refusals
			switch {
			case errors.As(err, &r):
				warnings = r.Warnings
			case err != nil:
				t.Fatal(err)
			default:
				warnings = s.Warnings
			}
			for _, w := range warnings {
				b.WriteString("Warning: " + w + "\n")
			}
			if err != nil {
				b.WriteString(err.Error() + "\n")
			}
		}
	}
	golden.Check(t, "testdata/refused/messages.golden", b.String())
}

// BenchmarkDecodeChecked10000Pods is BenchmarkDecode10000Pods with the
// checks Load makes (unknown fields and the API server's validation).
func BenchmarkDecodeChecked10000Pods(b *testing.B) {
	text := pods(10_000)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		val := newValidator(ValidateWarn)
		err := decodeWith(bytes.NewReader(text), "pods.yaml", Limits{}, func(*model.Object) error { n++; return nil }, fastListMin, val)
		if err != nil || n != 10_000 || len(val.refused)+len(val.warnings) != 0 {
			b.Fatalf("%d objects, %v, %d findings", n, err, len(val.refused)+len(val.warnings))
		}
	}
}

func TestAFieldPathReadsBackIntoItsSteps(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"spec.ports[0].port", "spec.ports[0].port"},
		{"metadata.labels", "metadata.labels"},
		{"spec.ingress[2].from[10].ipBlock.except[0]", "spec.ingress[2].from[10].ipBlock.except[0]"},
		{"data[key.with.dots]", "data.key.with.dots"},
	} {
		if got := pathOfField(c.in).Dotted(); got != c.want {
			t.Errorf("pathOfField(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func FuzzPathOfField(f *testing.F) {
	for _, s := range []string{"spec.ports[0].port", "a[", "a]b", "[[0]]", "x[-1]", ".", "a..b[1][2]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := pathOfField(s)
		for _, e := range p {
			if e.IsIndex() && e.Index < 0 {
				t.Fatalf("%q gives a negative index", s)
			}
		}
		// What it reads from a path it printed, it reads again the same.
		if q := pathOfField(p.Dotted()); q.Dotted() != p.Dotted() && !strings.ContainsAny(s, ".[]") {
			t.Fatalf("%q: %q reads back as %q", s, p.Dotted(), q.Dotted())
		}
	})
}

func TestAListOfRefusalsIsCutAfterTwenty(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 25; i++ {
		b.WriteString("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: Bad" + itoa(i) + "}\n")
	}
	_, err := loadStdin(b.String(), ValidateWarn)
	var r *Refusals
	if !errors.As(err, &r) || len(r.Errors) != 25 {
		t.Fatalf("got %v", err)
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 21 || lines[20] != "… and 5 more" {
		t.Errorf("%d lines, last %q", len(lines), lines[len(lines)-1])
	}
}

func TestCalicoChecksOnCRDObjectsAreWarnings(t *testing.T) {
	text := `apiVersion: crd.projectcalico.org/v1
kind: IPPool
metadata: {name: a}
spec: {cidr: 10.0.0.0/16, blockSize: 40}
---
apiVersion: crd.projectcalico.org/v1
kind: IPPool
metadata: {name: b}
spec: {cidr: 10.0.0.0/8}
`
	s, err := loadStdin(text, ValidateWarn)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"<stdin>:4 (document 1): IPPool a: spec.blockSize: Invalid value: 40: IPv4 block size must be between 20 and 32 (Calico's API server refuses this; a crd.projectcalico.org object is stored without its checks)",
		`<stdin>:9 (document 2): IPPool b: spec.cidr: Invalid value: "10.0.0.0/8": IPPool(b) CIDR overlaps with IPPool(a) CIDR 10.0.0.0/16 (Calico's API server refuses this; a crd.projectcalico.org object is stored without its checks)`,
	}
	if strings.Join(s.Warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings\n got: %q\nwant: %q", s.Warnings, want)
	}
	// The name is the API server's check, made for CRDs too.
	_, err = loadStdin("apiVersion: crd.projectcalico.org/v1\nkind: IPPool\nmetadata: {name: A_B}\nspec: {cidr: 10.0.0.0/16}\n", ValidateWarn)
	if err == nil || !strings.Contains(err.Error(), "metadata.name: Invalid value") {
		t.Errorf("got %v", err)
	}
}

func TestPodsTheAPIServerJudgesAloneDoNotStopTheLoad(t *testing.T) {
	for _, c := range []struct {
		name, text string
		check      func(t *testing.T, snap *model.Snapshot)
	}{
		{"a pod whose quantity does not parse is kept as the server's BadRequest", `apiVersion: v1
kind: Pod
metadata: {name: x, namespace: demo}
spec:
  containers:
  - name: web
    image: nginx
    resources: {limits: {memory: lots}}
`, func(t *testing.T, snap *model.Snapshot) {
			bad, ok := snap.Objects[0].Typed.(*model.Undecodable)
			if !ok {
				t.Fatalf("typed %T, want *model.Undecodable", snap.Objects[0].Typed)
			}
			want := `Pod in version "v1" cannot be handled as a Pod: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`
			if bad.Err.Error() != want || !apierrors.IsBadRequest(bad.Err) {
				t.Errorf("error %q, want the BadRequest %q", bad.Err, want)
			}
		}},
		{"a pod with only generateName gets a generated name", `apiVersion: v1
kind: Pod
metadata: {generateName: web-, namespace: demo}
spec: {containers: [{name: web, image: nginx}]}
`, func(t *testing.T, snap *model.Snapshot) {
			pod := snap.Objects[0].Typed.(*corev1.Pod)
			if !names.IsGenerated(pod.Name, "web-") || snap.Objects[0].Key.Name != pod.Name {
				t.Errorf("name %q, key %s: want a generated web-xxxxx in both", pod.Name, snap.Objects[0].Key)
			}
		}},
		{"a pod with a bad name and label is left to admission", `apiVersion: v1
kind: Pod
metadata: {name: Web_1, namespace: demo, labels: {"bad key": x}}
spec: {containers: [{name: web, image: nginx}]}
`, func(t *testing.T, snap *model.Snapshot) {
			if _, ok := snap.Objects[0].Typed.(*corev1.Pod); !ok {
				t.Errorf("typed %T", snap.Objects[0].Typed)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			snap, err := loadStdin(c.text, ValidateStrict)
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, snap)
		})
	}
}

func TestTheSameGenerateNameDocumentAlwaysGetsTheSameName(t *testing.T) {
	doc := "apiVersion: v1\nkind: Pod\nmetadata: {generateName: web-}\nspec: {containers: [{name: a, image: b}]}\n"
	a, err := loadStdin(doc, ValidateWarn)
	if err != nil {
		t.Fatal(err)
	}
	b, err := loadStdin(doc, ValidateWarn)
	if err != nil {
		t.Fatal(err)
	}
	if a.Objects[0].Key != b.Objects[0].Key {
		t.Errorf("%s and %s", a.Objects[0].Key, b.Objects[0].Key)
	}
	json := `{"apiVersion":"v1","kind":"Pod","metadata":{"generateName":"web-"},"spec":{"containers":[{"name":"a","image":"b"}]}}`
	j, err := loadStdin(json, ValidateWarn)
	if err != nil {
		t.Fatal(err)
	}
	if pod := j.Objects[0].Typed.(*corev1.Pod); !names.IsGenerated(pod.Name, "web-") {
		t.Errorf("a JSON document's pod is named %q", pod.Name)
	}
}

func TestTwoCopiesOfAGenerateNameDocumentGetTwoNames(t *testing.T) {
	doc := "apiVersion: v1\nkind: Pod\nmetadata: {generateName: web-}\nspec: {containers: [{name: a, image: b}]}\n"
	snap, err := loadStdin(doc+"---\n"+doc, ValidateWarn)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Objects) != 2 || snap.Objects[0].Key == snap.Objects[1].Key {
		t.Errorf("objects %d, keys %v and %v: want two pods with two names", len(snap.Objects), snap.Objects[0].Key, snap.Objects[len(snap.Objects)-1].Key)
	}
}
