package operator

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	opapi "github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
)

// labInstallation is calico-installation.yaml of seed 000.
const labInstallation = `{
  "apiVersion": "operator.tigera.io/v1", "kind": "Installation", "metadata": {"name": "default"},
  "spec": {
    "serviceCIDRs": ["10.96.0.0/12"],
    "calicoNetwork": {
      "bgp": "Disabled", "linuxDataplane": "Nftables", "windowsDataplane": "HNS",
      "ipPools": [{"name": "default-ipv4-ippool", "cidr": "172.21.0.0/16", "blockSize": 26,
                   "encapsulation": "VXLAN", "natOutgoing": "Enabled", "nodeSelector": "all()"}]
    }
  }
}`

func installation(t *testing.T, js string, edit func(*opapi.InstallationSpec)) *opapi.Installation {
	t.Helper()
	inst := &opapi.Installation{}
	if err := json.Unmarshal([]byte(js), inst); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(&inst.Spec)
	}
	return inst
}

func node(name, os string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/os": os}}}
}

func labNodes(windows bool) []*corev1.Node {
	n := []*corev1.Node{node("k8s-lab-master-1", "linux"), node("k8s-lab-node-1", "linux"), node("k8s-lab-node-2", "linux")}
	if windows {
		n = append(n, node("k8s-lab-win-1", "windows"))
	}
	return n
}

func endpointCM(data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: ServicesEndpointConfigMap, Namespace: OperatorNamespace}, Data: data}
}

func ipamConfig(strict bool) *calico.IPAMConfiguration {
	return &calico.IPAMConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: calico.IPAMConfigurationSpec{StrictAffinity: strict}}
}

// labInputs is the seed's lab right after "kubectl create -f
// calico-installation.yaml", before strictAffinity was patched.
func labInputs(t *testing.T) Inputs {
	return Inputs{
		Installation:     installation(t, labInstallation, nil),
		ServicesEndpoint: endpointCM(map[string]string{"KUBERNETES_SERVICE_HOST": "k8s-lab-api.example.com", "KUBERNETES_SERVICE_PORT": "6443"}),
		Nodes:            []*corev1.Node{node("k8s-lab-master-1", "linux")},
		Kubeadm:          &Kubeadm{PodSubnet: "172.21.0.0/16", ServiceSubnet: "10.96.0.0/12"},
		KubeDNS:          &corev1.Service{Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.10", ClusterIPs: []string{"10.96.0.10"}}},
		APIService: &corev1.Service{Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.1",
			Ports: []corev1.ServicePort{{Name: "https", Port: 443}}}},
		APIServer: &opapi.APIServer{ObjectMeta: metav1.ObjectMeta{Name: "default"}},
	}
}

