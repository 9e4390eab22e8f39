// Package reach computes the reachability matrix of the twin: for every
// source (a class of pods, or a node) and every destination (a class of
// pods at a port it serves, a Service's ClusterIP at one of its ports),
// whether a new connection is delivered, and why not — the verdict a full
// trace (internal/trace) between any pod of the source and any pod of the
// destination gives, without walking one trace per pair.
//
// # Classes
//
// Pods (running, scheduled, on the pod network) are grouped into classes:
// the same namespace, the same answer from every selector that can see
// them (NetworkPolicy podSelectors and peers, Calico policy and rule
// selectors, --to and --from workloads, Services and label selectors),
// service account, node OS, what answers (the workload table's row for
// each image, or its declared container ports) and named ports,
// membership in every address-based policy peer (NetworkPolicy ipBlocks,
// Calico nets) and placement. Pods whose labels differ where no selector
// looks are one class: a policy cannot tell them apart. A placement is a node group plus, for a pod whose address is
// not in an IPAM block of its own node, that block and node.
//
// Node groups are nodes whose dataplanes treat pod traffic alike: the same
// OS and Windows build line, the same host-network agents (kube-proxy,
// Calico's node agent), the same Cluster-kind firewall rules applying to
// them and matching their address, the same VXLAN device, and the same
// reachability of the other nodes' blocks (route, neighbour and FDB entry
// on Linux, RemoteSubnetRoute on Windows, each leading to the block's node;
// checked from one node per otherwise-alike set, since Felix programs every
// node's routes from the same blocks, affinities and VTEPs). A node that
// some nodes cannot reach is a group of its own. In a healthy cluster there
// is one group per OS (and one per firewall scope), so the node does not
// split classes; when the computation finds a group whose same-node and
// cross-node paths differ, it splits that group by node and starts over.
//
// Host-network pods are not rows or columns: they are their node's host
// network, which --nodes adds as one row per node.
//
// # Cells
//
// A trace passes, in order: the source node's dataplane up to the source's
// egress policy (stage p1), the egress policy (E), the way to the
// destination's node (p2), the destination's ingress policy (I), what lies
// between it and the pod (p3), the pod's listener (L), and the reply's way
// back (r). E and I are decided per class pair from the Felix calculation
// (internal/felix) that trace and both dataplanes read: NetworkPolicies
// alone by a class-level evaluator of the same semantics (selectors
// compiled once and each rule's peers resolved to a set of classes), a
// class a projectcalico.org policy selects by Felix's decision for its
// representative, and a Windows class whose HNS ACLs may decide otherwise
// (a Calico policy applies, or Felix on Windows skips one of its rules,
// windows.WindowsSkip) by its endpoint's ACLs as the trace's VFP hop
// matches them. L is the workload
// table (internal/imagecatalog). p1, p2, p3 and r depend only on the two
// placements, the same node or not, protocol and port, and are learned from
// representative traces: when a cell needs a stage no trace has shown, the
// first class pair in class order with those placements that reaches the
// stage is traced, and what the trace shows about every stage is kept. The
// traces walked, and the reasons they give, do not depend on the order in
// which parallel workers ask. A cell's verdict is the first stage that
// fails; its reason is that hop's node, component and reason from the
// trace, or the deciding NetworkPolicy.
//
// A Service column is a connection to the ClusterIP: kube-proxy on the
// source's node (its nftables maps on Linux, its HNS load balancers on
// Windows; per node for internalTrafficPolicy Local) balances it to one of
// the backends, so the cell combines the sub-verdicts of every backend
// class (and host address) the source's pods can get, on the same node or
// another: allowed when every one is reached, denied when none is, partial
// otherwise. A source whose node does not balance the port (no endpoints, a
// Windows host, which cannot reach ClusterIPs) gets the trace's reason.
//
// A node row's cell is the node's host to the pods: its own pods are never
// policed (Kubernetes: traffic from the node where a pod runs is always
// allowed; Calico accepts host-to-local-workload traffic on Linux and
// programs allow-host-to-endpoint on Windows); pods on other nodes see the
// node's address (a Linux node's vxlan.calico address), and the cell is
// partial when the two differ.
//
// Verdicts: allowed, denied (dropped, rejected or refused), partial, and
// not applicable (a single pod to itself, a destination that listens on
// nothing).
//
// # Cost
//
// Classes and policies are resolved once; each cell is a few bit tests and
// lookups, never a selector evaluation or a trace. Traces are walked per
// path stage (tens for a whole cluster). Rows are evaluated in parallel.
// Sources with the same placement, OS and egress policies (and egress
// ACLs, on Windows) share a template row, computed cell by cell; the
// others take each template cell that holds for every pair placement and
// names no source, except where they are the destination or a backend of
// it, or an ingress rule protecting it matches them unlike the template's
// source (rows.go). Such a row computes only those cells and holds only
// the ones that differ from its template's, so the matrix holds the
// template rows and the differences (Stats.Stored), and At and Row read
// a copied cell through the template. The tests compare copied rows with
// rows computed cell by cell.
// Stats.Mismatches lists every representative trace whose answer differs
// from the composed one (the tests hold it empty); such a cell takes the
// trace's answer.
//
// # Packages
//
// reach/classes holds what the cells are computed over (nodes and node
// groups, IPAM blocks, classes, the policies resolved over them, the
// Windows classes' ACLs, the --from and --to filters); reach composes
// the cells. reach/output prints the matrix, reach/aggregate folds it by
// namespace or workload (--by), and reach/expect compares it with an
// expected one (--expect).
package reach
