package engine_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	gennames "github.com/kubectl-hybrid/kubectl-hybrid/internal/names"
)

func TestAdmissionRefusals(t *testing.T) {
	tests := []struct {
		name string
		file string
		key  model.Key
		want string
	}{
		{
			name: "the seed's bad pod: Linux securityContext fields in a Windows pod are invalid",
			file: examplesBadPod,
			key:  podKey("win-demo", "bad"),
			want: "The Pod \"bad\" is invalid: \n" +
				"* spec.securityContext.seccompProfile: Forbidden: cannot be set for a windows pod\n" +
				"* spec.securityContext.runAsUser: Forbidden: cannot be set for a windows pod",
		},
		{
			name: "a Linux pod without a seccomp profile violates restricted in demo",
			file: "testdata/psa-no-seccomp.yaml",
			key:  podKey("demo", "no-seccomp"),
			want: `Error from server (Forbidden): pods "no-seccomp" is forbidden: violates PodSecurity "restricted:latest": ` +
				`seccompProfile (pod or container "hello" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`,
		},
		{
			name: "a HostProcess pod violates restricted:v1.37 in win-demo",
			file: "testdata/hostprocess-win-demo.yaml",
			key:  podKey("win-demo", "hostproc"),
			want: `Error from server (Forbidden): pods "hostproc" is forbidden: violates PodSecurity "restricted:v1.37": ` +
				`host namespaces (hostNetwork=true), ` +
				`hostProcess (pod must not set securityContext.windowsOptions.hostProcess=true), ` +
				`runAsNonRoot != true (pod or container "shell" must set securityContext.runAsNonRoot=true)`,
		},
	}
	lab := buildLab(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := buildLab(t, tt.file)
			if len(c.Rejected) != 1 {
				t.Fatalf("%d rejections %+v, want 1", len(c.Rejected), c.Rejected)
			}
			r := c.Rejected[0]
			if r.Key != tt.key {
				t.Errorf("rejected %v, want %v", r.Key, tt.key)
			}
			if r.Origin.File != tt.file {
				t.Errorf("rejection origin %q, want %q", r.Origin.File, tt.file)
			}
			if r.Message != tt.want {
				t.Errorf("message\n%q\nwant\n%q", r.Message, tt.want)
			}
			for _, p := range c.Pods {
				if p.Namespace == tt.key.Namespace && p.Name == tt.key.Name {
					t.Errorf("refused pod %s/%s is in the cluster", p.Namespace, p.Name)
				}
			}
			// The rest of the lab builds as without the refused pod.
			if got, want := podSummary(c), podSummary(lab); !reflect.DeepEqual(got, want) {
				t.Errorf("pods differ from the lab's:\n%v\nwant\n%v", got, want)
			}
			if got, want := blocksByNode(c), blocksByNode(lab); !reflect.DeepEqual(got, want) {
				t.Errorf("blocks %v, want the lab's %v", got, want)
			}
		})
	}
}

func TestTheLabItselfHasNoRefusals(t *testing.T) {
	c := buildLab(t)
	if len(c.Rejected) != 0 {
		t.Errorf("the lab has refusals: %+v", c.Rejected)
	}
	// Every lab pod runs: hello passes restricted, aspnetapp passes
	// restricted:v1.37 without a single warning (seed 000).
	for _, p := range c.Pods {
		if string(p.Status.Phase) != "Running" {
			t.Errorf("lab pod %s/%s is %s", p.Namespace, p.Name, p.Status.Phase)
		}
	}
	for _, n := range c.Notes {
		if n.Object.Namespace == "win-demo" || n.Object.Namespace == "demo" {
			t.Errorf("note on a lab workload: %v %s", n.Object, n.Message)
		}
	}
}

// podSummary is each pod's node and address.
func podSummary(c *model.Cluster) map[string]string {
	out := map[string]string{}
	for _, p := range c.Pods {
		out[p.Namespace+"/"+p.Name] = p.Spec.NodeName + " " + p.Status.PodIP + " " + string(p.Status.Phase)
	}
	return out
}

