package workloadrules

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/rule"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

func TestDottedServiceNames(t *testing.T) {
	c := &model.Cluster{Services: []*corev1.Service{{ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "demo"}}}}
	x := rule.NewContext(c, false, nil)
	cases := []struct {
		name string
		text string
		want []string
	}{
		{"a URL with name.namespace is reported", "http://hello.demo/healthz", []string{"hello.demo"}},
		{"name.namespace.svc is still partial", "hello.demo.svc:80", []string{"hello.demo.svc"}},
		{"the full name is fine", "http://hello.demo.svc.cluster.local/healthz", nil},
		{"the full name with a trailing dot is fine", "hello.demo.svc.cluster.local.", nil},
		{"a bare name without a dot is fine", "http://hello/", nil},
		{"a dotted name of no Service is not reported", "api.example.com", nil},
		{"a version number is not a name", "v1.2.3", nil},
		{"upper case is normalized", "HTTP://HELLO.DEMO/", []string{"hello.demo"}},
		{"two names in one value are both reported", "hello.demo,hello.demo.svc", []string{"hello.demo", "hello.demo.svc"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			scanText(x, tc.text, "cluster.local", func(tok, _ string) { got = append(got, tok) })
			if !slices.Equal(got, tc.want) {
				t.Errorf("scanText(%q) = %v, want %v", tc.text, got, tc.want)
			}
		})
	}
}
