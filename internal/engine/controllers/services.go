package controllers

import (
	"fmt"
	"hash/fnv"
	"net/netip"
	"sort"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/names"
)

// ServiceRange hands out ClusterIPs from the service subnet. The real
// allocator (pkg/registry/core/service/ipallocator) picks at random, first
// from the upper "dynamic" part of the range, keeping the lower band of
// min(max(16, size/16), 256) addresses for IPs users ask for. The twin picks
// the same way but seeds the pick with the Service's namespace and name, so
// the result is stable; observed ClusterIPs always win.
type ServiceRange struct {
	Prefix netip.Prefix
	size   uint64
	Used   map[netip.Addr]bool
}

// NewServiceRange is the allocator of one service CIDR.
func NewServiceRange(cidr string) (*ServiceRange, error) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return nil, fmt.Errorf("serviceSubnet %q: %w", cidr, err)
	}
	if !p.Addr().Is4() {
		return nil, fmt.Errorf("serviceSubnet %q: only IPv4 service subnets are modeled", cidr)
	}
	size := uint64(1) << (32 - p.Bits())
	return &ServiceRange{Prefix: p.Masked(), size: size, Used: map[netip.Addr]bool{}}, nil
}

// Nth returns the n-th address of the range (0 is the network address).
func (r *ServiceRange) Nth(n uint64) netip.Addr {
	b := r.Prefix.Addr().As4()
	v := uint64(b[0])<<24 | uint64(b[1])<<16 | uint64(b[2])<<8 | uint64(b[3])
	v += n
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// Contains reports whether a is in the range.
func (r *ServiceRange) Contains(a netip.Addr) bool { return r.Prefix.Contains(a) }

// Reserve marks a as taken.
func (r *ServiceRange) Reserve(a netip.Addr) { r.Used[a] = true }

// Allocate picks a free address for the Service named by seed.
func (r *ServiceRange) Allocate(seed string) (netip.Addr, bool) {
	// The first and last addresses are never handed out.
	usable := r.size - 2
	if usable == 0 || r.size < 4 {
		return netip.Addr{}, false
	}
	band := usable / 16
	if band < 16 {
		band = 16
	}
	if band > 256 {
		band = 256
	}
	if band >= usable {
		band = 0
	}
	h := fnv.New64a()
	h.Write([]byte(seed))
	dynamic := usable - band
	start := h.Sum64() % dynamic
	for i := uint64(0); i < usable; i++ {
		off := 1 + band + (start+i)%dynamic
		if i >= dynamic {
			off = 1 + (i - dynamic)
		}
		a := r.Nth(off)
		if !r.Used[a] {
			r.Used[a] = true
			return a, true
		}
	}
	return netip.Addr{}, false
}

// KubernetesService is the default/kubernetes Service the API server keeps
// on the first address of the service subnet, with the control plane's
// advertise address as its only endpoint (pkg/controlplane/controller/kubernetesservice).
func KubernetesService(ip string, apiAddr string, port int32) (*corev1.Service, *discoveryv1.EndpointSlice) {
	svc := &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: "default", Labels: map[string]string{
			"component": "apiserver", "provider": "kubernetes",
		}},
		Spec: corev1.ServiceSpec{
			Type:      corev1.ServiceTypeClusterIP,
			ClusterIP: ip, ClusterIPs: []string{ip},
			Ports: []corev1.ServicePort{{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(port)}},
		},
	}
	slice := &discoveryv1.EndpointSlice{
		TypeMeta: metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: "default", Labels: map[string]string{
			discoveryv1.LabelServiceName: "kubernetes",
		}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{
			Addresses:  []string{apiAddr},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
		}},
		Ports: []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To(port), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	return svc, slice
}

// PodReady: the twin assumes a Running pod with an address passes its
// readiness probe, unless its Ready condition says otherwise (the node
// lifecycle controller marks the pods of a node it finds not ready; the
// controllers read the condition, pkg/api/v1/pod IsPodReady).
func PodReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" || p.DeletionTimestamp != nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionFalse {
			return false
		}
	}
	return true
}

