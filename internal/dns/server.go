package dns

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

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
	pods       map[string]*corev1.Pod
	namespaces map[string]bool
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
		pods:       map[string]*corev1.Pod{},
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
	for _, p := range c.Pods {
		s.pods[p.Namespace+"/"+p.Name] = p
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
func (s *Server) Query(name string, qtype uint16) Answer {
	n, _ := normalize(name)
	return s.query(n, qtype, 0)
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
			// handler.go: a name error ends the query unless fallthrough
			// covers the name (kubeadm: only the reverse zones).
			if !nameErr || !k.fallsThrough(name) {
				return ans
			}
		}
	}
	if f := blk.plugin("forward"); f != nil && len(f.Args) >= 2 && inZone(name, zoneOfKey(f.Args[0])) {
		return s.forward(f.Args[1], name, qtype)
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
		l := s.records(k, zone, name)
		if l.nameErr {
			return fail(l.why)
		}
		a.Why = l.why + "; no TXT records"
		return a, false
	case TypeSRV, TypeSOA, TypeNS:
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
	if k.Pods == "insecure" {
		return lookup{hosts: []string{ip.String()}, why: "pods insecure: the address written in the name, unchecked"}
	}
	for _, p := range s.pods {
		if p.Namespace == ns && p.Status.PodIP == ip.String() {
			return lookup{hosts: []string{ip.String()}, why: "pods verified: pod " + p.Name + " has the address"}
		}
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
		if endpoint != "" {
			return lookup{nameErr: true, why: "ExternalName Service " + ref + " has no endpoints"}
		}
		if _, err := netip.ParseAddr(svc.Spec.ExternalName); err != nil && svc.Spec.ExternalName != "" {
			t, _ := normalize(svc.Spec.ExternalName)
			return lookup{hosts: []string{t}, why: "ExternalName Service " + ref + " → CNAME " + t}
		}
		return lookup{nameErr: true, why: "ExternalName Service " + ref + " names an address, which the plugin does not answer"}
	}
	if headless(svc) || endpoint != "" {
		var hosts []string
		for _, e := range s.readyEndpoints(svc) {
			if endpoint != "" && !strings.EqualFold(endpoint, e.hostname) {
				continue
			}
			for _, p := range e.ports {
				if matchPortProto(port, p.name, protocol, p.protocol) {
					hosts = append(hosts, e.ip)
				}
			}
		}
		if len(hosts) == 0 {
			what := "no ready endpoint of Service " + ref
			if endpoint != "" {
				what += " named " + endpoint
			}
			return lookup{nameErr: true, why: what}
		}
		if endpoint != "" {
			return lookup{hosts: hosts, why: "endpoint " + endpoint + " of Service " + ref}
		}
		return lookup{hosts: hosts, why: "ready endpoints of headless Service " + ref}
	}
	var hosts []string
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
		hosts = append(hosts, ips...)
	}
	if !matched {
		return lookup{nameErr: true, why: "no port of Service " + ref + " matches"}
	}
	return lookup{hosts: hosts, why: "ClusterIP of Service " + ref}
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

type endpointPort struct{ name, protocol string }

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
		ports := []endpointPort{{}}
		if len(es.Ports) > 0 {
			ports = nil
			for _, p := range es.Ports {
				ep := endpointPort{}
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
				if p := s.pods[es.Namespace+"/"+e.TargetRef.Name]; p != nil && p.Spec.Hostname != "" && p.Spec.Subdomain == svc.Name {
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