// A controller's pods are refused one by one; what a user sees is the
// controller's FailedCreate event, "Error creating: " and the API server's
// error (pkg/controller/controller_utils.go), not kubectl's rendering.
func TestControllerPodsRefusedByPodSecurity(t *testing.T) {
	tests := []struct {
		name      string
		file      string
		creator   string // the owner as the Rejection names it
		prefix    string // of the refused pods' names
		violation string
		check     func(t *testing.T, c *model.Cluster)
	}{
		{
			name:      "a Deployment without seccompProfile in demo gets no pods",
			file:      "testdata/deployment-no-seccomp.yaml",
			creator:   "ReplicaSet demo/hello-unconfined-",
			prefix:    "hello-unconfined-",
			violation: `violates PodSecurity "restricted:latest": seccompProfile (pod or container "hello" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`,
			check: func(t *testing.T, c *model.Cluster) {
				d := findDeployment(t, c, "demo", "hello-unconfined")
				if d.Status.Replicas != 0 || d.Status.ReadyReplicas != 0 {
					t.Errorf("Deployment status %+v, want no pods", d.Status)
				}
			},
		},
		{
			name:    "a privileged host-network DaemonSet in demo gets no pods",
			file:    "testdata/daemonset-restricted.yaml",
			creator: "DaemonSet demo/agent",
			prefix:  "agent-",
			violation: `violates PodSecurity "restricted:latest": host namespaces (hostNetwork=true), ` +
				`privileged (container "agent" must not set securityContext.privileged=true), ` +
				`allowPrivilegeEscalation != false (container "agent" must set securityContext.allowPrivilegeEscalation=false), ` +
				`unrestricted capabilities (container "agent" must set securityContext.capabilities.drop=["ALL"]), ` +
				`runAsNonRoot != true (pod or container "agent" must set securityContext.runAsNonRoot=true), ` +
				`seccompProfile (pod or container "agent" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`,
			check: func(t *testing.T, c *model.Cluster) {
				ds := findDaemonSet(t, c, "demo", "agent")
				// Desired counts the two untainted Linux workers; none was created.
				if ds.Status.DesiredNumberScheduled != 2 || ds.Status.CurrentNumberScheduled != 0 || ds.Status.NumberUnavailable != 2 {
					t.Errorf("DaemonSet status %+v, want desired 2, current 0, unavailable 2", ds.Status)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := buildLab(t, tt.file)
			if len(c.Rejected) != 2 {
				t.Fatalf("%d rejections %+v, want one per replica/node (2)", len(c.Rejected), c.Rejected)
			}
			for _, r := range c.Rejected {
				if r.Key.Kind != "Pod" || r.Key.Namespace != "demo" || !strings.HasPrefix(r.Key.Name, tt.prefix) {
					t.Errorf("rejected %v, want a demo/%s* pod", r.Key, tt.prefix)
					continue
				}
				if !strings.HasPrefix(r.Message, tt.creator) {
					t.Errorf("message %q does not start with %q", r.Message, tt.creator)
				}
				_, rest, _ := strings.Cut(r.Message, ": Error creating: ")
				want := `pods "` + r.Key.Name + `" is forbidden: ` + tt.violation
				if rest != want {
					t.Errorf("after %q:\n%q\nwant\n%q", "Error creating: ", rest, want)
				}
			}
			if pods := podsWithPrefix(c, "demo", tt.prefix); len(pods) != 0 {
				t.Errorf("refused pods in the cluster: %v", names(pods))
			}
			tt.check(t, c)
		})
	}
}

// Each stage of the API server's handling of a create refuses that pod
// alone, with the server's message; the other pods of the file are judged
// on their own.
func TestEachAdmissionStageRefusesOnlyItsPod(t *testing.T) {
	const file = "testdata/admission-plugins.yaml"
	c := buildLab(t, file)
	want := []struct {
		ns, name string
		message  string
	}{
		{"demo", "bad-quantity", `Error from server (BadRequest): Pod in version "v1" cannot be handled as a Pod: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`},
		{"nowhere", "lost", `Error from server (NotFound): namespaces "nowhere" not found`},
		{"demo", "urgent-", `Error from server (Forbidden): pods "urgent-" is forbidden: no PriorityClass with name urgent was found`},
		{"win-demo", "Bad_Name", `The Pod "Bad_Name" is invalid: ` + "\n" +
			`* metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')` + "\n" +
			`* metadata.labels: Invalid value: "bad key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')` + "\n" +
			`* spec.securityContext.runAsUser: Forbidden: cannot be set for a windows pod`},
	}
	if len(c.Rejected) != len(want) {
		t.Fatalf("%d rejections %+v, want %d", len(c.Rejected), c.Rejected, len(want))
	}
	for i, w := range want {
		r := c.Rejected[i]
		name := r.Key.Name
		if w.name == "urgent-" {
			if !gennames.IsGenerated(name, "urgent-") {
				t.Errorf("rejected %s, want a name generated from urgent-", r.Key)
			}
			name = w.name
		}
		if r.Key.Namespace != w.ns || name != w.name || r.Origin.File != file {
			t.Errorf("rejection %d is of %s from %s, want %s/%s", i, r.Key, r.Origin.File, w.ns, w.name)
		}
		if r.Message != w.message {
			t.Errorf("message\n%q\nwant\n%q", r.Message, w.message)
		}
	}
	if got, want := podSummary(c), podSummary(buildLab(t)); !reflect.DeepEqual(got, want) {
		t.Errorf("pods differ from the lab's:\n%v\nwant\n%v", got, want)
	}
}

func TestAdmittedPodsCarryTheirResolvedPriorityAndAccount(t *testing.T) {
	c := buildLab(t)
	n := 0
	for _, p := range c.Pods {
		if p.Namespace != "demo" && p.Namespace != "win-demo" {
			continue // the lab's add-ons: static and observed pods are not created through admission here
		}
		n++
		if p.Spec.Priority == nil || *p.Spec.Priority != 0 || p.Spec.ServiceAccountName != "default" {
			t.Errorf("pod %s/%s: priority %v, serviceAccountName %q: want 0 and default", p.Namespace, p.Name, p.Spec.Priority, p.Spec.ServiceAccountName)
		}
	}
	if n == 0 {
		t.Fatal("the lab has no pods in demo or win-demo")
	}
}

func TestServiceAccountAdmissionJudgesOnlyNamespacesTheInputSpeaksFor(t *testing.T) {
	c := buildLab(t, "testdata/service-accounts.yaml")
	var refused []string
	for _, r := range c.Rejected {
		refused = append(refused, r.Key.Name+": "+r.Message)
	}
	want := []string{`as-nobody: Error from server (Forbidden): pods "as-nobody" is forbidden: error looking up service account default/nobody: serviceaccount "nobody" not found`}
	if !reflect.DeepEqual(refused, want) {
		t.Errorf("refused\n%q\nwant\n%q", refused, want)
	}
	noted := false
	for _, n := range c.Notes {
		if n.Object.Name == "as-reporter" && strings.Contains(n.Message, "ServiceAccount kube-public/reporter is not in the input; taken to exist") {
			noted = true
		}
	}
	if !noted {
		t.Errorf("no note that kube-public/reporter was taken to exist: %+v", c.Notes)
	}
}
