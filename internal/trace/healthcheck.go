package trace

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// kubeProxyRuns reports whether the twin has kube-proxy running on the node.
func kubeProxyRuns(nd *node) bool {
	return nd.windows && nd.w() != nil && nd.w().KubeProxy || !nd.windows && nd.l() != nil && nd.l().HasServicePorts()
}

// healthCheckListener is kube-proxy's service health server on a
// LoadBalancer Service's healthCheckNodePort: kube-proxy listens on each
// such port of the Services it sees (externalTrafficPolicy Local; not those
// handed to another service proxy) and answers 200 when the node has a
// ready endpoint of the Service, else 503 (pkg/proxy/healthcheck
// service_health.go, fed by ServicePortMap.HealthCheckNodePorts and
// EndpointsMap.LocalReadyEndpoints). On Windows it listens on every
// address, on Linux on the node port addresses (the node IP by default).
func (w *walker) healthCheckListener(nd *node, port int) (string, bool) {
	for _, s := range w.e.c.Services {
		if int(s.Spec.HealthCheckNodePort) != port || s.Spec.Type != corev1.ServiceTypeLoadBalancer ||
			s.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyLocal {
			continue
		}
		if _, other := model.ServiceProxyName(s); other {
			continue
		}
		local := 0
		for _, es := range w.e.c.EndpointSlices {
			if es.Namespace != s.Namespace || es.Labels[discoveryv1.LabelServiceName] != s.Name || es.AddressType != discoveryv1.AddressTypeIPv4 {
				continue
			}
			for _, e := range es.Endpoints {
				if e.NodeName != nil && *e.NodeName == nd.name && (e.Conditions.Ready == nil || *e.Conditions.Ready) {
					local++
				}
			}
		}
		answer := "HTTP 503, no local endpoint"
		switch {
		case local == 1:
			answer = "HTTP 200, 1 local endpoint"
		case local > 1:
			answer = fmt.Sprintf("HTTP 200, %d local endpoints", local)
		}
		return fmt.Sprintf("kube-proxy's health check for %s/%s (healthCheckNodePort; %s)", s.Namespace, s.Name, answer), true
	}
	return "", false
}

// notOurProxy says why kube-proxy programs nothing for a Service labelled
// for another service proxy.
func notOurProxy(svc *corev1.Service, proxy string) string {
	return fmt.Sprintf("%s/%s is labelled %s=%s: kube-proxy's informers never see it, so no kube-proxy programs it (only a proxy of that name would)", svc.Namespace, svc.Name, model.LabelServiceProxyName, proxy)
}

// missingNodePort explains a Windows node port with no HNS load balancer:
// kube-proxy's own note on the service port (every endpoint terminating,
// no usable endpoints), or "" when no Service has the node port.
func (w *walker) missingNodePort(nd *node, proto Proto, port int) string {
	if !nd.windows || nd.w() == nil || !nd.w().KubeProxy {
		return ""
	}
	for _, s := range w.e.c.Services {
		for _, sp := range s.Spec.Ports {
			if int(sp.NodePort) != port || !strings.EqualFold(string(orTCP(sp.Protocol)), string(proto)) {
				continue
			}
			name := sp.Name
			if name == "" {
				name = strconv.Itoa(int(sp.Port))
			}
			why := fmt.Sprintf("kube-proxy made no NodePort load balancer for %s/%s port %s", s.Namespace, s.Name, name)
			if proxy, other := model.ServiceProxyName(s); other {
				return why + ": " + notOurProxy(s, proxy)
			}
			if notes := nd.w().KubeProxyNotes(s.Namespace+"/"+s.Name, name); len(notes) > 0 {
				return why + " (" + strings.Join(notes, "; ") + ")"
			}
			return why
		}
	}
	return ""
}
