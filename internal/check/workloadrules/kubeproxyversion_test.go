package workloadrules

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/rule"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

func TestTheWindowsKubeProxyFixNeverPinsAVersionNewerThanTheCluster(t *testing.T) {
	node := func(name, kubelet string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KubeletVersion: kubelet}}}
	}
	proxy := func(image string) *appsv1.DaemonSet {
		ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "kube-proxy", Namespace: "kube-system"}}
		ds.Spec.Template.Spec.Containers = []corev1.Container{{Name: "kube-proxy", Image: image}}
		return ds
	}
	cases := []struct {
		name    string
		cluster *model.Cluster
		want    string
	}{
		{"the Linux kube-proxy's tag", &model.Cluster{DaemonSets: []*appsv1.DaemonSet{proxy("registry.k8s.io/kube-proxy:v1.34.2")}, Nodes: []*corev1.Node{node("a", "v1.34.2")}}, "v1.34.2"},
		{"the oldest kubelet without a kube-proxy", &model.Cluster{Nodes: []*corev1.Node{node("a", "v1.34.2"), node("b", "v1.33.5")}}, "v1.33.5"},
		{"a kube-proxy image without a tag falls to the kubelets", &model.Cluster{DaemonSets: []*appsv1.DaemonSet{proxy("registry.k8s.io/kube-proxy")}, Nodes: []*corev1.Node{node("a", "v1.34.1")}}, "v1.34.1"},
		{"nothing says: a placeholder, no pinned version", &model.Cluster{}, "<cluster version>"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := clusterKubeProxyVersion(&rule.Context{Cluster: tc.cluster}); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestFixTextsKeepAngleBracketsAsTyped(t *testing.T) {
	w := &rule.Workload{Key: model.Key{Group: "apps", Kind: "Deployment", Namespace: "win", Name: "app"}}
	got := podSpecPatch(w, map[string]any{"runtimeClassName": "<a Windows RuntimeClass>"})
	want := `kubectl -n win patch deployment app --type=merge -p '{"spec":{"template":{"spec":{"runtimeClassName":"<a Windows RuntimeClass>"}}}}'`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
