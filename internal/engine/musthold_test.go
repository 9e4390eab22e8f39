package engine_test

import (
	"fmt"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// The must-holds of the seed's lab (seed 000): what a reader checked on the
// real cluster and the twin has to reproduce.

func TestLabIPAMBlocksAreExactlyTheSeeds(t *testing.T) {
	c := buildLab(t)
	want := map[string][]string{
		"k8s-lab-master-1": {"172.21.70.192/26"},
		"k8s-lab-node-1":   {"172.21.211.0/26"},
		"k8s-lab-node-2":   {"172.21.172.0/26"},
		"k8s-lab-win-1":    {"172.21.41.0/26"},
	}
	if got := blocksByNode(c); !reflect.DeepEqual(got, want) {
		t.Errorf("blocks by node = %v\nwant %v", got, want)
	}
	if len(c.IPAMBlocks) != 4 {
		t.Errorf("%d IPAMBlocks, want exactly 4", len(c.IPAMBlocks))
	}
	for _, a := range c.BlockAffinities {
		if a.Spec.State != "confirmed" {
			t.Errorf("BlockAffinity %s is %q, want confirmed", a.Name, a.Spec.State)
		}
	}
}

func TestWindowsNodeTunnelAddressIsTheBlocksSecondAddress(t *testing.T) {
	c := buildLab(t)
	n := findNode(t, c, "k8s-lab-win-1")
	if got := n.Annotations["projectcalico.org/IPv4VXLANTunnelAddr"]; got != "172.21.41.1" {
		t.Errorf("IPv4VXLANTunnelAddr = %q, want 172.21.41.1", got)
	}
	// The DrPort MAC is observed (hosts[].observed.vxlanTunnelMAC).
	if got := n.Annotations["projectcalico.org/VXLANTunnelMACAddr"]; got != "00:15:5d:eb:90:ae" {
		t.Errorf("VXLANTunnelMACAddr = %q, want 00:15:5d:eb:90:ae", got)
	}
	if got := n.Annotations["projectcalico.org/IPv4Address"]; got != "192.168.10.25/24" {
		t.Errorf("IPv4Address = %q, want 192.168.10.25/24", got)
	}
	// Linux nodes take the first ordinal of their block for the tunnel.
	for node, want := range map[string]string{"k8s-lab-master-1": "172.21.70.192", "k8s-lab-node-1": "172.21.211.0", "k8s-lab-node-2": "172.21.172.0"} {
		if got := findNode(t, c, node).Annotations["projectcalico.org/IPv4VXLANTunnelAddr"]; got != want {
			t.Errorf("%s IPv4VXLANTunnelAddr = %q, want %s", node, got, want)
		}
	}
}

func TestWindowsBlockReservesItsFirstThreeAndLastAddresses(t *testing.T) {
	c := buildLab(t)
	b := blockOf(t, c, "172.21.41.0/26")
	reserved := map[int]bool{}
	for o, a := range b.Spec.Allocations {
		if a == nil {
			continue
		}
		if h := deref(b.Spec.Attributes[*a].HandleID); h == "windows-reserved-ipam-handle" {
			reserved[o] = true
		}
	}
	if want := map[int]bool{0: true, 1: true, 2: true, 63: true}; !reflect.DeepEqual(reserved, want) {
		t.Errorf("reserved ordinals %v, want 0, 1, 2 and 63", reserved)
	}
}

// windowsPodIPs are the pod-network addresses of the pods on k8s-lab-win-1.
func windowsPodIPs(t *testing.T, c *model.Cluster) []netip.Addr {
	t.Helper()
	var out []netip.Addr
	for _, p := range podsOn(c, "k8s-lab-win-1") {
		if p.Spec.HostNetwork || p.Status.PodIP == "" {
			continue
		}
		out = append(out, addr(t, p.Status.PodIP))
	}
	return out
}

func TestWindowsPodsNeverGetReservedAddresses(t *testing.T) {
	reserved := map[string]bool{"172.21.41.0": true, "172.21.41.1": true, "172.21.41.2": true, "172.21.41.63": true}
	block := netip.MustParsePrefix("172.21.41.0/26")
	tests := []struct {
		name   string
		whatIf []string
		// wantIPs is how many pod-network pods on the node have an address.
		wantIPs int
	}{
		{name: "the lab's two aspnetapp pods", wantIPs: 2},
		{name: "aspnetapp scaled to 60 replicas", whatIf: []string{whatIfAspnetapp60}, wantIPs: 40},
		{name: "the Windows block filled to its last usable address", whatIf: []string{whatIfBlockFull}, wantIPs: 60},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ips := windowsPodIPs(t, buildLab(t, tt.whatIf...))
			if len(ips) != tt.wantIPs {
				t.Errorf("%d Windows pods with addresses, want %d", len(ips), tt.wantIPs)
			}
			seen := map[netip.Addr]bool{}
			for _, a := range ips {
				if reserved[a.String()] {
					t.Errorf("a Windows pod got the reserved address %s", a)
				}
				if !block.Contains(a) {
					t.Errorf("a Windows pod got %s outside the node's block %s", a, block)
				}
				if seen[a] {
					t.Errorf("address %s handed out twice", a)
				}
				seen[a] = true
			}
		})
	}
}

