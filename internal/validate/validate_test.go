package validate

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/registry"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/calico/selector"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/golden"
)

// check decodes a manifest as its registered kind and validates it.
func check(t *testing.T, doc string) field.ErrorList {
	t.Helper()
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
		t.Fatal(err)
	}
	k, ok := registry.Lookup(head.APIVersion, head.Kind)
	if !ok {
		t.Fatalf("kind %s %s not registered", head.APIVersion, head.Kind)
	}
	typed := k.New()
	if err := yaml.Unmarshal([]byte(doc), typed); err != nil {
		t.Fatal(err)
	}
	if k.Namespaced {
		if o, ok := typed.(interface {
			GetNamespace() string
			SetNamespace(string)
		}); ok && o.GetNamespace() == "" {
			o.SetNamespace("default") // as the loader does
		}
	}
	if pod, ok := typed.(*corev1.Pod); ok {
		if errs := Object(typed, k); len(errs) > 0 {
			t.Fatalf("Object reports a pod's errors, which admission reports: %v", errs)
		}
		return PodMeta(pod)
	}
	return Object(typed, k)
}

type rule struct {
	name string
	doc  string
	// want is one line per error, as the API server words it; empty when
	// the object is accepted.
	want []string
}

func run(t *testing.T, rules []rule) {
	t.Helper()
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			var got []string
			for _, e := range check(t, r.doc) {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != strings.Join(r.want, "\n") {
				t.Errorf("got:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(r.want, "\n  "))
			}
		})
	}
}

func TestObjectMetadataFollowsTheAPIServer(t *testing.T) {
	run(t, []rule{
		{"a pod with a valid name and labels is accepted", `
apiVersion: v1
kind: Pod
metadata: {name: web-1, labels: {app: web, example.com/tier: front}}`, nil},
		{"a pod with no name is refused", `
apiVersion: v1
kind: Pod
metadata: {namespace: demo}`, []string{"metadata.name: Required value: name or generateName is required"}},
		{"a pod name with capitals is refused", `
apiVersion: v1
kind: Pod
metadata: {name: Web}`, []string{`metadata.name: Invalid value: "Web": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`}},
		{"a service name with a dot is refused as DNS-1035", `
apiVersion: v1
kind: Service
metadata: {name: a.b}
spec: {ports: [{port: 80}]}`, []string{`metadata.name: Invalid value: "a.b": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`}},
		{"an invalid label key and value are refused, in a fixed order", `
apiVersion: v1
kind: Pod
metadata: {name: p, labels: {"bad key": "x", app: "no spaces"}}`, []string{
			`metadata.labels: Invalid value: "bad key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
			`metadata.labels: Invalid value: "no spaces": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`}},
		{"a namespace in a pod's namespace field must be a DNS label", `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: Demo}`, []string{`metadata.namespace: Invalid value: "Demo": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`}},
		{"a namespace on a cluster-scoped node is dropped, not refused", `
apiVersion: v1
kind: Node
metadata: {name: n1, namespace: Whatever}`, nil},
		{"an owner reference without a uid is not checked", `
apiVersion: v1
kind: Pod
metadata: {name: p, ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: rs}]}`, nil},
		{"a Calico pool's name is a DNS subdomain", `
apiVersion: projectcalico.org/v3
kind: IPPool
metadata: {name: Pool_1}
spec: {cidr: 10.0.0.0/16}`, []string{`metadata.name: Invalid value: "Pool_1": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`}},
		{"a kubeadm configuration is not an API object and has no name rule", `
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration`, nil},
	})
}

func TestAnnotationsLargerThan256KiBAreRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		size int
		want string
	}{
		{"annotations of 256 KiB are accepted", 262144 - len("a"), ""},
		{"annotations one byte over 256 KiB are refused", 262144 - len("a") + 1, "metadata.annotations: Too long: may not be more than 262144 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cm := &corev1.ConfigMap{}
			cm.Name = "big"
			cm.Namespace = "default"
			cm.Annotations = map[string]string{"a": strings.Repeat("x", c.size)}
			k, _ := registry.Lookup("v1", "ConfigMap")
			var got []string
			for _, e := range Object(cm, k) {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestServicePortsFollowTheAPIServer(t *testing.T) {
	run(t, []rule{
		{"a service with named ports is accepted", `
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {type: NodePort, ports: [{name: http, port: 80, targetPort: 8080, nodePort: 30080}, {name: dns, port: 53, protocol: UDP, targetPort: dns}]}`, nil},
		{"port 70000 is refused", `
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {ports: [{port: 70000}]}`, []string{"spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive"}},
		{"port 0 is refused", `
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {ports: [{port: 0, targetPort: 80}]}`, []string{"spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive"}},
		{"two ports without names are refused", `
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {ports: [{port: 80}, {port: 443}]}`, []string{"spec.ports[0].name: Required value", "spec.ports[1].name: Required value"}},
		{"an unknown protocol and a bad target port are refused", `
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {ports: [{port: 80, protocol: ICMP, targetPort: 99999}]}`, []string{
			`spec.ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"`,
			"spec.ports[0].targetPort: Invalid value: 99999: must be between 1 and 65535, inclusive"}},
		{"a node port on a ClusterIP service is refused", `
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {ports: [{port: 80, nodePort: 30001}]}`, []string{"spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"}},
		{"a service without ports is refused unless headless", `
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {}`, []string{"spec.ports: Required value"}},
		{"a headless service without ports is accepted", `
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {clusterIP: None}`, nil},
		{"an unknown service type is refused", `
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {type: Magic, ports: [{port: 80}]}`, []string{`spec.type: Unsupported value: "Magic": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"`}},
	})
}

