package engine_test

import (
	"reflect"
	"strings"
	"testing"

	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
)

func TestKubeadmNodeLabels(t *testing.T) {
	c := buildLab(t)
	tests := []struct {
		name   string
		node   string
		want   map[string]string
		absent []string
	}{
		{
			name: "the init node carries the kubelet's labels and kubeadm's control-plane role",
			node: "k8s-lab-master-1",
			want: map[string]string{
				"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": "k8s-lab-master-1",
				"beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64",
				"node-role.kubernetes.io/control-plane":                   "",
				"node.kubernetes.io/exclude-from-external-load-balancers": "",
			},
			absent: []string{"node.kubernetes.io/windows-build"},
		},
		{
			name: "a Linux worker has no role label and no windows-build",
			node: "k8s-lab-node-1",
			want: map[string]string{
				"kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": "k8s-lab-node-1",
			},
			absent: []string{"node-role.kubernetes.io/control-plane", "node.kubernetes.io/windows-build"},
		},
		{
			name: "the Windows worker gets windows-build 10.0.26100 cut from kernelVersion 10.0.26100.33438",
			node: "k8s-lab-win-1",
			want: map[string]string{
				"kubernetes.io/os": "windows", "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": "k8s-lab-win-1",
				"node.kubernetes.io/windows-build": "10.0.26100",
			},
			absent: []string{"node-role.kubernetes.io/control-plane"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := findNode(t, c, tt.node)
			for k, v := range tt.want {
				got, ok := n.Labels[k]
				if !ok || got != v {
					t.Errorf("label %s = %q (present %v), want %q", k, got, ok, v)
				}
			}
			for _, k := range tt.absent {
				if v, ok := n.Labels[k]; ok {
					t.Errorf("label %s = %q, want it absent", k, v)
				}
			}
		})
	}
}

func TestKubeadmNodeTaints(t *testing.T) {
	tests := []struct {
		name   string
		whatIf []string
		node   string
		want   []corev1.Taint
	}{
		{
			name: "the init node without nodeRegistration.taints gets the control-plane default",
			node: "k8s-lab-master-1",
			want: []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}},
		},
		{
			name: "the Windows node gets the JoinConfiguration's os=windows:NoSchedule",
			node: "k8s-lab-win-1",
			want: []corev1.Taint{{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}},
		},
		{
			name: "a Linux worker joined without a JoinConfiguration has no taints",
			node: "k8s-lab-node-2",
			want: nil,
		},
		{
			name:   "a JoinConfiguration without taints gives a worker none",
			whatIf: []string{"testdata/join-win-no-taints.yaml"},
			node:   "k8s-lab-win-1",
			want:   nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := findNode(t, buildLab(t, tt.whatIf...), tt.node)
			if len(n.Spec.Taints) != len(tt.want) || (len(tt.want) > 0 && !reflect.DeepEqual(n.Spec.Taints, tt.want)) {
				t.Errorf("taints = %v, want %v", n.Spec.Taints, tt.want)
			}
		})
	}
}

func TestKubeletConfigurationMergedWithPatch(t *testing.T) {
	c := buildLab(t)
	tests := []struct {
		name    string
		node    string
		maxPods int32
		memory  string // allocatable: capacity minus the OS's default eviction threshold
	}{
		{"the Windows node's kubeadm patch sets maxPods 60", "k8s-lab-win-1", 60, "7692Mi"},
		{"the control plane keeps the kubelet default of 110", "k8s-lab-master-1", 110, "3996Mi"},
		{"a Linux worker keeps the kubelet default of 110", "k8s-lab-node-1", 110, "8092Mi"},
		{"the other Linux worker keeps the kubelet default of 110", "k8s-lab-node-2", 110, "8092Mi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kc := c.Kubeadm.NodeKubelet[tt.node]
			if kc == nil {
				t.Fatalf("no effective kubelet configuration for %s", tt.node)
			}
			if kc.MaxPods != tt.maxPods {
				t.Errorf("maxPods = %d, want %d", kc.MaxPods, tt.maxPods)
			}
			// The patch is merged into the cluster-wide configuration, not
			// substituted for it.
			if kc.CgroupDriver != "systemd" || !kc.ServerTLSBootstrap {
				t.Errorf("cgroupDriver = %q, serverTLSBootstrap = %v; want the cluster-wide systemd, true", kc.CgroupDriver, kc.ServerTLSBootstrap)
			}
			n := findNode(t, c, tt.node)
			for _, list := range []corev1.ResourceList{n.Status.Capacity, n.Status.Allocatable} {
				if q := list[corev1.ResourcePods]; q.Value() != int64(tt.maxPods) {
					t.Errorf("pods = %s, want %d", q.String(), tt.maxPods)
				}
			}
			if q := n.Status.Allocatable[corev1.ResourceMemory]; q.Cmp(resource.MustParse(tt.memory)) != 0 {
				t.Errorf("allocatable memory = %s, want %s", q.String(), tt.memory)
			}
		})
	}
}

