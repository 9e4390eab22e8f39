package validate

import (
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	portProtocols    = []string{string(corev1.ProtocolSCTP), string(corev1.ProtocolTCP), string(corev1.ProtocolUDP)}
	serviceTypes     = []string{string(corev1.ServiceTypeClusterIP), string(corev1.ServiceTypeExternalName), string(corev1.ServiceTypeLoadBalancer), string(corev1.ServiceTypeNodePort)}
	policyTypes      = []string{string(networkingv1.PolicyTypeEgress), string(networkingv1.PolicyTypeIngress)}
	selectorValidity = metav1validation.LabelSelectorValidationOptions{}
)

// serviceSpec is the part of ValidateService (k8s.io/kubernetes
// pkg/apis/core/validation/validation.go) about the type and the ports. The
// node port range is the allocator's and is checked with NodePort.
func serviceSpec(s *corev1.ServiceSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Type != "" && !slices.Contains(serviceTypes, string(s.Type)) {
		errs = append(errs, field.NotSupported(p.Child("type"), s.Type, serviceTypes))
	}
	headless := s.ClusterIP == corev1.ClusterIPNone
	if len(s.Ports) == 0 && !headless && s.Type != corev1.ServiceTypeExternalName {
		errs = append(errs, field.Required(p.Child("ports"), ""))
	}
	names := map[string]bool{}
	for i := range s.Ports {
		sp := &s.Ports[i]
		pp := p.Child("ports").Index(i)
		// validateServicePort
		switch {
		case len(s.Ports) > 1 && sp.Name == "":
			errs = append(errs, field.Required(pp.Child("name"), ""))
		case sp.Name != "":
			for _, msg := range validation.IsDNS1123Label(sp.Name) {
				errs = append(errs, field.Invalid(pp.Child("name"), sp.Name, msg))
			}
			if names[sp.Name] {
				errs = append(errs, field.Duplicate(pp.Child("name"), sp.Name))
			}
			names[sp.Name] = true
		}
		for _, msg := range validation.IsValidPortNum(int(sp.Port)) {
			errs = append(errs, field.Invalid(pp.Child("port"), sp.Port, msg))
		}
		// An empty protocol is defaulted to TCP before validation.
		if sp.Protocol != "" && !slices.Contains(portProtocols, string(sp.Protocol)) {
			errs = append(errs, field.NotSupported(pp.Child("protocol"), sp.Protocol, portProtocols))
		}
		// An unset targetPort is defaulted to port (SetDefaults_Service).
		if sp.TargetPort != (intstr.IntOrString{}) {
			errs = append(errs, portNumOrName(sp.TargetPort, pp.Child("targetPort"))...)
		}
		if sp.NodePort != 0 && (s.Type == "" || s.Type == corev1.ServiceTypeClusterIP) {
			errs = append(errs, field.Forbidden(pp.Child("nodePort"), "may not be used when `type` is 'ClusterIP'"))
		}
	}
	return errs
}

// DefaultNodePorts is the range kube-apiserver allocates node ports from
// without --service-node-port-range (pkg/kubeapiserver/options
// DefaultServiceNodePortRange).
var DefaultNodePorts = utilnet.PortRange{Base: 30000, Size: 2768}

// NodePorts checks the node ports a Service asks for against the
// allocator's range (pkg/registry/core/service/portallocator/allocator.go,
// ErrNotInRange, reported by the Service REST storage as Invalid).
func NodePorts(svc *corev1.Service, r utilnet.PortRange) field.ErrorList {
	if svc.Spec.Type != corev1.ServiceTypeNodePort && svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return nil
	}
	var errs field.ErrorList
	for i, sp := range svc.Spec.Ports {
		if sp.NodePort != 0 && !r.Contains(int(sp.NodePort)) {
			errs = append(errs, field.Invalid(field.NewPath("spec", "ports").Index(i).Child("nodePort"), sp.NodePort,
				"provided port is not in the valid range. The range of valid ports is "+r.String()))
		}
	}
	return errs
}

// portNumOrName is ValidatePortNumOrName (pkg/apis/core/validation).
func portNumOrName(port intstr.IntOrString, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if port.Type == intstr.Int {
		for _, msg := range validation.IsValidPortNum(port.IntValue()) {
			errs = append(errs, field.Invalid(p, port.IntValue(), msg))
		}
		return errs
	}
	for _, msg := range validation.IsValidPortName(port.StrVal) {
		errs = append(errs, field.Invalid(p, port.StrVal, msg))
	}
	return errs
}

// networkPolicySpec is ValidateNetworkPolicySpec (k8s.io/kubernetes
// pkg/apis/networking/validation/validation.go).
func networkPolicySpec(s *networkingv1.NetworkPolicySpec, p *field.Path) field.ErrorList {
	errs := metav1validation.ValidateLabelSelector(&s.PodSelector, selectorValidity, p.Child("podSelector"))
	for i, r := range s.Ingress {
		rp := p.Child("ingress").Index(i)
		for j := range r.Ports {
			errs = append(errs, networkPolicyPort(&r.Ports[j], rp.Child("ports").Index(j))...)
		}
		for j := range r.From {
			errs = append(errs, networkPolicyPeer(&r.From[j], rp.Child("from").Index(j))...)
		}
	}
	for i, r := range s.Egress {
		rp := p.Child("egress").Index(i)
		for j := range r.Ports {
			errs = append(errs, networkPolicyPort(&r.Ports[j], rp.Child("ports").Index(j))...)
		}
		for j := range r.To {
			errs = append(errs, networkPolicyPeer(&r.To[j], rp.Child("to").Index(j))...)
		}
	}
	for i, t := range s.PolicyTypes {
		if !slices.Contains(policyTypes, string(t)) {
			errs = append(errs, field.NotSupported(p.Child("policyTypes").Index(i), t, policyTypes))
		}
	}
	if len(s.PolicyTypes) > len(policyTypes) {
		errs = append(errs, field.Invalid(p.Child("policyTypes"), s.PolicyTypes, "may not specify more than two policyTypes"))
	}
	return errs
}

