package load

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// loadEither loads data from stdin with Raw dropped, decoding directly or
// through the generic values.
func loadEither(data []byte, mode Validation, direct bool) (*model.Snapshot, error) {
	saved := directDecoding
	directDecoding = direct
	defer func() { directDecoding = saved }()
	return Load(Options{Filenames: []string{"-"}, Stdin: bytes.NewReader(data), DropRaw: true, Validation: mode})
}

// sameLoad reports how two loads of one input differ ("" when they do not).
func sameLoad(a *model.Snapshot, aerr error, b *model.Snapshot, berr error) string {
	if (aerr == nil) != (berr == nil) || aerr != nil && aerr.Error() != berr.Error() {
		return "errors differ:\n direct: " + errText(aerr) + "\ngeneric: " + errText(berr)
	}
	var ar, br *Refusals
	if errors.As(aerr, &ar) && errors.As(berr, &br) && !reflect.DeepEqual(ar.Warnings, br.Warnings) {
		return "refusals' warnings differ:\n direct: " + strings.Join(ar.Warnings, "\n") + "\ngeneric: " + strings.Join(br.Warnings, "\n")
	}
	if aerr != nil {
		return ""
	}
	if !reflect.DeepEqual(a.Warnings, b.Warnings) {
		return "warnings differ:\n direct: " + strings.Join(a.Warnings, "\n") + "\ngeneric: " + strings.Join(b.Warnings, "\n")
	}
	if len(a.Objects) != len(b.Objects) {
		return "object counts differ"
	}
	for i := range a.Objects {
		x, y := a.Objects[i], b.Objects[i]
		if x.Key != y.Key || x.GVK != y.GVK || x.Origin != y.Origin {
			return "object " + x.Origin.String() + " " + x.Key.String() + " is " + y.Origin.String() + " " + y.Key.String()
		}
		if !reflect.DeepEqual(x.Typed, y.Typed) || !reflect.DeepEqual(x.Raw, y.Raw) {
			xt, _ := json.Marshal(x.Typed)
			yt, _ := json.Marshal(y.Typed)
			return "object " + x.Key.String() + " differs:\n direct: " + string(xt) + "\ngeneric: " + string(yt)
		}
	}
	return ""
}

