package diff

import (
	corev1 "k8s.io/api/core/v1"
)

// The reach matrix is a function of what reach.Compute and the trace
// engine it walks read of the cluster. When two twins hold the same such
// inputs, their matrices are equal and the reach difference is empty: no
// matrix is computed. The digest folds those inputs into reach (see
// newDigestMatch); each is listed here with what reads it.
//
// What no API object holds (digest.extra): the hosts (plane.New, the Linux
// compiler's node addresses: internal/dataplane/linux compile.go), the
// node network (trace engine.go nodeNet and gateway, reach/classes
// nodes.go), kubeadm's configuration (trace engine.go service and pod
// CIDRs, internal/dataplane/linux/kubeproxy's configuration).
//
// The objects, by kind (reachKinds):
//   - Node: every compiler, trace engine.go (addresses, control plane),
//     reach/classes nodes.go;
//   - Namespace: felix felix.go (profiles, namespace selectors),
//     reach/classes policy.go;
//   - Pod: reach/classes (classes, ports, policies' members), felix
//     (workload endpoints), plane.go's indexes, the Linux compiler's
//     workload endpoints and routes; a host-network pod (reachAgentHash)
//     by trace walk.go's host listeners (its containers' ports), trace.go
//     (HostProcess, its address) and reach/classes nodes.go (its
//     DaemonSet);
//   - ReplicaSet: reach/classes classes.go and plane.go (a pod's
//     workload);
//   - Service, EndpointSlice: the Linux kube-proxy compiler
//     (internal/dataplane/linux/kubeproxy), trace healthcheck.go, reach.go
//     (Service columns), reach/classes signature.go;
//   - NetworkPolicy (Kubernetes and Calico), GlobalNetworkPolicy,
//     ServiceAccount: felix felix.go and convert.go, reach/classes
//     policy.go and classes.go;
//   - IPPool: trace engine.go (pools, natOutgoing), the Linux and Windows
//     compilers (a bad CIDR fails the trace engine);
//   - IPAMBlock: reach/classes nodes.go (blocks by node), the Linux and
//     Windows compilers;
//   - FelixConfiguration: the Linux compiler (internal/dataplane/linux
//     compile.go) and the Windows one (VXLAN VNI).
//
// The Installation reaches a Linux node only through linux.ReadSettings
// (BGP, the nftables dataplane), which is folded in instead of the object.
//
// Left out, read by none of them on a cluster without Windows nodes:
// Deployments, DaemonSets and StatefulSets (their pods are read),
// ConfigMaps (only DNS reads one, kube-system/coredns, and reach walks no
// name: its destinations are pods and Service addresses), RuntimeClasses,
// BlockAffinities and BGPConfigurations (the compilers read blocks and
// the Installation), IPAMConfiguration, CSRs, APIServer, TigeraStatus;
// of the Installation, what only the Windows compiler reads; of a
// host-network pod, its containers' environment and probes, which an
// agent's rollout changes.
//
// A twin with a Windows node also has its Windows dataplane read (the
// trace engine walks its HNS state, reach/classes acl.go its ACLs), which
// reads every input of the digest's windows part and the whole
// Installation, and the Windows kube-proxy pod's environment and flags
// (internal/dataplane/windows kubeproxy.go): the comparison then uses
// reachWindows, which holds the windows part and host-network pods whole.
var reachKinds = map[string]bool{
	"Node": true, "Namespace": true, "Pod": true, "ReplicaSet": true,
	"Service": true, "EndpointSlice": true,
	"NetworkPolicy": true, "GlobalNetworkPolicy": true, "ServiceAccount": true,
	"IPPool": true, "IPAMBlock": true, "FelixConfiguration": true,
}

// reachAgentHash is a host-network pod as the reach matrix reads it: the
// pod without its containers' environment and probes (see reachKinds).
func reachAgentHash(p *corev1.Pod, buf *[]byte) uint64 {
	cp := *p
	cp.Spec.Containers = withoutEnv(p.Spec.Containers)
	cp.Spec.InitContainers = withoutEnv(p.Spec.InitContainers)
	return objectHashBuf(&cp, buf)
}

func withoutEnv(cs []corev1.Container) []corev1.Container {
	if cs == nil {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for i, c := range cs {
		c.Env, c.EnvFrom = nil, nil
		c.LivenessProbe, c.ReadinessProbe, c.StartupProbe = nil, nil, nil
		out[i] = c
	}
	return out
}

// sameReachInputs says whether the two twins' reach matrices read the
// same inputs (so are equal): reach, or reachWindows when either twin has
// a Windows node.
func sameReachInputs(before, after *Twin) bool {
	da, db := before.digest(), after.digest()
	if hasWindowsNode(before) || hasWindowsNode(after) {
		return da.reachWindows == db.reachWindows
	}
	return da.reach == db.reach
}
