package windows

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"

	corev1 "k8s.io/api/core/v1"
)

// hnsNamespace is the UUID namespace of the twin's HNS object IDs: the name-
// based (version 5, RFC 9562 section 5.5) UUID of "hns.kubectl-hybrid.io" in
// the DNS namespace. HNS itself makes every ID random (a fresh GUID per
// object); the twin derives them from what the object is, so the same
// cluster always compiles to the same IDs.
var hnsNamespace = uuid5(dnsNamespace, "hns.kubectl-hybrid.io")

// dnsNamespace is RFC 9562's namespace ID for DNS names.
var dnsNamespace = [16]byte{0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}

// uuid5 is a version 5 UUID: SHA-1 of namespace and name, with the version
// and variant bits set.
func uuid5(ns [16]byte, name string) [16]byte {
	// sha1.Sum over one buffer (on the stack for short names): a Windows
	// node derives an ID per endpoint, load balancer and VFP rule.
	var buf [128]byte
	data := append(append(buf[:0], ns[:]...), name...)
	sum := sha1.Sum(data)
	var u [16]byte
	copy(u[:], sum[:16])
	u[6] = u[6]&0x0f | 0x50
	u[8] = u[8]&0x3f | 0x80
	return u
}

// hnsID is the twin's ID for an HNS object, lower-case as HNS and hnsdiag
// print them. The name says what the object is: "<node>/network/Calico",
// "<node>/endpoint/172.21.41.6", "<node>/loadbalancer/kube-system/kube-dns/dns/ClusterIP/10.96.0.10".
func hnsID(name string) string {
	u := uuid5(hnsNamespace, name)
	// "%x-%x-%x-%x-%x" of the five groups, without fmt.
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:36], u[10:16])
	return string(b[:])
}

// SandboxIDAnnotation is the pod annotation that carries the observed pod
// sandbox ID (what `crictl pods` shows, in full). The twin proposes it; the
// shared types do not define it yet.
const SandboxIDAnnotation = "hybrid.kubectl-hybrid.io/sandbox-id"

// sandboxID is the pod sandbox's ID, which names the pod's HNS endpoint
// ("<id>_Calico") and its adapter. containerd makes it random; the twin
// takes the observed one from SandboxIDAnnotation, else the stand-in the
// engine uses for the pod's IPAM handle (engine/network.go containerID:
// SHA-256 of namespace/name/uid), so the handle and the endpoint agree.
func sandboxID(p *corev1.Pod) (id string, observed bool) {
	if v := p.Annotations[SandboxIDAnnotation]; v != "" {
		return v, true
	}
	sum := sha256.Sum256([]byte(p.Namespace + "/" + p.Name + "/" + string(p.UID)))
	return hex.EncodeToString(sum[:]), false
}

// macFrom is fmt.Sprintf("%s-%02x-%02x-%02x-%02x", prefix, a[0], a[1],
// a[2], a[3]) without fmt: a Windows node makes one per endpoint.
func macFrom(prefix string, a [4]byte) string {
	b := make([]byte, 0, len(prefix)+12)
	b = append(b, prefix...)
	for _, x := range a {
		b = append(b, '-', hexDigit[x>>4], hexDigit[x&0xf])
	}
	return string(b)
}

const hexDigit = "0123456789abcdef"

// HNSID is the stable GUID the twin gives an HNS object of that name.
func HNSID(name string) string { return hnsID(name) }
