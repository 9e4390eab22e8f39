package policysets

// ProtocolAny is the ACL Protocol that matches every protocol.
const ProtocolAny = 256

// ACL is an HNS ACL rule as Felix's policysets build it (V1 hns.ACLPolicy).
type ACL struct {
	ID              string
	Action          string // Allow, Block
	Direction       string // In, Out
	Protocol        int    // 256 = any
	LocalAddresses  string
	RemoteAddresses string
	LocalPorts      string
	RemotePorts     string
	RuleType        string // Switch (VFP), Host (WFP)
	Priority        int
}

// ACLSource says where a run of an endpoint's ACL rules comes from.
type ACLSource struct {
	// Source is the policy or profile set ("policy-KubernetesNetworkPolicy/ns/name",
	// "profile-kns.ns") or a fixed rule ("allow-host-to-endpoint",
	// "end-of-tier", "host").
	Source    string
	Direction string
	Rules     int
	// Skipped counts the source's rules Felix skips on Windows (negative
	// matches, ICMP, named ports, IPv6, empty IP sets).
	Skipped int
	Reasons []string `json:",omitempty"`
}
