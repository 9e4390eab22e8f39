package windows

import (
	"fmt"
	"math/rand"
	"net/netip"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
)

// TestSharedPlansGiveWhatEachNodeComputesAlone compares every Windows
// node's kube-proxy objects, notes and warnings with an independent,
// node-by-node reading of syncProxyRules (proxyOracle) on random clusters
// with what makes nodes differ: backends on the node, host-network and
// public backends, an address in several Services, endpoints naming the
// wrong node or none, not-ready, terminating and non-serving endpoints,
// ITP and ETP Local, NodePorts, external and ingress IPs,
// preserve-destination, session affinity, named target ports and target
// ports the slices contradict, slices on two ports, slice ports without a
// protocol, serving left unset and Services labelled for another proxy.
func TestSharedPlansGiveWhatEachNodeComputesAlone(t *testing.T) {
	compared := 0
	for seed := int64(1); seed <= 150; seed++ {
		f := randomProxyCluster(rand.New(rand.NewSource(seed)))
		nodes, err := Compile(f.c)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"win", "win-1", "win-2"} {
			n := nodes[name]
			want := proxyOracle(f, n)
			var gotEPs []string
			for _, ep := range n.Endpoints() {
				if ep.Owner == "kube-proxy" {
					gotEPs = append(gotEPs, fmt.Sprintf("%s %s %s %s %s %v", ep.ID, ep.IPAddress, ep.MacAddress, ep.Kind, ep.Policies[0].PA, ep.IsRemoteEndpoint))
				}
			}
			var gotLBs []string
			for _, lb := range n.LoadBalancers() {
				gotLBs = append(gotLBs, lbLine(lb))
			}
			got := oracleOut{eps: gotEPs, lbs: gotLBs, notes: proxyTexts(n.Notes), warnings: proxyTexts(n.Warnings)}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d node %s:\n got %s\nwant %s", seed, name, got, want)
			}
			compared += len(gotLBs)
		}
	}
	if compared < 1000 {
		t.Errorf("compared %d load balancers; the random clusters make too few", compared)
	}
}