func errText(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

// asJSONList is the objects of a YAML or JSON input as one JSON List, as
// kubectl get -o json prints them (nil when it does not load).
func asJSONList(data []byte) []byte {
	s, err := Load(Options{Filenames: []string{"-"}, Stdin: bytes.NewReader(data), Validation: ValidateIgnore})
	if err != nil {
		return nil
	}
	items := make([]any, 0, len(s.Objects))
	for _, o := range s.Objects {
		items = append(items, o.Raw)
	}
	out, err := json.MarshalIndent(map[string]any{"apiVersion": "v1", "kind": "List", "items": items}, "", "  ")
	if err != nil {
		return nil
	}
	return out
}

const directPod = `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "namespace": "demo", "labels": {"app": "a"}},
 "spec": {"containers": [{"name": "c", "image": "busybox", "ports": [{"containerPort": 80}]}]},
 "status": {"podIP": "10.0.0.1"}}`

func TestDirectDecodingGivesWhatTheGenericPathGives(t *testing.T) {
	tests := []struct{ name, input string }{
		{"an ordinary pod", directPod},
		{"a stream of two objects", directPod + "\n" + strings.Replace(directPod, `"a"`, `"b"`, 1)},
		{"an unknown field in metadata and one in a container", `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "colour": "red"},
 "spec": {"containers": [{"name": "c", "image": "b", "imagePullPolcy": "Always"}]}}`},
		{"a field that differs from a declared one by case", `{"apiVersion": "projectcalico.org/v3", "kind": "IPPool", "metadata": {"name": "p"},
 "spec": {"cidr": "10.60.0.0/16", "blocksize": 24, "someCalicoField": 1}}`},
		{"a key given twice, an object first", `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"},
 "spec": {"containers": [{"name": "c", "image": "b", "x": 1}]}, "spec": {"containers": [{"name": "c", "image": "b"}]}}`},
		{"a key given twice, an object last", `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"},
 "spec": 1, "spec": {"containers": [{"name": "c", "image": "b", "x": 1}]}}`},
		{"metadata given twice", `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}, "metadata": {"name": "b"}, "spec": {"containers": [{"name": "c", "image": "b"}]}}`},
		{"the name given twice", `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "name": "b"}}`},
		{"an unknown key given twice", `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "x": 1, "x": 2}}`},
		{"a key with an escape", `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "label\u0073": {"a": "b"}}}`},
		{"a kind with an escape", `{"apiVersion": "v1", "kind": "Config\u004dap", "metadata": {"name": "a"}}`},
		{"bytes that are not UTF-8", "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"a\xff\"}}"},
		{"a generated name", `{"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "w-"}, "spec": {"containers": [{"name": "c", "image": "b"}]}}`},
		{"no name", `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}`},
		{"a name that is not a string", `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": 1}}`},
		{"null metadata", `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": null}`},
		{"a kind not modeled", `{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "a"}}`},
		{"a cluster-scoped kind with a namespace", `{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n", "namespace": "x"}}`},
		{"typed list items without apiVersion and kind", `{"apiVersion": "v1", "kind": "PodList", "items": [{"metadata": {"name": "a"}, "spec": {"containers": [{"name": "c", "image": "b"}]}}]}`},
		{"a value of the wrong type", `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}, "spec": {"containers": [{"name": "c", "image": "b", "ports": [{"containerPort": "80"}]}]}}`},
		{"a quantity that does not parse", `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}, "spec": {"containers": [{"name": "c", "image": "b", "resources": {"limits": {"cpu": "lots"}}}]}}`},
		{"an address that does not parse", `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}, "spec": {"containers": [{"name": "c", "image": "b"}]}, "status": {"podIP": "10.0.0.300"}}`},
		{"a refused object", `{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "S_1"}, "spec": {"ports": [{"port": 80, "nodePort": 5}], "type": "NodePort"}}`},
		{"a kubelet configuration keeps its generic value", `{"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration", "metadata": {"name": "k"}, "maxPods": 20}`},
		{"a what-if marker", `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "annotations": {"hybrid.kubectl.io/delete": "true"}}}`},
		{"YAML: an ordinary pod", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  namespace: demo\nspec:\n  containers:\n  - name: c\n    image: b\n    ports:\n    - containerPort: 80\n"},
		{"YAML: an alias", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: &n a\n  labels: {x: *n}\n"},
		{"YAML: a merge key", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  <<: {a: b}\n  c: d\n"},
		{"YAML: a key given twice", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {a: b, a: c}\n"},
		{"YAML: a key that is a list", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {[a]: b}\n"},
		{"YAML: bools, numbers and tags", "apiVersion: v1\nkind: Pod\nmetadata: {name: a, labels: {a: !!str 1, b: \"yes\"}}\nspec:\n  hostNetwork: yes\n  priority: 0x10\n  terminationGracePeriodSeconds: 1_000\n  containers: [{name: c, image: b, ports: [{containerPort: 8_0}]}]\n"},
		{"YAML: a float where an integer is declared", "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {priority: 1.5e3, containers: [{name: c, image: b}]}\n"},
		{"YAML: a bool that is not one", "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {hostNetwork: !!bool maybe, containers: [{name: c, image: b}]}\n"},
		{"YAML: an infinite float", "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {priority: .inf, containers: [{name: c, image: b}]}\n"},
		{"YAML: block scalars and escapes", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  a: |\n    line \"one\"\n    \\two\n  b: \"\\t\\u0001\\xff\"\n"},
		{"YAML: keys that differ by case only", "apiVersion: projectcalico.org/v3\nkind: IPPool\nmetadata: {name: p}\nspec: {cidr: 10.60.0.0/16, blocksize: 24, blockSize: 26}\n"},
		{"YAML: a typed list", "apiVersion: v1\nkind: PodList\nitems:\n- metadata: {name: a}\n  spec: {containers: [{name: c, image: b}]}\n"},
		{"YAML: an unknown field with a quoted key", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, \"a\\\"b\": 1}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, mode := range []Validation{ValidateWarn, ValidateStrict, ValidateIgnore} {
				a, aerr := loadEither([]byte(tt.input), mode, true)
				b, berr := loadEither([]byte(tt.input), mode, false)
				if d := sameLoad(a, aerr, b, berr); d != "" {
					t.Errorf("mode %d: %s", mode, d)
				}
			}
		})
	}
}

func TestDirectDecodingOfEveryTestInputGivesWhatTheGenericPathGives(t *testing.T) {
	var files []string
	for _, pattern := range []string{"testdata/*/*", "testdata/dir/*/*", "testdata/good-dirs/*/*"} {
		m, _ := filepath.Glob(pattern)
		files = append(files, m...)
	}
	n := 0
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			continue // a directory
		}
		inputs := [][]byte{data}
		if j := asJSONList(data); j != nil {
			inputs = append(inputs, j)
		}
		for i, in := range inputs {
			a, aerr := loadEither(in, ValidateWarn, true)
			b, berr := loadEither(in, ValidateWarn, false)
			if d := sameLoad(a, aerr, b, berr); d != "" {
				t.Errorf("%s (input %d): %s", name, i, d)
			}
			n++
		}
	}
	if n < 20 {
		t.Fatalf("only %d inputs compared", n)
	}
}

func TestDirectDecodingAllocatesLessThanTheGenericPass(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`{"apiVersion": "v1", "kind": "List", "items": [`)
	for i := 0; i < 200; i++ {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString(strings.Replace(directPod, `"name": "a"`, `"name": "a`+strconv.Itoa(i)+`"`, 1))
	}
	b.WriteString("]}")
	data := b.Bytes()
	allocs := func(direct bool) float64 {
		return testing.AllocsPerRun(3, func() {
			s, err := loadEither(data, ValidateWarn, direct)
			if err != nil || len(s.Objects) != 200 {
				t.Fatalf("%v, %d objects", err, len(s.Objects))
			}
		})
	}
	d, g := allocs(true), allocs(false)
	if d > 0.7*g {
		t.Errorf("direct decoding made %.0f allocations, the generic pass %.0f: the direct path was not taken", d, g)
	}
}

func TestDirectDecodingOfYAMLAllocatesLessThanTheGenericPass(t *testing.T) {
	data := pods(200)
	allocs := func(direct bool) float64 {
		return testing.AllocsPerRun(3, func() {
			s, err := loadEither(data, ValidateWarn, direct)
			if err != nil || len(s.Objects) != 200 {
				t.Fatalf("%v, %d objects", err, len(s.Objects))
			}
		})
	}
	d, g := allocs(true), allocs(false)
	if d > 0.96*g { // the YAML parser's nodes are most of them
		t.Errorf("direct decoding made %.0f allocations, the generic pass %.0f: the direct path was not taken", d, g)
	}
}

// FuzzDirect checks that decoding directly gives what decoding through the
// generic values gives: the same objects, warnings and errors.
func FuzzDirect(f *testing.F) {
	addSeeds(f)
	f.Add([]byte(directPod))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, aerr := loadEither(data, ValidateWarn, true)
		b, berr := loadEither(data, ValidateWarn, false)
		if d := sameLoad(a, aerr, b, berr); d != "" {
			t.Fatal(d)
		}
	})
}
