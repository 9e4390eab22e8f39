package plan

import (
	"encoding/json"
	"fmt"
	"net"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Where node files go (the paths PrepareNode.ps1 and kubeadm use on
// Windows: C:\k holds kubelet.exe and kubeadm.exe).
const (
	joinPath      = `C:\k\join.yaml`
	patchDir      = `C:\k\patches`
	patchPath     = `C:\k\patches\kubeletconfiguration.yaml`
	windowsCRI    = "npipe:////./pipe/containerd-containerd"
	runtimeClassH = "runhcs-wcow-process"
)

type obj = map[string]any

// ToYAML is a rendered object as a YAML document.
func ToYAML(o obj) (string, error) {
	b, err := yaml.Marshal(o)
	if err != nil {
		return "", fmt.Errorf("render: %w", err)
	}
	return string(b), nil
}

// joinConfiguration is the node's kubeadm JoinConfiguration: discovery by
// bootstrap token, the Windows CRI pipe, the os=windows:NoSchedule taint so
// that no Linux pod lands on the node between registration and a later
// kubectl taint, and the patches directory (kubeadm v1beta4 types.go).
func joinConfiguration(in Inputs, n NodeRequest) obj {
	return obj{
		"apiVersion": "kubeadm.k8s.io/v1beta4",
		"kind":       "JoinConfiguration",
		"discovery": obj{"bootstrapToken": obj{
			"apiServerEndpoint": in.Endpoint,
			"token":             TokenPlaceholder,
			"caCertHashes":      []any{in.CAHash},
		}},
		"nodeRegistration": obj{
			"name":      n.Name,
			"criSocket": windowsCRI,
			"taints":    []any{obj{"key": "os", "value": "windows", "effect": "NoSchedule"}},
		},
		"patches": obj{"directory": patchDir},
	}
}

// maxPods is what a Windows node's single block leaves for pods: the
// Windows IPAM reserves the network address, the HNS gateway, Calico_ep
// and the last address (calico cni-plugin windows IPAM, ipam_plugin.go).
func maxPods(blockSize int) int { return 1<<(32-blockSize) - 4 }

// kubeletPatch is kubeadm's patch file for target "kubeletconfiguration"
// (kubeadm app/util/patches): applied on this node only.
func kubeletPatch(blockSize int) obj {
	return obj{
		"apiVersion": "kubelet.config.k8s.io/v1beta1",
		"kind":       "KubeletConfiguration",
		"maxPods":    maxPods(blockSize),
	}
}

// runtimeClass pins pods to the build's nodes and tolerates the Windows
// taint (https://kubernetes.io/docs/concepts/windows/user-guide/#ensuring-os-specific-workloads-land-on-the-appropriate-container-host).
func runtimeClass(name, build string) obj {
	return obj{
		"apiVersion": "node.k8s.io/v1",
		"kind":       "RuntimeClass",
		"metadata":   obj{"name": name},
		"handler":    runtimeClassH,
		"scheduling": obj{
			"nodeSelector": obj{corev1.LabelOSStable: "windows", corev1.LabelArchStable: "amd64", corev1.LabelWindowsBuild: build},
			"tolerations":  []any{obj{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}},
		},
	}
}

// kubeProxyWindows is sig-windows-tools' HostProcess kube-proxy for Calico
// (hostprocess/calico/kube-proxy/kube-proxy.yml) with KUBE_PROXY_VERSION
// set to the cluster's version. It reuses kubeadm's kube-proxy
// ServiceAccount and ConfigMap.
func kubeProxyWindows(version string) obj {
	return obj{
		"apiVersion": "apps/v1",
		"kind":       "DaemonSet",
		"metadata":   obj{"name": "kube-proxy-windows", "namespace": "kube-system", "labels": obj{"k8s-app": "kube-proxy"}},
		"spec": obj{
			"selector":       obj{"matchLabels": obj{"k8s-app": "kube-proxy-windows"}},
			"updateStrategy": obj{"type": "RollingUpdate"},
			"template": obj{
				"metadata": obj{"labels": obj{"k8s-app": "kube-proxy-windows"}},
				"spec": obj{
					"serviceAccountName": "kube-proxy",
					"securityContext": obj{"windowsOptions": obj{
						"hostProcess": true, "runAsUserName": `NT AUTHORITY\system`}},
					"hostNetwork":  true,
					"nodeSelector": obj{corev1.LabelOSStable: "windows"},
					"tolerations": []any{
						obj{"key": "CriticalAddonsOnly", "operator": "Exists"},
						obj{"operator": "Exists"},
					},
					"containers": []any{obj{
						"name":            "kube-proxy",
						"image":           "sigwindowstools/kube-proxy:" + version + "-calico-hostprocess",
						"args":            []any{"$env:CONTAINER_SANDBOX_MOUNT_POINT/kube-proxy/start.ps1"},
						"workingDir":      "$env:CONTAINER_SANDBOX_MOUNT_POINT/kube-proxy/",
						"imagePullPolicy": "Always",
						"env": []any{
							obj{"name": "NODENAME", "valueFrom": obj{"fieldRef": obj{"apiVersion": "v1", "fieldPath": "spec.nodeName"}}},
							obj{"name": "POD_IP", "valueFrom": obj{"fieldRef": obj{"fieldPath": "status.podIP"}}},
						},
						"volumeMounts": []any{obj{"mountPath": "/var/lib/kube-proxy", "name": "kube-proxy"}},
					}},
					"volumes": []any{obj{"name": "kube-proxy", "configMap": obj{"name": "kube-proxy"}}},
				},
			},
		},
	}
}

// ServicesEndpoint is the ConfigMap through which the operator tells
// calico-node(-windows) where the API server is, since a Windows node cannot
// reach the kubernetes Service before kube-proxy runs
// (https://docs.tigera.io/calico/latest/getting-started/kubernetes/windows-calico/operator).
func ServicesEndpoint(endpoint string) (obj, bool) {
	host, port, err := net.SplitHostPort(endpoint)
	if err != nil {
		return nil, false
	}
	return obj{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   obj{"name": "kubernetes-services-endpoint", "namespace": "tigera-operator"},
		"data":       obj{"KUBERNETES_SERVICE_HOST": host, "KUBERNETES_SERVICE_PORT": port},
	}, true
}

// installationChange is the Installation with what Windows needs: the HNS
// dataplane and the service network (the Windows CNI's OutBoundNAT
// exceptions), or nil when it has both.
func installationChange(c *model.Cluster, snap *model.Snapshot, serviceCIDR string) (obj, []string, error) {
	in := c.Installation
	// The Installation as the input gave it, not as the operator defaulted
	// it: the change applied is the input's spec and what Windows needs.
	for _, o := range snap.Objects {
		if t, ok := o.Typed.(*operator.Installation); ok {
			in = t
		}
	}
	if in == nil {
		return nil, nil, nil
	}
	var why []string
	hns := in.Spec.CalicoNetwork != nil && in.Spec.CalicoNetwork.WindowsDataplane != nil && *in.Spec.CalicoNetwork.WindowsDataplane == "HNS"
	if !hns {
		why = append(why, "calicoNetwork.windowsDataplane: HNS")
	}
	hasSvc := slices.Contains(in.Spec.ServiceCIDRs, serviceCIDR)
	if !hasSvc && serviceCIDR != "" && serviceCIDR[0] != '<' {
		why = append(why, "serviceCIDRs: ["+serviceCIDR+"]")
	}
	if len(why) == 0 {
		return nil, nil, nil
	}
	raw, err := json.Marshal(in.Spec)
	if err != nil {
		return nil, nil, fmt.Errorf("installation: %w", err)
	}
	var spec obj
	if err := json.Unmarshal(raw, &spec); err != nil {
		return nil, nil, fmt.Errorf("installation: %w", err)
	}
	cn, _ := spec["calicoNetwork"].(obj)
	if cn == nil {
		cn = obj{}
		spec["calicoNetwork"] = cn
	}
	cn["windowsDataplane"] = "HNS"
	if !hasSvc && serviceCIDR != "" && serviceCIDR[0] != '<' {
		cidrs := append([]string(nil), in.Spec.ServiceCIDRs...)
		spec["serviceCIDRs"] = append(cidrs, serviceCIDR)
	}
	return obj{
		"apiVersion": "operator.tigera.io/v1",
		"kind":       "Installation",
		"metadata":   obj{"name": in.Name},
		"spec":       spec,
	}, why, nil
}
