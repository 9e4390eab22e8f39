package linux

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	kubeproxyv1alpha1 "k8s.io/kube-proxy/config/v1alpha1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/kubeadm"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// fixture builds small clusters directly in the model, without the engine,
// so that each test states exactly the objects a rule reads.
type fixture struct {
	c    *model.Cluster
	t0   time.Time
	pool *calico.IPPool
}

func newFixture() *fixture {
	bgp, nft := "Disabled", "Nftables"
	f := &fixture{t0: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	f.pool = &calico.IPPool{ObjectMeta: metav1.ObjectMeta{Name: "default-ipv4-ippool"},
		Spec: calico.IPPoolSpec{CIDR: "10.244.0.0/16", VXLANMode: calico.ModeAlways, IPIPMode: calico.ModeNever, NATOutgoing: true, BlockSize: 26}}
	f.c = &model.Cluster{
		Network: hybrid.Network{CIDR: "10.0.0.0/24", Gateway: "10.0.0.1"},
		IPPools: []*calico.IPPool{f.pool},
		Installation: &operator.Installation{Spec: operator.InstallationSpec{CalicoNetwork: &operator.CalicoNetworkSpec{
			BGP: &bgp, LinuxDataplane: &nft}}},
		Kubeadm: model.Kubeadm{
			KubeProxy: &kubeproxyv1alpha1.KubeProxyConfiguration{Mode: "nftables"},
			Cluster:   &kubeadm.ClusterConfiguration{Networking: kubeadm.Networking{PodSubnet: "10.244.0.0/16", ServiceSubnet: "10.96.0.0/12"}},
		},
	}
	return f
}

// node adds a Linux node with NIC eth0, its /26 block (the n-th of the
// pool) and a VXLAN tunnel address (the block's first address), created
// minutes after t0.
func (f *fixture) node(name, ip string, n, minutes int) *corev1.Node {
	block := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 244, byte(n / 4), byte(n % 4 * 64)}), 26)
	nd := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(f.t0.Add(time.Duration(minutes) * time.Minute)),
		Labels:      map[string]string{corev1.LabelOSStable: hybrid.OSLinux},
		Annotations: map[string]string{calico.AnnotationIPv4Address: ip + "/24", calico.AnnotationIPv4VXLANTunnelAddr: block.Addr().String()}},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}}}
	f.c.Nodes = append(f.c.Nodes, nd)
	f.c.Hosts = append(f.c.Hosts, hybrid.Host{Name: name, Address: ip, OS: hybrid.OSLinux, NIC: hybrid.NIC{Name: "eth0", MTU: 1500, MAC: fmt.Sprintf("52:54:00:00:00:%02x", n)}})
	aff := "host:" + name
	f.c.IPAMBlocks = append(f.c.IPAMBlocks, &calico.IPAMBlock{Spec: calico.IPAMBlockSpec{CIDR: block.String(), Affinity: &aff}})
	return nd
}

// pod adds a running pod on the pod network.
func (f *fixture) pod(ns, name, node, ip string, labels map[string]string, ports ...corev1.ContainerPort) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels, CreationTimestamp: metav1.NewTime(f.t0.Add(time.Hour))},
		Spec:   corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Ports: ports}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip}}
	f.c.Pods = append(f.c.Pods, p)
	f.namespace(ns, nil)
	return p
}

func (f *fixture) namespace(name string, labels map[string]string) {
	for _, n := range f.c.Namespaces {
		if n.Name == name {
			if labels != nil {
				n.Labels = labels
			}
			return
		}
	}
	f.c.Namespaces = append(f.c.Namespaces, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}})
}

// ep is an endpoint: address, node and readiness.
type ep struct {
	ip, node string
	notReady bool
}

// service adds a Service with one port and its EndpointSlice.
func (f *fixture) service(ns, name, clusterIP string, sp corev1.ServicePort, targetPort int32, eps ...ep) *corev1.Service {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: clusterIP, Ports: []corev1.ServicePort{sp}}}
	f.c.Services = append(f.c.Services, svc)
	proto := sp.Protocol
	if proto == "" {
		proto = corev1.ProtocolTCP
	}
	pn := sp.Name
	slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-abcde", Labels: map[string]string{discoveryv1.LabelServiceName: name}},
		AddressType: discoveryv1.AddressTypeIPv4, Ports: []discoveryv1.EndpointPort{{Name: &pn, Port: &targetPort, Protocol: &proto}}}
	for _, e := range eps {
		ready := !e.notReady
		de := discoveryv1.Endpoint{Addresses: []string{e.ip}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}
		if e.node != "" {
			node := e.node
			de.NodeName = &node
		}
		slice.Endpoints = append(slice.Endpoints, de)
	}
	f.c.EndpointSlices = append(f.c.EndpointSlices, slice)
	return svc
}

func tcpPort(name string, port int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Protocol: corev1.ProtocolTCP, Port: port, TargetPort: intstr.FromInt32(port)}
}

func (f *fixture) compile(t testing.TB) map[string]*Node {
	t.Helper()
	ns, err := Compile(f.c)
	if err != nil {
		t.Fatal(err)
	}
	return ns
}