func TestKubeadmNodeInfo(t *testing.T) {
	c := buildLab(t)
	tests := []struct {
		name string
		node string
		want corev1.NodeSystemInfo
	}{
		{
			name: "the Windows node reports its build as kernelVersion and its Windows edition as osImage",
			node: "k8s-lab-win-1",
			want: corev1.NodeSystemInfo{
				Architecture: "amd64", OperatingSystem: "windows", OSImage: "Windows Server 2025 Datacenter",
				KernelVersion: "10.0.26100.33438", ContainerRuntimeVersion: "containerd://2.2.2", KubeletVersion: "v1.37.2",
			},
		},
		{
			name: "a Linux node reports Ubuntu and its kernel",
			node: "k8s-lab-node-2",
			want: corev1.NodeSystemInfo{
				Architecture: "amd64", OperatingSystem: "linux", OSImage: "Ubuntu 26.04.1 LTS",
				KernelVersion: "7.0.0-42-generic", ContainerRuntimeVersion: "containerd://2.2.2", KubeletVersion: "v1.37.2",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := findNode(t, c, tt.node)
			if !reflect.DeepEqual(n.Status.NodeInfo, tt.want) {
				t.Errorf("nodeInfo = %+v\nwant       %+v", n.Status.NodeInfo, tt.want)
			}
			wantAddrs := []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: hostAddress(t, c.Hosts, tt.node)}, {Type: corev1.NodeHostName, Address: tt.node}}
			if !reflect.DeepEqual(n.Status.Addresses, wantAddrs) {
				t.Errorf("addresses = %v, want %v", n.Status.Addresses, wantAddrs)
			}
		})
	}
}

func TestPodCIDRsAreHandedOutInJoinOrder(t *testing.T) {
	c := buildLab(t)
	want := map[string]string{
		"k8s-lab-master-1": "172.21.0.0/24",
		"k8s-lab-node-1":   "172.21.1.0/24",
		"k8s-lab-node-2":   "172.21.2.0/24",
		"k8s-lab-win-1":    "172.21.3.0/24",
	}
	for node, cidr := range want {
		n := findNode(t, c, node)
		if n.Spec.PodCIDR != cidr || !reflect.DeepEqual(n.Spec.PodCIDRs, []string{cidr}) {
			t.Errorf("%s: podCIDR %q podCIDRs %v, want %s", node, n.Spec.PodCIDR, n.Spec.PodCIDRs, cidr)
		}
	}
}

