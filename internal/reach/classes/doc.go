// Package classes is what the reachability matrix (internal/reach) is
// computed over: the nodes and their node groups, the Calico IPAM blocks,
// the pods grouped into classes (pods that every selector able to see them
// matches alike, with the same service account, OS, listeners,
// address-based peer membership and placement), the NetworkPolicies
// compiled and resolved over those classes, the Felix calculation's tiers
// for a class's representative, and the HNS ACLs of the Windows classes
// whose side of a connection they judge. It also reads the --from and
// --to filters, which split classes as selectors do. Package reach
// composes the cells from them.
package classes
