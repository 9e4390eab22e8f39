package engine

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine/controllers"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// A derivation takes the ReplicaSet hashes the previous build read from
// its pods only when its own pods name the same controllers: a pod now
// owned by another ReplicaSet of its Deployment (the last one read gives
// the Deployment's hash) makes them read again.
func TestTheReplicaSetHashesAreReadAgainWhenAPodsReplicaSetChanged(t *testing.T) {
	tests := []struct {
		name  string
		move  bool
		taken bool
	}{
		{"pods that name the same controllers take the previous hashes", false, true},
		{"a pod moved to another ReplicaSet makes them read again", true, false},
	}
	base := smallGenSnapshot(t)
	prev, err := Build(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			next := layer(base, bgpOff(t, base))
			if tc.move {
				// The last pod owned by a ReplicaSet, moved to another
				// hash of the same Deployment.
				var last *model.Object
				for _, o := range next.Objects {
					if p, ok := o.Typed.(*corev1.Pod); ok {
						if kind, _ := controllers.ControllerOf(p); kind == "ReplicaSet" {
							last = o
						}
					}
				}
				if last == nil {
					t.Fatal("no pod owned by a ReplicaSet: the case does not test the guard")
				}
				cp := *last
				p := last.Typed.(*corev1.Pod).DeepCopy()
				for i, r := range p.OwnerReferences {
					if r.Kind == "ReplicaSet" {
						p.OwnerReferences[i].Name = r.Name[:strings.LastIndex(r.Name, "-")] + "-5d8f7c9b6"
					}
				}
				cp.Typed, cp.Raw = p, nil
				next = layer(next, &cp)
			}
			derived, err := Derive(prev, base, next)
			if err != nil {
				t.Fatal(err)
			}
			was, now := recall(prev), recall(derived)
			if was == nil || now == nil || was.rsHashes == nil || now.rsHashes == nil {
				t.Fatal("no ReplicaSet hashes kept: the case does not test the guard")
			}
			if got := reflect.ValueOf(now.rsHashes).UnsafePointer() == reflect.ValueOf(was.rsHashes).UnsafePointer(); got != tc.taken {
				t.Errorf("the derivation took the previous hashes: %v, want %v", got, tc.taken)
			}
			full, err := Build(next)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(derived, full) {
				t.Error("the derived twin differs from the full build")
			}
		})
	}
}