func statusOf(out Output, name string) *opapi.TigeraStatus {
	for _, s := range out.TigeraStatuses {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// summary renders a TigeraStatus as kubectl's columns:
// "AVAILABLE PROGRESSING DEGRADED | MESSAGE" with blanks for absent
// conditions; the message is the Degraded one when degraded.
func summary(s *opapi.TigeraStatus) string {
	if s == nil {
		return "<absent>"
	}
	cond := map[string]opapi.TigeraStatusCondition{}
	for _, c := range s.Status.Conditions {
		cond[c.Type] = c
	}
	msg := cond["Available"].Message
	if cond["Degraded"].Status == "True" {
		msg = cond["Degraded"].Message
	}
	return fmt.Sprintf("%s %s %s | %s", cond["Available"].Status, cond["Progressing"].Status, cond["Degraded"].Status, msg)
}

const available = "True False False | All objects available"

func degradedOnly(msg string) string { return "  True | " + msg }

func TestSeedTigeraStatus(t *testing.T) {
	in := labInputs(t)
	out := Render(in)
	want := map[string]string{
		StatusAPIServer: available,
		StatusCalico:    available,
		StatusCalicoWindows: degradedOnly("Invalid StrictAffinity, it must be set to 'true' when using Calico IPAM on Windows: " +
			"StrictAffinity is false, it must be set to 'true' in the default IPAMConfiguration when using Calico IPAM on Windows"),
		StatusIPPools: available,
		StatusTiers:   available,
	}
	var names []string
	for _, s := range out.TigeraStatuses {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"apiserver", "calico", "calico-windows", "ippools", "tiers"}) {
		t.Errorf("statuses %v", names)
	}
	for name, w := range want {
		if got := summary(statusOf(out, name)); got != w {
			t.Errorf("%s:\n got %q\nwant %q", name, got, w)
		}
	}
	t.Run("while calico-windows is degraded there is no calico-node-windows", func(t *testing.T) {
		for _, d := range out.DaemonSets {
			if d.Name == WindowsNodeDaemonSet {
				t.Error("calico-node-windows rendered")
			}
		}
	})
	t.Run("after strictAffinity is patched calico-windows is available and the DaemonSet appears", func(t *testing.T) {
		in.IPAMConfiguration = ipamConfig(true)
		out := Render(in)
		if got := summary(statusOf(out, StatusCalicoWindows)); got != available {
			t.Errorf("calico-windows %q", got)
		}
		var names []string
		for _, d := range out.DaemonSets {
			names = append(names, d.Name)
		}
		if !slices.Equal(names, []string{"calico-node", "calico-node-windows", "csi-node-driver"}) {
			t.Errorf("daemonsets %v", names)
		}
	})
}

func TestTigeraStatusMessages(t *testing.T) {
	const invalid = "Invalid Installation provided: "
	const statusEmpty = "InstallationStatus is empty: InstallationStatus is empty"
	cases := []struct {
		name string
		edit func(*Inputs)
		want map[string]string
	}{
		{
			// k8s-endpoint.go: the operator falls back to its own
			// environment (the kubernetes Service); windows_controller.go
			// Reconcile alone insists on the ConfigMap.
			name: "a missing services endpoint ConfigMap leaves calico available and degrades calico-windows only",
			edit: func(in *Inputs) { in.ServicesEndpoint = nil; in.IPAMConfiguration = ipamConfig(true) },
			want: map[string]string{
				StatusCalico:        available,
				StatusCalicoWindows: degradedOnly(`Error reading services endpoint configmap: configmaps "kubernetes-services-endpoint" not found`),
				StatusIPPools:       available,
				StatusAPIServer:     available,
				StatusTiers:         available,
			},
		},
		{
			name: "a missing services endpoint ConfigMap with no kubernetes Service known degrades calico and calico-windows",
			edit: func(in *Inputs) {
				in.ServicesEndpoint = nil
				in.APIService = nil
				in.IPAMConfiguration = ipamConfig(true)
			},
			want: map[string]string{
				StatusCalico:        degradedOnly(invalid + "services endpoint configmap 'kubernetes-services-endpoint' does not have all required information for Calico Windows daemonset configuration"),
				StatusCalicoWindows: degradedOnly(`Error reading services endpoint configmap: configmaps "kubernetes-services-endpoint" not found`),
				StatusIPPools:       degradedOnly("Waiting for Installation defaulting to occur"),
				StatusAPIServer:     degradedOnly("Waiting for Installation Variant to be set"),
				StatusTiers:         available,
			},
		},
		{
			name: "a ConfigMap without the port is rejected by validation in calico",
			edit: func(in *Inputs) {
				in.ServicesEndpoint = endpointCM(map[string]string{"KUBERNETES_SERVICE_HOST": "k8s-lab-api.example.com"})
				in.IPAMConfiguration = ipamConfig(true)
			},
			want: map[string]string{
				StatusCalico:        degradedOnly(invalid + "services endpoint configmap 'kubernetes-services-endpoint' does not have all required information for Calico Windows daemonset configuration"),
				StatusCalicoWindows: degradedOnly(statusEmpty),
			},
		},
		{
			name: "missing serviceCIDRs with Calico CNI degrades calico, not calico-windows",
			edit: func(in *Inputs) { in.Installation.Spec.ServiceCIDRs = nil; in.IPAMConfiguration = ipamConfig(true) },
			want: map[string]string{
				StatusCalico:        degradedOnly(invalid + "installation spec.ServiceCIDRs must be provided when using Calico CNI on Windows"),
				StatusCalicoWindows: degradedOnly(statusEmpty),
				StatusIPPools:       degradedOnly("Waiting for Installation defaulting to occur"),
			},
		},
		{
			name: "VXLANCrossSubnet is refused for Windows",
			edit: func(in *Inputs) {
				in.Installation.Spec.CalicoNetwork.IPPools[0].Encapsulation = opapi.EncapVXLANCrossSubnet
				in.IPAMConfiguration = ipamConfig(true)
			},
			want: map[string]string{
				StatusCalico:        degradedOnly(invalid + "IPv4 IPPool encapsulation VXLANCrossSubnet is not supported by Calico for Windows"),
				StatusCalicoWindows: degradedOnly(statusEmpty),
			},
		},
		{
			name: "IPIP with BGP is refused for Windows",
			edit: func(in *Inputs) {
				in.Installation.Spec.CalicoNetwork.BGP = strp(BGPEnabled)
				in.Installation.Spec.CalicoNetwork.IPPools[0].Encapsulation = opapi.EncapIPIP
			},
			want: map[string]string{StatusCalico: degradedOnly(invalid + "IPv4 IPPool encapsulation IPIP is not supported by Calico for Windows")},
		},
		{
			name: "IPIPCrossSubnet with BGP is refused for Windows",
			edit: func(in *Inputs) {
				in.Installation.Spec.CalicoNetwork.BGP = strp(BGPEnabled)
				in.Installation.Spec.CalicoNetwork.IPPools[0].Encapsulation = opapi.EncapIPIPCrossSubnet
			},
			want: map[string]string{StatusCalico: degradedOnly(invalid + "IPv4 IPPool encapsulation IPIPCrossSubnet is not supported by Calico for Windows")},
		},
		{
			name: "a pool without encapsulation fails the Windows check before the pool controller can default it",
			edit: func(in *Inputs) { in.Installation.Spec.CalicoNetwork.IPPools[0].Encapsulation = "" },
			want: map[string]string{StatusCalico: degradedOnly(invalid + "IPv4 IPPool encapsulation  is not supported by Calico for Windows")},
		},
		{
			name: "None is accepted for Windows only with BGP",
			edit: func(in *Inputs) {
				in.Installation.Spec.CalicoNetwork.IPPools[0].Encapsulation = opapi.EncapNone
				in.IPAMConfiguration = ipamConfig(true)
			},
			want: map[string]string{StatusCalico: degradedOnly(invalid + "with BIRD cluster routing mode, unencapsulated IP pools require that BGP is enabled")},
		},
		{
			name: "once the Installation had been reconciled, calico-windows reports the validation error too",
			edit: func(in *Inputs) {
				in.Installation.Spec.CalicoNetwork.IPPools[0].Encapsulation = opapi.EncapVXLANCrossSubnet
				in.Installation.Status.Variant = "Calico"
			},
			want: map[string]string{
				StatusCalico:        "False False True | " + invalid + "IPv4 IPPool encapsulation VXLANCrossSubnet is not supported by Calico for Windows",
				StatusCalicoWindows: degradedOnly(invalid + "IPv4 IPPool encapsulation VXLANCrossSubnet is not supported by Calico for Windows"),
				StatusIPPools:       available,
			},
		},
		{
			name: "no kube-dns Service degrades calico-windows",
			edit: func(in *Inputs) { in.KubeDNS = nil; in.IPAMConfiguration = ipamConfig(true) },
			want: map[string]string{StatusCalico: available, StatusCalicoWindows: degradedOnly(`kube-dns service not found: services "kube-dns" not found`)},
		},
		{
			name: "an IPAMConfiguration that does not exist counts as strictAffinity false",
			edit: func(in *Inputs) { in.IPAMConfiguration = nil },
			want: map[string]string{StatusCalicoWindows: degradedOnly("Invalid StrictAffinity, it must be set to 'true' when using Calico IPAM on Windows: StrictAffinity is false, it must be set to 'true' in the default IPAMConfiguration when using Calico IPAM on Windows")},
		},
		{
			name: "host-local IPAM does not need strict affinity",
			edit: func(in *Inputs) {
				in.Installation.Spec.CNI = &opapi.CNISpec{Type: "Calico", IPAM: &opapi.IPAMSpec{Type: "HostLocal"}}
				in.Installation.Spec.CalicoNetwork.BGP = strp(BGPEnabled)
				in.Installation.Spec.CalicoNetwork.IPPools[0].Encapsulation = opapi.EncapNone
			},
			want: map[string]string{StatusCalico: available, StatusCalicoWindows: available},
		},
		{
			name: "windowsNodes without the Windows dataplane is refused and calico-windows does not exist",
			edit: func(in *Inputs) {
				in.Installation.Spec.CalicoNetwork.WindowsDataplane = nil
				in.Installation.Spec.WindowsNodes = &opapi.WindowsNodeSpec{CNIBinDir: "/opt/cni/bin"}
			},
			want: map[string]string{
				StatusCalico:        degradedOnly(invalid + "installation spec.WindowsNodes is not valid and should not be provided when Calico for Windows is disabled"),
				StatusCalicoWindows: "<absent>",
			},
		},
		{
			name: "a Linux-only Installation has no calico-windows status",
			edit: func(in *Inputs) {
				in.Installation.Spec.CalicoNetwork.WindowsDataplane = strp("Disabled")
			},
			want: map[string]string{StatusCalico: available, StatusCalicoWindows: "<absent>"},
		},
		{
			// validation.go validateCustomResource with
			// core_controller.go clusterRoutingMode: unset means
			// FelixIPIPOnly, so Felix programs IPIP routes without BGP.
			name: "IPIP defaulted by the pool controller without BGP is valid when clusterRoutingMode is unset",
			edit: func(in *Inputs) {
				in.Installation.Spec.CalicoNetwork.WindowsDataplane = nil
				in.Installation.Spec.CalicoNetwork.IPPools = nil
			},
			want: map[string]string{StatusCalico: available, StatusIPPools: available},
		},
		{
			name: "IPIPCrossSubnet without BGP is valid when clusterRoutingMode is unset",
			edit: func(in *Inputs) {
				in.Installation.Spec.CalicoNetwork.WindowsDataplane = nil
				in.Installation.Spec.CalicoNetwork.IPPools[0].Encapsulation = opapi.EncapIPIPCrossSubnet
			},
			want: map[string]string{StatusCalico: available},
		},
		{
			name: "IPIP without BGP in BIRD cluster routing mode degrades calico",
			edit: func(in *Inputs) {
				in.Installation.Spec.CalicoNetwork.WindowsDataplane = nil
				in.Installation.Spec.CalicoNetwork.IPPools[0].Encapsulation = opapi.EncapIPIP
				in.Installation.Spec.CalicoNetwork.ClusterRoutingMode = strp(RoutingBIRD)
			},
			want: map[string]string{StatusCalico: degradedOnly(invalid + "with BIRD cluster routing mode, IPIP encapsulation requires that BGP is enabled")},
		},
		{
			name: "an unencapsulated pool without BGP stays invalid when clusterRoutingMode is unset",
			edit: func(in *Inputs) {
				in.Installation.Spec.CalicoNetwork.WindowsDataplane = nil
				in.Installation.Spec.CalicoNetwork.IPPools[0].Encapsulation = opapi.EncapNone
			},
			want: map[string]string{StatusCalico: degradedOnly(invalid + "with BIRD cluster routing mode, unencapsulated IP pools require that BGP is enabled")},
		},
		{
			name: "an unencapsulated pool without BGP is valid in Felix cluster routing mode",
			edit: func(in *Inputs) {
				in.Installation.Spec.CalicoNetwork.WindowsDataplane = nil
				in.Installation.Spec.CalicoNetwork.IPPools[0].Encapsulation = opapi.EncapNone
				in.Installation.Spec.CalicoNetwork.ClusterRoutingMode = strp(RoutingFelix)
			},
			want: map[string]string{StatusCalico: available},
		},
		{
			// validation.go validateNodeAddressDetection.
			name: "two IPv4 address autodetection methods at once degrade calico",
			edit: func(in *Inputs) {
				in.IPAMConfiguration = ipamConfig(true)
				in.Installation.Spec.CalicoNetwork.NodeAddressAutodetectionV4 = map[string]any{"interface": "eth0", "canReach": "8.8.8.8"}
			},
			want: map[string]string{StatusCalico: degradedOnly(invalid + "no more than one node address autodetection method can be specified per-family")},
		},
		{
			name: "a bad CIDR among the IPv6 autodetection cidrs degrades calico",
			edit: func(in *Inputs) {
				in.IPAMConfiguration = ipamConfig(true)
				in.Installation.Spec.CalicoNetwork.NodeAddressAutodetectionV6 = map[string]any{"cidrs": []any{"fd00::/64", "nope"}}
			},
			want: map[string]string{StatusCalico: degradedOnly(invalid + "invalid CIDR provided for node address autodetection: nope")},
		},
		{
			name: "an empty pool list with no pools in the cluster leaves calico waiting",
			edit: func(in *Inputs) {
				in.Installation.Spec.CalicoNetwork.WindowsDataplane = nil
				in.Installation.Spec.CalicoNetwork.IPPools = []opapi.IPPool{}
			},
			want: map[string]string{StatusCalico: degradedOnly("waiting for enabled IP pools to be created"), StatusIPPools: available},
		},
		{
			// core_controller.go Reconcile waits for pools only when the
			// Installation lists some or Calico is the CNI or the IPAM.
			name: "the AWS VPC CNI with no pools does not wait for pools",
			edit: func(in *Inputs) {
				in.Kubeadm = nil
				in.Installation.Spec.KubernetesProvider = "EKS"
				in.Installation.Spec.CNI = &opapi.CNISpec{Type: "AmazonVPC"}
				in.Installation.Spec.CalicoNetwork.IPPools = nil
			},
			want: map[string]string{StatusCalico: available, StatusIPPools: available, StatusCalicoWindows: available},
		},
		{
			name: "the Azure VNET CNI with no pools does not wait for pools",
			edit: func(in *Inputs) {
				in.Kubeadm = nil
				in.Installation.Spec.CNI = &opapi.CNISpec{Type: "AzureVNET"}
				in.Installation.Spec.CalicoNetwork.IPPools = nil
			},
			want: map[string]string{StatusCalico: available, StatusIPPools: available},
		},
		{
			name: "GKE's CNI with host-local IPAM and no pools does not wait for pools",
			edit: func(in *Inputs) {
				in.Kubeadm = nil
				in.Installation.Spec.CNI = &opapi.CNISpec{Type: "GKE"}
				in.Installation.Spec.CalicoNetwork.IPPools = nil
				in.Installation.Spec.CalicoNetwork.WindowsDataplane = nil
			},
			want: map[string]string{StatusCalico: available, StatusIPPools: available},
		},
		{
			name: "a pool outside kubeadm's podSubnet degrades ippools",
			edit: func(in *Inputs) { in.Kubeadm = &Kubeadm{PodSubnet: "10.244.0.0/16"} },
			want: map[string]string{
				StatusIPPools: degradedOnly("error filling IP pool defaults: could not resolve CalicoNetwork IPPool and kubeadm configuration: IPPool 172.21.0.0/16 is not within the platform's configured pod network CIDR(s) [10.244.0.0/16]"),
				StatusCalico:  degradedOnly("waiting for enabled IP pools to be created"),
			},
		},
		{
			name: "a kubeadm-config without podSubnet degrades ippools",
			edit: func(in *Inputs) { in.Kubeadm = &Kubeadm{} },
			want: map[string]string{StatusIPPools: degradedOnly("error filling IP pool defaults: could not resolve CalicoNetwork IPPool and kubeadm configuration: kubeadm configuration is missing required podSubnet field")},
		},
		{
			name: "an invalid natOutgoing degrades ippools",
			edit: func(in *Inputs) { in.Installation.Spec.CalicoNetwork.IPPools[0].NATOutgoing = "Yes" },
			want: map[string]string{StatusIPPools: degradedOnly("error validating IP pool configuration: Yes is invalid for natOutgoing, should be one of Enabled,Disabled")},
		},
		{
			name: "too few Linux nodes for Typha degrades calico after it had been available",
			edit: func(in *Inputs) {
				in.IPAMConfiguration = ipamConfig(true)
				in.Nodes = []*corev1.Node{node("l", "linux"), node("w1", "windows"), node("w2", "windows")}
			},
			want: map[string]string{StatusCalico: "False False True | Failed to autoscale typha - not enough linux nodes to schedule typha pods on, require 2 and have 1"},
		},
		{
			name: "the v1 CRD mode without an APIServer leaves tiers waiting",
			edit: func(in *Inputs) { in.V1CRDs = true; in.APIServer = nil },
			want: map[string]string{StatusTiers: degradedOnly("Waiting for Tigera API server to be ready"), StatusAPIServer: "<absent>"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := labInputs(t)
			c.edit(&in)
			out := Render(in)
			for name, w := range c.want {
				if got := summary(statusOf(out, name)); got != w {
					t.Errorf("%s:\n got %q\nwant %q", name, got, w)
				}
			}
		})
	}
	t.Run("without an Installation nothing is rendered", func(t *testing.T) {
		out := Render(Inputs{})
		if len(out.TigeraStatuses)+len(out.DaemonSets)+len(out.IPPools) != 0 || out.Installation != nil {
			t.Errorf("%+v", out)
		}
	})
	t.Run("a degraded status has only its Degraded condition, with the reason", func(t *testing.T) {
		s := statusOf(Render(labInputs(t)), StatusCalicoWindows)
		if len(s.Status.Conditions) != 1 || s.Status.Conditions[0].Reason != "ResourceReadError" {
			t.Errorf("%+v", s.Status.Conditions)
		}
	})
}

func TestTyphaScale(t *testing.T) {
	// The table in pkg/common/autoscale.go's comment.
	cases := []struct{ nodes, want int }{
		{1, 1}, {2, 1}, {3, 2}, {4, 2}, {5, 3}, {199, 3}, {200, 3}, {399, 3},
		{400, 4}, {601, 5}, {801, 6}, {1001, 7}, {2001, 12}, {3601, 20},
	}
	for _, c := range cases {
		if got := ExpectedTyphaScale(c.nodes); got != c.want {
			t.Errorf("%d nodes: %d replicas, want %d", c.nodes, got, c.want)
		}
	}
}

func TestTyphaReplicas(t *testing.T) {
	cordoned := node("c", "linux")
	cordoned.Spec.Unschedulable = true
	virtual := node("v", "linux")
	virtual.Labels["kubernetes.azure.com/cluster"] = "x"
	virtual.Labels["type"] = "virtual-kubelet"
	cases := []struct {
		name    string
		nodes   []*corev1.Node
		want    int
		wantErr string
	}{
		{"the seed's single control-plane node runs one Typha", labNodes(false)[:1], 1, ""},
		{"the seed's three Linux nodes run two", labNodes(false), 2, ""},
		{"the Windows node counts: three Linux and one Windows still run two", labNodes(true), 2, ""},
		{"two Linux nodes and a Windows node need two Typhas", []*corev1.Node{node("a", "linux"), node("b", "linux"), node("w", "windows")}, 2, ""},
		{"a cordoned node does not count", append(labNodes(false)[:2], cordoned), 1, ""},
		{"an AKS virtual node does not count", append(labNodes(false)[:2], virtual), 1, ""},
		{"five nodes need three Typhas", append(labNodes(true), node("n3", "linux")), 3, ""},
		{"one Linux node cannot host two Typhas", []*corev1.Node{node("a", "linux"), node("w1", "windows"), node("w2", "windows")}, 0,
			"not enough linux nodes to schedule typha pods on, require 2 and have 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := TyphaReplicas(c.nodes)
			if c.wantErr != "" {
				if err == nil || err.Error() != c.wantErr {
					t.Errorf("err = %v, want %s", err, c.wantErr)
				}
				return
			}
			if err != nil || got != c.want {
				t.Errorf("got %d, %v; want %d", got, err, c.want)
			}
		})
	}
	t.Run("the rendered Deployment follows the node count", func(t *testing.T) {
		in := labInputs(t)
		in.Nodes = labNodes(false)
		if d := deploymentNamed(Render(in), TyphaDeployment); *d.Spec.Replicas != 2 {
			t.Errorf("replicas %d", *d.Spec.Replicas)
		}
	})
}

