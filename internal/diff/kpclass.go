package diff

import (
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plane"
)

// kpClass is kube-proxy's table of the Services that differ, rendered once
// for the nodes that hold none of their endpoints rather than on each of
// them. Of a node, the table (internal/dataplane/linux/kubeproxy
// Node.TableOf) reads its name, to find the endpoints local to it (the
// hairpin set, a local traffic policy's chains), and its address, the one
// element of the nodeport-ips set. On a node holding no endpoint of those
// Services in either twin, the table is thus that of any other such node
// with the address element swapped. A comparison by Services reads a node
// whose Node is the same in both twins, so its address element is the
// same line on both sides, as the representative's is: the two cancel in
// the difference, and the representative's tables compared are the
// node's. Held to rendering every node's whole table by
// TestKubeProxyDifferencesByServiceEqualThoseFromRenderingEveryNode (whose
// changed Services have endpoints on some nodes and not on others) and
// TestEachStepsNodeDifferencesEqualThoseFromRenderingEveryNode.
type kpClass struct {
	// local are the nodes an endpoint of the Services names, in either
	// twin: they render their own tables.
	local map[string]bool
	// rep is the node rendered; a and b are its tables of the Services in
	// the two twins.
	rep  string
	a, b *nftPart
}

// newKPClass renders the class's table on the first node (of names, in
// order) that is compared by Services (byServices) and holds none of
// their endpoints; nil when there is none.
func newKPClass(before, after *Twin, ea, eb *plane.Plane, services map[string]bool, names []string, byServices func(string) bool) *kpClass {
	k := &kpClass{local: endpointNodes(before.c, services)}
	for n := range endpointNodes(after.c, services) {
		k.local[n] = true
	}
	for _, name := range names {
		if k.local[name] || !byServices(name) {
			continue
		}
		la, lb := ea.Linux(name), eb.Linux(name)
		if la == nil || lb == nil {
			continue
		}
		k.rep = name
		k.a, k.b = newNFTPart(la.KubeProxyNFTOf(services)), newNFTPart(lb.KubeProxyNFTOf(services))
		return k
	}
	return nil
}

// serves says whether the node named takes the class's tables: it holds
// none of the Services' endpoints. The caller compares it by Services.
func (k *kpClass) serves(name string) bool { return k != nil && !k.local[name] }

// endpointNodes are the nodes an endpoint of the Services names (its
// nodeName), in any EndpointSlice of theirs: every node kube-proxy may
// count an endpoint local to.
func endpointNodes(c *model.Cluster, services map[string]bool) map[string]bool {
	out := map[string]bool{}
	for _, sl := range c.EndpointSlices {
		if !services[sl.Namespace+"/"+sl.Labels[discoveryv1.LabelServiceName]] {
			continue
		}
		for _, ep := range sl.Endpoints {
			if ep.NodeName != nil {
				out[*ep.NodeName] = true
			}
		}
	}
	return out
}