// networkPolicyPort is ValidateNetworkPolicyPort.
func networkPolicyPort(port *networkingv1.NetworkPolicyPort, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if port.Protocol != nil && !slices.Contains(portProtocols, string(*port.Protocol)) {
		errs = append(errs, field.NotSupported(p.Child("protocol"), *port.Protocol, portProtocols))
	}
	switch {
	case port.Port == nil:
		if port.EndPort != nil {
			errs = append(errs, field.Invalid(p.Child("endPort"), *port.EndPort, "may not be specified when `port` is not specified"))
		}
	case port.Port.Type == intstr.Int:
		for _, msg := range validation.IsValidPortNum(int(port.Port.IntVal)) {
			errs = append(errs, field.Invalid(p.Child("port"), port.Port.IntVal, msg))
		}
		if port.EndPort != nil {
			if *port.EndPort < port.Port.IntVal {
				errs = append(errs, field.Invalid(p.Child("endPort"), port.Port.IntVal, "must be greater than or equal to `port`"))
			}
			for _, msg := range validation.IsValidPortNum(int(*port.EndPort)) {
				errs = append(errs, field.Invalid(p.Child("endPort"), *port.EndPort, msg))
			}
		}
	default:
		if port.EndPort != nil {
			errs = append(errs, field.Invalid(p.Child("endPort"), *port.EndPort, "may not be specified when `port` is non-numeric"))
		}
		for _, msg := range validation.IsValidPortName(port.Port.StrVal) {
			errs = append(errs, field.Invalid(p.Child("port"), port.Port.StrVal, msg))
		}
	}
	return errs
}

// networkPolicyPeer is ValidateNetworkPolicyPeer.
func networkPolicyPeer(peer *networkingv1.NetworkPolicyPeer, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	if peer.PodSelector != nil {
		n++
		errs = append(errs, metav1validation.ValidateLabelSelector(peer.PodSelector, selectorValidity, p.Child("podSelector"))...)
	}
	if peer.NamespaceSelector != nil {
		n++
		errs = append(errs, metav1validation.ValidateLabelSelector(peer.NamespaceSelector, selectorValidity, p.Child("namespaceSelector"))...)
	}
	if peer.IPBlock != nil {
		n++
		errs = append(errs, ipBlock(peer.IPBlock, p.Child("ipBlock"))...)
	}
	switch {
	case n == 0:
		errs = append(errs, field.Required(p, "must specify a peer"))
	case n > 1 && peer.IPBlock != nil:
		errs = append(errs, field.Forbidden(p, "may not specify both ipBlock and another peer"))
	}
	return errs
}

// ipBlock is ValidateIPBlock: a CIDR, and exceptions strictly inside it.
func ipBlock(b *networkingv1.IPBlock, p *field.Path) field.ErrorList {
	if b.CIDR == "" {
		return field.ErrorList{field.Required(p.Child("cidr"), "")}
	}
	errs := validation.IsValidCIDR(p.Child("cidr"), b.CIDR)
	if len(errs) > 0 {
		return errs
	}
	outer, _ := netip.ParsePrefix(b.CIDR)
	for i, ex := range b.Except {
		ep := p.Child("except").Index(i)
		exErrs := validation.IsValidCIDR(ep, ex)
		errs = append(errs, exErrs...)
		if len(exErrs) > 0 {
			continue
		}
		inner, _ := netip.ParsePrefix(ex)
		if !outer.Contains(inner.Addr()) || outer.Bits() >= inner.Bits() {
			errs = append(errs, field.Invalid(ep, ex, "must be a strict subset of `cidr`"))
		}
	}
	return errs
}

// workloadSelector is the selector part of ValidateDeploymentSpec,
// ValidateReplicaSetSpec, ValidateDaemonSetSpec and ValidateStatefulSetSpec
// (k8s.io/kubernetes pkg/apis/apps/validation/validation.go): a valid,
// non-empty selector that the pod template's labels satisfy.
func workloadSelector(what string, sel *metav1.LabelSelector, tmplLabels map[string]string, spec *field.Path) field.ErrorList {
	p := spec.Child("selector")
	if sel == nil {
		return field.ErrorList{field.Required(p, "")}
	}
	errs := metav1validation.ValidateLabelSelector(sel, selectorValidity, p)
	if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
		errs = append(errs, field.Invalid(p, sel, "empty selector is invalid for "+what))
	}
	if len(errs) > 0 {
		return errs
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return field.ErrorList{field.Invalid(p, sel, err.Error())}
	}
	if !s.Matches(labels.Set(tmplLabels)) {
		errs = append(errs, field.Invalid(spec.Child("template", "metadata", "labels"), tmplLabels, "`selector` does not match template `labels`"))
	}
	return errs
}
