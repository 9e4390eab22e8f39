package report

import (
	"reflect"
	"testing"

	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
)

// TestCells checks single cells against what kubectl's printers produce for
// the same object.
func TestCells(t *testing.T) {
	cordoned := labNode(nodeSpec{name: "n", ip: "10.0.0.1", age: "1m"})
	cordoned.Spec.Unschedulable = true
	legacyRole := labNode(nodeSpec{name: "n", ip: "10.0.0.1", age: "1m"})
	legacyRole.Labels["kubernetes.io/role"] = "worker"
	legacyRole.Labels["node-role.kubernetes.io/infra"] = ""
	noConditions := labNode(nodeSpec{name: "n", ip: "10.0.0.1", age: "1m"})
	noConditions.Status.Conditions = nil
	noInfo := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}

	initWaiting := runningPod(podSpec{ns: "x", name: "p", age: "1m"})
	initWaiting.Spec.InitContainers = []corev1.Container{{Name: "install-cni"}, {Name: "uninstall"}}
	initWaiting.Status.Phase = corev1.PodPending
	initWaiting.Status.Conditions = nil
	initWaiting.Status.ContainerStatuses[0].Ready = false
	initWaiting.Status.InitContainerStatuses = []corev1.ContainerStatus{
		{Name: "install-cni", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}}},
		{Name: "uninstall", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}},
	}
	crashing := runningPod(podSpec{ns: "x", name: "p", age: "10m"})
	crashing.Status.ContainerStatuses[0] = corev1.ContainerStatus{Name: "c0", RestartCount: 5,
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, FinishedAt: ago("30s")}}}
	terminating := runningPod(podSpec{ns: "x", name: "p", age: "1m"})
	terminating.DeletionTimestamp = ptr(ago("1s"))
	gated := runningPod(podSpec{ns: "x", name: "p", age: "1m"})
	gated.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/lb"}, {ConditionType: "example.com/dns"}}
	gated.Status.Conditions = append(gated.Status.Conditions, corev1.PodCondition{Type: "example.com/lb", Status: corev1.ConditionTrue})
	gated.Status.NominatedNodeName = "k8s-lab-node-1"

	lb := clusterIPService("x", "lb", "10.0.0.5", "1m", nil, corev1.ServicePort{Port: 443, NodePort: 31443, Protocol: corev1.ProtocolTCP})
	lb.Spec.Type = corev1.ServiceTypeLoadBalancer
	lb.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "192.168.10.201"}, {Hostname: "lb.example.com"}}
	pendingLB := clusterIPService("x", "lb", "10.0.0.5", "1m", nil)
	pendingLB.Spec.Type = corev1.ServiceTypeLoadBalancer
	headless := clusterIPService("x", "h", "None", "1m", nil)
	headless.Spec.Ports = nil
	external := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "e"}, Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com"}}

	denied := kubeletServingCSR("c", "n", "1m")
	denied.Status.Conditions = []certv1.CertificateSigningRequestCondition{{Type: certv1.CertificateDenied}, {Type: certv1.CertificateFailed}}

	slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "s"}, AddressType: discoveryv1.AddressTypeIPv4,
		Ports:     []discoveryv1.EndpointPort{{Port: ptr(int32(53))}, {Name: ptr("metrics")}, {}},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"a", "b"}}, {Addresses: []string{"c", "d", "e"}}}}
	emptySlice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "s"}, AddressType: discoveryv1.AddressTypeIPv4}

	tests := []struct {
		name   string
		kind   Kind
		obj    any
		column string
		want   any
	}{
		{"a cordoned node adds SchedulingDisabled", KindNode, cordoned, "Status", "Ready,SchedulingDisabled"},
		{"roles come from both role labels, sorted", KindNode, legacyRole, "Roles", "infra,worker"},
		{"a node without a Ready condition is Unknown", KindNode, noConditions, "Status", "Unknown"},
		{"a node without node info shows <unknown> OS image", KindNode, noInfo, "OS-Image", "<unknown>"},
		{"a node without node info shows <unknown> kernel, without architecture", KindNode, noInfo, "Kernel-Version", "<unknown>"},
		{"a node without addresses shows <none>", KindNode, noInfo, "Internal-IP", "<none>"},
		{"a node's age is <unknown> without a creation time", KindNode, noInfo, "Age", "<unknown>"},
		{"a pod waiting on its second init container shows Init:1/2", KindPod, initWaiting, "Status", "Init:1/2"},
		{"a crash-looping pod shows the waiting reason", KindPod, crashing, "Status", "CrashLoopBackOff"},
		{"restarts show when the last one was", KindPod, crashing, "Restarts", "5 (30s ago)"},
		{"a pod being deleted is Terminating", KindPod, terminating, "Status", "Terminating"},
		{"readiness gates count the true ones", KindPod, gated, "Readiness Gates", "1/2"},
		{"a nominated node shows", KindPod, gated, "Nominated Node", "k8s-lab-node-1"},
		{"a pod without an IP shows <none>", KindPod, initWaiting, "IP", "<none>"},
		{"a load balancer lists its ingress addresses", KindService, lb, "External-IP", "192.168.10.201,lb.example.com"},
		{"a node port shows after the port", KindService, lb, "Port(s)", "443:31443/TCP"},
		{"a load balancer without an address is pending", KindService, pendingLB, "External-IP", "<pending>"},
		{"a port without a protocol is TCP", KindService, pendingLB, "Port(s)", "80/TCP"},
		{"a service without ports shows <none>", KindService, headless, "Port(s)", "<none>"},
		{"a service without a selector shows <none>", KindService, headless, "Selector", "<none>"},
		{"an ExternalName service shows its name", KindService, external, "External-IP", "db.example.com"},
		{"a denied and failed CSR says so", KindCertificateSigningRequest, denied, "Condition", "Denied,Failed"},
		{"endpoint slice ports show numbers, names or *", KindEndpointSlice, slice, "Ports", "53,metrics,*"},
		{"endpoint slice addresses stop at three", KindEndpointSlice, slice, "Endpoints", "a,b,c + 2 more..."},
		{"an empty endpoint slice shows <unset>", KindEndpointSlice, emptySlice, "Endpoints", "<unset>"},
		{"an IPAM block without affinity has no node", KindIPAMBlock, &calico.IPAMBlock{Spec: calico.IPAMBlockSpec{CIDR: "10.0.0.0/30"}}, "Node", "<none>"},
		{"an empty IPAM block is all free", KindIPAMBlock, &calico.IPAMBlock{Spec: calico.IPAMBlockSpec{CIDR: "10.0.0.0/26"}}, "Free", int64(64)},
		{"a pool without natOutgoing has an empty NAT cell", KindIPPool, &calico.IPPool{Spec: calico.IPPoolSpec{CIDR: "10.0.0.0/16"}}, "NAT", nil},
		{"a disabled pool is not allocatable", KindIPPool, &calico.IPPool{Spec: calico.IPPoolSpec{CIDR: "10.0.0.0/16", Disabled: true}}, "Allocatable", "False"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, err := Table(tt.kind, []any{tt.obj}, now)
			if err != nil {
				t.Fatal(err)
			}
			col := -1
			for i, c := range table.ColumnDefinitions {
				if c.Name == tt.column {
					col = i
				}
			}
			if col < 0 {
				t.Fatalf("no column %q", tt.column)
			}
			if got := table.Rows[0].Cells[col]; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%s = %#v, want %#v", tt.column, got, tt.want)
			}
		})
	}
}
