package dns

import (
	"fmt"
	"math"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Server is the cluster's CoreDNS, configured by the kube-system/coredns
// ConfigMap and answering from the cluster's Services, EndpointSlices, Pods
// and Namespaces the way the kubernetes plugin does (coredns
// plugin/kubernetes: handler.go, kubernetes.go, parse.go, reverse.go,
// object/endpoint.go; plugin/backend_lookup.go), with everything outside its
// zones handed to the forward plugin.
type Server struct {
	// IP is the kube-dns Service's ClusterIP, the nameserver pods are given.
	IP string
	// Zones, TTL and Pods are the kubernetes plugin's settings as the
	// Corefile gives them (kubeadm: cluster.local in-addr.arpa ip6.arpa,
	// ttl 30, pods insecure).
	Zones []string
	TTL   uint32
	Pods  string
	// Forward is the forward plugin's target as written ("/etc/resolv.conf").
	Forward string
	// Notes are what the twin does not model about this configuration.
	Notes []string

	broken  string // why CoreDNS answers nothing (Corefile does not parse)
	blocks  []serverBlock
	kube    map[int]kubernetesConfig
	network *NetworkDNS

	services   map[string]*corev1.Service
	slices     map[string][]*discoveryv1.EndpointSlice
	namespaces map[string]bool

	// podList is the cluster's pods; pods indexes them by namespace and
	// name (the last of a name) on the first query that reads a pod: most
	// engines answer no pod query (reach, most traces).
	podList  []*corev1.Pod
	podsOnce sync.Once
	podMap   map[podKey]*corev1.Pod
}

type podKey struct{ ns, name string }

// pods is the pod index, made on first use.
func (s *Server) pods() map[podKey]*corev1.Pod {
	s.podsOnce.Do(func() {
		s.podMap = make(map[podKey]*corev1.Pod, len(s.podList))
		for _, p := range s.podList {
			s.podMap[podKey{p.Namespace, p.Name}] = p
		}
	})
	return s.podMap
}

// kubeadmCorefile is the part of kubeadm's default Corefile the twin reads
// when the cluster has no coredns ConfigMap (kubeadm
// app/phases/addons/dns/manifests.go).
const kubeadmCorefile = `.:53 {
    kubernetes %s in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    forward . /etc/resolv.conf
}`

// NewServer builds CoreDNS for the cluster.
func NewServer(c *model.Cluster) *Server {
	s := &Server{
		network:    NewNetworkDNS(c),
		kube:       map[int]kubernetesConfig{},
		services:   map[string]*corev1.Service{},
		slices:     map[string][]*discoveryv1.EndpointSlice{},
		podList:    c.Pods,
		namespaces: map[string]bool{},
	}
	for _, svc := range c.Services {
		s.services[svc.Namespace+"/"+svc.Name] = svc
		if svc.Namespace == "kube-system" && svc.Name == "kube-dns" {
			s.IP = svc.Spec.ClusterIP
		}
	}
	if s.IP == "" {
		s.Notes = append(s.Notes, "no kube-system/kube-dns Service: pods have no cluster nameserver")
	}
	for _, es := range c.EndpointSlices {
		name := es.Labels[discoveryv1.LabelServiceName]
		if name == "" {
			continue
		}
		k := es.Namespace + "/" + name
		s.slices[k] = append(s.slices[k], es)
	}
	for _, ns := range c.Namespaces {
		s.namespaces[ns.Name] = true
	}

	text := ""
	for _, cm := range c.ConfigMaps {
		if cm.Namespace == "kube-system" && cm.Name == "coredns" {
			text = cm.Data["Corefile"]
		}
	}
	if text == "" {
		text = fmt.Sprintf(kubeadmCorefile, clusterDomain(c))
		s.Notes = append(s.Notes, "no Corefile in kube-system/coredns: kubeadm's default assumed")
	}
	blocks, err := parseCorefile(text)
	if err != nil {
		s.broken = err.Error()
		s.Notes = append(s.Notes, "CoreDNS does not start: "+err.Error())
		return s
	}
	s.blocks = blocks
	for i, b := range blocks {
		for _, p := range b.Plugins {
			if !modeledPlugins[p.Name] {
				s.Notes = append(s.Notes, fmt.Sprintf("Corefile plugin %q in block %s is not modeled", p.Name, strings.Join(b.Zones, " ")))
			}
		}
		if d := b.plugin("kubernetes"); d != nil {
			k, err := parseKubernetes(d, b.Zones)
			if err != nil {
				s.broken = err.Error()
				s.Notes = append(s.Notes, "CoreDNS does not start: "+err.Error())
				return s
			}
			for _, o := range k.Unmodeled {
				s.Notes = append(s.Notes, fmt.Sprintf("kubernetes plugin option %q is not modeled", o))
			}
			s.kube[i] = k
			if s.Zones == nil {
				s.Zones, s.TTL, s.Pods = k.Zones, k.TTL, k.Pods
			}
		}
		if d := b.plugin("forward"); d != nil && len(d.Args) >= 2 && s.Forward == "" {
			s.Forward = d.Args[1]
		}
	}
	return s
}

// clusterDomain is kubeadm's networking.dnsDomain (default cluster.local).
func clusterDomain(c *model.Cluster) string {
	if cc := c.Kubeadm.Cluster; cc != nil && cc.Networking.DNSDomain != "" {
		d, _ := normalize(cc.Networking.DNSDomain)
		return d
	}
	return "cluster.local"
}

// Query answers one question as CoreDNS would. The name is taken as
// absolute, with or without its trailing dot.
//
// The plugin matches names case-insensitively but answers with the
// question's spelling: the zone is cut from the question as asked
// (handler.go ServeDNS "maintain case of original query"), records are
// owned by state.QName(), and SRV targets end in that zone.
func (s *Server) Query(name string, qtype uint16) Answer {
	n, _ := normalize(name)
	a := s.query(n, qtype, 0)
	asked := strings.TrimSuffix(strings.TrimSpace(name), ".")
	if a.Path != PathKubernetes || asked == n || !strings.EqualFold(asked, n) {
		return a
	}
	a.Name = asked
	zone := ""
	if k, ok := s.kubeFor(n); ok {
		zone = longestZone(k.Zones, n)
	}
	askedZone := ""
	if zone != "" && zone != "." {
		askedZone = asked[len(asked)-len(zone):]
	}
	a.Records = append([]Record(nil), a.Records...)
	for i, r := range a.Records {
		if r.Name == n {
			a.Records[i].Name = asked
		}
		if r.Type == TypeSRV && askedZone != "" && strings.HasSuffix(r.Data, "."+zone+".") {
			a.Records[i].Data = strings.TrimSuffix(r.Data, zone+".") + askedZone + "."
		}
	}
	a.Extra = append([]Record(nil), a.Extra...)
	for i, r := range a.Extra {
		if askedZone != "" && strings.HasSuffix(r.Name, "."+zone) {
			a.Extra[i].Name = strings.TrimSuffix(r.Name, zone) + askedZone
		}
	}
	return a
}

// kubeFor is the kubernetes plugin of the server block that takes name.
func (s *Server) kubeFor(name string) (kubernetesConfig, bool) {
	bi, best := -1, -1
	for i, b := range s.blocks {
		for _, z := range b.Zones {
			if inZone(name, z) && zoneLen(z) > best {
				bi, best = i, zoneLen(z)
			}
		}
	}
	k, ok := s.kube[bi]
	return k, ok
}

func (s *Server) query(name string, qtype uint16, depth int) Answer {
	a := Answer{Name: name, Type: qtype}
	if s.broken != "" {
		a.Rcode, a.Path = NoServer, PathNone
		a.Why = "CoreDNS does not start: " + s.broken
		return a
	}
	bi := -1
	best := -1
	for i, b := range s.blocks {
		for _, z := range b.Zones {
			if inZone(name, z) && zoneLen(z) > best {
				bi, best = i, zoneLen(z)
			}
		}
	}
	if bi < 0 {
		a.Rcode = Refused
		a.Why = "no server block of the Corefile holds " + name
		return a
	}
	blk := s.blocks[bi]
	if k, ok := s.kube[bi]; ok {
		if zone := longestZone(k.Zones, name); zone != "" {
			ans, nameErr := s.kubernetes(k, zone, name, qtype, depth)
			if len(ans.Records) == 0 && (ans.Rcode == NoError || ans.Rcode == NXDomain) {
				ans.Authority = []Record{soa(zone, k.TTL)}
			}
			// handler.go: a name error ends the query unless fallthrough
			// covers the name (kubeadm: only the reverse zones).
			if !nameErr || !k.fallsThrough(name) {
				return ans
			}
		}
	}
	if f := blk.plugin("forward"); f != nil && len(f.Args) >= 2 && inZone(name, zoneOfKey(f.Args[0])) {
		a := s.forward(f.Args[1], name, qtype)
		if c := blk.plugin("cache"); c != nil && a.Rcode != NotModeled && a.Rcode != NoServer {
			a.Cache = cacheMiss(c)
		}
		return a
	}
	for _, p := range blk.Plugins {
		if !modeledPlugins[p.Name] {
			a.Rcode = NotModeled
			a.Why = fmt.Sprintf("not modeled: plugin %q of the Corefile may answer %s", p.Name, name)
			return a
		}
	}
	// plugin.NextOrFailure: no plugin left to answer.
	a.Rcode = ServFail
	a.Why = "no plugin of the Corefile answers " + name
	return a
}

// soa is the kubernetes plugin's SOA for zone (plugin/backend_lookup.go
// SOA): ns.dns.<zone>, hostmaster.<zone>, refresh 7200, retry 1800, expire
// 86400, minimum the plugin's TTL, and a TTL of that capped at 300. The
// serial, the time of the last change CoreDNS saw (kubernetes.go Serial),
// is unknown: 0.
func soa(zone string, ttl uint32) Record {
	owner := zone
	if owner == "." {
		owner = ""
	}
	join := func(label string) string {
		if owner == "" {
			return label + "."
		}
		return label + "." + owner + "."
	}
	return Record{Name: owner, Type: TypeSOA, TTL: min(ttl, 300),
		Data: fmt.Sprintf("%s %s 0 7200 1800 86400 %d", join("ns.dns"), join("hostmaster"), ttl)}
}

func zoneLen(z string) int {
	if z == "." {
		return 0
	}
	return len(z) + 1
}

func longestZone(zones []string, name string) string {
	best := ""
	for _, z := range zones {
		if inZone(name, z) && zoneLen(z) > zoneLen(best) {
			best = z
		}
	}
	if best == "" {
		for _, z := range zones {
			if z == "." {
				return "."
			}
		}
	}
	return best
}

// forward hands the question to the forward plugin's upstream. With
// "/etc/resolv.conf" that is the CoreDNS pods' resolv.conf: kubeadm runs
// them with dnsPolicy Default on Linux nodes, so it is the node's, naming
// the node network's DNS server.
func (s *Server) forward(target, name string, qtype uint16) Answer {
	var a Answer
	switch {
	case strings.HasPrefix(target, "/"):
		a = s.network.Query(name, qtype)
		a.Why = fmt.Sprintf("%s (forward . %s → %s)", a.Why, target, orUnknown(s.network.IP))
	case strings.TrimPrefix(target, "dns://") == s.network.IP || strings.TrimPrefix(target, "dns://") == s.network.IP+":53":
		a = s.network.Query(name, qtype)
		a.Why = fmt.Sprintf("%s (forward . %s)", a.Why, target)
	default:
		a = Answer{Name: name, Type: qtype, Rcode: NotModeled,
			Why: fmt.Sprintf("not modeled: forward . %s (an upstream the Cluster kind does not describe)", target)}
	}
	a.Path = PathForward
	a.Authoritative = false
	return a
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

// lookup is the kubernetes plugin's Records result: the hosts (addresses or,
// for ExternalName, a target name) or a name error.
type lookup struct {
	hosts   []string
	nameErr bool
	why     string
	// entries are the msg.Service values behind hosts: with the port and
	// the name (the key) an SRV answer targets.
	entries []entry
}

// entry is one msg.Service of the kubernetes plugin: an address or target
// name, a port (-1 for none, as object/endpoint.go writes a port-less
// slice) and the owner name its key spells, without the zone.
type entry struct {
	host string
	port int32
	key  string
}

func (l *lookup) add(host string, port int32, key string) {
	l.hosts = append(l.hosts, host)
	l.entries = append(l.entries, entry{host: host, port: port, key: key})
}

// kubernetes answers a question inside one of the plugin's zones; nameErr
// tells the caller the answer is NXDOMAIN (which fallthrough may pass on).
func (s *Server) kubernetes(k kubernetesConfig, zone, name string, qtype uint16, depth int) (Answer, bool) {
	a := Answer{Name: name, Type: qtype, Path: PathKubernetes, Authoritative: true}
	fail := func(why string) (Answer, bool) {
		a.Rcode, a.Why = NXDomain, why
		return a, true
	}
	if isReverseZone(zone) {
		// reverse.go: only PTR questions for addresses are answered.
		if qtype != TypePTR {
			return fail("the kubernetes plugin answers only PTR in " + zone)
		}
		ip, ok := reverseAddr(name)
		if !ok {
			return fail(name + " is not a full reverse name")
		}
		recs := s.reverse(k, ip)
		if len(recs) == 0 {
			return fail("no Service ClusterIP or ready endpoint has " + ip.String())
		}
		a.Records, a.Why = recs, "PTR for a Service ClusterIP or endpoint (coredns plugin/kubernetes/reverse.go)"
		return a, false
	}
	// kubernetes.go Services: TXT is answered before the default NS name
	// is looked at; every other type of ns.dns.<zone> gets the addresses
	// of the Services in front of CoreDNS (ns.go isDefaultNS, nsAddrs).
	if qtype != TypeTXT && name == "ns.dns."+zone {
		return s.defaultNS(a, k, qtype)
	}
	switch qtype {
	case TypeA, TypeAAAA:
		recs, l, incomplete := s.addresses(k, zone, name, qtype, depth)
		if l.nameErr {
			return fail(l.why)
		}
		a.Records, a.Why = recs, l.why
		if incomplete != "" {
			a.Rcode, a.Why = NotModeled, l.why+"; "+incomplete
		}
		return a, false
	case TypeCNAME:
		l := s.records(k, zone, name)
		if l.nameErr {
			return fail(l.why)
		}
		a.Why = l.why
		// backend_lookup.go CNAME: only the first host, and only a name.
		if len(l.hosts) > 0 {
			if _, err := netip.ParseAddr(l.hosts[0]); err != nil {
				a.Records = []Record{{Name: name, Type: TypeCNAME, TTL: k.TTL, Data: l.hosts[0]}}
			}
		}
		return a, false
	case TypeTXT:
		// kubernetes.go Services: "dns-version" under the zone answers the
		// schema version with TTL 28800.
		if name == "dns-version."+zone {
			a.Records = []Record{{Name: name, Type: TypeTXT, TTL: 28800, Data: "1.1.0"}}
			a.Why = "DNS schema version (coredns plugin/kubernetes/kubernetes.go)"
			return a, false
		}
		// Otherwise NODATA if the name has records of another type, and
		// NXDOMAIN if not — the zone apex and a bare namespace included
		// (CoreDNS 1.10.1 and later).
		l := s.records(k, zone, name)
		if l.nameErr {
			return fail(l.why)
		}
		if len(l.hosts) == 0 {
			return fail("no records at " + name + ": a TXT question for it is NXDOMAIN (coredns plugin/kubernetes/kubernetes.go Services)")
		}
		a.Why = l.why + "; no TXT records"
		return a, false
	case TypeSRV:
		l := s.records(k, zone, name)
		if l.nameErr {
			return fail(l.why)
		}
		a.Records, a.Extra = srvRecords(name, zone, k.TTL, l.entries)
		a.Why = l.why + "; SRV answer (coredns plugin/backend_lookup.go SRV)"
		if len(a.Records) == 0 {
			a.Why = l.why + "; no SRV records: ExternalName Services and pods without ports have none (coredns plugin/kubernetes/kubernetes.go Services)"
		}
		return a, false
	case TypeSOA, TypeNS:
		a.Rcode = NotModeled
		a.Why = "not modeled: " + TypeString(qtype) + " answers of the kubernetes plugin"
		return a, false
	}
	// handler.go: other types do a fake A lookup to tell NODATA from
	// NXDOMAIN.
	l := s.records(k, zone, name)
	if l.nameErr {
		return fail(l.why)
	}
	a.Why = l.why + "; no " + TypeString(qtype) + " records"
	return a, false
}

func isReverseZone(z string) bool {
	return z == "in-addr.arpa" || z == "ip6.arpa" || strings.HasSuffix(z, ".in-addr.arpa") || strings.HasSuffix(z, ".ip6.arpa")
}

// addresses follows backend_lookup.go A/AAAA: addresses deduplicated, an
// ExternalName's target becomes a CNAME followed inside the zone by the
// plugin itself and outside it through the whole server (the upstream
// lookup). incomplete is set when that outside answer is not modeled.
func (s *Server) addresses(k kubernetesConfig, zone, name string, qtype uint16, depth int) ([]Record, lookup, string) {
	if name == zone {
		// checkForApex: the apex has no address records: NODATA.
		return nil, lookup{why: "apex of the zone " + zone + ": no address records"}, ""
	}
	l := s.records(k, zone, name)
	if l.nameErr {
		return nil, l, ""
	}
	var out []Record
	incomplete := ""
	seen := map[string]bool{}
	for _, h := range l.hosts {
		ip, err := netip.ParseAddr(h)
		if err != nil {
			if h == name || depth > 7 {
				continue // x CNAME x, or too long a chain
			}
			cname := Record{Name: name, Type: TypeCNAME, TTL: k.TTL, Data: h}
			if inZone(h, zone) {
				next, nl, inc := s.addresses(k, zone, h, qtype, depth+1)
				if !nl.nameErr && len(next) > 0 {
					out = append(out, cname)
					out = append(out, next...)
				}
				if inc != "" {
					incomplete = inc
				}
				continue
			}
			up := s.query(h, qtype, depth+1)
			switch up.Rcode {
			case NotModeled:
				incomplete = "the CNAME target is " + up.Why
			case NoServer:
				continue
			}
			out = append(out, cname)
			out = append(out, up.Records...)
			continue
		}
		if seen[h] {
			continue
		}
		if qtype == TypeA && ip.Is4() {
			seen[h] = true
			out = append(out, Record{Name: name, Type: TypeA, TTL: k.TTL, Data: h})
		}
		if qtype == TypeAAAA && ip.Is6() && !ip.Is4In6() {
			seen[h] = true
			out = append(out, Record{Name: name, Type: TypeAAAA, TTL: k.TTL, Data: h})
		}
	}
	return out, l, incomplete
}

// records is the kubernetes plugin's Records: parse the name against the
// schema (parse.go parseRequest), check the namespace (namespace.go), then
// find pods or services.
func (s *Server) records(k kubernetesConfig, zone, name string) lookup {
	base := strings.TrimSuffix(name, "."+zone)
	if name == zone || base == "svc" || base == "pod" {
		return lookup{why: "apex of the " + base + " subtree: NODATA"}
	}
	segs := strings.Split(base, ".")
	last := len(segs) - 1
	kind := segs[last]
	if kind != "svc" && kind != "pod" {
		return lookup{nameErr: true, why: fmt.Sprintf("%q in place of svc or pod: not a name of the cluster's DNS schema", kind)}
	}
	last--
	ns := segs[last]
	last--
	var service, endpoint, port, protocol string
	if last >= 0 {
		service = segs[last]
		last--
	}
	switch last {
	case -1:
	case 0:
		endpoint = segs[0]
	case 1:
		// Two labels left: _port._protocol (multicluster is not configured).
		port, protocol = strings.TrimPrefix(segs[0], "_"), strings.TrimPrefix(segs[1], "_")
	default:
		return lookup{nameErr: true, why: "too many labels for the cluster's DNS schema"}
	}
	if !s.namespaces[ns] {
		return lookup{nameErr: true, why: fmt.Sprintf("namespace %q does not exist", ns)}
	}
	if kind == "pod" {
		return s.findPod(k, ns, service)
	}
	return s.findService(ns, service, endpoint, port, protocol)
}

// findPod: <a-b-c-d>.<ns>.pod.<zone> (kubernetes.go findPods).
func (s *Server) findPod(k kubernetesConfig, ns, podname string) lookup {
	if k.Pods == "disabled" {
		return lookup{nameErr: true, why: "pod records are disabled (pods disabled)"}
	}
	if podname == "" {
		return lookup{why: "namespace " + ns + " without a pod label: NODATA"}
	}
	var ipText string
	if strings.Count(podname, "-") == 3 && !strings.Contains(podname, "--") {
		ipText = strings.ReplaceAll(podname, "-", ".")
	} else {
		ipText = strings.ReplaceAll(podname, "-", ":")
	}
	ip, err := netip.ParseAddr(ipText)
	if err != nil {
		return lookup{nameErr: true, why: fmt.Sprintf("%q is not an address written with dashes", podname)}
	}
	l := lookup{}
	l.add(ip.String(), 0, podname+"."+ns+".pod")
	if k.Pods == "insecure" {
		l.why = "pods insecure: the address written in the name, unchecked"
		return l
	}
	// controller.go podListFunc: the plugin lists pods with the field
	// selector status.phase!=Succeeded,status.phase!=Failed,
	// status.phase!=Unknown, so finished pods have no records.
	var names []string
	for _, p := range s.pods() {
		if p.Namespace != ns || p.Status.PodIP != ip.String() {
			continue
		}
		switch p.Status.Phase {
		case corev1.PodSucceeded, corev1.PodFailed, corev1.PodUnknown:
			names = append(names, p.Name+" ("+string(p.Status.Phase)+", not listed by the plugin)")
			continue
		}
		l.why = "pods verified: pod " + p.Name + " has the address"
		return l
	}
	if len(names) > 0 {
		sort.Strings(names)
		return lookup{nameErr: true, why: "pods verified: no running or pending pod in " + ns + " has " + ip.String() + "; finished: " + strings.Join(names, ", ")}
	}
	return lookup{nameErr: true, why: "pods verified: no pod in " + ns + " has " + ip.String()}
}

// findService: kubernetes.go findServices.
func (s *Server) findService(ns, name, endpoint, port, protocol string) lookup {
	if name == "" {
		return lookup{why: "namespace " + ns + " without a service label: NODATA"}
	}
	svc := s.services[ns+"/"+name]
	if svc == nil {
		return lookup{nameErr: true, why: fmt.Sprintf("no Service %s in namespace %s", name, ns)}
	}
	ref := svc.Namespace + "/" + svc.Name
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		// kubernetes.go findServices: no endpoint, port or protocol labels
		// under an ExternalName Service (NXDOMAIN since CoreDNS 1.11.0).
		if endpoint != "" || port != "" || protocol != "" {
			return lookup{nameErr: true, why: "ExternalName Service " + ref + " has no endpoints, ports or protocols below it"}
		}
		if _, err := netip.ParseAddr(svc.Spec.ExternalName); err != nil && svc.Spec.ExternalName != "" {
			t, _ := normalize(svc.Spec.ExternalName)
			l := lookup{why: "ExternalName Service " + ref + " → CNAME " + t}
			l.add(t, 0, name+"."+ns+".svc")
			return l
		}
		return lookup{nameErr: true, why: "ExternalName Service " + ref + " names an address, which the plugin does not answer"}
	}
	if headless(svc) || endpoint != "" {
		var l lookup
		for _, e := range s.readyEndpoints(svc) {
			if endpoint != "" && !strings.EqualFold(endpoint, e.hostname) {
				continue
			}
			for _, p := range e.ports {
				if matchPortProto(port, p.name, protocol, p.protocol) {
					l.add(e.ip, p.port, e.hostname+"."+name+"."+ns+".svc")
				}
			}
		}
		hosts := l.hosts
		if len(hosts) == 0 {
			what := "no ready endpoint of Service " + ref
			if endpoint != "" {
				what += " named " + endpoint
			}
			return lookup{nameErr: true, why: what}
		}
		l.why = "ready endpoints of headless Service " + ref
		if endpoint != "" {
			l.why = "endpoint " + endpoint + " of Service " + ref
		}
		return l
	}
	var l lookup
	matched := false
	ips := svc.Spec.ClusterIPs
	if len(ips) == 0 && svc.Spec.ClusterIP != "" {
		ips = []string{svc.Spec.ClusterIP}
	}
	for _, p := range svc.Spec.Ports {
		proto := string(p.Protocol)
		if proto == "" {
			proto = string(corev1.ProtocolTCP)
		}
		if !matchPortProto(port, p.Name, protocol, proto) {
			continue
		}
		matched = true
		for _, ip := range ips {
			l.add(ip, p.Port, name+"."+ns+".svc")
		}
	}
	if !matched {
		return lookup{nameErr: true, why: "no port of Service " + ref + " matches"}
	}
	l.why = "ClusterIP of Service " + ref
	return l
}

func headless(svc *corev1.Service) bool {
	if len(svc.Spec.ClusterIPs) > 0 {
		return svc.Spec.ClusterIPs[0] == corev1.ClusterIPNone
	}
	return svc.Spec.ClusterIP == corev1.ClusterIPNone
}

// matchPortProto: an empty question part matches anything; otherwise names
// compare case-insensitively (kubernetes.go matchPortAndProtocol).
func matchPortProto(qPort, port, qProto, proto string) bool {
	return (qPort == "" || strings.EqualFold(qPort, port)) && (qProto == "" || strings.EqualFold(qProto, proto))
}

type endpointPort struct {
	name, protocol string
	port           int32 // -1 for none (object/endpoint.go)
}

type endpoint struct {
	ip       string
	hostname string
	ports    []endpointPort
}

// readyEndpoints are a Service's endpoints as the plugin indexes them
// (object/endpoint.go EndpointSliceToEndpoints): ready addresses only, a nil
// ready condition counting as ready, a slice without ports standing for one
// port-less entry. The hostname is the endpoint's, or else the one the
// EndpointSlice controller would have set (endpointslice util
// ShouldSetHostname: the pod's spec.hostname when its spec.subdomain is the
// Service's name), or else the address with dashes (endpointHostname).
func (s *Server) readyEndpoints(svc *corev1.Service) []endpoint {
	var out []endpoint
	slices := append([]*discoveryv1.EndpointSlice(nil), s.slices[svc.Namespace+"/"+svc.Name]...)
	sort.SliceStable(slices, func(i, j int) bool { return slices[i].Name < slices[j].Name })
	for _, es := range slices {
		ports := []endpointPort{{port: -1}}
		if len(es.Ports) > 0 {
			ports = nil
			for _, p := range es.Ports {
				ep := endpointPort{port: -1}
				if p.Port != nil {
					ep.port = *p.Port
				}
				if p.Name != nil {
					ep.name = *p.Name
				}
				if p.Protocol != nil {
					ep.protocol = string(*p.Protocol)
				}
				ports = append(ports, ep)
			}
		}
		for _, e := range es.Endpoints {
			// The controller marks every endpoint ready for a Service with
			// publishNotReadyAddresses (endpointslice utils podToEndpoint).
			if e.Conditions.Ready != nil && !*e.Conditions.Ready && !svc.Spec.PublishNotReadyAddresses {
				continue
			}
			host := ""
			if e.Hostname != nil {
				host = *e.Hostname
			} else if e.TargetRef != nil && e.TargetRef.Kind == "Pod" {
				if p := s.pods()[podKey{es.Namespace, e.TargetRef.Name}]; p != nil && p.Spec.Hostname != "" && p.Spec.Subdomain == svc.Name {
					host = p.Spec.Hostname
				}
			}
			for _, ad := range e.Addresses {
				h := host
				if h == "" {
					h = strings.NewReplacer(".", "-", ":", "-").Replace(ad)
				}
				out = append(out, endpoint{ip: ad, hostname: h, ports: ports})
			}
		}
	}
	return out
}

// reverse answers a PTR question for an address: the Service whose
// ClusterIP it is, else every ready endpoint with it (reverse.go
// serviceRecordForIP). Names use the plugin's first forward zone.
func (s *Server) reverse(k kubernetesConfig, ip netip.Addr) []Record {
	primary := ""
	for _, z := range k.Zones {
		if !isReverseZone(z) {
			primary = z
			break
		}
	}
	if primary == "" {
		return nil
	}
	q := reverseName(ip)
	keys := make([]string, 0, len(s.services))
	for key := range s.services {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		svc := s.services[key]
		ips := svc.Spec.ClusterIPs
		if len(ips) == 0 {
			ips = []string{svc.Spec.ClusterIP}
		}
		for _, c := range ips {
			if a, err := netip.ParseAddr(c); err == nil && a == ip {
				return []Record{{Name: q, Type: TypePTR, TTL: k.TTL, Data: svc.Name + "." + svc.Namespace + ".svc." + primary}}
			}
		}
	}
	var out []Record
	for _, key := range keys {
		svc := s.services[key]
		for _, e := range s.readyEndpoints(svc) {
			if a, err := netip.ParseAddr(e.ip); err == nil && a == ip {
				r := Record{Name: q, Type: TypePTR, TTL: k.TTL, Data: e.hostname + "." + svc.Name + "." + svc.Namespace + ".svc." + primary}
				dup := false
				for _, o := range out {
					dup = dup || o == r
				}
				if !dup {
					out = append(out, r)
				}
			}
		}
	}
	return out
}

// srvRecords follows backend_lookup.go SRV for the plugin's entries: every
// entry has priority 0 and an equal share of the weight (100 split
// between them, rounded down, at least 1); a port-less entry (-1) gives no
// record; the target is the entry's key in the zone, and its address goes
// to the additional section. A target and port, or a target and address,
// appear once. Names (ExternalName targets) are dropped before
// (kubernetes.go Services: SRV for external services is not implemented).
func srvRecords(name, zone string, ttl uint32, entries []entry) (records, extra []Record) {
	var addrs []entry
	for _, e := range entries {
		if _, err := netip.ParseAddr(e.host); err == nil {
			addrs = append(addrs, e)
		}
	}
	if len(addrs) == 0 {
		return nil, nil
	}
	weight := uint16(math.Floor(100.0 / float64(100*len(addrs)) * 100))
	if weight == 0 {
		weight = 1
	}
	seenSRV := map[string]bool{}
	seenAddr := map[string]bool{}
	for _, e := range addrs {
		if e.port == -1 {
			continue
		}
		target := e.key + "." + zone
		if k := fmt.Sprintf("%s/%d", target, e.port); !seenSRV[k] {
			seenSRV[k] = true
			records = append(records, Record{Name: name, Type: TypeSRV, TTL: ttl,
				Data: fmt.Sprintf("0 %d %d %s.", weight, e.port, target)})
		}
		if k := target + "/" + e.host; !seenAddr[k] {
			seenAddr[k] = true
			t := TypeA
			if ip, _ := netip.ParseAddr(e.host); ip.Is6() && !ip.Is4In6() {
				t = TypeAAAA
			}
			extra = append(extra, Record{Name: target, Type: t, TTL: ttl, Data: e.host})
		}
	}
	return records, extra
}

// defaultNS answers ns.dns.<zone>: A and AAAA get the addresses nsAddrs
// finds (ns.go): the ClusterIPs of the Services whose endpoints are the
// CoreDNS pods (kube-dns), or the endpoint addresses of a headless one;
// every other type is NODATA.
func (s *Server) defaultNS(a Answer, k kubernetesConfig, qtype uint16) (Answer, bool) {
	addrs, why := s.nsAddrs()
	if qtype != TypeA && qtype != TypeAAAA {
		a.Why = "the default NS name has only address records (coredns plugin/kubernetes/kubernetes.go Services)"
		return a, false
	}
	if addrs == nil {
		a.Rcode, a.Why = NotModeled, "not modeled: "+why
		return a, false
	}
	for _, ad := range addrs {
		ip, err := netip.ParseAddr(ad)
		if err != nil {
			continue
		}
		if (qtype == TypeA) == ip.Is4() {
			a.Records = append(a.Records, Record{Name: a.Name, Type: qtype, TTL: k.TTL, Data: ad})
		}
	}
	a.Why = why + " (coredns plugin/kubernetes/ns.go nsAddrs)"
	return a, false
}

// nsAddrs: the CoreDNS pods are kube-system's k8s-app=kube-dns pods; each
// replica looks up the endpoints holding its own address. Without any,
// a replica answers its own address, which differs between replicas.
func (s *Server) nsAddrs() ([]string, string) {
	own := map[string]bool{}
	for _, p := range s.pods() {
		if p.Namespace == "kube-system" && p.Labels["k8s-app"] == "kube-dns" && p.Status.PodIP != "" {
			own[p.Status.PodIP] = true
		}
	}
	keys := make([]string, 0, len(s.services))
	for key := range s.services {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	var out, names []string
	for _, key := range keys {
		svc := s.services[key]
		found := false
		for _, e := range s.readyEndpoints(svc) {
			if !own[e.ip] {
				continue
			}
			if headless(svc) {
				out = append(out, e.ip)
			}
			found = true
		}
		if found && !headless(svc) {
			ips := svc.Spec.ClusterIPs
			if len(ips) == 0 && svc.Spec.ClusterIP != "" {
				ips = []string{svc.Spec.ClusterIP}
			}
			out = append(out, ips...)
		}
		if found {
			names = append(names, key)
		}
	}
	if len(out) > 0 {
		return out, "the addresses of Service " + strings.Join(names, ", ") + ", whose endpoints are the CoreDNS pods"
	}
	if len(own) == 1 {
		for ip := range own {
			return []string{ip}, "no Service has the CoreDNS pod as an endpoint: the pod's own address"
		}
	}
	return nil, "no Service has the CoreDNS pods as endpoints, and each replica would answer its own address"
}

// cacheMiss says what the twin assumes of the cache plugin in front of
// forward: the question was not asked in the last TTL seconds, so the
// reply is the upstream's, with its AA bit (clear from a recursive
// resolver). A cache hit would carry AA set (plugin/cache/item.go toMsg)
// and a TTL counting down.
func cacheMiss(c *directive) string {
	ttl := "3600" // cache.go maxTTL (dnsutil.MaximumDefaultTTL)
	if len(c.Args) > 0 {
		if _, err := strconv.Atoi(c.Args[0]); err == nil {
			ttl = c.Args[0]
		}
	}
	return "a cache miss is assumed: the upstream's AA bit passes through, where a repeat within " + ttl + " s would come from the cache with AA set (coredns plugin/cache/item.go)"
}

// isPod reports whether ip is a CoreDNS pod's own address, which answers
// as the kube-dns ClusterIP does (kube-system's k8s-app=kube-dns pods).
func (s *Server) isPod(ip string) bool {
	for _, p := range s.pods() {
		if p.Namespace == "kube-system" && p.Labels["k8s-app"] == "kube-dns" && p.Status.PodIP == ip {
			return true
		}
	}
	return false
}
