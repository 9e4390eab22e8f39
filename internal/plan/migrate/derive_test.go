package migrate

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/diff"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plan"
)

// Each step's twin is derived from the previous step's (engine.Derive); it
// must be exactly the twin a full Build of the step's snapshot gives: every
// object list, note, event, rejection and origin. The generated cluster's
// observed workload pods are reused from the previous twin; the main
// cluster's pods are all the twin's own (derived) and are built again.
func TestEachStepsDerivedTwinEqualsTheFullBuildOfItsSnapshot(t *testing.T) {
	for _, tc := range []struct {
		name      string
		in        func(t *testing.T) plan.Input
		minShared int // pods shared with the previous twin, at least, in some step
	}{
		{"the main cluster's migration", func(t *testing.T) plan.Input { return input(t, false, mainCluster) }, 0},
		{"a generated 50-node cluster's migration", func(t *testing.T) plan.Input {
			snap := beforeMigration(t, 50)
			c, err := engine.Build(snap)
			if err != nil {
				t.Fatal(err)
			}
			return plan.Input{Cluster: c, Snapshot: snap}
		}, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in(t)
			m, err := Compute(in, Request{Diff: diff.Options{NoReach: true}})
			if err != nil {
				t.Fatal(err)
			}
			snap, prev := in.Snapshot, in.Cluster
			compared, mostShared := 0, 0
			for _, st := range m.Steps {
				if st.Cluster == nil {
					continue
				}
				objs, err := plan.Decode(st.File, st.Body)
				if err != nil {
					t.Fatal(err)
				}
				snap = plan.Layer(snap, objs...)
				full, err := engine.Build(snap)
				if err != nil {
					t.Fatal(err)
				}
				if d := firstDifference(full, st.Cluster); d != "" {
					t.Errorf("step %s: the derived twin differs from the full build in %s", st.ID, d)
				}
				mostShared = max(mostShared, sharedPods(prev, st.Cluster))
				if tc.minShared > 0 && (shared(prev.Deployments, st.Cluster.Deployments) == 0 || shared(prev.ReplicaSets, st.Cluster.ReplicaSets) == 0 || shared(prev.EndpointSlices, st.Cluster.EndpointSlices) == 0) {
					t.Errorf("step %s: no Deployment, ReplicaSet or EndpointSlice shared with the previous twin", st.ID)
				}
				prev = st.Cluster
				compared++
			}
			if compared != 5 {
				t.Fatalf("%d steps compared, want 5", compared)
			}
			if mostShared < tc.minShared {
				t.Errorf("at most %d pods shared with the previous twin in a step, want at least %d: the steps were built, not derived", mostShared, tc.minShared)
			}
			if d := firstDifference(m.Final, prev); d != "" {
				t.Errorf("the plan's final twin is not its last step's: %s", d)
			}
		})
	}
}

// sharedPods counts the pods two twins hold as the same object.
func sharedPods(a, b *model.Cluster) int { return shared(a.Pods, b.Pods) }

// shared counts the objects two lists hold as the same pointer.
func shared[T comparable](a, b []T) int {
	in := make(map[T]bool, len(a))
	for _, p := range a {
		in[p] = true
	}
	n := 0
	for _, p := range b {
		if in[p] {
			n++
		}
	}
	return n
}

// firstDifference names the first field of the twins that differs, with
// both values as JSON (clipped), or "" when they are deep-equal.
func firstDifference(a, b *model.Cluster) string {
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	for i := 0; i < va.NumField(); i++ {
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			ja, _ := json.Marshal(va.Field(i).Interface())
			jb, _ := json.Marshal(vb.Field(i).Interface())
			return va.Type().Field(i).Name + ":\n" + clipped(ja) + "\n" + clipped(jb)
		}
	}
	if !reflect.DeepEqual(a, b) {
		return "(no single field)"
	}
	return ""
}

func clipped(b []byte) string {
	if len(b) > 1500 {
		return string(b[:1500]) + "…"
	}
	return string(b)
}

// A panic in the derivations' goroutine (here in what runs after the last
// step) is sent to the comparisons' goroutine, which raises it again for
// the command's recover, and nothing follows it.
func TestAPanicInTheDerivationsGoroutineIsSentOnAsTheNextTwin(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	twins := deriveTwins(nil, nil, nil, stop, func(*model.Cluster) { panic("boom") })
	d, ok := <-twins
	if !ok || d.crashed == nil {
		t.Fatalf("got %+v (open %v), want the panic", d, ok)
	}
	if fmt.Sprint(d.crashed.Value) != "boom" || !strings.Contains(string(d.crashed.Stack), "deriveTwins") {
		t.Errorf("panic %v with stack\n%s\nwant boom raised under deriveTwins", d.crashed.Value, d.crashed.Stack)
	}
	if d, ok := <-twins; ok {
		t.Errorf("after the panic: %+v", d)
	}
}
