// Package report prints the twin's objects the way kubectl 1.37 prints them:
// `kubectl get` tables (built as metav1.Table and laid out by cli-runtime's
// table printer, so padding, -o wide, -A, --no-headers, -L and --show-labels
// behave exactly as in kubectl), -o json / -o yaml (a v1 List, or the lone
// object for `get KIND NAME`), -o name, and kubectl's stderr lines.
//
// Nothing here calls time.Now: the caller passes the moment AGE is measured
// from. Nothing here mutates the Cluster: output copies get apiVersion and
// kind, the Cluster's objects are left as they are.
//
// # Columns
//
// Built-in kinds use the columns of kubernetes
// pkg/printers/internalversion/printers.go, with kubectl 1.37's node
// KERNEL-VERSION that appends " (<architecture>)". Custom resources use the
// additionalPrinterColumns of their CRDs, as the API server's table
// convertor fills them (absent fields are empty cells, date columns are
// durations):
//
//   - ippools (projectcalico.org/v3, Calico 3.32+ native CRD): NAME CIDR
//     VXLAN IPIP NAT ALLOCATABLE AGE. ALLOCATABLE is the pool's Allocatable
//     condition, which the twin's pools do not carry; it is derived as
//     calico-kube-controllers sets it (False when disabled, terminating, or
//     overlapping a pool placed before it; True otherwise). -o wide adds the
//     twin's BLOCKSIZE and SELECTOR (the CRD has no wide columns).
//   - ipamblocks: the twin's own NAME CIDR NODE ALLOCATED FREE RESERVED,
//     sorted by name, instead of the CRD's CIDR AFFINITY CLAIMTIME. NODE is
//     the affinity without "host:"; RESERVED counts ordinals held by
//     WindowsReservedHandle, ALLOCATED the other held ones, FREE the rest of
//     the block.
//   - blockaffinities: the CRD's CIDR NODE TYPE; -o wide adds the twin's STATE.
//   - ipamconfigurations: the CRD's STRICTAFFINITY MAXBLOCKSPERHOST
//     AUTOALLOCATEBLOCKS.
//   - felixconfigurations: NAME AGE (the CRD has no printer columns).
//   - tigerastatus (operator.tigera.io/v1): AVAILABLE PROGRESSING DEGRADED
//     SINCE MESSAGE. MESSAGE (the Degraded condition's message) has priority
//     0 in the CRD since tigera/operator v1.42 (March 2026), so it always
//     shows. Seed 000 prints it for `get tigerastatus` but not for the later
//     `get tigerastatus calico-windows`, and seed 001 (an older operator)
//     never does; the twin follows the CRD, and those seed lines match as
//     prefixes of the twin's.
//   - installations: the CRD declares no columns, so NAME AGE.
//
// Where an object lacks a field the API server always sets, the printers
// show the server's default: a namespace without a phase is Active, a
// service without a type is ClusterIP and a port without a protocol TCP, a
// Deployment, ReplicaSet or StatefulSet without replicas wants 1, a service
// with only spec.clusterIP (no clusterIPs) shows it.
//
// # Errors
//
// Error values' texts are the lines kubectl writes to stderr
// (NotFoundError: `Error from server (NotFound): pods "x" not found`,
// UnknownResourceError: `error: the server doesn't have a resource type
// "x"`, UsageError, BadSelectorError). "No resources found ..." is not an
// error (kubectl exits 0): Get returns it as a notice, NoResourcesMessage
// builds it.
package report