// aspnetapp scaled to 60 with the lab's requests: cpu binds first. Each
// replica asks for 100m and k8s-lab-win-1 has 4 CPUs (no DaemonSet pod there
// requests any), so 40 fit: the 2 observed pods keep .5 and .6, and 38 new
// ones take .7 to .44. .3 and .4 were handed out before (.5 and .6 came
// after them) and released: a release puts an address at the end of the
// block's free list (ipam_block.go release), so they are reused last.
func TestAspnetappScaledTo60IsLimitedByCPUBeforeAddresses(t *testing.T) {
	c := buildLab(t, whatIfAspnetapp60)
	pods := podsWithPrefix(c, "win-demo", "aspnetapp-")
	if len(pods) != 60 {
		t.Fatalf("%d aspnetapp pods, want 60", len(pods))
	}
	var running, pending int
	got := map[string]bool{}
	for _, p := range pods {
		switch {
		case p.Spec.NodeName == "k8s-lab-win-1" && p.Status.Phase == corev1.PodRunning:
			running++
			got[p.Status.PodIP] = true
		case p.Spec.NodeName == "" && p.Status.Phase == corev1.PodPending:
			pending++
			cond := condition(p, corev1.PodScheduled)
			if cond == nil || cond.Status != corev1.ConditionFalse || !strings.Contains(cond.Message, "1 Insufficient cpu") {
				t.Errorf("pending pod %s PodScheduled = %+v, want Insufficient cpu", p.Name, cond)
			}
		default:
			t.Errorf("pod %s on %q in phase %s", p.Name, p.Spec.NodeName, p.Status.Phase)
		}
	}
	if running != 40 || pending != 20 {
		t.Errorf("%d running, %d pending; want 40 and 20", running, pending)
	}
	want := map[string]bool{}
	for _, o := range seq(5, 44) {
		want[fmt.Sprintf("172.21.41.%d", o)] = true
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("addresses %v\nwant %v", keys(got), keys(want))
	}
	if p := findPod(t, c, "win-demo", "aspnetapp-769559d8ff-vk445"); p.Status.PodIP != "172.21.41.5" {
		t.Errorf("observed pod vk445 moved to %s", p.Status.PodIP)
	}
	b := blockOf(t, c, "172.21.41.0/26")
	if free := len(b.Spec.Unallocated); free != 20 {
		t.Errorf("%d free ordinals in the Windows block, want 60-40 = 20", free)
	}
}

// With requests that leave CPU and memory to spare, the kubelet's maxPods 60
// binds: the node already runs calico-node-windows and kube-proxy-windows
// (host network, but they count as pods), so 58 aspnetapp pods fit, 2 stay
// Pending with "Too many pods", and the block keeps 2 of its 60 usable
// addresses free: .3 and .4, released before the snapshot and so at the end
// of the free list (.7 to .62 go first). The seed's "60 addresses for 60
// pods" leaves this margin.
func TestMaxPods60BindsBeforeTheWindowsBlock(t *testing.T) {
	c := buildLab(t, whatIfBlockFullApp) // 61 replicas, but the lab's maxPods 60 patch
	pods := podsWithPrefix(c, "win-demo", "aspnetapp-")
	var running, tooMany int
	for _, p := range pods {
		if p.Status.Phase == corev1.PodRunning && p.Spec.NodeName == "k8s-lab-win-1" {
			running++
			continue
		}
		if cond := condition(p, corev1.PodScheduled); cond != nil && strings.Contains(cond.Message, "1 Too many pods") {
			tooMany++
			continue
		}
		t.Errorf("pod %s: node %q phase %s conditions %+v", p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.Conditions)
	}
	if running != 58 || tooMany != 3 {
		t.Errorf("%d running, %d Too many pods; want 58 and 3", running, tooMany)
	}
	if n := len(podsOn(c, "k8s-lab-win-1")); n != 60 {
		t.Errorf("%d pods on k8s-lab-win-1, want its maxPods 60", n)
	}
	b := blockOf(t, c, "172.21.41.0/26")
	var free []string
	for _, o := range b.Spec.Unallocated {
		free = append(free, fmt.Sprintf("172.21.41.%d", o))
	}
	if want := []string{"172.21.41.3", "172.21.41.4"}; !reflect.DeepEqual(free, want) {
		t.Errorf("free addresses %v, want %v", free, want)
	}
}

