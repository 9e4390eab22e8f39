// Package windows compiles a built cluster into what HNS and VFP hold on
// each Windows node — networks, endpoints, namespaces, load balancers, the
// host adapters and firewall rules they bring, and VFP ports with layers and
// rules. The PowerShell and native commands people read that state with
// (Get-HnsNetwork … | Format-Table, hnsdiag, vfpctrl) are
// internal/console/powershell's.
//
// # Who creates what (and where the rules come from)
//
//   - calico-node-windows (node/windows-packaging/CalicoWindows/node/node-service.ps1,
//     node/pkg/lifecycle/startup/startup_windows.go,
//     cni-plugin/pkg/dataplane/windows/dataplane_windows.go): the "External"
//     Overlay network 192.168.255.0/30 (VSID 9999) that makes HNS build the
//     vSwitch, then the "Calico" Overlay network on the node's block (gateway
//     .1, subnet policy {"Type":"VSID","VSID":<VNI>}, a HostRoute policy) and
//     its host endpoint Calico_ep at .2 (remote, host MAC, PA = node IP).
//   - Felix (felix/dataplane/windows/vxlan_mgr.go): one RemoteSubnetRoute per
//     remote VXLAN block {DestinationPrefix, ProviderAddress, DistributedRouterMacAddress
//     (VTEP MAC, ':'→'-'), IsolationId}; (endpoint_mgr.go, policysets/) the
//     HNS ACLs on every local pod endpoint.
//   - The Calico CNI plugin (dataplane_windows.go createAndAttachContainerEP,
//     cni-plugin/internal/pkg/utils/winpol, tigera/operator pkg/render/windows.go):
//     per pod an endpoint "<sandbox>_Calico", MAC 0E-2A-<address in hex>, with
//     OutBoundNAT (exceptions: service CIDRs, then every pool), one ROUTE per
//     service CIDR, PA, and the loopback-DSR OutBoundNAT {Destinations: [pod IP]}.
//   - kube-proxy winkernel (K8s pkg/proxy/winkernel/proxier.go, hns.go):
//     remote endpoints for every ClusterIP (host MAC) and every backend on
//     another node (MAC 02-11-<hex>, PA from the route covering it), and per
//     service port a ClusterIP load balancer, a NodePort one without a VIP,
//     one per external IP and per load-balancer ingress IP, with DSR,
//     session affinity, traffic policies and preserve-destination as
//     proxier.go applies them. The sig-windows-tools start.ps1 always passes
//     --enable-dsr=true and Calico_ep's address as --source-vip. What
//     kube-proxy decides alike on every node is derived once for the
//     cluster (proxymodel.go); a node plans only the service ports that
//     involve it, and its endpoints, load balancers and VFP ports are made
//     when read (Node.Endpoints, LoadBalancers, Ports).
//
// # ACLs without a NetworkPolicy
//
// Seven, as seed 000 counts: allow-host-to-endpoint (In, priority 900, from
// the host's addresses); per direction the kns.<namespace> profile's allow
// (priority 1000; ksa.<namespace>.<sa> has no rules) and the end-of-tier
// Block (1001); then two host-scope allows (RuleType Host, priority 0). No
// static-rules.json ships with Calico, so there are no static rules. Rules
// with both source and destination selectors become one ACL per chunk
// combination (addresses and ports cut at 4000): ACLCount on each endpoint
// is the total, ACLReport says where it comes from and what Windows skips.
//
// # Stand-ins and ordering rules
//
// HNS makes every ID a random GUID; the twin derives version 5 UUIDs from
// what the object is (ids.go). Pod sandbox IDs are random too: the twin takes
// the observed one from the pod annotation SandboxIDAnnotation, else the
// engine's IPAM-handle stand-in. Felix adds RemoteSubnetRoutes in Go map
// order; the twin sorts them by VTEP MAC, descending (compile.go
// remoteSubnetRoutes says why). Endpoints are listed as HNS creates them:
// Calico_ep, pods in address order, then kube-proxy's per service in kubectl
// order; load balancers likewise (kube-proxy ranges over a map).
//
// # Not modeled
//
// The BGP (L2Bridge) backend, IPv6 and dual stack, Windows nodes without an
// affine block, kube-proxy's health-check load balancers (no cbr0 endpoint
// on Calico), HNS's internal fields (Version, Resources, Health, MacPools),
// adapter ifIndex and link speed, VFP flow state and unified flows. Which
// VFP layers besides ACL_ENDPOINT_LAYER an HNS container port carries, their
// priorities and rule contents are a model (vfp.go); vfpctrl says so on
// stderr.
package windows
