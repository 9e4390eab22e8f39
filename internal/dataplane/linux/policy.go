package linux

// The directions of policy; what Calico decides for a pod is the Felix
// calculation's (internal/felix), which the node's Calico table renders.

import (
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/policy"
)

// Direction is the direction of traffic relative to the pod a policy
// selects (policy.Direction).
type Direction = policy.Direction

// Directions.
const (
	Ingress = policy.Ingress
	Egress  = policy.Egress
)
