package calico

// CRDGroup is the group of the CRDs behind projectcalico.org/v3 when the
// aggregated Calico API server serves v3 (libcalico-go's
// crd.projectcalico.org/v1 resources); the twin reads it as Group.
const CRDGroup = "crd.projectcalico.org"

// The annotations calico-node writes on the Kubernetes Node and reads back
// as its Calico Node's spec (libcalico-go
// lib/backend/k8s/conversion/constants.go and resources/node.go).
const (
	AnnotationIPv4Address         = Group + "/IPv4Address"
	AnnotationIPv4VXLANTunnelAddr = Group + "/IPv4VXLANTunnelAddr"
	AnnotationIPv4IPIPTunnelAddr  = Group + "/IPv4IPIPTunnelAddr"
	AnnotationVXLANTunnelMACAddr  = Group + "/VXLANTunnelMACAddr"
)

// Pod and namespace annotations the Calico CNI plugin reads
// (cni-plugin/pkg/k8s/k8s.go CmdAddK8s).
const (
	AnnotationIPv4Pools = "cni." + Group + "/ipv4pools"
	AnnotationIPAddrs   = "cni." + Group + "/ipAddrs"
)
