package load

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load/rawdoc"
)

// randomGeneric is a value of the kinds the YAML converter makes.
func randomGeneric(r *rand.Rand, depth int) any {
	strs := []string{"", "a", "nodeName", "NodeName", "<b>&amp;</b>", "tab\there", "nl\n\r", "\x00\x01\x1f\x7f",
		"quote\"back\\slash", "bad\xffutf8\xc3", "\u2028\u2029", "日本語", "é"}
	switch k := r.Intn(10); {
	case k == 0:
		return nil
	case k == 1:
		return r.Intn(2) == 0
	case k == 2:
		return []int64{0, -1, math.MaxInt64, math.MinInt64, 42}[r.Intn(5)]
	case k == 3:
		return []uint64{math.MaxUint64, 1 << 63}[r.Intn(2)]
	case k == 4:
		return []float64{0, math.Copysign(0, -1), 3, 1.5, 1e21, 1e20, 1e-6, 1e-7, -2.5e-9, 123456789.125, math.MaxFloat64, math.SmallestNonzeroFloat64}[r.Intn(12)]
	case k <= 6 || depth > 3:
		return strs[r.Intn(len(strs))]
	case k == 7:
		var out []any
		for i := r.Intn(4); i > 0; i-- {
			out = append(out, randomGeneric(r, depth+1))
		}
		if out == nil && r.Intn(2) == 0 {
			return []any{}
		}
		return out
	}
	m := map[string]any{}
	for i := r.Intn(5); i > 0; i-- {
		m[strs[r.Intn(len(strs))]] = randomGeneric(r, depth+1)
	}
	return m
}

// TestMarshalGenericIsJSONMarshal: the text decodes to what json.Marshal's
// text decodes to, generically and into a typed object.
func TestMarshalGenericIsJSONMarshal(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	check := func(v any) {
		t.Helper()
		want, werr := json.Marshal(v)
		got, gerr := rawdoc.MarshalGeneric(nil, v)
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("%#v: error %v, json.Marshal's %v", v, gerr, werr)
		}
		if werr != nil {
			return
		}
		var a, b any
		if err := json.Unmarshal(got, &a); err != nil {
			t.Fatalf("%#v: %s does not decode: %v", v, got, err)
		}
		json.Unmarshal(want, &b)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%#v:\n got: %s\nwant: %s", v, got, want)
		}
		// Same keys in the same order: identical once re-encoded.
		ra, _ := json.Marshal(a)
		rb, _ := json.Marshal(b)
		if !bytes.Equal(ra, rb) {
			t.Fatalf("%#v: %s, want %s", v, ra, rb)
		}
		var pa, pb corev1.Pod
		ea, eb := json.Unmarshal(got, &pa), json.Unmarshal(want, &pb)
		if (ea == nil) != (eb == nil) || !reflect.DeepEqual(pa, pb) {
			t.Fatalf("%#v: as a Pod %v %+v, want %v %+v", v, ea, pa, eb, pb)
		}
	}
	for i := 0; i < 5000; i++ {
		check(randomGeneric(r, 0))
	}
	// A pod whose spec names nodeName twice in two spellings: the later
	// key in sorted order wins in both.
	check(map[string]any{"spec": map[string]any{"nodeName": "a", "NodeName": "b", "NODENAME": "c"}})
	check(map[string]any{"x": math.Inf(1)})
	check(map[string]any{"x": []any{map[string]any{"b": 1.0, "a": map[string]any{"d": nil, "c": []any{}}}}})
	var nilMap map[string]any
	check(nilMap)
	check(map[string]any{"a": nilMap})
	check(struct{ A int }{1}) // not a generic value: json.Marshal
}

// TestMarshalGenericOnTheTestdata decodes every test manifest's objects
// through both encoders.
func TestMarshalGenericOnTheTestdata(t *testing.T) {
	files, _ := filepath.Glob("testdata/good/*.yaml")
	if len(files) == 0 {
		t.Fatal("no test manifests")
	}
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := DecodeDocuments(strings.NewReader(string(data)), f)
		if err != nil {
			continue
		}
		for _, o := range objs {
			want, _ := json.Marshal(o.Raw)
			got, err := rawdoc.MarshalGeneric(nil, o.Raw)
			if err != nil {
				t.Fatal(err)
			}
			var a, b any
			json.Unmarshal(got, &a)
			json.Unmarshal(want, &b)
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("%s %s:\n got: %s\nwant: %s", f, o.Key, got, want)
			}
			n++
		}
	}
	if n < 10 {
		t.Errorf("only %d objects compared", n)
	}
}
