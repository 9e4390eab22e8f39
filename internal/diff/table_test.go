package diff

import (
	"bytes"
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

func TestLinesAreTheSetDifferenceOfTwoLists(t *testing.T) {
	tests := []struct {
		name string
		a, b []string
		want Lines
	}{
		{"the same entries in another order are no difference", []string{"x", "y"}, []string{"y", "x"}, Lines{}},
		{"an entry only after is added", []string{"x"}, []string{"x", "y"}, Lines{Added: []string{"y"}}},
		{"an entry only before is removed", []string{"x", "y"}, []string{"y"}, Lines{Removed: []string{"x"}}},
		{"a repeated entry counts as often as it appears", []string{"x", "x"}, []string{"x"}, Lines{Removed: []string{"x"}}},
		{"both sides' own entries are sorted", []string{"d", "c"}, []string{"b", "a"}, Lines{Added: []string{"a", "b"}, Removed: []string{"c", "d"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := lines(tt.a, tt.b); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func pod(name, image string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}},
	}
}

func TestFieldChangesNameTheChangedLeavesByPath(t *testing.T) {
	stamped := pod("p", "a")
	stamped.CreationTimestamp = metav1.Unix(1, 0)
	withEnv := pod("p", "a")
	withEnv.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "X", Value: "1"}}
	twoEnv := pod("p", "a")
	twoEnv.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "X", Value: "1"}, {Name: "Y", Value: "2"}}
	oneArg := pod("p", "a")
	oneArg.Spec.Containers[0].Args = []string{"-q"}
	withArgs := pod("p", "a")
	withArgs.Spec.Containers[0].Args = []string{"-q", "-v"}
	annotated := pod("p", "a")
	annotated.Annotations = map[string]string{"example.com/x": "1"}
	reannotated := pod("p", "a")
	reannotated.Annotations = map[string]string{"example.com/x": "2"}
	tests := []struct {
		name string
		a, b any
		want []FieldChange
	}{
		{"a changed image is one field with both values, its container named", pod("p", "a"), pod("p", "b"),
			[]FieldChange{{Path: "spec.containers[name=c].image", Before: "a", After: "b"}}},
		{"the creation timestamp the twin stamps is not a change", pod("p", "a"), stamped, nil},
		{"a field only after is added", pod("p", "a"), withEnv,
			[]FieldChange{{Path: "spec.containers[name=c].env", After: `[{"name":"X","value":"1"}]`}}},
		{"a named element only after is added by its name", withEnv, twoEnv,
			[]FieldChange{{Path: "spec.containers[name=c].env[name=Y]", After: `{"name":"Y","value":"2"}`}}},
		{"a list without names that grows lists the elements it gains", oneArg, withArgs,
			[]FieldChange{{Path: "spec.containers[name=c].args[]", After: "-v"}}},
		{"a map only after is added whole", pod("p", "a"), annotated,
			[]FieldChange{{Path: "metadata.annotations", After: `{"example.com/x":"1"}`}}},
		{"a key with dots is bracketed", annotated, reannotated,
			[]FieldChange{{Path: "metadata.annotations[example.com/x]", Before: "1", After: "2"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fieldChanges(tt.a, tt.b); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func ds(image string, strategy appsv1.DaemonSetUpdateStrategyType) *appsv1.DaemonSet {
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "ns"},
		Spec: appsv1.DaemonSetSpec{
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: strategy},
			Template:       corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}}},
		},
	}
}

func dsPod(name string) *corev1.Pod {
	p := pod(name, "a")
	yes := true
	p.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet", Name: "agent", Controller: &yes}}
	return p
}

func TestAWorkloadsRolloutRestartsItsPodsUnlessItsStrategyIsOnDelete(t *testing.T) {
	pods := []*corev1.Pod{dsPod("agent-b"), dsPod("agent-a"), pod("other", "a")}
	tests := []struct {
		name         string
		before       *appsv1.DaemonSet
		after        *appsv1.DaemonSet
		wantChange   bool
		wantRestarts []string
	}{
		{"an unchanged template rolls nothing", ds("a", appsv1.RollingUpdateDaemonSetStrategyType), ds("a", appsv1.RollingUpdateDaemonSetStrategyType), false, nil},
		{"a new image rolls every pod of the DaemonSet", ds("a", appsv1.RollingUpdateDaemonSetStrategyType), ds("b", appsv1.RollingUpdateDaemonSetStrategyType), true, []string{"ns/agent-a", "ns/agent-b"}},
		{"with OnDelete the pods keep the old template", ds("a", appsv1.OnDeleteDaemonSetStrategyType), ds("b", appsv1.OnDeleteDaemonSetStrategyType), true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &model.Cluster{DaemonSets: []*appsv1.DaemonSet{tt.before}, Pods: pods}
			b := &model.Cluster{DaemonSets: []*appsv1.DaemonSet{tt.after}, Pods: pods}
			got := compareWorkloads(a, b, newDigest(a, nil), newDigest(b, nil))
			if !tt.wantChange {
				if len(got) != 0 {
					t.Fatalf("got %+v, want no change", got)
				}
				return
			}
			if len(got) != 1 || got[0].Change != Changed {
				t.Fatalf("got %+v, want one changed workload", got)
			}
			if !reflect.DeepEqual(got[0].Restarts, tt.wantRestarts) {
				t.Errorf("restarts %q, want %q", got[0].Restarts, tt.wantRestarts)
			}
		})
	}
}

