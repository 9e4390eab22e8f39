package classes

import (
	"maps"
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/policy"
)

func runningPod(name, ip, app string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": app}},
		Spec:       corev1.PodSpec{NodeName: "node-1"},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip},
	}
}

// A class key reads the labels Calico selectors see from the pod's Felix
// endpoint, which must be the pod's own: a pod whose address an earlier
// pod holds, or that Felix does not know, has its own labels.
func TestTheCalicoLabelsOfAPodAreItsOwn(t *testing.T) {
	first := runningPod("first", "10.0.0.1", "a")
	second := runningPod("second", "10.0.0.1", "b") // the same address
	stranger := runningPod("stranger", "10.0.0.9", "c")
	calc := felix.New(&model.Cluster{Pods: []*corev1.Pod{first, second}})
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
	}{
		{"the pod holding the address", first},
		{"a pod sharing an earlier pod's address", second},
		{"a pod Felix does not know", stranger},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := EndpointOf(calc, tc.pod).Labels
			if want := felix.PodLabels(tc.pod); !maps.Equal(got, want) {
				t.Errorf("labels %v, want %v", got, want)
			}
		})
	}
}

// A pod's label signature is computed once per set of labels (its Felix
// endpoint's LabelSet), and anew where the set does not say it all: a
// test on the pod's workload, or a pod whose address an earlier pod holds.
func TestALabelSignatureIsReusedOnlyForPodsItDescribes(t *testing.T) {
	owned := func(p *corev1.Pod, owner string) *corev1.Pod {
		p.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: owner}}
		return p
	}
	appB := LabelTest{K8s: labels.SelectorFromSet(labels.Set{"app": "b"})}
	ownerX := LabelTest{Pod: func(p *corev1.Pod) bool { return p.OwnerReferences[0].Name == "x" }}
	for _, tc := range []struct {
		name   string
		pods   []*corev1.Pod
		tests  []LabelTest
		wantEq bool
	}{
		{"two replicas with equal labels", []*corev1.Pod{runningPod("r1", "10.0.0.1", "a"), runningPod("r2", "10.0.0.2", "a")}, []LabelTest{appB}, true},
		{"equal labels, workloads a filter tells apart", []*corev1.Pod{owned(runningPod("x1", "10.0.0.1", "a"), "x"), owned(runningPod("y1", "10.0.0.2", "a"), "y")}, []LabelTest{ownerX}, false},
		{"a pod on an earlier pod's address", []*corev1.Pod{runningPod("first", "10.0.0.1", "a"), runningPod("second", "10.0.0.1", "b")}, []LabelTest{appB}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calc := felix.New(&model.Cluster{Pods: tc.pods})
			s := labelSigs{calc: calc, memo: map[int32][]byte{}}
			var sigs []string
			for _, p := range tc.pods {
				ip := netip.MustParseAddr(p.Status.PodIP)
				got := string(s.append(nil, p, ip, tc.tests, hasPodTest(tc.tests)))
				want := string(AppendLabelSig(nil, p, tc.tests, felix.PodLabels(p)))
				if got != want {
					t.Errorf("%s: signature %q, want %q", p.Name, got, want)
				}
				sigs = append(sigs, got)
			}
			if eq := sigs[0] == sigs[1]; eq != tc.wantEq {
				t.Errorf("signatures %q: equal %t, want %t", sigs, eq, tc.wantEq)
			}
		})
	}
}

// A class key parses each ipBlock once; it matches an address as
// NetworkPolicy's ipBlock does (policy.IPBlockMatches).
func TestAParsedIPBlockMatchesAsTheNetworkPolicyOne(t *testing.T) {
	addrs := []string{"10.0.0.1", "10.0.1.7", "10.0.2.1", "192.168.0.1"}
	for _, tc := range []struct {
		name string
		b    networkingv1.IPBlock
	}{
		{"a CIDR", networkingv1.IPBlock{CIDR: "10.0.0.0/16"}},
		{"a CIDR with an except", networkingv1.IPBlock{CIDR: "10.0.0.0/16", Except: []string{"10.0.1.0/24"}}},
		{"an except that does not parse excepts nothing", networkingv1.IPBlock{CIDR: "10.0.0.0/16", Except: []string{"bad", "10.0.2.0/24"}}},
		{"a CIDR that does not parse matches nothing", networkingv1.IPBlock{CIDR: "10.0.0.0/33"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := parseIPBlock(&tc.b)
			for _, s := range addrs {
				ip := netip.MustParseAddr(s)
				if got, want := b.matches(ip), policy.IPBlockMatches(&tc.b, ip); got != want {
					t.Errorf("%s: matches %t, want %t", s, got, want)
				}
			}
		})
	}
}
