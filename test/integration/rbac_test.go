package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// auditEvent is the part of an audit.k8s.io/v1 Event the tests read.
type auditEvent struct {
	Stage      string `json:"stage"`
	RequestURI string `json:"requestURI"`
	Verb       string `json:"verb"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		APIGroup    string `json:"apiGroup"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// auditEvents reads the audit log once it has stopped growing (the log
// backend writes each event as its request completes).
func auditEvents(t *testing.T, path string) []auditEvent {
	t.Helper()
	var last int64 = -1
	for i := 0; i < 50; i++ {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() == last {
			break
		}
		last = fi.Size()
		time.Sleep(200 * time.Millisecond)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []auditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e auditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("audit log: %v", err)
		}
		if e.Stage == "ResponseComplete" {
			out = append(out, e)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

const readerUser = "system:serviceaccount:kubectl-hybrid:kubectl-hybrid"

// granted reads deploy/rbac.yaml's ClusterRole: group/resource → verbs.
func granted(t *testing.T) map[string][]string {
	t.Helper()
	objs, err := readObjects(filepath.Join("..", "..", "deploy", "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, o := range objs {
		if o.GetKind() != "ClusterRole" {
			continue
		}
		data, _ := json.Marshal(o.Object["rules"])
		var rules []struct {
			APIGroups []string `json:"apiGroups"`
			Resources []string `json:"resources"`
			Verbs     []string `json:"verbs"`
		}
		if err := yaml.Unmarshal(data, &rules); err != nil {
			t.Fatal(err)
		}
		for _, r := range rules {
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					out[g+"/"+res] = r.Verbs
				}
			}
		}
	}
	return out
}

// TestReaderRoleIsEnough runs the command lines as the ServiceAccount that
// deploy/rbac.yaml binds, and as a cluster admin: same output. The audit
// log then shows what the tool asked for: no Secret, no watch, nothing but
// get and list, nothing refused, and only what the ClusterRole names.
func TestReaderRoleIsEnough(t *testing.T) {
	ctx := context.Background()
	for _, c := range commands {
		args := c.args
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			admin := hybrid(ctx, withInput(args, "--kubeconfig", env.admin)...)
			reader := hybrid(ctx, withInput(args, "--kubeconfig", env.reader)...)
			compare(t, args, "admin", admin, "reader", reader)
		})
	}
	dumpAdmin := hybrid(ctx, "dump", "--kubeconfig", env.admin)
	dumpReader := hybrid(ctx, "dump", "--kubeconfig", env.reader)
	if dumpReader.code != 0 || dumpReader.stderr != "" {
		t.Errorf("dump as the reader: %s", dumpReader)
	}
	if dumpAdmin.stdout != dumpReader.stdout {
		t.Errorf("the reader's dump differs from the admin's:\n%s", diff("admin", dumpAdmin.stdout, "reader", dumpReader.stdout))
	}

	grants := granted(t)
	listed := map[string]bool{}
	requests := map[string]int{}
	for _, e := range auditEvents(t, env.lab.AuditLog) {
		if e.User.Username != readerUser && e.User.Username != "admin" {
			continue
		}
		requests[e.User.Username]++
		if e.ObjectRef == nil {
			continue // discovery: /api, /apis/GROUP/VERSION
		}
		res := e.ObjectRef.APIGroup + "/" + e.ObjectRef.Resource
		if e.ObjectRef.Resource == "secrets" {
			t.Errorf("%s read a Secret: %s %s", e.User.Username, e.Verb, e.RequestURI)
		}
		if e.Verb != "list" && e.Verb != "get" {
			t.Errorf("%s: %s %s; the tool only gets and lists", e.User.Username, e.Verb, e.RequestURI)
		}
		if e.User.Username != readerUser {
			continue
		}
		if e.ResponseStatus != nil && e.ResponseStatus.Code >= 400 {
			t.Errorf("the reader was refused (%d): %s %s", e.ResponseStatus.Code, e.Verb, e.RequestURI)
		}
		if v, ok := grants[res]; !ok || !contains(v, e.Verb) {
			t.Errorf("the reader did %s %s, which deploy/rbac.yaml does not grant", e.Verb, res)
		}
		listed[res] = true
	}
	if requests[readerUser] == 0 || requests["admin"] == 0 {
		t.Fatalf("the audit log has no requests of the tool: %v", requests)
	}
	// Everything the role grants that the lab cluster serves was read.
	var unused []string
	for res := range grants {
		if !listed[res] {
			unused = append(unused, res)
		}
	}
	sort.Strings(unused)
	want := "crd.projectcalico.org/bgpconfigurations crd.projectcalico.org/blockaffinities crd.projectcalico.org/felixconfigurations crd.projectcalico.org/globalnetworkpolicies crd.projectcalico.org/ipamblocks crd.projectcalico.org/ipamconfigs crd.projectcalico.org/ipamconfigurations crd.projectcalico.org/ippools crd.projectcalico.org/networkpolicies projectcalico.org/ipamconfigs"
	if got := strings.Join(unused, " "); got != want {
		t.Errorf("granted but not read (the lab cluster serves Calico's kinds from projectcalico.org/v3 only):\n got %s\nwant %s", got, want)
	}
	t.Logf("audit: %d requests as the reader, %d as admin; none for Secrets", requests[readerUser], requests["admin"])
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestForbiddenKindIsSkipped: a user who may read only some kinds gets a
// warning for each other kind, and an answer from the rest.
func TestForbiddenKindIsSkipped(t *testing.T) {
	// The reader's token, with the apiserver's own discovery and nothing
	// else, is what an unbound ServiceAccount has.
	ctx := context.Background()
	c, err := newClient(env.lab.loader())
	if err != nil {
		t.Fatal(err)
	}
	sa := `apiVersion: v1
kind: ServiceAccount
metadata:
  name: nobody
  namespace: kubectl-hybrid
`
	path := filepath.Join(t.TempDir(), "nobody.yaml")
	if err := os.WriteFile(path, []byte(sa), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.applyFile(ctx, path); err != nil {
		t.Fatal(err)
	}
	token, err := serviceAccountToken(ctx, c, "kubectl-hybrid", "nobody")
	if err != nil {
		t.Fatal(err)
	}
	kc := env.lab.kubeconfig("nobody", token)
	r := hybrid(ctx, "get", "nodes", "--kubeconfig", kc)
	if r.code != 0 {
		t.Fatalf("a user who may read nothing: %s", r)
	}
	if !strings.Contains(r.stderr, `Warning: not read: nodes: nodes is forbidden: User "system:serviceaccount:kubectl-hybrid:nobody" cannot list resource "nodes" in API group "" at the cluster scope`) {
		t.Errorf("stderr lacks the warning for nodes:\n%s", r.stderr)
	}
	if strings.Contains(r.stderr, "secrets") {
		t.Errorf("stderr mentions secrets:\n%s", r.stderr)
	}
	if r.stdout != "No resources found\n" && !strings.Contains(r.stdout+r.stderr, "No resources found") {
		t.Errorf("stdout %q", r.stdout)
	}
}