func status(name string, conds ...operator.TigeraStatusCondition) *operator.TigeraStatus {
	s := &operator.TigeraStatus{ObjectMeta: metav1.ObjectMeta{Name: name}}
	s.Status.Conditions = conds
	return s
}

func TestTigeraStatusDifferencesAreTheirConditions(t *testing.T) {
	avail := operator.TigeraStatusCondition{Type: "Available", Status: "True"}
	degraded := operator.TigeraStatusCondition{Type: "Degraded", Status: "True", Reason: "ResourceReadError", Message: "bad"}
	tests := []struct {
		name string
		a, b []*operator.TigeraStatus
		want []StatusDiff
	}{
		{"the same conditions are no difference", []*operator.TigeraStatus{status("calico", avail)}, []*operator.TigeraStatus{status("calico", avail)}, nil},
		{"a new condition is listed with the old ones", []*operator.TigeraStatus{status("calico", avail)}, []*operator.TigeraStatus{status("calico", degraded)},
			[]StatusDiff{{Name: "calico", Before: []string{"Available=True"}, After: []string{"Degraded=True ResourceReadError: bad"}}}},
		{"a status only after has no before", nil, []*operator.TigeraStatus{status("ippools", avail)},
			[]StatusDiff{{Name: "ippools", After: []string{"Available=True"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := compareTigeraStatus(&model.Cluster{TigeraStatuses: tt.a}, &model.Cluster{TigeraStatuses: tt.b})
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestReachRowsAreMatchedThroughTheKeysBothSidesHold(t *testing.T) {
	tests := []struct {
		name         string
		a, b         map[string]int
		want         []matched
		onlyA, onlyB int
	}{
		{"one class on both sides is one pair", map[string]int{"ns/p": 0, "ns/q": 0}, map[string]int{"ns/p": 3, "ns/q": 3},
			[]matched{{a: 0, b: 3, keys: []string{"ns/p", "ns/q"}}}, 0, 0},
		{"a class split in two is two pairs", map[string]int{"ns/p": 0, "ns/q": 0}, map[string]int{"ns/p": 1, "ns/q": 2},
			[]matched{{a: 0, b: 1, keys: []string{"ns/p"}}, {a: 0, b: 2, keys: []string{"ns/q"}}}, 0, 0},
		{"keys only one side has are counted, not matched", map[string]int{"ns/p": 0, "ns/gone": 1}, map[string]int{"ns/p": 0, "ns/new": 1},
			[]matched{{a: 0, b: 0, keys: []string{"ns/p"}}}, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, oa, ob := match(tt.a, tt.b)
			if !reflect.DeepEqual(got, tt.want) || oa != tt.onlyA || ob != tt.onlyB {
				t.Errorf("got %+v %d %d, want %+v %d %d", got, oa, ob, tt.want, tt.onlyA, tt.onlyB)
			}
		})
	}
}

func TestRulesThatOnlyMovedWithinAChainAreNamed(t *testing.T) {
	a := &state{os: "linux", kp: []string{"r1", "r2"}, chains: map[string][]string{"ip kube-proxy chain services": {"r1", "r2"}}}
	b := &state{os: "linux", kp: []string{"r2", "r1"}, chains: map[string][]string{"ip kube-proxy chain services": {"r2", "r1"}}}
	d := diffState("n", a, b)
	if d == nil || !reflect.DeepEqual(d.RulesReordered, []string{"ip kube-proxy chain services"}) || !d.KubeProxy.Empty() {
		t.Fatalf("got %+v, want the chain named as reordered and no rule added or removed", d)
	}
	if diffState("n", a, a) != nil {
		t.Fatal("a node compared with itself differs")
	}
}

func TestTwinsWithTheSameNetworkInputsAreNotCompiled(t *testing.T) {
	a, b := NewTwin(build(t, true)), NewTwin(build(t, true))
	r, err := CompareTwins(a, b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Empty() || a.eng != nil || b.eng != nil {
		t.Fatalf("empty %v, engines made: %v %v; want no difference and nothing compiled", r.Empty(), a.eng != nil, b.eng != nil)
	}
}

func TestTheSameComparisonGivesTheSameJSON(t *testing.T) {
	base := build(t, true)
	next := build(t, true, "../../examples/actions/drain-k8s-lab-node-1.yaml")
	var out [2]bytes.Buffer
	for i := range out {
		r, err := Compare(base, next, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.WriteJSON(&out[i]); err != nil {
			t.Fatal(err)
		}
	}
	if out[0].String() != out[1].String() {
		t.Fatal("two comparisons of the same twins printed different JSON")
	}
}