func deploymentNamed(out Output, name string) *appsv1.Deployment {
	for _, d := range out.Deployments {
		if d.Name == name {
			return d
		}
	}
	return nil
}

func daemonSetNamed(out Output, name string) *appsv1.DaemonSet {
	for _, d := range out.DaemonSets {
		if d.Name == name {
			return d
		}
	}
	return nil
}

func TestIPPoolMapping(t *testing.T) {
	cases := []struct {
		name        string
		encap       string
		wantIPIP    string
		wantVXLAN   string
		natOutgoing string
		wantNAT     bool
	}{
		{"VXLAN is vxlanMode Always and ipipMode Never", opapi.EncapVXLAN, "Never", "Always", "Enabled", true},
		{"VXLANCrossSubnet is vxlanMode CrossSubnet", opapi.EncapVXLANCrossSubnet, "Never", "CrossSubnet", "Enabled", true},
		{"IPIP is ipipMode Always", opapi.EncapIPIP, "Always", "Never", "Disabled", false},
		{"IPIPCrossSubnet is ipipMode CrossSubnet", opapi.EncapIPIPCrossSubnet, "CrossSubnet", "Never", "Enabled", true},
		{"None writes neither mode, which Calico reads as Never", opapi.EncapNone, "", "", "Disabled", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := labInputs(t)
			in.Installation.Spec.CalicoNetwork.WindowsDataplane = nil
			in.Installation.Spec.CalicoNetwork.BGP = strp(BGPEnabled)
			p := &in.Installation.Spec.CalicoNetwork.IPPools[0]
			p.Encapsulation, p.NATOutgoing, p.BlockSize, p.NodeSelector = c.encap, c.natOutgoing, nil, ""
			out := Render(in)
			if len(out.IPPools) != 1 {
				t.Fatalf("pools %v, ippools %q", out.IPPools, summary(statusOf(out, StatusIPPools)))
			}
			got := out.IPPools[0]
			if got.Spec.IPIPMode != c.wantIPIP || got.Spec.VXLANMode != c.wantVXLAN || got.Spec.NATOutgoing != c.wantNAT {
				t.Errorf("spec %+v", got.Spec)
			}
			if ipip, vx := EffectiveModes(got); (c.wantIPIP == "" && ipip != "Never") || (c.wantVXLAN == "" && vx != "Never") {
				t.Errorf("effective modes %s %s", ipip, vx)
			}
			if got.Spec.BlockSize != 26 || got.Spec.NodeSelector != "all()" || got.Spec.CIDR != "172.21.0.0/16" ||
				!slices.Equal(got.Spec.AllowedUses, []string{"Workload", "Tunnel"}) || got.Spec.AssignmentMode != "Automatic" {
				t.Errorf("defaults %+v", got.Spec)
			}
			if got.Name != "default-ipv4-ippool" || got.Labels["app.kubernetes.io/managed-by"] != "tigera-operator" ||
				got.APIVersion != "projectcalico.org/v3" || got.Kind != "IPPool" {
				t.Errorf("meta %+v %+v", got.TypeMeta, got.ObjectMeta)
			}
		})
	}
}