// Without the maxPods patch (kubelet default 110) the block is the limit:
// 60 usable addresses (64 minus .0, .1, .2, .63), 2 already held by the
// observed pods, so 58 of the 59 new replicas get one and the 61st pod is
// placed but its sandbox fails in the Calico CNI plugin (one block per
// Windows node), leaving it Pending in ContainerCreating with a Note.
func TestTheSixtyFirstWindowsPodGetsANodeButNoAddress(t *testing.T) {
	c := buildLab(t, whatIfBlockFull)
	if q := findNode(t, c, "k8s-lab-win-1").Status.Allocatable[corev1.ResourcePods]; q.Value() != 110 {
		t.Fatalf("allocatable pods %s, want 110 without the patch", q.String())
	}
	pods := podsWithPrefix(c, "win-demo", "aspnetapp-")
	if len(pods) != 61 {
		t.Fatalf("%d aspnetapp pods, want 61", len(pods))
	}
	var withIP, stuck []*corev1.Pod
	for _, p := range pods {
		if p.Spec.NodeName != "k8s-lab-win-1" {
			t.Errorf("pod %s not placed on k8s-lab-win-1 (%q)", p.Name, p.Spec.NodeName)
		}
		if p.Status.PodIP != "" {
			withIP = append(withIP, p)
		} else {
			stuck = append(stuck, p)
		}
	}
	if len(withIP) != 60 || len(stuck) != 1 {
		t.Fatalf("%d pods with an address, %d without; want 60 and 1", len(withIP), len(stuck))
	}
	got := map[string]bool{}
	for _, p := range withIP {
		got[p.Status.PodIP] = true
	}
	want := map[string]bool{}
	for _, o := range seq(3, 62) {
		want[fmt.Sprintf("172.21.41.%d", o)] = true
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("addresses %v, want .3 to .62", keys(got))
	}
	p := stuck[0]
	if p.Status.Phase != corev1.PodPending || waitingReason(p) != "ContainerCreating" {
		t.Errorf("the 61st pod is %s/%q, want Pending/ContainerCreating", p.Status.Phase, waitingReason(p))
	}
	if cond := condition(p, corev1.PodScheduled); cond == nil || cond.Status != corev1.ConditionTrue {
		t.Errorf("the 61st pod PodScheduled = %+v, want True", cond)
	}
	if cond := condition(p, corev1.PodReady); cond == nil || cond.Status != corev1.ConditionFalse {
		t.Errorf("the 61st pod Ready = %+v, want False", cond)
	}
	wantNote := `Failed to create pod sandbox: plugin type="calico" failed (add): cannot allocate new block due to per host block limit`
	if notes := notesAbout(c, podKey("win-demo", p.Name)); !reflect.DeepEqual(notes, []string{wantNote}) {
		t.Errorf("notes on %s = %q, want %q", p.Name, notes, wantNote)
	}
	if n := len(blocksByNode(c)["k8s-lab-win-1"]); n != 1 {
		t.Errorf("k8s-lab-win-1 holds %d blocks, want 1", n)
	}
	if b := blockOf(t, c, "172.21.41.0/26"); len(b.Spec.Unallocated) != 0 {
		t.Errorf("Windows block has free ordinals %v, want none", b.Spec.Unallocated)
	}
	d := findDeployment(t, c, "win-demo", "aspnetapp")
	if d.Status.Replicas != 61 || d.Status.ReadyReplicas != 60 || d.Status.UnavailableReplicas != 1 {
		t.Errorf("aspnetapp status %+v, want 61 replicas, 60 ready, 1 unavailable", d.Status)
	}
}

func TestWindowsNodeAllocatesSixtyPods(t *testing.T) {
	n := findNode(t, buildLab(t), "k8s-lab-win-1")
	for name, list := range map[string]corev1.ResourceList{"capacity": n.Status.Capacity, "allocatable": n.Status.Allocatable} {
		if q := list[corev1.ResourcePods]; q.Value() != 60 {
			t.Errorf("%s pods = %s, want 60", name, q.String())
		}
	}
}

