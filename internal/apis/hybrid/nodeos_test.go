package hybrid

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestANodesOSIsItsLabelElseWhatTheKubeletReports(t *testing.T) {
	node := func(label, reported string) *corev1.Node {
		n := &corev1.Node{Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{OperatingSystem: reported}}}
		if label != "" {
			n.ObjectMeta = metav1.ObjectMeta{Labels: map[string]string{corev1.LabelOSStable: label}}
		}
		return n
	}
	for _, c := range []struct {
		name string
		n    *corev1.Node
		want string
	}{
		{"the label wins over the status", node(OSWindows, OSLinux), OSWindows},
		{"without the label the status answers", node("", OSWindows), OSWindows},
		{"with neither the OS is unknown", node("", ""), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := NodeOS(c.n); got != c.want {
				t.Errorf("NodeOS = %q, want %q", got, c.want)
			}
		})
	}
}
