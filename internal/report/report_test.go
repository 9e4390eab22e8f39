package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
)

func TestResolveKind(t *testing.T) {
	tests := []struct {
		name string
		word string
		want Kind
	}{
		{"the plural of a core kind resolves", "nodes", KindNode},
		{"the singular resolves", "node", KindNode},
		{"a short name resolves", "no", KindNode},
		{"pods resolve by plural", "pods", KindPod},
		{"a pod resolves by singular", "pod", KindPod},
		{"po is the pod short name", "po", KindPod},
		{"services resolve", "services", KindService},
		{"svc is the service short name", "svc", KindService},
		{"endpointslices resolve", "endpointslices", KindEndpointSlice},
		{"daemonsets resolve", "daemonsets", KindDaemonSet},
		{"ds is the daemonset short name", "ds", KindDaemonSet},
		{"deployments resolve", "deployments", KindDeployment},
		{"deploy is the deployment short name", "deploy", KindDeployment},
		{"a group-qualified short name resolves", "deploy.apps", KindDeployment},
		{"a version-and-group-qualified plural resolves", "deployments.v1.apps", KindDeployment},
		{"replicasets resolve", "replicasets", KindReplicaSet},
		{"rs is the replicaset short name", "rs", KindReplicaSet},
		{"runtimeclasses resolve", "runtimeclasses", KindRuntimeClass},
		{"ippools resolve", "ippools", KindIPPool},
		{"an ippool resolves with its Calico group", "ippool.projectcalico.org", KindIPPool},
		{"ipamblocks resolve", "ipamblocks", KindIPAMBlock},
		{"blockaffinities resolve", "blockaffinities", KindBlockAffinity},
		{"affinity is a blockaffinity short name", "affinity", KindBlockAffinity},
		{"ipamconfigurations resolve", "ipamconfigurations", KindIPAMConfiguration},
		{"tigerastatus resolves by singular", "tigerastatus", KindTigeraStatus},
		{"tigerastatuses resolve by plural", "tigerastatuses", KindTigeraStatus},
		{"csr is the certificatesigningrequest short name", "csr", KindCertificateSigningRequest},
		{"certificatesigningrequests resolve", "certificatesigningrequests", KindCertificateSigningRequest},
		{"namespaces resolve", "namespaces", KindNamespace},
		{"ns is the namespace short name", "ns", KindNamespace},
		{"configmaps resolve", "configmaps", KindConfigMap},
		{"cm is the configmap short name", "cm", KindConfigMap},
		{"networkpolicies resolve to the Kubernetes kind", "networkpolicies", KindNetworkPolicy},
		{"netpol is the networkpolicy short name", "netpol", KindNetworkPolicy},
		{"installations resolve", "installations", KindInstallation},
		{"words are matched without regard to case", "Pods", KindPod},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ResolveKind(tt.word)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ResolveKind(%q) = %s, want %s", tt.word, got.Resource, tt.want.Resource)
			}
		})
	}
}

func TestResolveKinds(t *testing.T) {
	tests := []struct {
		name  string
		words string
		want  []Kind
	}{
		{"a comma list resolves in order", "pods,svc", []Kind{KindPod, KindService}},
		{"a kind named twice is kept once", "po,pods,svc", []Kind{KindPod, KindService}},
		{"Calico kinds mix with core kinds", "ippools,nodes", []Kind{KindIPPool, KindNode}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ResolveKinds(tt.words)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ResolveKinds(%q) = %v, want %v", tt.words, got, tt.want)
			}
		})
	}
}