func TestDefaultPools(t *testing.T) {
	base := `{"metadata": {"name": "default"}, "spec": {}}`
	cases := []struct {
		name    string
		kubeadm *Kubeadm
		edit    func(*opapi.InstallationSpec)
		want    []string // name cidr ipip vxlan blockSize nat
	}{
		{"with no pools and no kubeadm the default pool is 192.168.0.0/16 with IPIP", nil, nil,
			[]string{"default-ipv4-ippool 192.168.0.0/16 Always Never 26 true"}},
		{"with kubeadm the pool is its podSubnet", &Kubeadm{PodSubnet: "172.21.0.0/16"}, nil,
			[]string{"default-ipv4-ippool 172.21.0.0/16 Always Never 26 true"}},
		{"dual-stack kubeadm gives an IPv4 and an IPv6 pool", &Kubeadm{PodSubnet: "10.244.0.0/16,fd00:10:244::/56"}, nil,
			[]string{"default-ipv4-ippool 10.244.0.0/16 Always Never 26 true", "default-ipv6-ippool fd00:10:244::/56   122 false"}},
		{"EKS defaults to 172.16.0.0/16 with VXLAN", nil, func(s *opapi.InstallationSpec) {
			s.KubernetesProvider = "EKS"
			s.CNI = &opapi.CNISpec{Type: "Calico"}
		}, []string{"default-ipv4-ippool 172.16.0.0/16 Never Always 26 true"}},
		{"unnamed extra pools are named after their CIDR", nil, func(s *opapi.InstallationSpec) {
			s.CalicoNetwork = &opapi.CalicoNetworkSpec{IPPools: []opapi.IPPool{{CIDR: "10.1.0.0/16"}, {CIDR: "10.2.0.0/16"}}}
		}, []string{"10.1.0.0-16 10.1.0.0/16 Always Never 26 true", "10.2.0.0-16 10.2.0.0/16 Always Never 26 true"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inst := installation(t, base, c.edit)
			out := Render(Inputs{Installation: inst, Kubeadm: c.kubeadm, Nodes: labNodes(false)})
			var got []string
			for _, p := range out.IPPools {
				got = append(got, fmt.Sprintf("%s %s %s %s %d %v", p.Name, p.Spec.CIDR, p.Spec.IPIPMode, p.Spec.VXLANMode, p.Spec.BlockSize, p.Spec.NATOutgoing))
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("pools\n got %q\nwant %q\nippools: %s", got, c.want, summary(statusOf(out, StatusIPPools)))
			}
			if s := summary(statusOf(out, StatusCalico)); s != available {
				t.Errorf("calico %q", s)
			}
		})
	}
	t.Run("pools that already exist are left to whoever made them", func(t *testing.T) {
		existing := &calico.IPPool{ObjectMeta: metav1.ObjectMeta{Name: "mine"}, Spec: calico.IPPoolSpec{CIDR: "10.50.0.0/16", VXLANMode: "Always"}}
		out := Render(Inputs{Installation: installation(t, base, nil), Kubeadm: &Kubeadm{PodSubnet: "172.21.0.0/16"},
			ExistingIPPools: []*calico.IPPool{existing}, Nodes: labNodes(false)})
		if len(out.IPPools) != 0 {
			t.Errorf("operator pools %v", out.IPPools)
		}
		if s := summary(statusOf(out, StatusCalico)); s != available {
			t.Errorf("calico %q", s)
		}
		if out.Installation.Spec.CalicoNetwork.IPPools == nil || len(out.Installation.Spec.CalicoNetwork.IPPools) != 0 {
			t.Errorf("installation pools %v", out.Installation.Spec.CalicoNetwork.IPPools)
		}
	})
}