// randomProxyCluster is the fixture with two more Windows nodes, three
// Linux ones, pods everywhere and Services of every kind the proxier
// treats differently.
func randomProxyCluster(r *rand.Rand) *fixture {
	f := newFixture(3)
	for w := 1; w <= 2; w++ {
		name := fmt.Sprintf("win-%d", w)
		f.node(name, hybrid.OSWindows, fmt.Sprintf("192.168.2.%d", w), fmt.Sprintf("10.0.%d.0/26", 200+w), fmt.Sprintf("00:15:5d:00:00:%02x", w))
		f.c.Pods = append(f.c.Pods, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kube-proxy-windows-" + name,
				OwnerReferences: []metav1.OwnerReference{{Kind: "DaemonSet", Name: "kube-proxy-windows"}}},
			Spec:   corev1.PodSpec{NodeName: name, HostNetwork: true, Containers: []corev1.Container{{Name: "kube-proxy", Args: []string{"start.ps1"}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: fmt.Sprintf("192.168.2.%d", w)},
		})
	}
	type addr struct{ ip, node string }
	var addrs []addr
	for i, n := range f.c.Nodes {
		block := netip.MustParsePrefix(f.c.IPAMBlocks[i].Spec.CIDR)
		a := block.Addr().Next().Next().Next()
		for p := 0; p < 5; p++ {
			f.pod("demo", fmt.Sprintf("%s-%d", n.Name, p), n.Name, a.String(), map[string]string{"app": "x"})
			addrs = append(addrs, addr{a.String(), n.Name})
			a = a.Next()
		}
		// The node's address, as a host-network backend.
		addrs = append(addrs, addr{n.Status.Addresses[0].Address, n.Name})
	}
	// A public address, one in no block, a stale one in a Windows block
	// (no pod there), and a Windows node's Calico_ep.
	addrs = append(addrs, addr{"8.8.8.8", ""}, addr{"10.0.200.9", "gone"}, addr{"10.0.201.40", "win-1"}, addr{"10.0.1.2", "win"})
	for s := 0; s < 25; s++ {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: "demo", Name: fmt.Sprintf("svc-%d", s)},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP,
				ClusterIP: fmt.Sprintf("10.96.1.%d", s+1)},
		}
		if r.Intn(4) == 0 {
			svc.Spec.Type = corev1.ServiceTypeLoadBalancer
			svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: fmt.Sprintf("203.0.113.%d", s+1)}}
		}
		if r.Intn(4) == 0 {
			svc.Spec.ExternalIPs = []string{fmt.Sprintf("198.51.100.%d", s+1)}
		}
		if r.Intn(3) == 0 {
			svc.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		}
		if r.Intn(4) == 0 {
			svc.Spec.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyLocal)
		}
		if r.Intn(4) == 0 {
			svc.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
		}
		if r.Intn(5) == 0 {
			svc.Annotations = map[string]string{"preserve-destination": "true"}
		}
		if r.Intn(12) == 0 {
			svc.Labels = map[string]string{"service.kubernetes.io/service-proxy-name": "other"}
		}
		es := &discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Namespace: "demo", Name: svc.Name + "-abcde", Labels: map[string]string{discoveryv1.LabelServiceName: svc.Name}},
			AddressType: discoveryv1.AddressTypeIPv4,
		}
		// A second slice whose endpoints resolved the target port to
		// another number.
		es2 := es.DeepCopy()
		es2.Name = svc.Name + "-fghij"
		for p := 0; p <= r.Intn(2); p++ {
			sp := corev1.ServicePort{Name: fmt.Sprintf("p%d", p), Port: int32(80 + p), Protocol: []corev1.Protocol{corev1.ProtocolTCP, corev1.ProtocolUDP}[r.Intn(2)],
				TargetPort: intstr.FromInt32(int32(8080 + p))}
			switch r.Intn(4) {
			case 0:
				sp.TargetPort = intstr.FromString("web")
			case 1:
				// A selector-less Service whose slices say another port.
				sp.TargetPort = intstr.FromInt32(int32(9000 + p))
			}
			if r.Intn(3) == 0 {
				sp.NodePort = int32(30000 + s*2 + p)
			}
			svc.Spec.Ports = append(svc.Spec.Ports, sp)
			// A slice port without a protocol is TCP.
			proto := ptr.To(sp.Protocol)
			if r.Intn(5) == 0 {
				proto = nil
			}
			es.Ports = append(es.Ports, discoveryv1.EndpointPort{Name: ptr.To(sp.Name), Port: ptr.To(int32(8080 + p)), Protocol: proto})
			es2.Ports = append(es2.Ports, discoveryv1.EndpointPort{Name: ptr.To(sp.Name), Port: ptr.To(int32(8180 + p)), Protocol: ptr.To(sp.Protocol)})
		}
		for b := r.Intn(6); b > 0; b-- {
			a := addrs[r.Intn(len(addrs))]
			e := discoveryv1.Endpoint{Addresses: []string{a.ip}}
			switch r.Intn(8) {
			case 0: // names no node
			case 1: // names another node
				e.NodeName = ptr.To(f.c.Nodes[r.Intn(len(f.c.Nodes))].Name)
			default:
				e.NodeName = ptr.To(a.node)
			}
			switch r.Intn(7) {
			case 0:
				e.Conditions = discoveryv1.EndpointConditions{Ready: ptr.To(false), Serving: ptr.To(false)}
			case 1:
				e.Conditions = discoveryv1.EndpointConditions{Ready: ptr.To(false), Serving: ptr.To(true), Terminating: ptr.To(true)}
			case 2:
				e.Conditions = discoveryv1.EndpointConditions{Ready: ptr.To(false), Serving: ptr.To(false), Terminating: ptr.To(true)}
			case 3:
				// Serving unset: the endpoint cache takes it as serving.
				e.Conditions = discoveryv1.EndpointConditions{Ready: ptr.To(false), Terminating: ptr.To(true)}
			}
			if r.Intn(4) == 0 {
				es2.Endpoints = append(es2.Endpoints, e)
			} else {
				es.Endpoints = append(es.Endpoints, e)
			}
		}
		f.c.Services = append(f.c.Services, svc)
		f.c.EndpointSlices = append(f.c.EndpointSlices, es, es2)
	}
	return f
}

type oracleOut struct{ eps, lbs, notes, warnings []string }

func (o oracleOut) String() string {
	return fmt.Sprintf("\n  endpoints %q\n  load balancers %q\n  notes %q\n  warnings %q", o.eps, o.lbs, o.notes, o.warnings)
}

func lbLine(lb *LoadBalancer) string {
	return fmt.Sprintf("%s %s %s/%s %s vips=%v src=%s proto=%d %d->%d dist=%d pm=%d flags=%d eps=%v backends=%v", lb.ID, lb.Kind, lb.Service, lb.PortName, "",
		lb.FrontendVIPs, lb.SourceVIP, lb.Protocol, lb.ExternalPort, lb.InternalPort, lb.DistributionType, lb.PortMappingFlags, lb.Flags, lb.EndpointIDs, lb.Backends)
}

// proxyTexts are kube-proxy's notes or warnings among a node's.
func proxyTexts(all []string) []string {
	var out []string
	for _, s := range all {
		if strings.HasPrefix(s, "kube-proxy: ") || strings.HasPrefix(s, "service ") {
			out = append(out, s)
		}
	}
	return out
}