func TestResolveUnknown(t *testing.T) {
	tests := []struct {
		name, words, wantErr string
	}{
		{"an unknown word is reported as kubectl does", "frobs", `error: the server doesn't have a resource type "frobs"`},
		{"one unknown word in a list fails the list", "pods,frobs", `error: the server doesn't have a resource type "frobs"`},
		{"an empty word in a list is unknown", "pods,", `error: the server doesn't have a resource type ""`},
		{"a kind with the wrong group is unknown", "pods.apps", `error: the server doesn't have a resource type "pods.apps"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ResolveKinds(tt.words)
			var ue *UnknownResourceError
			if !errors.As(err, &ue) {
				t.Fatalf("got %v, want an UnknownResourceError", err)
			}
			if err.Error() != tt.wantErr {
				t.Errorf("got %q, want %q", err.Error(), tt.wantErr)
			}
			if !strings.Contains(ue.Hint(), "pods (po)") || !strings.Contains(ue.Hint(), "ippools") {
				t.Errorf("hint does not list the known kinds: %s", ue.Hint())
			}
		})
	}
}

func TestName(t *testing.T) {
	c := labCluster()
	tests := []struct {
		name string
		kind Kind
		obj  any
		want string
	}{
		{"a pod is pod/name", KindPod, c.Pods[4], "pod/hello-55fb8f8684-69mvv"},
		{"a node is node/name", KindNode, c.Nodes[3], "node/k8s-lab-win-1"},
		{"a deployment carries its group", KindDeployment, c.Deployments[0], "deployment.apps/hello"},
		{"an IPPool carries the Calico group", KindIPPool, c.IPPools[0], "ippool.projectcalico.org/default-ipv4-ippool"},
		{"an IPAMBlock carries the Calico group", KindIPAMBlock, c.IPAMBlocks[2], "ipamblock.projectcalico.org/172-21-41-0-26"},
		{"a TigeraStatus carries the operator group", KindTigeraStatus, c.TigeraStatuses[2], "tigerastatus.operator.tigera.io/calico-windows"},
		{"a CSR carries the certificates group", KindCertificateSigningRequest, c.CSRs[0], "certificatesigningrequest.certificates.k8s.io/csr-4wm2t"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Name(tt.kind, tt.obj); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSelect(t *testing.T) {
	c := labCluster()
	tests := []struct {
		name      string
		kind      string
		objName   string
		namespace string
		all       bool
		wantNames []string
		wantErr   string
	}{
		{"an empty namespace means default", "svc", "", "", false, []string{"kubernetes"}, ""},
		{"a namespace filters namespaced kinds", "pods", "", "demo", false, []string{"hello-55fb8f8684-69mvv", "hello-55fb8f8684-nztv2"}, ""},
		{"the namespace is ignored for cluster-scoped kinds", "nodes", "", "demo", false, []string{"k8s-lab-master-1", "k8s-lab-node-1", "k8s-lab-node-2", "k8s-lab-win-1"}, ""},
		{"all namespaces are sorted by namespace, then name", "deploy", "", "", true, []string{"hello", "aspnetapp"}, ""},
		{"a name picks one object", "ipamblocks", "172-21-41-0-26", "", false, []string{"172-21-41-0-26"}, ""},
		{"a missing pod is NotFound", "po", "x", "demo", false, nil, `Error from server (NotFound): pods "x" not found`},
		{"a missing Calico object names its group", "ippools", "x", "", false, nil, `Error from server (NotFound): ippools.projectcalico.org "x" not found`},
		{"a pod in another namespace is not found", "pods", "hello-55fb8f8684-69mvv", "default", false, nil, `Error from server (NotFound): pods "hello-55fb8f8684-69mvv" not found`},
		{"a name with all namespaces is refused", "pods", "x", "", true, nil, "error: a resource cannot be retrieved by name across all namespaces"},
		{"an empty namespace gives an empty list", "pods", "", "nothing", false, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := Select(c, tt.kind, tt.objName, tt.namespace, tt.all)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("got error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, o := range objs {
				names = append(names, metaOf(o).GetName())
			}
			if !reflect.DeepEqual(names, tt.wantNames) {
				t.Errorf("got %v, want %v", names, tt.wantNames)
			}
		})
	}
}

func TestNoResourcesMessage(t *testing.T) {
	tests := []struct {
		name  string
		kinds []Kind
		ns    string
		all   bool
		want  string
	}{
		{"a namespaced kind names the namespace", []Kind{KindPod}, "demo", false, "No resources found in demo namespace."},
		{"an empty namespace is default", []Kind{KindPod}, "", false, "No resources found in default namespace."},
		{"all namespaces names none", []Kind{KindPod}, "demo", true, "No resources found"},
		{"a cluster-scoped kind names none", []Kind{KindPod, KindNode}, "demo", false, "No resources found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NoResourcesMessage(tt.kinds, tt.ns, tt.all); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestJSONReadsBack decodes -o json and -o yaml output back into the typed
// objects and compares them with the Cluster's.
func TestJSONReadsBack(t *testing.T) {
	c := labCluster()
	for _, format := range []string{OutputJSON, OutputYAML} {
		t.Run(format, func(t *testing.T) {
			var out bytes.Buffer
			if _, err := Get(&out, c, Request{Args: []string{"pods,ipamblocks"}, Options: Options{Output: format, AllNamespaces: true, Now: now}}); err != nil {
				t.Fatal(err)
			}
			data := out.Bytes()
			if format == OutputYAML {
				var err error
				if data, err = yaml.YAMLToJSON(data); err != nil {
					t.Fatal(err)
				}
			}
			var list struct {
				APIVersion string            `json:"apiVersion"`
				Kind       string            `json:"kind"`
				Metadata   map[string]string `json:"metadata"`
				Items      []json.RawMessage `json:"items"`
			}
			if err := json.Unmarshal(data, &list); err != nil {
				t.Fatal(err)
			}
			if list.APIVersion != "v1" || list.Kind != "List" || list.Metadata["resourceVersion"] != "" {
				t.Errorf("list header: %s %s %v", list.APIVersion, list.Kind, list.Metadata)
			}
			if len(list.Items) != len(c.Pods)+len(c.IPAMBlocks) {
				t.Fatalf("%d items, want %d", len(list.Items), len(c.Pods)+len(c.IPAMBlocks))
			}
			pods, _ := Select(c, "pods", "", "", true)
			for i, p := range pods {
				var got corev1.Pod
				if err := json.Unmarshal(list.Items[i], &got); err != nil {
					t.Fatal(err)
				}
				if got.APIVersion != "v1" || got.Kind != "Pod" {
					t.Errorf("item %d: apiVersion %q kind %q", i, got.APIVersion, got.Kind)
				}
				got.TypeMeta = metav1.TypeMeta{}
				if !equalJSON(t, &got, p) {
					t.Errorf("pod %s does not read back", got.Name)
				}
			}
			for i, b := range c.IPAMBlocks {
				var got calico.IPAMBlock
				if err := json.Unmarshal(list.Items[len(pods)+i], &got); err != nil {
					t.Fatal(err)
				}
				if got.APIVersion != "projectcalico.org/v3" || got.Kind != "IPAMBlock" {
					t.Errorf("block %d: apiVersion %q kind %q", i, got.APIVersion, got.Kind)
				}
				got.TypeMeta = metav1.TypeMeta{}
				if !equalJSON(t, &got, b) {
					t.Errorf("block %s does not read back", got.Name)
				}
			}
		})
	}
}

func equalJSON(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(ja, jb)
}

// TestPrintingLeavesTheClusterAlone prints everything in every format and
// checks that no object in the Cluster gained a TypeMeta or changed.
func TestPrintingLeavesTheClusterAlone(t *testing.T) {
	c := labCluster()
	var all []string
	for _, k := range Kinds() {
		all = append(all, k.Resource)
	}
	for _, o := range []string{OutputTable, OutputWide, OutputJSON, OutputYAML, OutputName} {
		if _, err := Get(&bytes.Buffer{}, c, Request{Args: []string{strings.Join(all, ",")}, Options: Options{Output: o, AllNamespaces: true, Now: now}}); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(c, labCluster()) {
		t.Error("printing changed the Cluster")
	}
	if c.Pods[0].Kind != "" || c.IPPools[0].Kind != "" {
		t.Error("printing set TypeMeta on the Cluster's objects")
	}
}

func TestAge(t *testing.T) {
	tests := []struct {
		name string
		t    metav1.Time
		want string
	}{
		{"a zero timestamp is unknown", metav1.Time{}, "<unknown>"},
		{"under two minutes counts seconds", metav1.NewTime(now.Add(-107 * time.Second)), "107s"},
		{"under ten minutes shows minutes and seconds", metav1.NewTime(now.Add(-(8*time.Minute + 2*time.Second))), "8m2s"},
		{"under three hours shows minutes", metav1.NewTime(now.Add(-153 * time.Minute)), "153m"},
		{"weeks show days", metav1.NewTime(now.Add(-12 * 24 * time.Hour)), "12d"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := age(now, tt.t); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestIPAMBlockUsage(t *testing.T) {
	c := labCluster()
	tests := []struct {
		name                string
		block               *calico.IPAMBlock
		allocated, reserved int
	}{
		{"a Linux block has no reserved ordinals", c.IPAMBlocks[0], 4, 0},
		{"the Windows block's reserved handle is counted apart", c.IPAMBlocks[2], 2, 4},
		{"an empty block has nothing allocated", &calico.IPAMBlock{Spec: calico.IPAMBlockSpec{CIDR: "10.0.0.0/26"}}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, r := IPAMBlockUsage(tt.block)
			if a != tt.allocated || r != tt.reserved {
				t.Errorf("got %d allocated, %d reserved; want %d, %d", a, r, tt.allocated, tt.reserved)
			}
		})
	}
}
