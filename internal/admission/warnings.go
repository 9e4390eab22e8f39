package admission

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// deprecatedNodeLabels is pkg/api/node/util.go deprecatedNodeLabels.
var deprecatedNodeLabels = map[string]string{
	`beta.kubernetes.io/arch`:                       `deprecated since v1.14; use "kubernetes.io/arch" instead`,
	`beta.kubernetes.io/os`:                         `deprecated since v1.14; use "kubernetes.io/os" instead`,
	`failure-domain.beta.kubernetes.io/region`:      `deprecated since v1.17; use "topology.kubernetes.io/region" instead`,
	`failure-domain.beta.kubernetes.io/zone`:        `deprecated since v1.17; use "topology.kubernetes.io/zone" instead`,
	`beta.kubernetes.io/instance-type`:              `deprecated since v1.17; use "node.kubernetes.io/instance-type" instead`,
	`app.kubernetes.io/created-by`:                  `deprecated since v1.9`,
	`scheduler.alpha.kubernetes.io/preferAvoidPods`: `deprecated since v1.22; use Taints and Tolerations instead`,
	`node-role.kubernetes.io/master`:                `use "node-role.kubernetes.io/control-plane" instead`,
}

// deprecatedAnnotations is pkg/api/pod/warnings.go deprecatedAnnotations.
var deprecatedAnnotations = []struct{ key, message string }{
	{`scheduler.alpha.kubernetes.io/critical-pod`, `non-functional in v1.16+; use the "priorityClassName" field instead`},
	{`security.alpha.kubernetes.io/sysctls`, `non-functional in v1.11+; use the "sysctls" field instead`},
	{`security.alpha.kubernetes.io/unsafe-sysctls`, `non-functional in v1.11+; use the "sysctls" field instead`},
}

// PodWarnings returns the warnings the API server sends with an accepted
// pod create (pkg/registry/core/pod/strategy.go WarningsOnCreate, then
// pkg/api/pod/warnings.go warningsForPodSpecAndMeta), in its order, for the
// fields the twin models: the pod name as a hostname, deprecated node labels
// in the node selector and topology spread keys, null label selectors,
// deprecated and seccomp annotations, fractional byte quantities, env
// entries hiding earlier ones, image pull secrets, and container ports. The
// server sends them only once validation has passed, and they come before
// the warnings of validating admission (Pod Security).
//
// The node selector is a map upstream, walked in random order; here its
// keys are sorted. Volume, DNS, host alias and node affinity warnings are
// not modelled.
func PodWarnings(pod *corev1.Pod) []string {
	var w []string
	add := func(format string, a ...any) { w = append(w, fmt.Sprintf(format, a...)) }
	if msgs := validation.IsDNS1123Label(pod.Name); len(msgs) != 0 {
		add("metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is recommended: %v", msgs)
	}
	spec := &pod.Spec
	keys := make([]string, 0, len(spec.NodeSelector))
	for k := range spec.NodeSelector {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if msg, ok := deprecatedNodeLabels[k]; ok {
			add("%s: %s", field.NewPath("spec", "nodeSelector").Key(k), msg)
		}
	}
	for i, t := range spec.TopologySpreadConstraints {
		p := field.NewPath("spec", "topologySpreadConstraints").Index(i)
		if msg, ok := deprecatedNodeLabels[t.TopologyKey]; ok {
			add("%s: %s is %s", p.Child("topologyKey"), t.TopologyKey, msg)
		}
		if t.LabelSelector == nil {
			add("%s: a null labelSelector results in matching no pod", p.Child("labelSelector"))
		}
	}
	annotations := field.NewPath("metadata", "annotations")
	for _, d := range deprecatedAnnotations {
		if _, ok := pod.Annotations[d.key]; ok {
			add("%s: %s", annotations.Key(d.key), d.message)
		}
	}
	dupSecrets := sets.New[string]()
	if len(spec.ImagePullSecrets) > 1 {
		for i, s := range spec.ImagePullSecrets {
			if dupSecrets.Has(s.Name) {
				add("%s: duplicate name %q", field.NewPath("spec", "imagePullSecrets").Index(i).Child("name"), s.Name)
			} else {
				dupSecrets.Insert(s.Name)
			}
		}
	}
	for i, s := range spec.ImagePullSecrets {
		if s.Name == "" {
			add("%s: invalid empty name %q", field.NewPath("spec", "imagePullSecrets").Index(i).Child("name"), s.Name)
		}
	}
	for _, name := range []corev1.ResourceName{corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
		if q, ok := spec.Overhead[name]; ok && fractional(q) {
			add("%s: fractional byte value %q is invalid, must be an integer", field.NewPath("spec", "overhead").Key(string(name)), q.String())
		}
	}
	if spec.SecurityContext == nil || spec.SecurityContext.SeccompProfile == nil {
		if _, ok := pod.Annotations[corev1.SeccompPodAnnotationKey]; ok {
			add(`%s: non-functional in v1.27+; use the "seccompProfile" field instead`, annotations.Key(corev1.SeccompPodAnnotationKey))
		}
	}
	specPath := field.NewPath("spec")
	visitContainers(spec, specPath, func(c *corev1.Container, p *field.Path) {
		if c.SecurityContext == nil || c.SecurityContext.SeccompProfile == nil {
			key := corev1.SeccompContainerAnnotationKeyPrefix + c.Name
			if _, ok := pod.Annotations[key]; ok {
				add(`%s: non-functional in v1.27+; use the "seccompProfile" field instead`, annotations.Key(key))
			}
		}
		requests := defaultedRequests(&c.Resources)
		for _, name := range []corev1.ResourceName{corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
			if q, ok := c.Resources.Limits[name]; ok && fractional(q) {
				add("%s: fractional byte value %q is invalid, must be an integer", p.Child("resources", "limits").Key(string(name)), q.String())
			}
			if q, ok := requests[name]; ok && fractional(q) {
				add("%s: fractional byte value %q is invalid, must be an integer", p.Child("resources", "requests").Key(string(name)), q.String())
			}
		}
		w = append(w, envWarnings(c.Env, p.Child("env"))...)
	})
	w = append(w, portWarnings(spec, specPath)...)
	// A negative terminationGracePeriodSeconds warns only in pod templates:
	// a Pod's is defaulted to 1 before the warnings are made.
	return w
}

