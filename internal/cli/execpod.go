package cli

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dns"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// findPod resolves pod/NAME or deploy/NAME (the first pod of the
// Deployment, as kubectl exec deploy/NAME picks one) in a namespace.
func findPod(c *model.Cluster, kind, ns, name string) (*corev1.Pod, error) {
	switch kind {
	case "pod", "po", "pods":
		for _, p := range c.Pods {
			if p.Namespace == ns && p.Name == name {
				return p, nil
			}
		}
		return nil, &exitError{code: ExitNegative, err: fmt.Errorf("Error from server (NotFound): pods %q not found", name)}
	}
	var rs []string
	for _, r := range c.ReplicaSets {
		for _, ref := range r.OwnerReferences {
			if r.Namespace == ns && ref.Kind == "Deployment" && ref.Name == name {
				rs = append(rs, r.Name)
			}
		}
	}
	if len(rs) == 0 {
		return nil, &exitError{code: ExitNegative, err: fmt.Errorf("Error from server (NotFound): deployments.apps %q not found", name)}
	}
	for _, p := range c.Pods {
		for _, ref := range p.OwnerReferences {
			if p.Namespace == ns && ref.Kind == "ReplicaSet" && contains(rs, ref.Name) && p.Status.Phase == corev1.PodRunning {
				return p, nil
			}
		}
	}
	return nil, &exitError{code: ExitNegative, err: fmt.Errorf("error: unable to upgrade connection: no running pod of deployment %s", name)}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// execInPod runs the pod commands the twin emulates.
func execInPod(c *model.Cluster, kind, ns, name string, argv []string) (string, string, int, error) {
	p, err := findPod(c, kind, ns, name)
	if err != nil {
		return "", "", 0, err
	}
	words := argv
	if len(words) == 1 {
		words = strings.Fields(words[0])
	}
	switch strings.TrimSuffix(strings.ToLower(words[0]), ".exe") {
	case "nslookup":
		out, errOut, code := dns.NSLookup(c, dns.PodSource(p), words[1:])
		if code == dns.ExitNotModeled {
			return "", "", 0, fmt.Errorf("%s", strings.TrimSpace(errOut))
		}
		return out, errOut, code, nil
	}
	return "", fmt.Sprintf("kubectl-hybrid: %q is not emulated in pods yet; emulated: nslookup\n", words[0]), 127, nil
}