func TestWorkloads(t *testing.T) {
	in := labInputs(t)
	in.IPAMConfiguration = ipamConfig(true)
	in.Nodes = labNodes(true)
	out := Render(in)

	wantTolerations := []corev1.Toleration{
		{Key: "CriticalAddonsOnly", Operator: corev1.TolerationOpExists},
		{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
	}
	cases := []struct {
		name, ds, os string
		hostNetwork  bool
	}{
		{"calico-node runs on Linux nodes in the host network", NodeDaemonSet, "linux", true},
		{"csi-node-driver runs on Linux nodes on the pod network", CSIDaemonSet, "linux", false},
		{"calico-node-windows runs on Windows nodes in the host network", WindowsNodeDaemonSet, "windows", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := daemonSetNamed(out, c.ds)
			if d == nil {
				t.Fatal("missing")
			}
			spec := d.Spec.Template.Spec
			if d.Namespace != "calico-system" || len(spec.NodeSelector) != 1 || spec.NodeSelector["kubernetes.io/os"] != c.os {
				t.Errorf("namespace %s nodeSelector %v", d.Namespace, spec.NodeSelector)
			}
			if !slices.Equal(spec.Tolerations, wantTolerations) {
				t.Errorf("tolerations %v", spec.Tolerations)
			}
			if spec.HostNetwork != c.hostNetwork {
				t.Errorf("hostNetwork %v", spec.HostNetwork)
			}
			if d.Spec.Selector.MatchLabels["k8s-app"] != c.ds || d.Spec.Template.Labels["k8s-app"] != c.ds {
				t.Errorf("selector %v labels %v", d.Spec.Selector, d.Spec.Template.Labels)
			}
		})
	}
	t.Run("calico-node-windows runs HostProcess containers felix and node after uninstall-calico and install-cni", func(t *testing.T) {
		spec := daemonSetNamed(out, WindowsNodeDaemonSet).Spec.Template.Spec
		var inits, ctrs []string
		for _, c := range spec.InitContainers {
			inits = append(inits, c.Name+"="+c.Image)
		}
		for _, c := range append(append([]corev1.Container(nil), spec.InitContainers...), spec.Containers...) {
			w := c.SecurityContext.WindowsOptions
			if w == nil || !*w.HostProcess || *w.RunAsUserName != `NT AUTHORITY\system` {
				t.Errorf("%s is not a HostProcess container as SYSTEM", c.Name)
			}
		}
		for _, c := range spec.Containers {
			ctrs = append(ctrs, c.Name+"="+c.Image)
		}
		if !slices.Equal(inits, []string{"uninstall-calico=quay.io/calico/node-windows:v3.33.0", "install-cni=quay.io/calico/cni-windows:v3.33.0"}) {
			t.Errorf("init containers %v", inits)
		}
		if !slices.Equal(ctrs, []string{"felix=quay.io/calico/node-windows:v3.33.0", "node=quay.io/calico/node-windows:v3.33.0"}) {
			t.Errorf("containers %v", ctrs)
		}
		env := map[string]string{}
		for _, e := range spec.Containers[1].Env {
			env[e.Name] = e.Value
		}
		if env["VXLAN_VNI"] != "4096" || env["CALICO_NETWORKING_BACKEND"] != "vxlan" || env["KUBE_NETWORK"] != "Calico.*" ||
			env["KUBERNETES_SERVICE_HOST"] != "k8s-lab-api.example.com" || env["KUBERNETES_SERVICE_PORT"] != "6443" {
			t.Errorf("env %v", env)
		}
	})
	t.Run("calico-node uses the node image and the combined image for install-cni", func(t *testing.T) {
		spec := daemonSetNamed(out, NodeDaemonSet).Spec.Template.Spec
		if spec.Containers[0].Image != "quay.io/calico/node:v3.33.0" || spec.PriorityClassName != "system-node-critical" {
			t.Errorf("container %s %s", spec.Containers[0].Image, spec.PriorityClassName)
		}
		var inits []string
		for _, c := range spec.InitContainers {
			inits = append(inits, c.Name)
		}
		if !slices.Equal(inits, []string{"flexvol-driver", "ebpf-bootstrap", "cni-plugins", "install-cni"}) {
			t.Errorf("init containers %v", inits)
		}
	})
	deployments := []struct {
		name        string
		replicas    int32
		hostNetwork bool
	}{
		{KubeControllersDeployment, 1, false},
		{TyphaDeployment, 2, true},
		{WebhooksDeployment, 2, false},
	}
	for _, c := range deployments {
		t.Run(fmt.Sprintf("%s has %d replicas, hostNetwork %v, on Linux", c.name, c.replicas, c.hostNetwork), func(t *testing.T) {
			d := deploymentNamed(out, c.name)
			if d == nil {
				t.Fatal("missing")
			}
			if *d.Spec.Replicas != c.replicas || d.Spec.Template.Spec.HostNetwork != c.hostNetwork ||
				d.Spec.Template.Spec.NodeSelector["kubernetes.io/os"] != "linux" {
				t.Errorf("replicas %d hostNetwork %v nodeSelector %v", *d.Spec.Replicas, d.Spec.Template.Spec.HostNetwork, d.Spec.Template.Spec.NodeSelector)
			}
			if !strings.HasPrefix(d.Spec.Template.Spec.Containers[0].Image, "quay.io/calico/calico:v3.33.0") {
				t.Errorf("image %s", d.Spec.Template.Spec.Containers[0].Image)
			}
		})
	}
	t.Run("Typha's port is a host port so replicas spread over nodes", func(t *testing.T) {
		p := deploymentNamed(out, TyphaDeployment).Spec.Template.Spec.Containers[0].Ports[0]
		if p.ContainerPort != 5473 || p.HostPort != 5473 {
			t.Errorf("port %+v", p)
		}
	})
	t.Run("the webhooks and kube-controllers tolerate the control-plane taint", func(t *testing.T) {
		for _, n := range []string{WebhooksDeployment, KubeControllersDeployment} {
			tol := deploymentNamed(out, n).Spec.Template.Spec.Tolerations
			if !slices.ContainsFunc(tol, func(x corev1.Toleration) bool {
				return x.Key == "node-role.kubernetes.io/control-plane" && x.Effect == corev1.TaintEffectNoSchedule
			}) {
				t.Errorf("%s tolerations %v", n, tol)
			}
		}
	})
	t.Run("calico-system is a privileged namespace", func(t *testing.T) {
		if len(out.Namespaces) != 1 || out.Namespaces[0].Name != "calico-system" ||
			out.Namespaces[0].Labels["pod-security.kubernetes.io/enforce"] != "privileged" {
			t.Errorf("%v", out.Namespaces)
		}
	})
	t.Run("no webhooks without an APIServer", func(t *testing.T) {
		in := in
		in.APIServer = nil
		if deploymentNamed(Render(in), WebhooksDeployment) != nil {
			t.Error("calico-webhooks rendered")
		}
	})
	t.Run("a custom registry replaces quay.io", func(t *testing.T) {
		in := labInputs(t)
		in.Installation.Spec.Registry = "registry.example.com"
		if img := daemonSetNamed(Render(in), NodeDaemonSet).Spec.Template.Spec.Containers[0].Image; img != "registry.example.com/calico/node:v3.33.0" {
			t.Errorf("image %s", img)
		}
	})
	t.Run("the Installation comes back defaulted with a status", func(t *testing.T) {
		s := out.Installation
		if s.Spec.Variant != "Calico" || s.Spec.CNI.Type != "Calico" || s.Spec.CNI.IPAM.Type != "Calico" ||
			s.Spec.WindowsNodes.CNIBinDir != "/opt/cni/bin" || *s.Spec.ControlPlaneReplicas != 2 || s.Status.Variant != "Calico" {
			t.Errorf("%+v", s.Spec)
		}
	})
}