func TestKubeletServingCSRs(t *testing.T) {
	linux := []string{"system:node:k8s-lab-master-1", "system:node:k8s-lab-node-1", "system:node:k8s-lab-node-2"}
	all := append(append([]string(nil), linux...), "system:node:k8s-lab-win-1")
	tests := []struct {
		name        string
		whatIf      []string
		keepCSRs    bool
		wantPending []string // requestors of derived, Pending CSRs
		wantTotal   int
	}{
		{
			name:      "observed approved CSRs are kept and none is derived for their nodes",
			keepCSRs:  true,
			wantTotal: 5,
		},
		{
			name:        "with serverTLSBootstrap true and no CSR observed every kubelet's CSR is Pending",
			wantPending: all,
			wantTotal:   4,
		},
		{
			name:      "with serverTLSBootstrap false no kubelet files a serving CSR",
			whatIf:    []string{"testdata/kubelet-no-server-tls-bootstrap.yaml"},
			wantTotal: 0,
		},
		{
			name:        "a node whose kubelet patch turns serverTLSBootstrap off files none",
			whatIf:      []string{"testdata/windows-no-server-tls-bootstrap/kubeletconfiguration.yaml"},
			wantPending: linux,
			wantTotal:   3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := snapshot(t, true, tt.whatIf...)
			if !tt.keepCSRs {
				s = without(s, "CertificateSigningRequest")
			}
			c := build(t, s)
			if len(c.CSRs) != tt.wantTotal {
				t.Fatalf("%d CSRs %v, want %d", len(c.CSRs), names(c.CSRs), tt.wantTotal)
			}
			var pending []string
			for _, r := range c.CSRs {
				if len(r.Status.Conditions) > 0 {
					if tt.keepCSRs && r.Status.Conditions[0].Type != certv1.CertificateApproved {
						t.Errorf("observed CSR %s is %s, want Approved", r.Name, r.Status.Conditions[0].Type)
					}
					continue
				}
				pending = append(pending, r.Spec.Username)
				if r.Spec.SignerName != certv1.KubeletServingSignerName {
					t.Errorf("CSR %s signer %q, want %q", r.Name, r.Spec.SignerName, certv1.KubeletServingSignerName)
				}
				if !reflect.DeepEqual(r.Spec.Usages, []certv1.KeyUsage{certv1.UsageDigitalSignature, certv1.UsageServerAuth}) {
					t.Errorf("CSR %s usages %v", r.Name, r.Spec.Usages)
				}
				if !reflect.DeepEqual(r.Spec.Groups, []string{"system:nodes", "system:authenticated"}) {
					t.Errorf("CSR %s groups %v", r.Name, r.Spec.Groups)
				}
				if !strings.HasPrefix(r.Name, "csr-") || len(r.Name) != len("csr-")+5 {
					t.Errorf("CSR name %q, want csr-<5 characters>", r.Name)
				}
			}
			if !reflect.DeepEqual(sorted(pending), sorted(tt.wantPending)) {
				t.Errorf("Pending CSRs for %v, want %v", sorted(pending), sorted(tt.wantPending))
			}
		})
	}
}

func TestCoreDNSAndServiceAddresses(t *testing.T) {
	tests := []struct {
		name           string
		whatIf         []string
		wantDNS        string
		wantKubernetes string
	}{
		{
			name:           "kube-dns takes the tenth address and kubernetes the first of 10.96.0.0/12",
			wantDNS:        "10.96.0.10",
			wantKubernetes: "10.96.0.1",
		},
		{
			name:           "with serviceSubnet 10.100.0.0/16 they move to 10.100.0.10 and 10.100.0.1",
			whatIf:         []string{"testdata/service-subnet-10.100.yaml"},
			wantDNS:        "10.100.0.10",
			wantKubernetes: "10.100.0.1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := buildLab(t, tt.whatIf...)
			d := findDeployment(t, c, "kube-system", "coredns")
			if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
				t.Errorf("coredns replicas = %v, want 2", d.Spec.Replicas)
			}
			if d.Status.Replicas != 2 || d.Status.ReadyReplicas != 2 {
				t.Errorf("coredns status %d/%d ready, want 2/2", d.Status.ReadyReplicas, d.Status.Replicas)
			}
			if got := d.Spec.Template.Spec.NodeSelector["kubernetes.io/os"]; got != "linux" {
				t.Errorf("coredns nodeSelector os = %q, want linux", got)
			}
			dns := findService(t, c, "kube-system", "kube-dns")
			if dns.Spec.ClusterIP != tt.wantDNS || !reflect.DeepEqual(dns.Spec.ClusterIPs, []string{tt.wantDNS}) {
				t.Errorf("kube-dns clusterIP %q %v, want %s", dns.Spec.ClusterIP, dns.Spec.ClusterIPs, tt.wantDNS)
			}
			k := findService(t, c, "default", "kubernetes")
			if k.Spec.ClusterIP != tt.wantKubernetes {
				t.Errorf("kubernetes clusterIP %q, want %s", k.Spec.ClusterIP, tt.wantKubernetes)
			}
			es := slicesFor(c, "default", "kubernetes")
			if len(es) != 1 || len(es[0].Endpoints) != 1 || !reflect.DeepEqual(es[0].Endpoints[0].Addresses, []string{"192.168.10.23"}) ||
				len(es[0].Ports) != 1 || *es[0].Ports[0].Port != 6443 {
				t.Errorf("kubernetes EndpointSlice = %+v, want the advertise address 192.168.10.23:6443", es)
			}
		})
	}
}

