package cli

import (
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"
)

// spellings writes the lab's Calico objects as a List three ways: all in
// projectcalico.org/v3; every other object in crd.projectcalico.org/v1 (the
// v1 CRD names IPAMConfiguration IPAMConfig); and every object in both
// groups, as a dump of a cluster with the Calico API server can hold them.
func spellings(t *testing.T, dump string) (v3, mixed, both string) {
	t.Helper()
	var list struct {
		APIVersion string           `json:"apiVersion"`
		Kind       string           `json:"kind"`
		Items      []map[string]any `json:"items"`
	}
	if err := yaml.Unmarshal([]byte(dump), &list); err != nil {
		t.Fatal(err)
	}
	toV1 := func(o map[string]any) map[string]any {
		c := map[string]any{}
		for k, v := range o {
			c[k] = v
		}
		c["apiVersion"] = "crd.projectcalico.org/v1"
		if c["kind"] == "IPAMConfiguration" {
			c["kind"] = "IPAMConfig"
		}
		return c
	}
	write := func(name string, items []map[string]any) string {
		b, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{"resourceVersion": ""}, "items": items})
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var m, b []map[string]any
	for i, o := range list.Items {
		if i%2 == 1 {
			m = append(m, toV1(o))
		} else {
			m = append(m, o)
		}
		b = append(b, toV1(o), o)
	}
	return write("v3.yaml", list.Items), write("mixed.yaml", m), write("both.yaml", b)
}

// The group an object is written in is a spelling: the lab with its Calico
// objects in one group, in a mix of both, or in both at once, gives the same
// answers.
func TestMixedCalicoGroupsGiveTheSameAnswersAsOneGroup(t *testing.T) {
	dump, errOut, code := run(t, "", "get", "ippools,ipamblocks,blockaffinities,ipamconfigurations,felixconfigurations", "-o", "yaml", "--lab")
	if code != 0 {
		t.Fatalf("dump failed (%d): %s", code, errOut)
	}
	v3, mixed, both := spellings(t, dump)
	commands := [][]string{
		{"get", "pods", "-A", "-o", "wide"},
		{"get", "deploy,ds", "-A"},
		{"get", "ippools,ipamblocks,blockaffinities,tigerastatus"},
		{"get", "routes"},
		{"get", "hnsendpoints"},
		{"check"},
		{"trace", "pod/win-demo/aspnetapp-769559d8ff-dkp9z", "pod/demo/hello-55fb8f8684-69mvv"},
		{"trace", "pod/demo/hello-55fb8f8684-nztv2", "pod/calico-system/calico-webhooks-648955b74-2m5p7"},
	}
	for _, args := range commands {
		want, wantErr, wantCode := run(t, "", append(args, "--lab", "-f", v3)...)
		if wantCode > ExitNegative {
			t.Fatalf("%v on the v3 spelling: exit %d: %s", args, wantCode, wantErr)
		}
		for _, in := range []struct{ name, file string }{{"a mix of both groups", mixed}, {"both groups at once", both}} {
			got, gotErr, gotCode := run(t, "", append(args, "--lab", "-f", in.file)...)
			if got != want || gotCode != wantCode {
				t.Errorf("%v with %s: exit %d (want %d), stderr %s\n%s", args, in.name, gotCode, wantCode, gotErr, lineDiff(want, got))
			}
		}
	}
}
