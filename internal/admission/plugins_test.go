package admission

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The expected texts are those of the plugins' sources (cited in
// plugins.go), checked against kube-apiserver v1.37.2 by the integration
// corpus (test/integration/testdata/pods/admission-plugins.yaml).
func TestMutatingPluginsRefuseAsTheAPIServer(t *testing.T) {
	active := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}
	terminating := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "demo"}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}
	pc := func(name string, value int32, def bool) *schedulingv1.PriorityClass {
		return &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value, GlobalDefault: def}
	}
	classes := append(SystemPriorityClasses(), pc("high", 1000, false))
	accounts := func(names ...string) func(string) bool {
		return func(n string) bool {
			for _, x := range names {
				if x == n {
					return true
				}
			}
			return false
		}
	}
	cases := []struct {
		name  string
		admit func(p *corev1.Pod) error
		pod   func(p *corev1.Pod)
		want  string
	}{
		{"a pod in a missing namespace is not found",
			func(p *corev1.Pod) error { return AdmitNamespace(p, nil) }, nil,
			`Error from server (NotFound): namespaces "demo" not found`},
		{"a pod in a terminating namespace is forbidden",
			func(p *corev1.Pod) error { return AdmitNamespace(p, terminating) }, nil,
			`Error from server (Forbidden): pods "hello" is forbidden: unable to create new content in namespace demo because it is being terminated`},
		{"a pod in an active namespace is admitted",
			func(p *corev1.Pod) error { return AdmitNamespace(p, active) }, nil, ""},
		{"a missing service account is refused",
			func(p *corev1.Pod) error { return AdmitServiceAccount(p, accounts("default")) },
			func(p *corev1.Pod) { p.Spec.ServiceAccountName = "builder" },
			`Error from server (Forbidden): pods "hello" is forbidden: error looking up service account demo/builder: serviceaccount "builder" not found`},
		{"a generateName pod is named by its prefix at mutating admission",
			func(p *corev1.Pod) error { return AdmitServiceAccount(p, accounts()) },
			func(p *corev1.Pod) { p.Name, p.GenerateName, p.Spec.ServiceAccountName = "", "hello-", "builder" },
			`Error from server (Forbidden): pods "hello-" is forbidden: error looking up service account demo/builder: serviceaccount "builder" not found`},
		{"the default service account is taken to exist",
			func(p *corev1.Pod) error { return AdmitServiceAccount(p, accounts()) }, nil, ""},
		{"a service account the caller cannot judge is taken to exist",
			func(p *corev1.Pod) error { return AdmitServiceAccount(p, nil) },
			func(p *corev1.Pod) { p.Spec.ServiceAccountName = "builder" }, ""},
		{"a missing PriorityClass is refused",
			func(p *corev1.Pod) error { return AdmitPriority(p, classes) },
			func(p *corev1.Pod) { p.Spec.PriorityClassName = "urgent" },
			`Error from server (Forbidden): pods "hello" is forbidden: no PriorityClass with name urgent was found`},
		{"a built-in PriorityClass is found",
			func(p *corev1.Pod) error { return AdmitPriority(p, classes) },
			func(p *corev1.Pod) { p.Spec.PriorityClassName = "system-node-critical" }, ""},
		{"a priority the client sets that differs from its class is refused",
			func(p *corev1.Pod) error { return AdmitPriority(p, classes) },
			func(p *corev1.Pod) { p.Spec.PriorityClassName, p.Spec.Priority = "high", ptr.To(int32(5)) },
			`Error from server (Forbidden): pods "hello" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name`},
		{"a priority without a class must be zero",
			func(p *corev1.Pod) error { return AdmitPriority(p, classes) },
			func(p *corev1.Pod) { p.Spec.Priority = ptr.To(int32(7)) },
			`Error from server (Forbidden): pods "hello" is forbidden: the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name`},
		{"a preemption policy that differs from its class is refused",
			func(p *corev1.Pod) error { return AdmitPriority(p, classes) },
			func(p *corev1.Pod) { p.Spec.PreemptionPolicy = ptr.To(corev1.PreemptNever) },
			`Error from server (Forbidden): pods "hello" is forbidden: the string value of PreemptionPolicy (Never) must not be provided in pod spec; priority admission controller computed PreemptLowerPriority from the given PriorityClass name`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := helloPod()
			p.Name, p.Namespace = "hello", "demo"
			if c.pod != nil {
				c.pod(p)
			}
			got := ""
			if err := c.admit(p); err != nil {
				got = FormatError(err)
			}
			want := c.want
			if want != "" {
				want += "\n"
			}
			if got != want {
				t.Errorf("got  %q\nwant %q", got, want)
			}
		})
	}
}

func TestPluginsWriteWhatTheyResolve(t *testing.T) {
	p := helloPod()
	if err := AdmitServiceAccount(p, nil); err != nil || p.Spec.ServiceAccountName != "default" {
		t.Errorf("serviceAccountName %q (%v), want default", p.Spec.ServiceAccountName, err)
	}
	def := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "low"}, Value: -5, GlobalDefault: true,
		PreemptionPolicy: ptr.To(corev1.PreemptNever)}
	other := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "lower"}, Value: 10, GlobalDefault: true}
	if err := AdmitPriority(p, append(SystemPriorityClasses(), other, def)); err != nil {
		t.Fatal(err)
	}
	if p.Spec.PriorityClassName != "low" || *p.Spec.Priority != -5 || *p.Spec.PreemptionPolicy != corev1.PreemptNever {
		t.Errorf("class %q priority %d policy %s: want the default class of lowest value", p.Spec.PriorityClassName, *p.Spec.Priority, *p.Spec.PreemptionPolicy)
	}
	q := helloPod()
	q.Spec.PriorityClassName = "system-cluster-critical"
	if err := AdmitPriority(q, SystemPriorityClasses()); err != nil || *q.Spec.Priority != 2000000000 {
		t.Errorf("priority %v (%v), want 2000000000", q.Spec.Priority, err)
	}
}

func TestPodCreateValidationListsMetadataBeforeSpec(t *testing.T) {
	p := helloPod()
	p.Name = "Hello_1"
	p.Labels = map[string]string{"bad key": "x"}
	p.Spec.Containers[0].Image = ""
	errs := ValidatePodCreate(p, DefaultOptions())
	var got []string
	for _, e := range errs {
		got = append(got, e.Field)
	}
	want := []string{"metadata.name", "metadata.labels", "spec.containers[0].image"}
	if len(got) != len(want) {
		t.Fatalf("fields %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("fields %q, want %q", got, want)
		}
	}
}