func TestFelixConfigurationDefaults(t *testing.T) {
	cases := []struct {
		name      string
		in        *calico.FelixConfiguration
		dataplane string
		wantVNI   int
		wantMode  string
	}{
		{"a missing FelixConfiguration gets VNI 4096, port 4789, health port 9099", nil, "Nftables", 4096, "Auto"},
		{"a VNI already set is kept", &calico.FelixConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: calico.FelixConfigurationSpec{VXLANVNI: new(5000)}}, "Iptables", 5000, "Disabled"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := labInputs(t)
			in.FelixConfiguration = c.in
			in.Installation.Spec.CalicoNetwork.LinuxDataplane = strp(c.dataplane)
			fc := Render(in).FelixConfiguration
			if fc == nil || fc.Name != "default" || *fc.Spec.VXLANVNI != c.wantVNI || *fc.Spec.VXLANPort != 4789 ||
				*fc.Spec.HealthPort != 9099 || *fc.Spec.NFTablesMode != c.wantMode {
				t.Errorf("%+v", fc)
			}
		})
	}
	t.Run("the input is not modified", func(t *testing.T) {
		orig := &calico.FelixConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
		in := labInputs(t)
		in.FelixConfiguration = orig
		Render(in)
		if orig.Spec.VXLANVNI != nil {
			t.Error("input FelixConfiguration was modified")
		}
	})
}

func TestServiceSubnetNote(t *testing.T) {
	in := labInputs(t)
	in.Kubeadm.ServiceSubnet = "10.112.0.0/12"
	out := Render(in)
	if len(out.Notes) != 1 || !strings.Contains(out.Notes[0], "serviceSubnet 10.112.0.0/12") {
		t.Errorf("notes %v", out.Notes)
	}
}
