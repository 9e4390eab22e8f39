package windows

import "github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows/policysets"

// Why Felix on Windows skips a rule (policysets), for the readers of the
// Windows dataplane (check, reach) that report it.
const (
	SkipIPv6      = policysets.SkipIPv6
	SkipNegative  = policysets.SkipNegative
	SkipICMP      = policysets.SkipICMP
	SkipNamedPort = policysets.SkipNamedPort
	SkipLogAction = policysets.SkipLogAction
)

// Unsupported is a policy rule Felix on Windows does not program.
type Unsupported = policysets.Unsupported

var (
	// WindowsSkip says why Felix on Windows does not program a rule.
	WindowsSkip = policysets.WindowsSkip
	// UnsupportedNetworkPolicyRules lists a NetworkPolicy's rules Felix
	// on Windows skips.
	UnsupportedNetworkPolicyRules = policysets.UnsupportedNetworkPolicyRules
	// UnsupportedCalicoRules lists a Calico policy's rules Felix on
	// Windows skips.
	UnsupportedCalicoRules = policysets.UnsupportedCalicoRules
)