func TestANodePortOutsideTheRangeIsRefused(t *testing.T) {
	for _, c := range []struct {
		name     string
		typ      corev1.ServiceType
		nodePort int32
		rng      string
		want     string
	}{
		{"node port 1 is refused", corev1.ServiceTypeNodePort, 1, "", "spec.ports[0].nodePort: Invalid value: 1: provided port is not in the valid range. The range of valid ports is 30000-32767"},
		{"node port 32768 is refused", corev1.ServiceTypeLoadBalancer, 32768, "", "spec.ports[0].nodePort: Invalid value: 32768: provided port is not in the valid range. The range of valid ports is 30000-32767"},
		{"node port 30000 is accepted", corev1.ServiceTypeNodePort, 30000, "", ""},
		{"node port 32767 is accepted", corev1.ServiceTypeNodePort, 32767, "", ""},
		{"node port 8080 is accepted in a range that holds it", corev1.ServiceTypeNodePort, 8080, "8000-9000", ""},
		{"node port 30000 is refused in a range that does not hold it", corev1.ServiceTypeNodePort, 30000, "8000-9000", "spec.ports[0].nodePort: Invalid value: 30000: provided port is not in the valid range. The range of valid ports is 8000-9000"},
	} {
		t.Run(c.name, func(t *testing.T) {
			svc := &corev1.Service{Spec: corev1.ServiceSpec{Type: c.typ, Ports: []corev1.ServicePort{{Port: 80, NodePort: c.nodePort}}}}
			rng := DefaultNodePorts
			if c.rng != "" {
				r, err := utilnet.ParsePortRange(c.rng)
				if err != nil {
					t.Fatal(err)
				}
				rng = *r
			}
			got := NodePorts(svc, rng).ToAggregate()
			if (got == nil) != (c.want == "") || got != nil && got.Error() != c.want {
				t.Errorf("got %v, want %q", got, c.want)
			}
		})
	}
}

