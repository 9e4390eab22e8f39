// Package dns is the twin's cluster DNS: CoreDNS as kubeadm configures it,
// the node network's DNS server behind it, the stub resolvers of Linux and
// Windows pods and nodes, and the nslookup tools people run to look.
//
// # CoreDNS
//
// Server reads the kube-system/coredns Corefile (kubeadm's: kubernetes
// cluster.local in-addr.arpa ip6.arpa with pods insecure, fallthrough for
// the reverse zones and ttl 30; forward . /etc/resolv.conf) and answers as
// the kubernetes plugin does (coredns plugin/kubernetes):
//
//   - <svc>.<ns>.svc.<zone>: the ClusterIPs of a Service; a headless Service
//     (clusterIP None) answers the addresses of its ready endpoints, a nil
//     ready condition counting as ready (object/endpoint.go); an
//     ExternalName Service is a CNAME, followed by the plugin inside the
//     zone and through the whole server outside it (backend_lookup.go).
//   - <endpoint>.<svc>.<ns>.svc.<zone>: the endpoint whose hostname matches —
//     the pod's spec.hostname when its spec.subdomain names the Service, else
//     its address with dashes — for headless and ClusterIP Services alike.
//   - _<port>._<proto>.<svc>.<ns>.svc.<zone>: as the Service name, if a port
//     matches. SRV questions get "0 <weight> <port> <target>." per port —
//     the Service name for a ClusterIP Service, each ready endpoint's name
//     for a headless one, the weight 100 split evenly — with the targets'
//     addresses in the additional section (backend_lookup.go SRV); an
//     ExternalName has none (NODATA).
//   - ns.dns.<zone>: the ClusterIP of the Service in front of the CoreDNS
//     pods, kube-dns (ns.go isDefaultNS, nsAddrs).
//   - <a-b-c-d>.<ns>.pod.<zone>: with pods insecure the address written in
//     the name, unchecked; verified checks a pod of the namespace has it;
//     disabled (the plugin's default) is NXDOMAIN. The plugin lists no
//     Succeeded, Failed or Unknown pods (controller.go podListFunc), so
//     verified never answers a finished pod's address.
//   - NXDOMAIN for a missing Service, a missing namespace, a label other
//     than svc or pod in its place, too many labels (parse.go), and any
//     label below an ExternalName Service (findServices, CoreDNS 1.11.0);
//     NODATA for the zone apex, a bare namespace, and a name that exists
//     without records of the asked type (an IPv4 Service asked for AAAA) —
//     except TXT, which is NXDOMAIN for a name without records of any
//     type, the apex and a bare namespace included (kubernetes.go
//     Services, CoreDNS 1.10.1).
//   - PTR in the reverse zones: a Service ClusterIP gives its Service name,
//     an endpoint address its endpoint names (reverse.go); other addresses
//     fall through to forward.
//   - dns-version.<zone> TXT "1.1.0".
//
// Answers carry the AA bit and the Corefile's TTL, and keep the question's
// spelling: names match case-insensitively, but records are owned by the
// name as asked and SRV targets end in the zone as asked (handler.go).
// Names outside the zones go to forward; its "/etc/resolv.conf" is the CoreDNS pods' (dnsPolicy Default
// on Linux nodes), so the node network's DNS server: NetworkDNS, the router
// (the gateway of the Cluster kind), which answers the Cluster kind's
// spec.network.dns records, NXDOMAIN for a name under a top-level domain
// the root zone does not have (hello.demo), and NotModeled for every other
// name — an explicit unknown, never a guess.
//
// The loadbalance plugin shuffles address records on every answer; the twin
// keeps endpoint order. kubeadm's cache plugin (cache 30, disabled for
// cluster.local) keeps forwarded answers up to 30 s and answers a repeat
// with the AA bit set (plugin/cache/item.go toMsg). The twin takes every
// forwarded answer as a cache miss: it carries the upstream's AA bit,
// clear from a recursive resolver, so nslookup prints "Non-authoritative
// answer:"; Answer.Cache says so. The TTL of a forwarded answer is the
// upstream's, capped by the cache, and not known to the twin (0).
//
// # Resolvers
//
// ConfigFor follows the kubelet (pkg/kubelet/network/dns): ClusterFirst gives
// nameserver <kube-dns ClusterIP>, search <ns>.svc.<domain> svc.<domain>
// <domain> (plus the host's search domains; the Cluster kind records none),
// options ndots:5; ClusterFirst on the host network falls back to Default;
// Default gives the node's resolver, or, with --resolv-conf="" as on the
// Windows node, 127.0.0.1 and search "." — lookups that reach nothing; None
// starts empty; a pod's dnsConfig is merged last. On Windows, Calico's CNI
// copies that config into the HNS endpoint (Dns.Search, Dns.ServerList).
// Nodes use the router directly; the Windows host appends its primary DNS
// suffix, the domain of its FQDN.
//
// Resolve then walks the candidates of the source's stub resolver and lists
// every query. glibc (Ubuntu nodes, most images): fewer than ndots dots →
// search list first, then the name as is; ndots or more → as is first, then
// the search list; a NOERROR answer with any record ends the search, so a
// candidate that is only a CNAME (an ExternalName to a dead target) hides
// every later one (res_query.c __res_context_query). musl (alpine and -musl images): ndots or more → as is
// only; NODATA or SERVFAIL ends the search. Windows: a name with any dot is
// sent once, as is — hello.demo never becomes hello.demo.svc.cluster.local
// (seed 001; Kubernetes docs, DNS resolution on Windows nodes) — and a name
// without a dot gets each suffix. A trailing dot makes a name absolute
// everywhere. Only A queries are listed; the AAAA queries sent alongside
// answer NODATA in an IPv4 cluster.
//
// What nslookup and Resolve-DnsName print from these answers is
// internal/console's.
package dns
