package felix

import (
	"crypto/sha1"
	"net"
)

// VTEPMACForHost is the MAC Felix gives a node's VXLAN device when the Node
// records none: 0x66 ('f') and the first five bytes of SHA-1 of the node
// name, so every node derives the same MAC for a peer
// (felix/calc/vxlan_resolver.go vtepMACForHost).
func VTEPMACForHost(node string) string {
	sum := sha1.Sum([]byte(node))
	return net.HardwareAddr(append([]byte{0x66}, sum[:5]...)).String()
}