func TestNetworkPolicyFieldsFollowTheAPIServer(t *testing.T) {
	const head = "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: np}\n"
	run(t, []rule{
		{"a policy with a port range and peers is accepted", head + `
spec:
  podSelector: {matchExpressions: [{key: app, operator: In, values: [web]}]}
  policyTypes: [Ingress, Egress]
  ingress: [{ports: [{port: 8000, endPort: 8100}, {port: http}], from: [{podSelector: {}}, {ipBlock: {cidr: 10.0.0.0/8, except: [10.1.0.0/16]}}]}]`, nil},
		{"operator Frob is refused", head + `
spec: {podSelector: {matchExpressions: [{key: app, operator: Frob, values: [web]}]}}`,
			[]string{`spec.podSelector.matchExpressions[0].operator: Invalid value: "Frob": not a valid selector operator`}},
		{"In with no values is refused", head + `
spec: {podSelector: {matchExpressions: [{key: app, operator: In}]}}`,
			[]string{`spec.podSelector.matchExpressions[0].values: Required value: must be specified when ` + "`operator`" + ` is 'In' or 'NotIn'`}},
		{"port 0 and port 70000 are refused", head + `
spec: {podSelector: {}, ingress: [{ports: [{port: 0}, {port: 70000}]}]}`,
			[]string{"spec.ingress[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
				"spec.ingress[0].ports[1].port: Invalid value: 70000: must be between 1 and 65535, inclusive"}},
		{"endPort below port is refused", head + `
spec: {podSelector: {}, egress: [{ports: [{port: 9000, endPort: 8000}]}]}`,
			[]string{"spec.egress[0].ports[0].endPort: Invalid value: 9000: must be greater than or equal to `port`"}},
		{"endPort with a named port is refused", head + `
spec: {podSelector: {}, egress: [{ports: [{port: http, endPort: 8000}]}]}`,
			[]string{"spec.egress[0].ports[0].endPort: Invalid value: 8000: may not be specified when `port` is non-numeric"}},
		{"endPort without port is refused", head + `
spec: {podSelector: {}, egress: [{ports: [{endPort: 8000}]}]}`,
			[]string{"spec.egress[0].ports[0].endPort: Invalid value: 8000: may not be specified when `port` is not specified"}},
		{"protocol ICMP is refused", head + `
spec: {podSelector: {}, ingress: [{ports: [{protocol: ICMP, port: 1}]}]}`,
			[]string{`spec.ingress[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"`}},
		{"an empty peer and a mixed peer are refused", head + `
spec: {podSelector: {}, ingress: [{from: [{}, {podSelector: {}, ipBlock: {cidr: 10.0.0.0/8}}]}]}`,
			[]string{"spec.ingress[0].from[0]: Required value: must specify a peer",
				"spec.ingress[0].from[1]: Forbidden: may not specify both ipBlock and another peer"}},
		{"an except outside the cidr is refused", head + `
spec: {podSelector: {}, ingress: [{from: [{ipBlock: {cidr: 10.0.0.0/16, except: [10.0.0.0/16, 192.168.0.0/24]}}]}]}`,
			[]string{`spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: "10.0.0.0/16": must be a strict subset of ` + "`cidr`",
				`spec.ingress[0].from[0].ipBlock.except[1]: Invalid value: "192.168.0.0/24": must be a strict subset of ` + "`cidr`"}},
		{"an unknown policy type is refused", head + `
spec: {podSelector: {}, policyTypes: [Inbound]}`,
			[]string{`spec.policyTypes[0]: Unsupported value: "Inbound": supported values: "Egress", "Ingress"`}},
	})
}

func TestWorkloadSelectorsFollowTheAPIServer(t *testing.T) {
	run(t, []rule{
		{"a deployment whose selector matches its template is accepted", `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec: {selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}}}`, nil},
		{"a deployment whose selector misses its template is refused", `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec: {selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: api}}}}`,
			[]string{"spec.template.metadata.labels: Invalid value: {\"app\":\"api\"}: `selector` does not match template `labels`"}},
		{"a daemonset without a selector is refused", `
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ds}
spec: {template: {metadata: {labels: {app: x}}}}`, []string{"spec.selector: Required value"}},
	})
}

