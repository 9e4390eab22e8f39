// Package sandbox materialises the twin's Linux dataplane in network
// namespaces of the machine it runs on, so that the real kernel executes
// the routes, neighbours, FDB entries, vxlan.calico and nftables tables the
// twin compiled (internal/dataplane/linux), and real packets can be compared
// with what trace predicts.
//
// The work is split in three: Build computes a Plan (pure: namespaces and
// the ip, bridge, nft and sysctl commands that create them, the pods'
// servers and the DNS zone the CoreDNS pods answer from); Up applies a Plan
// with those commands, recording every namespace under the prefix's state
// directory before it is created, so that Down removes everything even
// after an interrupted Up; Probes and Compare run real probes and set them
// against trace.
//
// Every command of a plan acts inside a namespace the plan creates (ip -n,
// bridge -n, ip netns exec): the host's own namespace, addresses and
// nftables are never touched.
//
// Windows nodes are not Windows: each is stood in by a Linux namespace that
// terminates VXLAN for the node's blocks and routes to its pods, built from
// what the Linux nodes know of it (its VTEP, its blocks). It is labelled as
// a stand-in wherever it shows.
package sandbox
