package engine_test

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

func TestObservedPodAddressesAreKept(t *testing.T) {
	c := buildLab(t)
	tests := []struct {
		ns, name, node, ip string
	}{
		{"demo", "hello-55fb8f8684-69mvv", "k8s-lab-node-1", "172.21.211.25"},
		{"demo", "hello-55fb8f8684-nztv2", "k8s-lab-node-2", "172.21.172.4"},
		{"win-demo", "aspnetapp-769559d8ff-dkp9z", "k8s-lab-win-1", "172.21.41.6"},
		{"win-demo", "aspnetapp-769559d8ff-vk445", "k8s-lab-win-1", "172.21.41.5"},
		{"kube-system", "coredns-8f97fdbd9-9gc9h", "k8s-lab-node-2", "172.21.172.3"},
		{"kube-system", "coredns-8f97fdbd9-vr6vv", "k8s-lab-master-1", "172.21.70.199"},
		{"calico-system", "csi-node-driver-w49wd", "k8s-lab-node-2", "172.21.172.2"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" keeps "+tt.ip, func(t *testing.T) {
			p := findPod(t, c, tt.ns, tt.name)
			if p.Status.PodIP != tt.ip || p.Spec.NodeName != tt.node {
				t.Errorf("%s on %s, want %s on %s", p.Status.PodIP, p.Spec.NodeName, tt.ip, tt.node)
			}
			k := podKey(tt.ns, tt.name)
			if !c.Observed(k) || c.Derived(k, "status.podIP") {
				t.Errorf("observed %v, podIP derived %v; want an observed address", c.Observed(k), c.Derived(k, "status.podIP"))
			}
			// A stub's spec comes from its controller's template.
			if !c.Derived(k, "spec") || len(p.Spec.Containers) == 0 {
				t.Errorf("spec derived %v with %d containers; want the template's", c.Derived(k, "spec"), len(p.Spec.Containers))
			}
		})
	}
}

func TestDerivedPodsComeAfterTheAddressesHistoryReleased(t *testing.T) {
	// k8s-lab-node-2's block 172.21.172.0/26 starts with every ordinal
	// unallocated, in order. The observed addresses .2 (csi-node-driver),
	// .3 (coredns) and .4 (hello) are recorded first; calico-node's tunnel
	// auto-assign then takes the first unallocated ordinal, .0. .1 is free
	// below addresses in use: it was handed out and released, and a release
	// goes to the end of the free list (ipam_block.go release), so new pods
	// take .5 and .6.
	c := buildLab(t, "testdata/pinned-to-node-2.yaml")
	for name, want := range map[string]string{"pin-a": "172.21.172.5", "pin-b": "172.21.172.6"} {
		p := findPod(t, c, "default", name)
		if p.Spec.NodeName != "k8s-lab-node-2" || p.Status.PodIP != want {
			t.Errorf("%s: %s on %s, want %s on k8s-lab-node-2", name, p.Status.PodIP, p.Spec.NodeName, want)
		}
	}
	if got := findNode(t, c, "k8s-lab-node-2").Annotations["projectcalico.org/IPv4VXLANTunnelAddr"]; got != "172.21.172.0" {
		t.Errorf("node-2 tunnel %s, want 172.21.172.0", got)
	}
	// On k8s-lab-node-1 the derived csi-node-driver pod is a DaemonSet pod,
	// created as the node joined, right after calico-node took .0 for the
	// tunnel: it gets .1, before history's releases.
	lab := buildLab(t)
	var csi []*corev1.Pod
	for _, p := range podsWithPrefix(lab, "calico-system", "csi-node-driver-") {
		if p.Spec.NodeName == "k8s-lab-node-1" {
			csi = append(csi, p)
		}
	}
	if len(csi) != 1 || csi[0].Status.PodIP != "172.21.211.1" {
		t.Fatalf("csi-node-driver on node-1: %v", podSummary(lab))
	}
	if k := podKey("calico-system", csi[0].Name); lab.Observed(k) {
		t.Errorf("%s is observed, want it derived", csi[0].Name)
	}
}

