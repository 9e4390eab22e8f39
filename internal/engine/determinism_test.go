package engine_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

func TestBuildIsDeterministic(t *testing.T) {
	tests := []struct {
		name  string
		lab   bool
		files []string
	}{
		{name: "the lab", lab: true},
		{name: "the lab with 61 aspnetapp replicas filling the Windows block", lab: true, files: []string{whatIfBlockFull}},
		{name: "the lab without strictAffinity", lab: true, files: []string{whatIfNoStrictAffinity}},
		{name: "the plain objects", files: []string{examplesPlain}},
	}
	for _, tt := range tests {
		t.Run(tt.name+": two loads and Builds give deep-equal Clusters", func(t *testing.T) {
			a := build(t, snapshot(t, tt.lab, tt.files...))
			b := build(t, snapshot(t, tt.lab, tt.files...))
			if !reflect.DeepEqual(a, b) {
				t.Errorf("two Builds differ:\n%s", firstDifference(t, a, b))
			}
		})
		t.Run(tt.name+": Build leaves its snapshot as it was", func(t *testing.T) {
			s := snapshot(t, tt.lab, tt.files...)
			before := snapshotJSON(t, s)
			first := build(t, s)
			if after := snapshotJSON(t, s); after != before {
				t.Errorf("Build changed its input snapshot")
			}
			if second := build(t, s); !reflect.DeepEqual(first, second) {
				t.Errorf("two Builds of one snapshot differ:\n%s", firstDifference(t, first, second))
			}
		})
	}
}

func snapshotJSON(t *testing.T, s *model.Snapshot) string {
	t.Helper()
	var typed []any
	for _, o := range s.Objects {
		typed = append(typed, o.Typed)
	}
	b, err := json.Marshal(typed)
	if err != nil {
		t.Fatalf("marshal snapshot: %v", err)
	}
	return string(b)
}

// firstDifference names the first top-level field of Cluster that differs.
func firstDifference(t *testing.T, a, b *model.Cluster) string {
	t.Helper()
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	for i := 0; i < va.NumField(); i++ {
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			ja, _ := json.Marshal(va.Field(i).Interface())
			jb, _ := json.Marshal(vb.Field(i).Interface())
			return va.Type().Field(i).Name + ":\n" + clip(string(ja)) + "\n" + clip(string(jb))
		}
	}
	return "(no field differs)"
}

func clip(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "…"
	}
	return s
}
