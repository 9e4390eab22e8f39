package scheduler

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// randomCluster is nodes of both OSes with taints, labels, sizes, a cordon
// or a NotReady condition here and there.
func randomCluster(r *rand.Rand, n int) []*corev1.Node {
	var nodes []*corev1.Node
	for i := 0; i < n; i++ {
		os := "linux"
		var taints []corev1.Taint
		if r.Intn(4) == 0 {
			os = "windows"
			taints = append(taints, windowsTaint)
		}
		if r.Intn(10) == 0 {
			taints = append(taints, controlPlaneTaint)
		}
		if r.Intn(8) == 0 {
			taints = append(taints, corev1.Taint{Key: "maintenance", Effect: corev1.TaintEffectPreferNoSchedule})
		}
		cpu := []string{"2", "4", "8"}[r.Intn(3)]
		mem := []string{"4Gi", "8Gi", "16Gi"}[r.Intn(3)]
		pods := []int64{8, 20, 110}[r.Intn(3)]
		nd := labNode(fmt.Sprintf("node-%02d", r.Intn(n*2)), os, cpu, mem, pods, taints...)
		nd.Labels["zone"] = []string{"a", "b", "c"}[r.Intn(3)]
		if r.Intn(5) == 0 {
			nd.Status.Allocatable["example.com/gpu"] = *resource.NewQuantity(int64(r.Intn(3)), resource.DecimalSI)
		}
		switch r.Intn(15) {
		case 0:
			nd.Spec.Unschedulable = true
		case 1:
			nd.Status.Conditions[0].Status = corev1.ConditionFalse
		}
		nodes = append(nodes, nd)
	}
	// Some clusters list a node twice or hold a nil entry.
	if r.Intn(5) == 0 {
		nodes = append(nodes, nodes[0])
	}
	if r.Intn(5) == 0 {
		nodes = append(nodes, nil)
	}
	return nodes
}

// randomTemplate is a pod spec as a controller would stamp it out.
func randomTemplate(r *rand.Rand) corev1.PodSpec {
	cpu := []string{"", "100m", "250m", "1", "3"}[r.Intn(5)]
	mem := []string{"", "64Mi", "512Mi", "2Gi"}[r.Intn(4)]
	c := corev1.Container{Name: "app", Image: "app", Resources: requests(cpu, mem)}
	if r.Intn(8) == 0 {
		c.Resources.Requests["example.com/gpu"] = resource.MustParse("1")
	}
	if r.Intn(8) == 0 {
		c.Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: int32(8080 + r.Intn(2))}}
	}
	spec := corev1.PodSpec{Containers: []corev1.Container{c}}
	if r.Intn(3) == 0 {
		spec.NodeSelector = map[string]string{"kubernetes.io/os": "windows"}
		spec.Tolerations = []corev1.Toleration{windowsToleration}
	}
	if r.Intn(6) == 0 {
		spec.Tolerations = append(spec.Tolerations, corev1.Toleration{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists})
	}
	if r.Intn(6) == 0 {
		spec.Tolerations = append(spec.Tolerations, corev1.Toleration{Key: "maintenance", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectPreferNoSchedule})
	}
	if r.Intn(5) == 0 {
		spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}
		if r.Intn(2) == 0 {
			spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"c"}}},
			}}}
		}
		spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = []corev1.PreferredSchedulingTerm{{
			Weight: int32(1 + r.Intn(50)), Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}},
		}}
	}
	if r.Intn(6) == 0 {
		spec.Priority = ptr.To(int32(r.Intn(3) * 1000))
	}
	return spec
}

// TestSchedulerMatchesSchedule places random workloads on random clusters
// with the Scheduler's ranked path and with scheduleRanked, each with its
// own State: every placement and every FitError (message, details,
// nomination) must agree.
func TestSchedulerMatchesSchedule(t *testing.T) {
	defer func(v int) { maxLeftOut = v }(maxLeftOut)
	defer func(v int) { exactLimit = v }(exactLimit)
	exactLimit = 0 // the ranked path on every cluster
	// Owners' nodes left out of the shape trees, owner trees for all, and
	// a mix.
	for _, maxLeftOut = range []int{64, 0, 3} {
		schedulerMatchesSchedule(t)
	}
}