func TestCalicoPoolsFollowCalico(t *testing.T) {
	const head = "apiVersion: projectcalico.org/v3\nkind: IPPool\nmetadata: {name: p}\n"
	run(t, []rule{
		{"a VXLAN pool with the default block size is accepted", head + "spec: {cidr: 10.244.0.0/16, vxlanMode: Always, nodeSelector: \"kubernetes.io/os == 'linux'\"}", nil},
		{"a pool with block size 31 is accepted", head + "spec: {cidr: 10.244.0.0/16, blockSize: 31}", nil},
		{"a pool with block size 19 is refused", head + "spec: {cidr: 10.0.0.0/8, blockSize: 19}",
			[]string{"spec.blockSize: Invalid value: 19: IPv4 block size must be between 20 and 32"}},
		{"a pool with block size 33 is refused", head + "spec: {cidr: 10.0.0.0/8, blockSize: 33}",
			[]string{"spec.blockSize: Invalid value: 33: IPv4 block size must be between 20 and 32"}},
		{"a pool smaller than its block is refused", head + "spec: {cidr: 10.0.0.0/28}",
			[]string{`spec.cidr: Invalid value: "10.0.0.0/28": IP pool size is too small for use with Calico IPAM. It must be equal to or greater than the block size.`}},
		{"a pool with host bits is refused", head + "spec: {cidr: 10.244.1.0/16}",
			[]string{`spec.cidr: Invalid value: "10.244.1.0/16": IPPool CIDR is not strictly masked`}},
		{"a pool in the link-local range is refused", head + "spec: {cidr: 169.254.0.0/16}",
			[]string{`spec.cidr: Invalid value: "169.254.0.0/16": IPPool CIDR overlaps with IPv4 Link Local range 169.254.0.0/16`}},
		{"VXLAN and IPIP together are refused", head + "spec: {cidr: 10.0.0.0/16, vxlanMode: Always, ipipMode: CrossSubnet}",
			[]string{`spec.vxlanMode: Invalid value: "Always": Cannot enable both VXLAN and IPIP on the same IPPool`}},
		{"an unknown encapsulation mode is refused", head + "spec: {cidr: 10.0.0.0/16, vxlanMode: Sometimes}",
			[]string{`spec.vxlanMode: Unsupported value: "Sometimes": supported values: "Always", "CrossSubnet", "Never"`}},
		{"a node selector that does not parse is refused", head + "spec: {cidr: 10.0.0.0/16, nodeSelector: \"os ==\"}",
			[]string{`spec.nodeSelector: Invalid value: "os ==": invalid selector: ` + selectorError(t, "os ==")}},
		{"a pool without a CIDR is refused", head + "spec: {}", []string{"spec.cidr: Required value"}},
	})
}

func TestCalicoPolicySelectorsMustParse(t *testing.T) {
	run(t, []rule{
		{"a policy with valid selectors is accepted", `
apiVersion: projectcalico.org/v3
kind: GlobalNetworkPolicy
metadata: {name: g}
spec: {selector: "has(app)", ingress: [{action: Allow, source: {selector: "app in {'a','b'}", namespaceSelector: all()}}]}`, nil},
		{"a policy whose rule selector does not parse is refused", `
apiVersion: projectcalico.org/v3
kind: NetworkPolicy
metadata: {name: p, namespace: demo}
spec: {selector: "app == 'web'", egress: [{action: Allow, destination: {notSelector: "app = 'x'"}}]}`,
			[]string{`spec.egress[0].destination.notSelector: Invalid value: "app = 'x'": invalid selector: ` + selectorError(t, "app = 'x'")}},
	})
}

func selectorError(t *testing.T, s string) string {
	t.Helper()
	if _, err := selector.Parse(s); err != nil {
		return err.Error()
	}
	t.Fatalf("selector %q parses", s)
	return ""
}