// fractional: a byte quantity with a fraction of a byte ("1500m").
func fractional(q resource.Quantity) bool {
	return q.MilliValue()%1000 != 0
}

// envWarnings: a later env entry of the same name hides the earlier one,
// unless it only extends it with $(NAME).
func envWarnings(env []corev1.EnvVar, p *field.Path) []string {
	if len(env) < 2 {
		return nil
	}
	var w []string
	seen := sets.New[string]()
	for i, e := range env {
		if !seen.Has(e.Name) {
			seen.Insert(e.Name)
			continue
		}
		ref := fmt.Sprintf("$(%s)", e.Name)
		if e.ValueFrom != nil || e.Value == ref || !strings.Contains(e.Value, ref) {
			w = append(w, fmt.Sprintf("%s: hides previous definition of %q, which may be dropped when using apply", p.Index(i), e.Name))
		}
	}
	return w
}

// portWarnings: hostIP without hostPort, ports defined twice (by number
// and protocol, after defaulting the protocol to TCP) and port names used
// twice, over all containers.
func portWarnings(spec *corev1.PodSpec, specPath *field.Path) []string {
	type block struct {
		p    *field.Path
		port corev1.ContainerPort
	}
	var w []string
	all := map[string][]block{}
	names := map[string]*field.Path{}
	visitContainers(spec, specPath, func(c *corev1.Container, cp *field.Path) {
		for i, port := range c.Ports {
			if port.Protocol == "" {
				port.Protocol = corev1.ProtocolTCP
			}
			p := cp.Child("ports").Index(i)
			if port.HostIP != "" && port.HostPort == 0 {
				w = append(w, fmt.Sprintf("%s: hostIP set without hostPort: %+v", p, port))
			}
			k := fmt.Sprintf("%d/%s", port.ContainerPort, port.Protocol)
			for _, other := range all[k] {
				a, b := port.HostIP == "", other.port.HostIP == ""
				switch {
				case port.HostIP == other.port.HostIP && port.HostPort == other.port.HostPort:
					w = append(w, fmt.Sprintf("%s: duplicate port definition with %s", p, other.p))
				case port.HostPort == 0 || other.port.HostPort == 0:
					w = append(w, fmt.Sprintf("%s: overlapping port definition with %s", p, other.p))
				case port.HostPort == other.port.HostPort && (a || b) && !(a && b):
					w = append(w, fmt.Sprintf("%s: dangerously ambiguous port definition with %s", p, other.p))
				}
			}
			all[k] = append(all[k], block{p, port})
		}
	})
	visitContainers(spec, specPath, func(c *corev1.Container, cp *field.Path) {
		for i, port := range c.Ports {
			if port.Name == "" {
				continue
			}
			p := cp.Child("ports").Index(i)
			if other, ok := names[port.Name]; ok {
				w = append(w, fmt.Sprintf("%s: duplicate port name %q with %s, services and probes that select ports by name will use %s", p, port.Name, other, other))
			} else {
				names[port.Name] = p
			}
		}
	})
	return w
}