func TestObservedStubWithoutAddressGetsADerivedOne(t *testing.T) {
	c := buildLab(t, "testdata/hello-3-replicas.yaml", "testdata/hello-stub-without-ip.yaml")
	k := podKey("demo", "hello-55fb8f8684-q7x2k")
	p := findPod(t, c, "demo", k.Name)
	// node-1: .0 tunnel, .1 the derived csi-node-driver pod (a DaemonSet
	// pod, placed as the node joined), .25 observed hello; .2 to .24 were
	// released before the snapshot and go last, so the stub takes .26.
	if p.Status.PodIP != "172.21.211.26" || p.Spec.NodeName != "k8s-lab-node-1" {
		t.Errorf("stub %s on %s, want 172.21.211.26 on k8s-lab-node-1", p.Status.PodIP, p.Spec.NodeName)
	}
	if !c.Observed(k) || !c.Derived(k, "status.podIP") {
		t.Errorf("observed %v, podIP derived %v; want an observed pod with a derived address", c.Observed(k), c.Derived(k, "status.podIP"))
	}
	if n := len(podsWithPrefix(c, "demo", "hello-")); n != 3 {
		t.Errorf("%d hello pods, want 3 (the stub fills the third replica)", n)
	}
}

func TestAWhatIfObjectReplacesTheLabsObject(t *testing.T) {
	const file = "testdata/hello-3-replicas.yaml"
	c := buildLab(t, file)
	k := model.Key{Group: "apps", Kind: "Deployment", Namespace: "demo", Name: "hello"}
	if o := c.Origins[k]; o.File != file {
		t.Errorf("Deployment demo/hello comes from %q, want %q", o.File, file)
	}
	d := findDeployment(t, c, "demo", "hello")
	if *d.Spec.Replicas != 3 || d.Status.Replicas != 3 || d.Status.ReadyReplicas != 3 {
		t.Errorf("hello replicas spec %d status %d ready %d, want 3", *d.Spec.Replicas, d.Status.Replicas, d.Status.ReadyReplicas)
	}
	var deployments int
	for _, x := range c.Deployments {
		if x.Namespace == "demo" && x.Name == "hello" {
			deployments++
		}
	}
	if deployments != 1 {
		t.Errorf("%d Deployments demo/hello, want the what-if's one", deployments)
	}
	pods := podsWithPrefix(c, "demo", "hello-55fb8f8684-")
	if len(pods) != 3 {
		t.Fatalf("hello pods %v, want the 2 observed and 1 derived", names(pods))
	}
	blocks := blocksByNode(c)
	for _, p := range pods {
		switch p.Name {
		case "hello-55fb8f8684-69mvv", "hello-55fb8f8684-nztv2":
			continue // observed, checked elsewhere
		}
		if p.Spec.NodeName != "k8s-lab-node-1" && p.Spec.NodeName != "k8s-lab-node-2" {
			t.Errorf("derived %s on %q, want a Linux worker", p.Name, p.Spec.NodeName)
			continue
		}
		if cidrs := blocks[p.Spec.NodeName]; len(cidrs) != 1 || !mustPrefix(t, cidrs[0]).Contains(addr(t, p.Status.PodIP)) {
			t.Errorf("derived %s has %s outside %s's blocks %v", p.Name, p.Status.PodIP, p.Spec.NodeName, cidrs)
		}
	}
	if es := slicesFor(c, "demo", "hello"); len(es) != 1 || len(es[0].Endpoints) != 3 {
		t.Errorf("hello EndpointSlices %+v, want one with 3 endpoints", es)
	}
	// Everything else is the lab's.
	lab := buildLab(t)
	if !reflect.DeepEqual(blocksByNode(lab), blocks) {
		t.Errorf("blocks %v, want the lab's %v", blocks, blocksByNode(lab))
	}
}
