package model

import corev1 "k8s.io/api/core/v1"

// LabelServiceProxyName hands a Service to another service proxy: kube-proxy
// lists and watches only Services and EndpointSlices without it
// (cmd/kube-proxy/app/server.go: a DoesNotExist requirement on
// pkg/proxy/apis LabelServiceProxyName in the informers' label selector).
const LabelServiceProxyName = "service.kubernetes.io/service-proxy-name"

// ServiceProxyName is the service proxy a Service names, if it names one:
// kube-proxy on no node programs such a Service.
func ServiceProxyName(svc *corev1.Service) (string, bool) {
	v, ok := svc.Labels[LabelServiceProxyName]
	return v, ok
}
