// Package linux compiles the dataplane state that Calico Felix (VXLAN mode,
// nftables dataplane) and kube-proxy (nftables mode) program on each Linux
// node of a built cluster, and emulates the commands an operator uses to look
// at it: ip route, ip addr, ip link, ip -d link show vxlan.calico,
// ip neigh show dev vxlan.calico, bridge fdb show dev vxlan.calico and
// nft list ruleset / nft list table ip kube-proxy.
//
// Compile is pure: it reads a *model.Cluster and returns one *Node per Linux
// node. Every derivation cites the upstream code it follows in a comment; the
// facts carry over, the code does not.
//
// # Output fidelity
//
// The text forms (IPRoute, IPAddr, IPLink, IPNeigh, BridgeFDB, NFTTables;
// internal/console reads the command lines) are what iproute2 7.x and
// nftables 1.1 print, byte for byte where
// the upstream printers are deterministic, including the trailing blank that
// iproute2 leaves after the last field of ip route, ip neigh and ip addr
// lines (ip/iproute.c prints every field as "%s "). Articles and seeds
// usually lose that blank when pasted; compare with strings.TrimRight.
//
// # Orders that upstream does not make deterministic
//
//   - Interface indexes: lo is 1 and the node NIC 2 (boot order). Indexes 3
//     and 4 are left unused: seed 000 shows vxlan.calico as index 5 on
//     k8s-lab-node-1, and Linux never reuses an ifindex (net/core/dev.c
//     dev_index_reserve allocates cyclically), so two devices created and
//     gone before Felix ran are the plain explanation; the twin does not
//     guess what they were. vxlan.calico is 5, the host ends of pod veths
//     follow from 6 in pod creation order (creationTimestamp, then pod IP,
//     which Calico IPAM hands out in creation order within a block). On a
//     node with an IPIP pool the kernel makes tunl0 when the ipip module
//     loads, at a moment the twin does not know: it takes 5 when the node
//     has no vxlan.calico, else 6, and the veths follow it.
//   - ip route: the kernel dumps the main table by walking the FIB trie
//     (net/ipv4/fib_trie.c fib_table_dump), i.e. ascending by destination
//     address; routes sharing an address are kept longest prefix first
//     (fib_insert_alias sorts a leaf's aliases by fa_slen), then by
//     ascending metric. The twin sorts by exactly that key.
//   - ip neigh / bridge fdb: neither dump order can be derived. The
//     neighbour table is a hash seeded at boot (net/core/neighbour.c,
//     arp_hashfn with hash_rnd); the VXLAN FDB has been dumped from
//     vxlan->fdb_list since Linux 6.16 (patch "vxlan: Use linked list to
//     traverse FDB entries"), and Felix inserts several entries at once in
//     Go map order (felix/vxlanfdb/vxlan_fdb.go applyFamily over a
//     deltatracker). The twin therefore lists both tables in the order Felix
//     learned the VTEPs: a peer is learned when both it and this node exist
//     (the later of the two Node creationTimestamps), peers learned together
//     form one batch, batches are listed oldest first and entries inside a
//     batch by their key (the IP for ip neigh, the MAC for bridge fdb). On
//     k8s-lab-node-1 this gives exactly the lines of seed 000.
//   - nft list: nft prints sets and maps before chains, each group in
//     kernel (creation) order, and sorts set elements by key value
//     (nftables src/netlink.c list_expr_sort). Chain creation order follows
//     kube-proxy's setupNFTables; per-service objects come in sorted
//     ServicePortName order, a stand-in for the Go map iteration of
//     proxier.svcPortMap.
//
// # kube-proxy version
//
// The kube-proxy table is the Kubernetes 1.37 nftables proxier as far as
// upstream shows it: base chains named *-pre-dnat at priority dstnat-10 and
// filter chains at priority filter (pkg/proxy/nftables/proxier_test.go
// baseRules, 1.35); no mark-for-masquerade chain, the masquerade mark set
// inline and a hairpin-connections set matched in the masquerading chain
// (kubernetes#135800, #136499, 1.36; live nft output of v1.36.2); no
// per-endpoint chains, the service chain DNATs with
// "dnat ip to numgen random mod N map { ... }" and, for a single endpoint,
// a plain "dnat to IP:port" (kubernetes#140723, #140960, 1.37). Session
// affinity is not modelled in that form (see Notes).
//
// # Calico policy
//
// The "table ip calico" printed here is a simplified view of what Felix
// enforces (its header comment says so): Kubernetes NetworkPolicies rendered
// per workload with the member IPs Felix's IP sets would hold. The decision
// itself is Node.PolicyAllows, built on the pure semantics in policy.go.
package linux