// resolvePort turns a Service targetPort into the pod's port number; a named
// port is looked up in the pod's containers (pkg/api/v1/pod FindPort).
func resolvePort(p *corev1.Pod, sp corev1.ServicePort) (int32, bool) {
	tp := sp.TargetPort
	if tp.Type == intstr.Int {
		if tp.IntVal == 0 {
			return sp.Port, true
		}
		return tp.IntVal, true
	}
	if tp.StrVal == "" {
		return sp.Port, true
	}
	for _, c := range p.Spec.Containers {
		for _, cp := range c.Ports {
			proto := cp.Protocol
			if proto == "" {
				proto = corev1.ProtocolTCP
			}
			spProto := sp.Protocol
			if spProto == "" {
				spProto = corev1.ProtocolTCP
			}
			if cp.Name == tp.StrVal && proto == spProto {
				return cp.ContainerPort, true
			}
		}
	}
	return 0, false
}

// EndpointSlices is what the EndpointSlice controller writes for a Service
// with a selector: pods grouped by the ports they resolve to, ready, serving
// and terminating conditions from the pod (pkg/controller/endpointslice,
// staging endpointslice/reconciler.go). Slice names use generateName
// "<service>-" with the twin's deterministic suffix.
func EndpointSlices(svc *corev1.Service, pods []*corev1.Pod) []*discoveryv1.EndpointSlice {
	if svc.Spec.Selector == nil || svc.Spec.Type == corev1.ServiceTypeExternalName {
		return nil
	}
	type group struct {
		ports     []discoveryv1.EndpointPort
		endpoints []discoveryv1.Endpoint
	}
	groups := map[string]*group{}
	var order []string
	sorted := append([]*corev1.Pod(nil), pods...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, p := range sorted {
		if p.Status.PodIP == "" || p.Spec.NodeName == "" {
			continue
		}
		var ports []discoveryv1.EndpointPort
		key := ""
		for _, sp := range svc.Spec.Ports {
			n, ok := resolvePort(p, sp)
			if !ok {
				continue
			}
			proto := sp.Protocol
			if proto == "" {
				proto = corev1.ProtocolTCP
			}
			ports = append(ports, discoveryv1.EndpointPort{Name: ptr.To(sp.Name), Port: ptr.To(n), Protocol: ptr.To(proto)})
			key += fmt.Sprintf("%s/%d/%s,", sp.Name, n, proto)
		}
		g, ok := groups[key]
		if !ok {
			g = &group{ports: ports}
			groups[key] = g
			order = append(order, key)
		}
		ready := PodReady(p)
		terminating := p.DeletionTimestamp != nil
		ep := discoveryv1.Endpoint{
			Addresses:  []string{p.Status.PodIP},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(ready && !terminating), Serving: ptr.To(ready), Terminating: ptr.To(terminating)},
			NodeName:   ptr.To(p.Spec.NodeName),
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name},
		}
		// A pod whose subdomain names the Service is published under its
		// hostname (pkg/controller/endpointslice utils podToEndpoint).
		if p.Spec.Hostname != "" && p.Spec.Subdomain == svc.Name && p.Namespace == svc.Namespace {
			ep.Hostname = ptr.To(p.Spec.Hostname)
		}
		g.endpoints = append(g.endpoints, ep)
	}
	if len(order) == 0 {
		order = append(order, "")
		groups[""] = &group{}
	}
	var out []*discoveryv1.EndpointSlice
	for i, key := range order {
		g := groups[key]
		out = append(out, &discoveryv1.EndpointSlice{
			TypeMeta: metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
			ObjectMeta: metav1.ObjectMeta{
				Name:      svc.Name + "-" + names.Suffix(fmt.Sprintf("slice/%s/%s/%d", svc.Namespace, svc.Name, i)),
				Namespace: svc.Namespace,
				Labels: map[string]string{
					discoveryv1.LabelServiceName: svc.Name,
					discoveryv1.LabelManagedBy:   "endpointslice-controller.k8s.io",
				},
				OwnerReferences: []metav1.OwnerReference{ownerRef("v1", "Service", svc.Name)},
			},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   g.endpoints,
			Ports:       g.ports,
		})
	}
	return out
}