func TestAnotherServiceSubnetRefusesClusterIPsOutsideIt(t *testing.T) {
	c := buildLab(t, "testdata/service-subnet-10.100.yaml")
	var got []string
	for _, r := range c.Rejected {
		if r.Key.Kind == "Service" {
			got = append(got, r.Message)
		}
	}
	want := []string{
		`The Service "aspnetapp" is invalid: spec.clusterIPs: Invalid value: []string{"10.102.98.171"}: failed to allocate IP 10.102.98.171: the provided IP (10.102.98.171) is not in the valid range. The range of valid IPs is 10.100.0.0/16`,
		`The Service "hello" is invalid: spec.clusterIPs: Invalid value: []string{"10.97.141.163"}: failed to allocate IP 10.97.141.163: the provided IP (10.97.141.163) is not in the valid range. The range of valid IPs is 10.100.0.0/16`,
	}
	if !reflect.DeepEqual(sorted(got), want) {
		t.Errorf("refused Services:\n%q\nwant\n%q", sorted(got), want)
	}
	for _, s := range c.Services {
		if s.Name == "hello" || s.Name == "aspnetapp" {
			t.Errorf("refused Service %s/%s is still in the cluster", s.Namespace, s.Name)
		}
	}
}

func TestStaticPodsRunOnTheControlPlane(t *testing.T) {
	c := buildLab(t)
	for _, comp := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		t.Run(comp+" is a mirror pod on k8s-lab-master-1 with the node's address", func(t *testing.T) {
			p := findPod(t, c, "kube-system", comp+"-k8s-lab-master-1")
			if p.Spec.NodeName != "k8s-lab-master-1" || !p.Spec.HostNetwork {
				t.Errorf("node %q hostNetwork %v, want k8s-lab-master-1 true", p.Spec.NodeName, p.Spec.HostNetwork)
			}
			if p.Status.PodIP != "192.168.10.23" || p.Status.Phase != corev1.PodRunning {
				t.Errorf("podIP %q phase %s, want 192.168.10.23 Running", p.Status.PodIP, p.Status.Phase)
			}
			if len(p.OwnerReferences) != 1 || p.OwnerReferences[0].Kind != "Node" || p.OwnerReferences[0].Name != "k8s-lab-master-1" {
				t.Errorf("owner %v, want Node k8s-lab-master-1", p.OwnerReferences)
			}
			if p.Labels["tier"] != "control-plane" || p.Labels["component"] != comp {
				t.Errorf("labels %v", p.Labels)
			}
		})
	}
	for _, n := range []string{"k8s-lab-node-1", "k8s-lab-node-2", "k8s-lab-win-1"} {
		for _, p := range podsOn(c, n) {
			if p.Labels["tier"] == "control-plane" {
				t.Errorf("control-plane static pod %s on worker %s", p.Name, n)
			}
		}
	}
}

func hostAddress(t *testing.T, hosts []hybrid.Host, name string) string {
	t.Helper()
	for _, h := range hosts {
		if h.Name == name {
			return h.Address
		}
	}
	t.Fatalf("no host %s", name)
	return ""
}