func TestAspnetappPodsRunOnWindowsWithTheRuntimeClassScheduling(t *testing.T) {
	c := buildLab(t)
	pods := podsWithPrefix(c, "win-demo", "aspnetapp-")
	if got := names(pods); !reflect.DeepEqual(got, []string{"aspnetapp-769559d8ff-dkp9z", "aspnetapp-769559d8ff-vk445"}) {
		t.Fatalf("aspnetapp pods %v", got)
	}
	wantSelector := map[string]string{
		"kubernetes.io/os":                 "windows",
		"kubernetes.io/arch":               "amd64",
		"node.kubernetes.io/windows-build": "10.0.26100",
	}
	// DefaultTolerationSeconds runs before RuntimeClass in the admission
	// chain, so the RuntimeClass's toleration comes last.
	wantTolerations := []corev1.Toleration{
		{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))},
		{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))},
		{Key: "os", Operator: corev1.TolerationOpEqual, Value: "windows", Effect: corev1.TaintEffectNoSchedule},
	}
	for _, p := range pods {
		if p.Spec.NodeName != "k8s-lab-win-1" || p.Status.Phase != corev1.PodRunning {
			t.Errorf("%s on %q %s, want Running on k8s-lab-win-1", p.Name, p.Spec.NodeName, p.Status.Phase)
		}
		if !reflect.DeepEqual(p.Spec.NodeSelector, wantSelector) {
			t.Errorf("%s nodeSelector %v, want %v", p.Name, p.Spec.NodeSelector, wantSelector)
		}
		if !reflect.DeepEqual(p.Spec.Tolerations, wantTolerations) {
			t.Errorf("%s tolerations %+v\nwant %+v", p.Name, p.Spec.Tolerations, wantTolerations)
		}
	}
}

func TestHelloPodsRunOnTheLinuxWorkers(t *testing.T) {
	c := buildLab(t)
	want := map[string]string{
		"hello-55fb8f8684-69mvv": "k8s-lab-node-1",
		"hello-55fb8f8684-nztv2": "k8s-lab-node-2",
	}
	pods := podsWithPrefix(c, "demo", "hello-")
	if len(pods) != len(want) {
		t.Fatalf("hello pods %v", names(pods))
	}
	for _, p := range pods {
		if p.Spec.NodeName != want[p.Name] || p.Status.Phase != corev1.PodRunning {
			t.Errorf("%s on %q %s, want Running on %s", p.Name, p.Spec.NodeName, p.Status.Phase, want[p.Name])
		}
	}
}

func TestCalicoNodeWindowsDaemonSetRunsOnTheWindowsNode(t *testing.T) {
	c := buildLab(t)
	ds := findDaemonSet(t, c, "calico-system", "calico-node-windows")
	if got := ds.Spec.Template.Spec.NodeSelector; !reflect.DeepEqual(got, map[string]string{"kubernetes.io/os": "windows"}) {
		t.Errorf("nodeSelector %v, want kubernetes.io/os=windows", got)
	}
	if ds.Status.DesiredNumberScheduled != 1 || ds.Status.NumberReady != 1 {
		t.Errorf("desired %d ready %d, want 1 and 1", ds.Status.DesiredNumberScheduled, ds.Status.NumberReady)
	}
	p := findPod(t, c, "calico-system", "calico-node-windows-q54h2")
	if p.Spec.NodeName != "k8s-lab-win-1" {
		t.Errorf("calico-node-windows pod on %q", p.Spec.NodeName)
	}
	linux := findDaemonSet(t, c, "calico-system", "calico-node")
	if linux.Status.DesiredNumberScheduled != 3 {
		t.Errorf("calico-node desired %d, want the 3 Linux nodes", linux.Status.DesiredNumberScheduled)
	}
}

func TestTigeraStatusCalicoWindowsIsAvailable(t *testing.T) {
	s := findTigeraStatus(t, buildLab(t), "calico-windows")
	want := map[string]string{"Available": "True", "Progressing": "False", "Degraded": "False"}
	got := map[string]string{}
	for _, cond := range s.Status.Conditions {
		got[cond.Type] = cond.Status
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("conditions %v, want %v", got, want)
	}
}

func seq(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return sorted(out)
}

func ptr[T any](v T) *T { return &v }
