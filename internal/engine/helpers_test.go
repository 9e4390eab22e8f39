package engine_test

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Paths of the example inputs, relative to this package.
const (
	whatIfNoStrictAffinity = "../../examples/what-if/no-strict-affinity.yaml"
	whatIfAspnetapp60      = "../../examples/what-if/aspnetapp-60.yaml"
	whatIfBlockFull        = "../../examples/what-if/windows-block-full/"
	whatIfBlockFullApp     = "../../examples/what-if/windows-block-full/aspnetapp.yaml"
	examplesBadPod         = "../../examples/bad-pod.yaml"
	examplesPlain          = "../../examples/plain/"
)

// snapshot loads through the real loader: the lab when lab is true, then the
// files in order.
func snapshot(t *testing.T, lab bool, files ...string) *model.Snapshot {
	t.Helper()
	s, err := load.Load(load.Options{Lab: lab, Filenames: files})
	if err != nil {
		t.Fatalf("load.Load(lab=%v, %q): %v", lab, files, err)
	}
	return s
}

// build derives the cluster from a snapshot and fails the test on error.
func build(t *testing.T, s *model.Snapshot) *model.Cluster {
	t.Helper()
	c, err := engine.Build(s)
	if err != nil {
		t.Fatalf("engine.Build: %v", err)
	}
	return c
}

// buildLab builds the lab with what-if files on top.
func buildLab(t *testing.T, files ...string) *model.Cluster {
	t.Helper()
	return build(t, snapshot(t, true, files...))
}

// buildFiles builds from files alone, without the lab.
func buildFiles(t *testing.T, files ...string) *model.Cluster {
	t.Helper()
	return build(t, snapshot(t, false, files...))
}

// without drops the snapshot's objects of a kind.
func without(s *model.Snapshot, kind string) *model.Snapshot {
	out := &model.Snapshot{Warnings: s.Warnings}
	for _, o := range s.Objects {
		if o.Key.Kind != kind {
			out.Objects = append(out.Objects, o)
		}
	}
	return out
}

func findNode(t *testing.T, c *model.Cluster, name string) *corev1.Node {
	t.Helper()
	for _, n := range c.Nodes {
		if n.Name == name {
			return n
		}
	}
	t.Fatalf("no Node %s among %v", name, names(c.Nodes))
	return nil
}

func findPod(t *testing.T, c *model.Cluster, ns, name string) *corev1.Pod {
	t.Helper()
	for _, p := range c.Pods {
		if p.Namespace == ns && p.Name == name {
			return p
		}
	}
	t.Fatalf("no Pod %s/%s", ns, name)
	return nil
}

func findService(t *testing.T, c *model.Cluster, ns, name string) *corev1.Service {
	t.Helper()
	for _, s := range c.Services {
		if s.Namespace == ns && s.Name == name {
			return s
		}
	}
	t.Fatalf("no Service %s/%s", ns, name)
	return nil
}

func findDeployment(t *testing.T, c *model.Cluster, ns, name string) *appsv1.Deployment {
	t.Helper()
	for _, d := range c.Deployments {
		if d.Namespace == ns && d.Name == name {
			return d
		}
	}
	t.Fatalf("no Deployment %s/%s", ns, name)
	return nil
}

func findDaemonSet(t *testing.T, c *model.Cluster, ns, name string) *appsv1.DaemonSet {
	t.Helper()
	for _, d := range c.DaemonSets {
		if d.Namespace == ns && d.Name == name {
			return d
		}
	}
	t.Fatalf("no DaemonSet %s/%s", ns, name)
	return nil
}

func findTigeraStatus(t *testing.T, c *model.Cluster, name string) *operator.TigeraStatus {
	t.Helper()
	for _, s := range c.TigeraStatuses {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no TigeraStatus %s", name)
	return nil
}

// slicesFor are the EndpointSlices written for a Service.
func slicesFor(c *model.Cluster, ns, svc string) []*discoveryv1.EndpointSlice {
	var out []*discoveryv1.EndpointSlice
	for _, es := range c.EndpointSlices {
		if es.Namespace == ns && es.Labels[discoveryv1.LabelServiceName] == svc {
			out = append(out, es)
		}
	}
	return out
}

// podsWithPrefix lists the pods of a namespace whose name starts with prefix.
func podsWithPrefix(c *model.Cluster, ns, prefix string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range c.Pods {
		if p.Namespace == ns && strings.HasPrefix(p.Name, prefix) {
			out = append(out, p)
		}
	}
	return out
}

// podsOn lists the pods bound to a node.
func podsOn(c *model.Cluster, node string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range c.Pods {
		if p.Spec.NodeName == node {
			out = append(out, p)
		}
	}
	return out
}

// blocksByNode maps each node to the CIDRs of the blocks affine to it.
func blocksByNode(c *model.Cluster) map[string][]string {
	out := map[string][]string{}
	for _, b := range c.IPAMBlocks {
		node := strings.TrimPrefix(deref(b.Spec.Affinity), "host:")
		out[node] = append(out[node], b.Spec.CIDR)
	}
	return out
}

func blockOf(t *testing.T, c *model.Cluster, cidr string) *calico.IPAMBlock {
	t.Helper()
	for _, b := range c.IPAMBlocks {
		if b.Spec.CIDR == cidr {
			return b
		}
	}
	t.Fatalf("no IPAMBlock %s", cidr)
	return nil
}

// notesAbout lists the messages of the notes on one object.
func notesAbout(c *model.Cluster, k model.Key) []string {
	var out []string
	for _, n := range c.Notes {
		if n.Object == k {
			out = append(out, n.Message)
		}
	}
	return out
}

func podKey(ns, name string) model.Key { return model.Key{Kind: "Pod", Namespace: ns, Name: name} }

// condition returns the pod's condition of a type.
func condition(p *corev1.Pod, typ corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == typ {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// waitingReason is the reason kubectl shows for a pod's first waiting container.
func waitingReason(p *corev1.Pod) string {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Waiting != nil {
			return cs.State.Waiting.Reason
		}
	}
	return ""
}

func addr(t *testing.T, s string) netip.Addr {
	t.Helper()
	a, err := netip.ParseAddr(s)
	if err != nil {
		t.Fatalf("%q is not an address: %v", s, err)
	}
	return a
}

func names[T interface{ GetName() string }](objs []T) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.GetName())
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func mustPrefix(t *testing.T, s string) netip.Prefix {
	t.Helper()
	p, err := netip.ParsePrefix(s)
	if err != nil {
		t.Fatalf("%q is not a prefix: %v", s, err)
	}
	return p
}
