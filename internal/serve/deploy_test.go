package serve

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

func readDocs(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(data), "\n---\n")
}

// deploy/serve.yaml runs serve as deploy/rbac.yaml's ServiceAccount,
// listening where its Service and probes look.
func TestTheDeploymentServesAsTheReadOnlyAccount(t *testing.T) {
	docs := readDocs(t, "../../deploy/serve.yaml")
	if len(docs) != 2 {
		t.Fatalf("%d documents, want a Deployment and a Service", len(docs))
	}
	var d appsv1.Deployment
	var svc corev1.Service
	if err := yaml.UnmarshalStrict([]byte(docs[0]), &d); err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict([]byte(docs[1]), &svc); err != nil {
		t.Fatal(err)
	}
	var sa corev1.ServiceAccount
	for _, doc := range readDocs(t, "../../deploy/rbac.yaml") {
		var o corev1.ServiceAccount
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatal(err)
		}
		if o.Kind == "ServiceAccount" {
			sa = o
		}
	}
	spec := d.Spec.Template.Spec
	if spec.ServiceAccountName != sa.Name || d.Namespace != sa.Namespace || svc.Namespace != sa.Namespace {
		t.Errorf("the Deployment runs as %s/%s, deploy/rbac.yaml binds %s/%s", d.Namespace, spec.ServiceAccountName, sa.Namespace, sa.Name)
	}
	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers", len(spec.Containers))
	}
	c := spec.Containers[0]
	i := slices.Index(c.Args, "--listen")
	if len(c.Args) == 0 || c.Args[0] != "serve" || i < 0 || i+1 >= len(c.Args) {
		t.Fatalf("args %v: want serve --listen ADDR", c.Args)
	}
	if len(c.Ports) != 1 || !strings.HasSuffix(c.Args[i+1], ":"+itoa32(c.Ports[0].ContainerPort)) {
		t.Errorf("listens on %s, the container port is %v", c.Args[i+1], c.Ports)
	}
	if svc.Spec.Ports[0].TargetPort.StrVal != c.Ports[0].Name {
		t.Errorf("the Service targets %v, the port is named %s", svc.Spec.Ports[0].TargetPort, c.Ports[0].Name)
	}
	for _, p := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe} {
		if p == nil || p.HTTPGet == nil || !servedPath(p.HTTPGet.Path) {
			t.Errorf("a probe on a path serve does not answer: %+v", p)
		}
	}
	for k, v := range svc.Spec.Selector {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("the Service selects %s=%s, which the pods do not carry", k, v)
		}
	}
}

func servedPath(p string) bool {
	for _, r := range Routes() {
		if r.Pattern == p && r.Method == "GET" {
			return true
		}
	}
	return false
}

func itoa32(n int32) string { return strconv.Itoa(int(n)) }

// Every metric the example alerts read is one serve writes.
func TestTheExampleAlertsReadMetricsServeWrites(t *testing.T) {
	var rule struct {
		Kind string `json:"kind"`
		Spec struct {
			Groups []struct {
				Rules []struct {
					Alert string `json:"alert"`
					Expr  string `json:"expr"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}
	data, err := os.ReadFile("../../deploy/prometheusrule.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &rule); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := lab(t).WriteMetrics(&b); err != nil {
		t.Fatal(err)
	}
	metric := regexp.MustCompile(`kubectl_hybrid_[a-z_]+`)
	n := 0
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			for _, m := range metric.FindAllString(r.Expr, -1) {
				n++
				if !strings.Contains(b.String(), "# TYPE "+m+" ") {
					t.Errorf("alert %s reads %s, which serve does not write", r.Alert, m)
				}
			}
		}
	}
	if rule.Kind != "PrometheusRule" || n == 0 {
		t.Errorf("no PrometheusRule reading serve's metrics")
	}
}
