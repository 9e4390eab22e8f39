package operator

import (
	"testing"

	opapi "github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
)

// What changes in the rendered objects with a provider's CNI plugin
// (pkg/render/node.go nodeEnvVars, typha.go).
func TestAProviderCNIChangesWhatTheOperatorRenders(t *testing.T) {
	tests := []struct {
		name, provider, cni string
		want                map[string]string // calico-node env
		typhaPrefix         string
	}{
		{"the AWS VPC CNI on EKS", "EKS", "AmazonVPC", map[string]string{
			"CALICO_NETWORKING_BACKEND": "none", "CALICO_MANAGE_CNI": "false", "FELIX_INTERFACEPREFIX": "eni",
			"FELIX_IPTABLESMANGLEALLOWACTION": "Return", "FELIX_IPTABLESFILTERALLOWACTION": "<unset>",
			"FELIX_WIREGUARDHOSTENCRYPTIONENABLED": "true", "FELIX_ROUTESOURCE": "WorkloadIPs"}, "eni"},
		{"the Azure VNET CNI on AKS", "AKS", "AzureVNET", map[string]string{
			"CALICO_NETWORKING_BACKEND": "none", "FELIX_INTERFACEPREFIX": "azv", "FELIX_IPTABLESMANGLEALLOWACTION": "<unset>",
			"FELIX_WIREGUARDHOSTENCRYPTIONENABLED": "true", "FELIX_ROUTESOURCE": "WorkloadIPs"}, "azv"},
		{"GKE's CNI", "GKE", "GKE", map[string]string{
			"FELIX_INTERFACEPREFIX": "gke", "FELIX_IPTABLESMANGLEALLOWACTION": "Return", "FELIX_IPTABLESFILTERALLOWACTION": "Return",
			"FELIX_WIREGUARDHOSTENCRYPTIONENABLED": "<unset>", "USE_POD_CIDR": "true"}, "gke"},
		{"Calico's own CNI", "", "Calico", map[string]string{
			"CALICO_NETWORKING_BACKEND": "vxlan", "CALICO_MANAGE_CNI": "true", "FELIX_INTERFACEPREFIX": "<unset>", "FELIX_ROUTESOURCE": "<unset>"}, "<unset>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := renderLab(t, func(in *Inputs) {
				in.Kubeadm = nil
				in.Installation.Spec.KubernetesProvider = tt.provider
				in.Installation.Spec.CNI = &opapi.CNISpec{Type: tt.cni}
				if tt.cni != "Calico" {
					in.Installation.Spec.CalicoNetwork.IPPools = nil
				}
			})
			node := container(t, out, NodeDaemonSet, "calico-node")
			for k, v := range tt.want {
				if got := env(node, k); got != v {
					t.Errorf("calico-node %s = %q, want %q", k, got, v)
				}
			}
			typha := deploymentNamed(out, TyphaDeployment)
			if typha == nil {
				t.Fatal("no calico-typha Deployment")
			}
			if got := env(typha.Spec.Template.Spec.Containers[0], "FELIX_INTERFACEPREFIX"); got != tt.typhaPrefix {
				t.Errorf("calico-typha FELIX_INTERFACEPREFIX = %q, want %q", got, tt.typhaPrefix)
			}
			if tt.cni != "Calico" && configMapNamed(out, LinuxCNIConfigMap) != nil {
				t.Errorf("a %s install renders Calico's Linux CNI configuration", tt.cni)
			}
		})
	}
}
