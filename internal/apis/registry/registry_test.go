package registry

import "testing"

func TestLookupFindsEveryKindTheTwinDecodes(t *testing.T) {
	cases := []struct {
		name       string
		apiVersion string
		kind       string
		want       bool
		namespaced bool
	}{
		{"a core pod", "v1", "Pod", true, true},
		{"a cluster-scoped node", "v1", "Node", true, false},
		{"a v3 ippool", "projectcalico.org/v3", "IPPool", true, false},
		{"the same ippool from the v1 CRD group", "crd.projectcalico.org/v1", "IPPool", true, false},
		{"the v1 CRD's IPAMConfig name", "crd.projectcalico.org/v1", "IPAMConfig", true, false},
		{"a calico network policy is namespaced", "projectcalico.org/v3", "NetworkPolicy", true, true},
		{"the operator's installation", "operator.tigera.io/v1", "Installation", true, false},
		{"kubeadm v1beta4 join", "kubeadm.k8s.io/v1beta4", "JoinConfiguration", true, false},
		{"kubeadm v1beta3 still read", "kubeadm.k8s.io/v1beta3", "ClusterConfiguration", true, false},
		{"calicoctl's node", "projectcalico.org/v3", "Node", true, false},
		{"a calico node from the v1 CRD group", "crd.projectcalico.org/v1", "Node", true, false},
		{"the project's own cluster kind", "hybrid.kubectl-hybrid.io/v1alpha1", "Cluster", true, false},
		{"an unknown kind is not modeled", "cert-manager.io/v1", "Certificate", false, false},
		{"a known kind at an unknown version is not modeled", "apps/v1beta2", "Deployment", false, false},
		{"a broken apiVersion is not modeled", "a/b/c", "Pod", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k, ok := Lookup(tc.apiVersion, tc.kind)
			if ok != tc.want {
				t.Fatalf("Lookup(%q, %q) ok = %v, want %v", tc.apiVersion, tc.kind, ok, tc.want)
			}
			if ok && k.Namespaced != tc.namespaced {
				t.Errorf("namespaced = %v, want %v", k.Namespaced, tc.namespaced)
			}
			if ok && k.New() == nil {
				t.Errorf("New returned nil")
			}
		})
	}
}

func TestEveryRegisteredKindIsUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range append(All(), FileOnly()...) {
		key := k.Group + "/" + k.Kind
		if seen[key] {
			t.Errorf("%s registered twice", key)
		}
		seen[key] = true
	}
}

func TestForResourceReadsTheWordsKubectlAccepts(t *testing.T) {
	for _, c := range []struct {
		name  string
		word  string
		group string
		kind  string
		ok    bool
	}{
		{"a short name", "po", "", "Pod", true},
		{"the plural in another case", "Pods", "", "Pod", true},
		{"the singular", "deployment", "apps", "Deployment", true},
		{"a short name of an apps kind", "deploy", "apps", "Deployment", true},
		{"Kubernetes' NetworkPolicy before Calico's", "networkpolicies", "networking.k8s.io", "NetworkPolicy", true},
		{"the core Node before Calico's", "nodes", "", "Node", true},
		{"a Calico short name", "ipamconfigs", "projectcalico.org", "IPAMConfiguration", true},
		{"a guessed plural ending in y", "blockaffinities", "projectcalico.org", "BlockAffinity", true},
		{"a guessed plural ending in s", "tigerastatuses", "operator.tigera.io", "TigeraStatus", true},
		{"an unknown word", "widgets", "", "", false},
		{"a group-qualified word is not a bare resource name", "deployments.apps", "", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			k, ok := ForResource(c.word)
			if ok != c.ok || k.Group != c.group || k.Kind != c.kind {
				t.Errorf("ForResource(%q) = %s/%s %v, want %s/%s %v", c.word, k.Group, k.Kind, ok, c.group, c.kind, c.ok)
			}
		})
	}
}