// proxyOracle is syncProxyRules read directly for one node, with nothing
// shared between nodes: the node's own endpoints and routes, every
// Service in order, every backend looked up as it comes.
func proxyOracle(f *fixture, n *Node) oracleOut {
	var out oracleOut
	byIP := map[string]*Endpoint{}
	for _, ep := range n.Endpoints() {
		if ep.Owner != "kube-proxy" {
			if old, ok := byIP[ep.IPAddress]; !ok || old.IsRemoteEndpoint {
				byIP[ep.IPAddress] = ep
			}
		}
	}
	var routes []NetworkPolicy
	for _, p := range n.Networks()[len(n.Networks())-1].Policies {
		if p.Type == PolicyRemoteSubnetRoute {
			routes = append(routes, p)
		}
	}
	pa := func(ip string) string {
		a := netip.MustParseAddr(ip)
		found := ""
		for _, r := range routes {
			if netip.MustParsePrefix(r.DestinationPrefix).Contains(a) || r.ProviderAddress == ip {
				found = r.ProviderAddress
			}
		}
		return found
	}
	add := func(ep *Endpoint) {
		byIP[ep.IPAddress] = ep
		out.eps = append(out.eps, fmt.Sprintf("%s %s %s %s %s %v", ep.ID, ep.IPAddress, ep.MacAddress, ep.Kind, ep.Policies[0].PA, ep.IsRemoteEndpoint))
	}
	once := func(s []string, v string) []string {
		if slices.Contains(s, v) {
			return s
		}
		return append(s, v)
	}
	seen := map[string]bool{}
	for _, svc := range f.c.Services {
		if _, ok := svc.Labels["service.kubernetes.io/service-proxy-name"]; ok {
			continue
		}
		clusterIP := svc.Spec.ClusterIP
		local := svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
		itpLocal := svc.Spec.InternalTrafficPolicy != nil && *svc.Spec.InternalTrafficPolicy == corev1.ServiceInternalTrafficPolicyLocal
		pdip := svc.Annotations["preserve-destination"] == "true"
		var ingress []string
		for _, in := range svc.Status.LoadBalancer.Ingress {
			ingress = append(ingress, in.IP)
		}
		for _, sp := range svc.Spec.Ports {
			if _, ok := byIP[clusterIP]; !ok {
				add(&Endpoint{ID: hnsID(n.Name + "/remote-endpoint/" + clusterIP), IPAddress: clusterIP, MacAddress: goMAC(n.HostMAC),
					IsRemoteEndpoint: true, Kind: KindClusterIP, Policies: []EndpointPolicy{{PA: n.Address}}})
			}
			type be struct {
				ip, key                             string
				port                                int32
				local, ready, serving, term, isNode bool
			}
			var bes []be
			keys := map[string]bool{}
			for _, es := range f.c.EndpointSlices {
				if es.Labels[discoveryv1.LabelServiceName] != svc.Name {
					continue
				}
				for _, p := range es.Ports {
					proto := corev1.ProtocolTCP
					if p.Protocol != nil {
						proto = *p.Protocol
					}
					if *p.Name != sp.Name || proto != sp.Protocol {
						continue
					}
					for _, e := range es.Endpoints {
						k := e.Addresses[0] + ":" + strconv.Itoa(int(*p.Port))
						if keys[k] {
							continue
						}
						keys[k] = true
						b := be{ip: e.Addresses[0], key: k, port: *p.Port,
							ready:   e.Conditions.Ready == nil || *e.Conditions.Ready,
							serving: e.Conditions.Serving == nil || *e.Conditions.Serving,
							term:    e.Conditions.Terminating != nil && *e.Conditions.Terminating, local: e.NodeName != nil && *e.NodeName == n.Name}
						bes = append(bes, b)
					}
				}
			}
			sort.Slice(bes, func(i, j int) bool { return bes[i].key < bes[j].key })
			allTerm, allNonServing, weighed := false, false, 0
			if len(ingress) > 0 {
				allTerm, allNonServing = true, true
				for _, b := range bes {
					if local && !b.local {
						continue
					}
					weighed++
					if b.serving {
						allNonServing = false
					}
					if (b.ready || b.term) && !b.term {
						allTerm = false
					}
				}
			}
			target := 0
			var eps, lo []*Endpoint
			var ips, loIPs []string
			nodeVIP := false
			for _, b := range bes {
				if itpLocal && local && !b.local {
					continue
				}
				if !allNonServing && (!allTerm && !b.ready || !b.serving) {
					continue
				}
				target = int(b.port)
				ep, ok := byIP[b.ip]
				if !ok {
					if b.local {
						out.warnings = once(out.warnings, fmt.Sprintf("kube-proxy: local endpoint %s not found on network %s (a host-network backend on this node has no HNS endpoint)", b.ip, calicoNetwork))
						continue
					}
					p := pa(b.ip)
					if p == "" {
						out.notes = once(out.notes, fmt.Sprintf("kube-proxy: no provider address for %s, assuming it is a public IP (PA = node IP)", b.ip))
						p = n.Address
					}
					ep = &Endpoint{ID: hnsID(n.Name + "/remote-endpoint/" + b.ip), IPAddress: b.ip, MacAddress: macFrom(remoteMACPrefix, netip.MustParseAddr(b.ip).As4()),
						IsRemoteEndpoint: true, Kind: KindRemote, Policies: []EndpointPolicy{{PA: p}}}
					add(ep)
				}
				if !b.local {
					p := pa(b.ip)
					nodeVIP = nodeVIP || p == b.ip || p == ""
				}
				eps, ips = append(eps, ep), append(ips, b.ip)
				if !ep.IsRemoteEndpoint {
					lo, loIPs = append(lo, ep), append(loIPs, b.ip)
				}
			}
			pn := sp.Name
			if len(eps) == 0 {
				out.notes = append(out.notes, fmt.Sprintf("service %s/%s port %s has no usable endpoints: kube-proxy applies no policy", svc.Namespace, svc.Name, pn))
				continue
			}
			src := n.SourceVIP
			if nodeVIP {
				src = n.Address
			}
			avail := !allTerm && !allNonServing
			if !avail && weighed > 0 {
				out.notes = append(out.notes, fmt.Sprintf("service %s/%s port %s: every endpoint kube-proxy weighs for external traffic is terminating or not serving, so it makes only the ClusterIP load balancer (a kube-proxy that made the others before keeps them where HNS can update load balancers: not known offline)", svc.Namespace, svc.Name, pn))
			}
			lb := func(kind, vip string, ext int, sel []*Endpoint, selIPs []string, flags, pm int) {
				ids := []string{}
				for _, ep := range sel {
					ids = append(ids, ep.ID)
				}
				sorted := slices.Clone(ids)
				sort.Strings(sorted)
				key := fmt.Sprintf("%d/%d/%d/%s/%s", protocolEnum(sp.Protocol), target, ext, vip, strings.Join(sorted, ","))
				if seen[key] {
					return
				}
				seen[key] = true
				dist := DistributionNone
				if svc.Spec.SessionAffinity == corev1.ServiceAffinityClientIP {
					dist = DistributionSourceIP
				}
				l := &LoadBalancer{ID: hnsID(n.Name + "/loadbalancer/" + svc.Namespace + "/" + svc.Name + "/" + pn + "/" + kind + "/" + vip),
					Kind: kind, Service: svc.Namespace + "/" + svc.Name, PortName: pn, SourceVIP: src, Protocol: protocolEnum(sp.Protocol),
					ExternalPort: ext, InternalPort: target, DistributionType: dist, PortMappingFlags: pm, Flags: flags, EndpointIDs: ids, Backends: selIPs}
				if vip != "" {
					l.FrontendVIPs = []string{vip}
				}
				out.lbs = append(out.lbs, lbLine(l))
			}
			if !itpLocal {
				lb(LBClusterIP, clusterIP, int(sp.Port), eps, ips, boolFlag(n.DSR, LBFlagDSR), 0)
			} else if len(lo) > 0 {
				lb(LBClusterIP, clusterIP, int(sp.Port), lo, loIPs, boolFlag(n.DSR, LBFlagDSR), 0)
			}
			pick := func(onlyLocal bool) ([]*Endpoint, []string) {
				if onlyLocal {
					return lo, loIPs
				}
				return eps, ips
			}
			if sp.NodePort > 0 {
				if sel, selIPs := pick(pdip || local); len(sel) > 0 && avail {
					lb(LBNodePort, "", int(sp.NodePort), sel, selIPs, boolFlag(local, LBFlagDSR), PortMappingVipExternalIP|PortMappingLocalRoutedVIP)
				}
			}
			for _, eip := range svc.Spec.ExternalIPs {
				if sel, selIPs := pick(local); len(sel) > 0 && avail {
					lb(LBExternalIP, eip, int(sp.Port), sel, selIPs, boolFlag(local, LBFlagDSR), PortMappingVipExternalIP)
				}
			}
			for _, iip := range ingress {
				pm := PortMappingVipExternalIP
				if pdip {
					pm |= PortMappingUseMux | PortMappingPreserveDIP
				}
				if sel, selIPs := pick(pdip || local); len(sel) > 0 && avail {
					lb(LBIngressIP, iip, int(sp.Port), sel, selIPs, boolFlag(pdip || local, LBFlagDSR), pm)
				}
			}
		}
	}
	return out
}