func TestOverlappingPoolsAreRefusedAfterTheFirst(t *testing.T) {
	got := PoolOverlaps([]Pool{
		{Name: "a", CIDR: "10.244.0.0/16"},
		{Name: "b", CIDR: "10.244.128.0/17"},
		{Name: "c", CIDR: "10.245.0.0/16"},
		{Name: "d", CIDR: "not a cidr"},
		{Name: "e", CIDR: "10.0.0.0/8"},
	})
	want := [][]string{
		nil,
		{`spec.cidr: Invalid value: "10.244.128.0/17": IPPool(b) CIDR overlaps with IPPool(a) CIDR 10.244.0.0/16`},
		nil,
		nil,
		{`spec.cidr: Invalid value: "10.0.0.0/8": IPPool(e) CIDR overlaps with IPPool(a) CIDR 10.244.0.0/16`,
			`spec.cidr: Invalid value: "10.0.0.0/8": IPPool(e) CIDR overlaps with IPPool(b) CIDR 10.244.128.0/17`,
			`spec.cidr: Invalid value: "10.0.0.0/8": IPPool(e) CIDR overlaps with IPPool(c) CIDR 10.245.0.0/16`},
	}
	for i := range want {
		var g []string
		for _, e := range got[i] {
			g = append(g, e.Error())
		}
		if strings.Join(g, "\n") != strings.Join(want[i], "\n") {
			t.Errorf("pool %d: got %q, want %q", i, g, want[i])
		}
	}
}

func TestAPoolOverlappingTheOperatorsPoolIsRefusedButTheOperatorsOwnIsNot(t *testing.T) {
	got := PoolOverlaps([]Pool{
		{Name: "default-ipv4-ippool", CIDR: "172.21.0.0/16", Managed: true},
		{Name: "", CIDR: "10.10.0.0/16", Managed: true},
		{Name: "default-ipv4-ippool", CIDR: "172.21.0.0/16"}, // the operator's pool in a dump
		{Name: "extra", CIDR: "172.21.0.0/17"},
		{Name: "10-10-0-0-16", CIDR: "10.10.0.0/16"}, // the unnamed one, as the operator named it
		{Name: "other", CIDR: "10.0.0.0/8", Managed: true},
	})
	for i, want := range []int{0, 0, 0, 1, 0, 0} {
		if len(got[i]) != want {
			t.Errorf("pool %d: %d errors %v, want %d", i, len(got[i]), got[i], want)
		}
	}
	if len(got[3]) == 1 && !strings.Contains(got[3][0].Error(), "IPPool(extra) CIDR overlaps with IPPool(default-ipv4-ippool) CIDR 172.21.0.0/16") {
		t.Errorf("message %q", got[3][0].Error())
	}
}

// TestMessagesGolden keeps the wording of a refusal of each kind.
func TestMessagesGolden(t *testing.T) {
	var b strings.Builder
	for _, doc := range []string{
		"apiVersion: v1\nkind: Pod\nmetadata: {labels: {\"-x\": \"y\"}, annotations: {\"a b\": c}}",
		"apiVersion: v1\nkind: Service\nmetadata: {name: svc}\nspec: {ports: [{name: Http, port: 80}, {name: Http, port: 70000, targetPort: \"-bad\"}]}",
		"apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: np}\nspec: {podSelector: {matchLabels: {\"a/b/c\": x}}, ingress: [{ports: [{port: 70000, endPort: 1}]}]}",
		"apiVersion: projectcalico.org/v3\nkind: IPPool\nmetadata: {name: p}\nspec: {cidr: 10.0.0.0/30, blockSize: 40, ipipMode: Always, vxlanMode: Always}",
	} {
		b.WriteString(field.ErrorList(check(t, doc)).ToAggregate().Error())
		b.WriteString("\n")
	}
	golden.Check(t, "testdata/messages.golden", b.String())
}
