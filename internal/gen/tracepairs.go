package gen

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// TracePairs picks n (source, target) pairs of a built twin for the
// benchmarks, deterministically: running workload pods on Linux and
// Windows nodes as sources; Services (through kube-proxy and, across OSes,
// VXLAN), other pods and Services by DNS name as targets, as `trace` is
// asked for them.
func TracePairs(c *model.Cluster, n int) ([][2]string, error) {
	var pods []*corev1.Pod
	for _, p := range c.Pods {
		if p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" && !p.Spec.HostNetwork && IsWorkloadNamespace(p.Namespace) {
			pods = append(pods, p)
		}
	}
	var svcs []*corev1.Service
	for _, s := range c.Services {
		if len(s.Spec.Selector) > 0 && IsWorkloadNamespace(s.Namespace) {
			svcs = append(svcs, s)
		}
	}
	if len(pods) < 2 || len(svcs) == 0 {
		return nil, fmt.Errorf("%d running workload pods and %d Services: nothing to trace", len(pods), len(svcs))
	}
	out := make([][2]string, 0, n)
	for i := range n {
		// Strides coprime to the counts spread the picks over nodes,
		// namespaces and both OSes.
		src := pods[(i*7919)%len(pods)]
		from := "pod/" + src.Namespace + "/" + src.Name
		switch i % 3 {
		case 0:
			s := svcs[(i*104729)%len(svcs)]
			out = append(out, [2]string{from, "svc/" + s.Namespace + "/" + s.Name})
		case 1:
			p := pods[(i*15485863)%len(pods)]
			out = append(out, [2]string{from, "pod/" + p.Namespace + "/" + p.Name})
		default:
			s := svcs[(i*32452843)%len(svcs)]
			out = append(out, [2]string{from, s.Name + "." + s.Namespace + ".svc.cluster.local"})
		}
	}
	return out, nil
}

// IsWorkloadNamespace reports whether ns is not one of the cluster's own
// components' namespaces (kube-system, calico-*, tigera-*).
func IsWorkloadNamespace(ns string) bool {
	return ns != "kube-system" && !strings.HasPrefix(ns, "calico") && !strings.HasPrefix(ns, "tigera")
}