func schedulerMatchesSchedule(t *testing.T) {
	placed, failed := 0, 0
	for seed := int64(1); seed <= 40; seed++ {
		r := rand.New(rand.NewSource(seed))
		nodes := randomCluster(r, 3+r.Intn(25))
		ref, st := NewState(), NewState()
		s := NewScheduler(nodes, st)
		var templates []corev1.PodSpec
		for k := 0; k < 12; k++ {
			templates = append(templates, randomTemplate(r))
		}
		// Pods already running count before anything is placed.
		for k := 0; k < r.Intn(10); k++ {
			nd := nodes[r.Intn(len(nodes))]
			if nd == nil {
				continue
			}
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: fmt.Sprint("running-", k)}, Spec: *templates[r.Intn(len(templates))].DeepCopy()}
			ref.Add(p, nd.Name)
			st.Add(p, nd.Name)
		}
		for k := 0; k < 300; k++ {
			// Replicas of one owner mostly come in runs; now and then an
			// unowned pod or another owner's replica interleaves.
			owner := (k / 7) % 9
			if r.Intn(6) == 0 {
				owner = r.Intn(9)
			}
			spec := templates[owner%len(templates)].DeepCopy()
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: fmt.Sprint("p-", k), Labels: map[string]string{"app": fmt.Sprint(owner)}}, Spec: *spec}
			switch r.Intn(12) {
			case 0:
				// no owner: grouped by its labels
			case 1:
				p.Spec.NodeName = "node-00"
			default:
				p.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: fmt.Sprint("rs-", owner), Controller: ptr.To(true)}}
			}
			wantNode, wantFE := scheduleRanked(p, nodes, ref)
			gotNode, gotFE := s.Schedule(p)
			if gotNode != wantNode {
				t.Fatalf("maxLeftOut %d, seed %d pod %d: Scheduler placed on %q, Schedule on %q", maxLeftOut, seed, k, gotNode, wantNode)
			}
			if (gotFE == nil) != (wantFE == nil) {
				t.Fatalf("seed %d pod %d: FitError %v, Schedule's %v", seed, k, gotFE, wantFE)
			}
			if wantFE != nil {
				failed++
				if gotFE.Error() != wantFE.Error() || !reflect.DeepEqual(gotFE.Details, wantFE.Details) ||
					gotFE.NominatedNode != wantFE.NominatedNode || !reflect.DeepEqual(gotFE.Victims, wantFE.Victims) {
					t.Fatalf("seed %d pod %d: FitError\n got: %v\nwant: %v", seed, k, gotFE, wantFE)
				}
				continue
			}
			placed++
			ref.Add(p, wantNode)
			st.Add(p, gotNode)
		}
	}
	if placed < 700 || failed < 70 {
		t.Errorf("placed %d, failed %d: the random clusters should exercise both", placed, failed)
	}
}

// TestStaticKeyCoversTheFieldsItReads fails when the API types grow a field
// that staticKey does not encode yet.
func TestStaticKeyCoversTheFieldsItReads(t *testing.T) {
	for _, c := range []struct {
		v    any
		want int
	}{
		{corev1.Toleration{}, 5},
		{corev1.NodeAffinity{}, 2},
		{corev1.NodeSelector{}, 1},
		{corev1.NodeSelectorTerm{}, 2},
		{corev1.NodeSelectorRequirement{}, 3},
		{corev1.PreferredSchedulingTerm{}, 2},
	} {
		if n := reflect.TypeOf(c.v).NumField(); n != c.want {
			t.Errorf("%T has %d fields, staticKey encodes %d", c.v, n, c.want)
		}
	}
}
