package windows

import (
	"fmt"
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	calicoapi "github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// fixture builds small clusters by hand: a Windows node "win" (block
// 10.0.1.0/26, node IP 192.168.1.10) running kube-proxy-windows, and Linux
// nodes "lin-N" (block 10.0.(N+10).0/26, node IP 192.168.1.(20+N)), pool
// 10.0.0.0/16 VXLAN Always with natOutgoing, service CIDR 10.96.0.0/12.
type fixture struct {
	c *model.Cluster
}

func newFixture(linux int) *fixture {
	f := &fixture{c: &model.Cluster{
		Installation: &operator.Installation{Spec: operator.InstallationSpec{ServiceCIDRs: []string{"10.96.0.0/12"}}},
		IPPools: []*calicoapi.IPPool{{ObjectMeta: metav1.ObjectMeta{Name: "default-ipv4-ippool"},
			Spec: calicoapi.IPPoolSpec{CIDR: "10.0.0.0/16", VXLANMode: calicoapi.ModeAlways, NATOutgoing: true, BlockSize: 26}}},
	}}
	f.node("win", hybrid.OSWindows, "192.168.1.10", "10.0.1.0/26", "00:15:5d:aa:bb:cc")
	f.c.Hosts[0].NIC = hybrid.NIC{Name: "Ethernet", MAC: "00-15-5D-01-02-03"}
	f.c.Hosts[0].Observed.DrPortName = "AAAAAAAA-BBBB-CCCC-DDDD-EEEEEEEEEEEE"
	f.c.Hosts[0].KernelVersion = "10.0.26100.1"
	for i := 1; i <= linux; i++ {
		f.node(fmt.Sprintf("lin-%d", i), hybrid.OSLinux, fmt.Sprintf("192.168.1.%d", 20+i), fmt.Sprintf("10.0.%d.0/26", 10+i), "")
	}
	f.c.Pods = append(f.c.Pods, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kube-proxy-windows-abcde",
			OwnerReferences: []metav1.OwnerReference{{Kind: "DaemonSet", Name: "kube-proxy-windows"}}},
		Spec: corev1.PodSpec{NodeName: "win", HostNetwork: true, Containers: []corev1.Container{{Name: "kube-proxy",
			Args: []string{"$env:CONTAINER_SANDBOX_MOUNT_POINT/kube-proxy/start.ps1"}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "192.168.1.10"},
	})
	return f
}

// node adds a host, its Node (with Calico's VXLAN annotations) and its block.
func (f *fixture) node(name, os, addr, block, mac string) {
	f.c.Hosts = append(f.c.Hosts, hybrid.Host{Name: name, Address: addr, OS: os})
	pfx := netip.MustParsePrefix(block)
	tunnel := pfx.Addr()
	if os == hybrid.OSWindows {
		tunnel = tunnel.Next()
	}
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelOSStable: os},
			Annotations: map[string]string{calico.AnnotationIPv4VXLANTunnelAddr: tunnel.String()}},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: addr}}},
	}
	if mac != "" {
		n.Annotations[calico.AnnotationVXLANTunnelMACAddr] = mac
	}
	f.c.Nodes = append(f.c.Nodes, n)
	f.c.IPAMBlocks = append(f.c.IPAMBlocks, &calicoapi.IPAMBlock{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", pfx.Addr(), pfx.Bits())},
		Spec:       calicoapi.IPAMBlockSpec{CIDR: block, Affinity: ptr.To("host:" + name)},
	})
}

// pod adds a running pod on the pod network.
func (f *fixture) pod(ns, name, node, ip string, labels map[string]string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec:       corev1.PodSpec{NodeName: node},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip},
	}
	f.c.Pods = append(f.c.Pods, p)
	return p
}

// bk is a service backend: address, node, and (optional) flags.
type bk struct {
	ip, node         string
	notReady, termin bool
}

// service adds a ClusterIP service with one port and its EndpointSlice.
func (f *fixture) service(ns, name, clusterIP string, port corev1.ServicePort, targetPort int32, bes ...bk) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: clusterIP, ClusterIPs: []string{clusterIP},
			Ports: []corev1.ServicePort{port}},
	}
	if svc.Spec.Ports[0].Protocol == "" {
		svc.Spec.Ports[0].Protocol = corev1.ProtocolTCP
	}
	es := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: ns, Name: name + "-abcde", Labels: map[string]string{discoveryv1.LabelServiceName: name}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To(port.Name), Port: ptr.To(targetPort), Protocol: ptr.To(svc.Spec.Ports[0].Protocol)}},
	}
	for _, b := range bes {
		e := discoveryv1.Endpoint{Addresses: []string{b.ip}, NodeName: ptr.To(b.node),
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(!b.notReady && !b.termin), Serving: ptr.To(!b.notReady), Terminating: ptr.To(b.termin)}}
		es.Endpoints = append(es.Endpoints, e)
	}
	f.c.Services = append(f.c.Services, svc)
	f.c.EndpointSlices = append(f.c.EndpointSlices, es)
	return svc
}

func tcpPort(name string, port int32, target intstr.IntOrString) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Port: port, TargetPort: target, Protocol: corev1.ProtocolTCP}
}

// compile compiles the fixture and returns the Windows node.
func (f *fixture) compile(t testing.TB) *Node {
	t.Helper()
	m, err := Compile(f.c)
	if err != nil {
		t.Fatal(err)
	}
	return m["win"]
}

func endpointByIP(n *Node, ip string) *Endpoint {
	for _, ep := range n.Endpoints() {
		if ep.IPAddress == ip {
			return ep
		}
	}
	return nil
}

func lbsOf(n *Node, svc string) []*LoadBalancer {
	var out []*LoadBalancer
	for _, lb := range n.LoadBalancers() {
		if lb.Service == svc {
			out = append(out, lb)
		}
	}
	return out
}

func acls(ep *Endpoint) []ACL {
	var out []ACL
	for _, p := range ep.Policies {
		if p.ACL != nil {
			out = append(out, *p.ACL)
		}
	}
	return out
}
