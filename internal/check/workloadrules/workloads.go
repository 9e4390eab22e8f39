package workloadrules

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/admission"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/rule"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/scheduler"
)

// Workloads: RuntimeClasses, what Windows pods must and must not set, their
// images, placement and admission.
func WorkloadRules() []rule.Rule {
	return []rule.Rule{
		ruleRuntimeClassNoNode, ruleRuntimeClassHandler, ruleWindowsNoOSName, ruleWindowsNoRuntimeClass,
		ruleLinuxFieldsOnWindows, ruleWindowsHostNetwork, ruleHostProcessPodSecurity,
		ruleImageOS, ruleImageBuild, rulePodsUnschedulable, ruleRejected,
	}
}

// Runtime handlers of containerd on Windows (the runhcs shim).
const (
	handlerProcess    = "runhcs-wcow-process"
	handlerHypervisor = "runhcs-wcow-hypervisor"
)

func rcKey(name string) model.Key {
	return model.Key{Group: "node.k8s.io", Kind: "RuntimeClass", Name: name}
}

// windowsRuntimeClass: the RuntimeClass places pods on Windows nodes.
func windowsRuntimeClass(rc *nodev1.RuntimeClass) bool {
	return rc.Scheduling != nil && rc.Scheduling.NodeSelector[corev1.LabelOSStable] == hybrid.OSWindows
}

func windowsBuilds(x *rule.Context) []string {
	seen := map[string]bool{}
	for _, n := range x.WindowsNodes() {
		if b, _ := rule.WindowsVersion(n); b != "" {
			seen[b] = true
		}
	}
	return rule.SortedKeys(seen)
}

var ruleRuntimeClassNoNode = rule.Rule{
	ID: "HYB030", Name: "runtimeclass-no-node", Severity: rule.Warning,
	Title:    "Windows RuntimeClass selects no node",
	Examines: []string{"RuntimeClass.node.k8s.io", "Node"},
	Needs:    rule.NeedNodes,
	Description: `A Windows RuntimeClass carries the node selector its pods get: kubernetes.io/os=windows and,
to keep process-isolated images on hosts of the same build, node.kubernetes.io/windows-build
(10.0.26100 for Windows Server 2025 and ltsc2025 images). One class per build; a class whose
selector matches no node leaves every pod that uses it Pending.`,
	Remediation: `kubectl patch runtimeclass <name> --type=merge -p '{"scheduling":{"nodeSelector":{"node.kubernetes.io/windows-build":"<a Windows node's build>"}}}'`,
	References:  []rule.Reference{rule.RefWindowsScheduling, rule.K8sRuntimeClass, rule.K8sWindowsGuide, rule.K8sLabels},
	Check: func(x *rule.Context) []rule.Finding {
		if len(x.WindowsNodes()) == 0 {
			return nil
		}
		var out []rule.Finding
		for _, rc := range x.Cluster.RuntimeClasses {
			if !windowsRuntimeClass(rc) {
				continue
			}
			sel := labels.SelectorFromSet(rc.Scheduling.NodeSelector)
			matched := false
			for _, n := range x.Cluster.Nodes {
				if sel.Matches(labels.Set(n.Labels)) {
					matched = true
					break
				}
			}
			if matched {
				continue
			}
			builds := windowsBuilds(x)
			fix := `kubectl patch runtimeclass ` + rc.Name + ` --type=merge -p '{"scheduling":{"nodeSelector":{"node.kubernetes.io/windows-build":"<build>"}}}'`
			if len(builds) > 0 {
				fix = strings.Replace(fix, "<build>", builds[0], 1)
			}
			out = append(out, rule.Finding{Object: rcKey(rc.Name), Field: "scheduling.nodeSelector",
				Message: fmt.Sprintf("RuntimeClass %s selects no node (%s); its pods stay Pending. Windows nodes have builds %s",
					rc.Name, sel.String(), strings.Join(builds, ", ")),
				Remediation: fix})
		}
		return out
	},
}

var ruleRuntimeClassHandler = rule.Rule{
	ID: "HYB031", Name: "runtimeclass-handler", Severity: rule.Error,
	Title:    "Windows RuntimeClass names a handler containerd on Windows does not have",
	Examines: []string{"RuntimeClass.node.k8s.io"},
	Description: `The kubelet passes the RuntimeClass's handler to containerd, whose Windows configuration has
runhcs-wcow-process (process isolation, the default) and runhcs-wcow-hypervisor (Hyper-V
isolation, which Kubernetes does not support). Any other name fails every pod sandbox ("no
runtime for ... is configured").`,
	Remediation: `kubectl apply a RuntimeClass with handler: runhcs-wcow-process (the handler field cannot be changed in place)`,
	References:  []rule.Reference{rule.RefWindowsScheduling, rule.K8sRuntimeClass, rule.K8sWindowsGuide},
	Check: func(x *rule.Context) []rule.Finding {
		var out []rule.Finding
		for _, rc := range x.Cluster.RuntimeClasses {
			if !windowsRuntimeClass(rc) || rc.Handler == handlerProcess {
				continue
			}
			f := rule.Finding{Object: rcKey(rc.Name), Field: "handler",
				Message:     fmt.Sprintf("RuntimeClass %s has handler %q; containerd on Windows has %s and %s, so its pods fail to start", rc.Name, rc.Handler, handlerProcess, handlerHypervisor),
				Remediation: fmt.Sprintf(`kubectl delete runtimeclass %s and re-create it with handler: %s (handler is immutable)`, rc.Name, handlerProcess)}
			if rc.Handler == handlerHypervisor {
				f.Severity = rule.Warning
				f.Message = fmt.Sprintf("RuntimeClass %s uses Hyper-V isolation (%s), which Kubernetes does not support on Windows nodes", rc.Name, rc.Handler)
			}
			out = append(out, f)
		}
		return out
	},
}

// podSpecPatch is the command that merges a pod spec fragment into the
// workload (a recreate, for a bare pod).
func podSpecPatch(w *rule.Workload, fragment map[string]any) string {
	js := plainJSON(fragment)
	if w.Key.Kind == "Pod" {
		return fmt.Sprintf("Re-create pod %s/%s with spec %s (a pod's spec cannot be patched)", w.Key.Namespace, w.Key.Name, js)
	}
	patch := plainJSON(map[string]any{"spec": map[string]any{"template": map[string]any{"spec": fragment}}})
	return fmt.Sprintf(`kubectl -n %s patch %s %s --type=merge -p '%s'`, w.Key.Namespace, strings.ToLower(w.Key.Kind), w.Key.Name, patch)
}

// plainJSON is v as JSON the way a user types it: json.Marshal writes
// "<a Windows RuntimeClass>" as "\u003ca Windows RuntimeClass\u003e".
func plainJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // maps of strings: nothing fails to encode
	return strings.TrimSuffix(b.String(), "\n")
}

var ruleWindowsNoOSName = rule.Rule{
	ID: "HYB032", Name: "windows-workload-no-os-name", Severity: rule.Warning,
	Title:    "Windows workload without spec.os.name: windows",
	Examines: []string{"Deployment.apps", "StatefulSet.apps", "DaemonSet.apps", "ReplicaSet.apps", "Pod"},
	Description: `spec.os.name is how the API server knows a pod is for Windows: with it, it refuses
Linux-only securityContext fields, and Pod Security Admission relaxes the checks that do not
apply to Windows (seccomp, capabilities, allowPrivilegeEscalation). Without it a Windows pod is
validated as a Linux pod, and Linux fields are silently ignored on the node. A RuntimeClass does
not set it. HostProcess pods are not checked.`,
	Remediation: `kubectl -n <ns> patch deployment <name> --type=merge -p '{"spec":{"template":{"spec":{"os":{"name":"windows"}}}}}'`,
	References:  []rule.Reference{rule.RefWindowsScheduling, rule.RefWindowsAPI, rule.K8sWindowsGuide, rule.K8sPSS},
	Check: func(x *rule.Context) []rule.Finding {
		var out []rule.Finding
		for _, w := range x.Idx().Workloads {
			if !w.Intent || w.HostProcess || (w.Spec.OS != nil && w.Spec.OS.Name == corev1.Windows) {
				continue
			}
			f := rule.Finding{Object: w.Key, Field: w.Path("os"),
				Message:     fmt.Sprintf("%s runs on Windows nodes but does not set spec.os.name: windows; the API server validates its pods as Linux pods", rule.ObjectString(w.Key)),
				Remediation: podSpecPatch(w, map[string]any{"os": map[string]string{"name": "windows"}})}
			if w.Spec.OS != nil {
				f.Field = w.Path("os.name")
				f.Severity = rule.Error
				f.Message = fmt.Sprintf("%s sets spec.os.name: %s but runs on Windows nodes", rule.ObjectString(w.Key), w.Spec.OS.Name)
			}
			out = append(out, f)
		}
		return out
	},
}

// windowsRuntimeClassFor names a Windows RuntimeClass for the cluster's
// Windows build, or a placeholder.
func windowsRuntimeClassFor(x *rule.Context) string {
	builds := windowsBuilds(x)
	for _, rc := range x.Cluster.RuntimeClasses {
		if windowsRuntimeClass(rc) && rc.Handler == handlerProcess {
			if len(builds) == 0 || rc.Scheduling.NodeSelector[corev1.LabelWindowsBuild] == builds[0] {
				return rc.Name
			}
		}
	}
	return "<a Windows RuntimeClass>"
}

var ruleWindowsNoRuntimeClass = rule.Rule{
	ID: "HYB033", Name: "windows-workload-no-runtimeclass", Severity: rule.Info,
	Title:    "Windows workload without a RuntimeClass",
	Examines: []string{"Deployment.apps", "StatefulSet.apps", "DaemonSet.apps", "ReplicaSet.apps", "Pod", "RuntimeClass.node.k8s.io"},
	Description: `A Windows RuntimeClass adds the node selector (OS, architecture and Windows build) and the
toleration of the Windows taint to every pod that names it, so manifests do not repeat them and
an ltsc2025 image never lands on a host of another build. Without one, each workload carries its
own selector and tolerations, and nothing ties its image to the host build. HostProcess pods run
on the host itself and are not checked.`,
	Remediation: `kubectl -n <ns> patch deployment <name> --type=merge -p '{"spec":{"template":{"spec":{"runtimeClassName":"windows-2025"}}}}'`,
	References:  []rule.Reference{rule.RefWindowsScheduling, rule.K8sRuntimeClass, rule.K8sWindowsGuide},
	Check: func(x *rule.Context) []rule.Finding {
		var out []rule.Finding
		for _, w := range x.Idx().Workloads {
			if !w.Intent || w.HostProcess || w.Spec.RuntimeClassName != nil {
				continue
			}
			rc := windowsRuntimeClassFor(x)
			out = append(out, rule.Finding{Object: w.Key, Field: w.Path("runtimeClassName"),
				Message:     fmt.Sprintf("%s runs on Windows nodes without a runtimeClassName; nothing ties its images to the host's Windows build", rule.ObjectString(w.Key)),
				Remediation: podSpecPatch(w, map[string]any{"runtimeClassName": rc})})
		}
		return out
	},
}

const windowsForbidden = "cannot be set for a windows pod"

var ruleLinuxFieldsOnWindows = rule.Rule{
	ID: "HYB034", Name: "linux-fields-on-windows", Severity: rule.Error,
	Title:    "Linux-only securityContext fields on a Windows workload",
	Examines: []string{"Deployment.apps", "StatefulSet.apps", "DaemonSet.apps", "ReplicaSet.apps", "Pod"},
	Description: `For a pod with spec.os.name: windows the API server refuses Linux-only fields: at pod level
seLinuxOptions, seccompProfile, fsGroup, sysctls, runAsUser, runAsGroup, supplementalGroups,
hostPID, hostIPC, shareProcessNamespace and more; per container also capabilities, privileged,
readOnlyRootFilesystem, allowPrivilegeEscalation and procMount ("cannot be set for a windows
pod"). Such a workload never gets pods (error). Without os.name the same fields are accepted and
silently ignored on the Windows node (warning). On Windows the user is set with
securityContext.windowsOptions.runAsUserName.`,
	Remediation: `Remove the Linux-only fields from the Windows pod template; use securityContext.windowsOptions.runAsUserName (ContainerUser) and runAsNonRoot instead`,
	References:  []rule.Reference{rule.RefWindowsAPI, rule.PodValidation, rule.K8sWindowsGuide},
	Check: func(x *rule.Context) []rule.Finding {
		var out []rule.Finding
		for _, w := range x.Idx().Workloads {
			if !w.Intent {
				continue
			}
			spec := w.Spec.DeepCopy()
			declared := spec.OS != nil && spec.OS.Name == corev1.Windows
			spec.OS = &corev1.PodOS{Name: corev1.Windows}
			for _, e := range admission.ValidatePod(&corev1.Pod{Spec: *spec}, admission.DefaultOptions()) {
				if e.Type != field.ErrorTypeForbidden || e.Detail != windowsForbidden {
					continue
				}
				path := w.Field + strings.TrimPrefix(e.Field, "spec")
				f := rule.Finding{Object: w.Key, Field: path,
					Message: fmt.Sprintf("%s is Linux-only: the API server refuses it on a windows pod, so %s gets no pods", path, rule.ObjectString(w.Key)),
					Remediation: fmt.Sprintf("Remove %s from %s; on Windows set securityContext.windowsOptions.runAsUserName instead of user and group IDs",
						path, rule.ObjectString(w.Key))}
				if !declared {
					f.Severity = rule.Warning
					f.Message = fmt.Sprintf("%s is Linux-only; the pods run on Windows without spec.os.name, so the field is accepted and silently ignored", path)
				}
				out = append(out, f)
			}
		}
		return out
	},
}

var ruleWindowsHostNetwork = rule.Rule{
	ID: "HYB035", Name: "windows-host-network", Severity: rule.Warning,
	Title:    "Windows workload asks for hostNetwork without being HostProcess",
	Examines: []string{"Deployment.apps", "StatefulSet.apps", "DaemonSet.apps", "ReplicaSet.apps", "Pod"},
	Description: `A Windows pod always gets its own network compartment: the alpha WindowsHostNetwork feature
that changed this was withdrawn (its gate is deprecated since 1.33). Only HostProcess pods run in
the host's network, like calico-node-windows and kube-proxy-windows. A regular Windows pod with
hostNetwork: true does not get the node's address or ports.`,
	Remediation: `Drop hostNetwork, or make the pod a HostProcess pod (securityContext.windowsOptions.hostProcess: true, runAsUserName "NT AUTHORITY\\system") in a privileged namespace`,
	References:  []rule.Reference{rule.RefWindowsLimits, rule.K8sWindowsNetworking, rule.K8sHostProcess},
	Check: func(x *rule.Context) []rule.Finding {
		var out []rule.Finding
		for _, w := range x.Idx().Workloads {
			if !w.Intent || w.HostProcess || !w.Spec.HostNetwork {
				continue
			}
			out = append(out, rule.Finding{Object: w.Key, Field: w.Path("hostNetwork"),
				Message:     fmt.Sprintf("%s sets hostNetwork on Windows without HostProcess containers; Windows pods always get their own network compartment", rule.ObjectString(w.Key)),
				Remediation: podSpecPatch(w, map[string]any{"hostNetwork": false})})
		}
		return out
	},
}

var ruleHostProcessPodSecurity = rule.Rule{
	ID: "HYB036", Name: "hostprocess-pod-security", Severity: rule.Error,
	Title:    "HostProcess pods in a namespace whose Pod Security level forbids them",
	Examines: []string{"DaemonSet.apps", "Deployment.apps", "Pod", "Namespace"},
	Description: `A HostProcess container is a process of the host with its disks, registry, services and
network. The baseline and restricted Pod Security levels forbid it (windowsHostProcess, and
hostNamespaces for the hostNetwork it needs), so such pods are refused unless their namespace
enforces privileged: calico-system is labelled so by the operator, kube-system is privileged by
default.`,
	Remediation: `kubectl label namespace <ns> pod-security.kubernetes.io/enforce=privileged --overwrite`,
	References:  []rule.Reference{rule.RefWindowsVersions, rule.K8sHostProcess, rule.K8sPSS},
	Check: func(x *rule.Context) []rule.Finding {
		var out []rule.Finding
		for _, w := range x.Idx().Workloads {
			if !w.HostProcess {
				continue
			}
			pod := &corev1.Pod{Spec: *w.Spec}
			pod.Name, pod.Namespace, pod.Labels = w.Key.Name, w.Key.Namespace, w.PodMeta.Labels
			res := admission.CheckPodSecurity(x.Namespace(w.Key.Namespace), pod)
			if res.Allowed {
				continue
			}
			out = append(out, rule.Finding{Object: w.Key, Field: w.Path("securityContext.windowsOptions.hostProcess"),
				Message: fmt.Sprintf("namespace %s enforces %s, which refuses HostProcess pods: %s",
					w.Key.Namespace, res.Enforce, strings.TrimPrefix(res.Message, "Error from server (Forbidden): ")),
				Remediation: fmt.Sprintf("kubectl label namespace %s pod-security.kubernetes.io/enforce=privileged --overwrite", w.Key.Namespace)})
		}
		return out
	},
}

// imageMismatch is one container of a workload whose image cannot run on
// the nodes its pods are on.
type imageMismatch struct {
	w         *rule.Workload
	container string
	path      string
	image     string
	reason    string
	build     bool
	nodes     []string
}

// imageMismatches runs scheduler.ImageFitsNode for every container of every
// placed pod, once per image and node OS/build, and groups the failures by
// workload and container.
func imageMismatches(x *rule.Context) []*imageMismatch {
	return x.Memo(imageMismatchesKey{}, func() any { return findImageMismatches(x) }).([]*imageMismatch)
}

// imageMismatchesKey memoizes imageMismatches in the Context for the two
// image rules.
type imageMismatchesKey struct{}

func findImageMismatches(x *rule.Context) []*imageMismatch {
	type verdict struct {
		ok     bool
		reason string
	}
	cache := map[string]verdict{}
	// platform is a node's OS and Windows build, once per node.
	platform := map[string]string{}
	var out []*imageMismatch
	for _, w := range x.Idx().Workloads {
		hyperv := false
		if rcName := w.Spec.RuntimeClassName; rcName != nil {
			if rc := x.Idx().Runtimes[*rcName]; rc != nil && rc.Handler == handlerHypervisor {
				hyperv = true
			}
		}
		byContainer := map[string]*imageMismatch{}
		var order []string
		for _, p := range w.Pods {
			n := x.Node(p.Spec.NodeName)
			if n == nil {
				continue
			}
			plat, ok := platform[n.Name]
			if !ok {
				build, _ := rule.WindowsVersion(n)
				plat = n.Labels[corev1.LabelOSStable] + "\x00" + n.Status.NodeInfo.OperatingSystem + "\x00" + build
				platform[n.Name] = plat
			}
			rule.EachContainer(&p.Spec, func(ct *corev1.Container, path string) {
				key := ct.Image + "\x00" + plat
				v, ok := cache[key]
				if !ok {
					v.ok, v.reason = scheduler.ImageFitsNode(ct.Image, n)
					cache[key] = v
				}
				if v.ok {
					return
				}
				isBuild := v.reason == scheduler.MsgOSMismatch
				if isBuild && (w.HostProcess || hyperv) {
					return
				}
				m := byContainer[path]
				if m == nil {
					m = &imageMismatch{w: w, container: ct.Name, path: path, image: ct.Image, reason: v.reason, build: isBuild}
					byContainer[path] = m
					order = append(order, path)
				}
				if len(m.nodes) == 0 || m.nodes[len(m.nodes)-1] != n.Name {
					m.nodes = append(m.nodes, n.Name)
				}
			})
		}
		for _, path := range order {
			m := byContainer[path]
			sort.Strings(m.nodes)
			m.nodes = dedupe(m.nodes)
			out = append(out, m)
		}
	}
	return out
}

func dedupe(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

var ruleImageOS = rule.Rule{
	ID: "HYB037", Name: "image-os-mismatch", Severity: rule.Error,
	Title:    "Container image's OS does not match its node's",
	Examines: []string{"Pod", "Node", "Deployment.apps", "DaemonSet.apps", "StatefulSet.apps"},
	Description: `An image without a variant for the node's OS fails at pull ("no match for platform in
manifest"): a Linux image scheduled to a Windows node, or a Windows image (nanoserver,
servercore, mcr.microsoft.com/windows/*) to a Linux node. The pod stays in ErrImagePull for ever.
Images are classified from a small table of well-known repositories and tags; unknown images are
not reported.`,
	Remediation: `Pin the workload to nodes of its image's OS: os.name and runtimeClassName (Windows images), nodeSelector kubernetes.io/os: linux (Linux images); or publish a multi-platform image`,
	References:  []rule.Reference{rule.RefWindowsScheduling, rule.RefWindowsTroubleshoot, rule.K8sWindowsGuide},
	Check: func(x *rule.Context) []rule.Finding {
		var out []rule.Finding
		for _, m := range imageMismatches(x) {
			if m.build {
				continue
			}
			fix := podSpecPatch(m.w, map[string]any{"nodeSelector": map[string]string{corev1.LabelOSStable: hybrid.OSLinux}})
			if n := x.Node(m.nodes[0]); n != nil && !rule.IsWindowsNode(n) {
				fix = podSpecPatch(m.w, map[string]any{"os": map[string]string{"name": "windows"}, "runtimeClassName": windowsRuntimeClassFor(x)})
			}
			out = append(out, rule.Finding{Object: m.w.Key, Field: m.w.Path(m.path + ".image"),
				Message: fmt.Sprintf("image %s of container %s cannot run on %s: %s",
					m.image, m.container, rule.ListNames(m.nodes, 3), m.reason),
				Remediation: fix})
		}
		return out
	},
}

var ruleImageBuild = rule.Rule{
	ID: "HYB038", Name: "image-build-mismatch", Severity: rule.Error,
	Title:    "Windows image build does not match its node's Windows build",
	Examines: []string{"Pod", "Node", "Deployment.apps", "RuntimeClass.node.k8s.io"},
	Description: `A process-isolated Windows container runs on the host's kernel, so the image's Windows build
must equal the host's: ltsc2025 needs 10.0.26100 (Windows Server 2025), ltsc2022 10.0.20348,
ltsc2019 10.0.17763. Otherwise the container fails to start with "The container operating system
does not match the host operating system." (the update revision need not match). HostProcess
containers and Hyper-V isolation are exempt.`,
	Remediation: `Use the image tag of the node's build (ltsc2025 on Windows Server 2025) and a RuntimeClass whose node.kubernetes.io/windows-build selects nodes of that build`,
	References:  []rule.Reference{rule.RefWindowsUpdates, rule.RefWindowsScheduling, rule.RefWindowsTroubleshoot, rule.K8sWindowsGuide},
	Check: func(x *rule.Context) []rule.Finding {
		var out []rule.Finding
		for _, m := range imageMismatches(x) {
			if !m.build {
				continue
			}
			build := ""
			if n := x.Node(m.nodes[0]); n != nil {
				build, _ = rule.WindowsVersion(n)
			}
			out = append(out, rule.Finding{Object: m.w.Key, Field: m.w.Path(m.path + ".image"),
				Message: fmt.Sprintf("image %s of container %s does not match the Windows build %s of %s: %s",
					m.image, m.container, build, rule.ListNames(m.nodes, 3), m.reason),
				Remediation: fmt.Sprintf("Use the image tag for build %s (ltsc2025 for 10.0.26100) and runtimeClassName %s", build, windowsRuntimeClassFor(x))})
		}
		return out
	},
}

var rulePodsUnschedulable = rule.Rule{
	ID: "HYB039", Name: "pods-unschedulable", Severity: rule.Error,
	Title:    "Pods cannot be scheduled",
	Examines: []string{"Pod", "Node", "Deployment.apps", "StatefulSet.apps"},
	Description: `The scheduler found no node for the workload's pods: a node selector or RuntimeClass that
matches no node, a taint (os=windows:NoSchedule) without a toleration, or no room left. The
message is the scheduler's FailedScheduling text.`,
	Remediation: `kubectl describe pod <pod> (Events); match the pod's nodeSelector, RuntimeClass and tolerations to a node`,
	References:  []rule.Reference{rule.RefWindowsScheduling, rule.K8sAssignPods, rule.K8sTaints},
	Check: func(x *rule.Context) []rule.Finding {
		var out []rule.Finding
		for _, w := range x.Idx().Workloads {
			pending, msg := 0, ""
			for _, p := range w.Pods {
				for _, cond := range p.Status.Conditions {
					if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse && cond.Reason == corev1.PodReasonUnschedulable {
						pending++
						if msg == "" {
							msg = cond.Message
						}
					}
				}
			}
			if pending == 0 {
				continue
			}
			out = append(out, rule.Finding{Object: w.Key, Field: w.Path(""),
				Message:     fmt.Sprintf("%d of %s cannot be scheduled: %s", pending, rule.Plural(len(w.Pods), "pod"), msg),
				Remediation: fmt.Sprintf("kubectl -n %s describe pod %s; match nodeSelector, RuntimeClass and tolerations to a node", w.Key.Namespace, w.Pods[0].Name)})
		}
		return out
	},
}

var ruleRejected = rule.Rule{
	ID: "HYB040", Name: "api-server-refuses", Severity: rule.Error,
	Title:    "The API server refuses an object",
	Examines: []string{"Pod", "Deployment.apps", "DaemonSet.apps", "StatefulSet.apps", "Namespace", "RuntimeClass.node.k8s.io"},
	Description: `Admission refuses the object: pod validation (Linux fields on a Windows pod, HostProcess
rules), the RuntimeClass plugin (an unknown class, a conflicting node selector) or Pod Security.
For a controller's pods the refusal shows only as FailedCreate events on the controller. The
message is what kubectl prints.`,
	Remediation: `Fix the field the message names and apply again`,
	References:  []rule.Reference{rule.RefWindowsAPI, rule.PodValidation, rule.K8sPSS, rule.K8sRuntimeClass},
	Check: func(x *rule.Context) []rule.Finding {
		var out []rule.Finding
		for _, r := range x.Cluster.Rejected {
			f := rule.Finding{Object: r.Key, Message: strings.TrimRight(r.Message, "\n")}
			// A controller's pod: "<Kind> <ns>/<name>: Error creating: ...".
			if kind, rest, ok := strings.Cut(r.Message, " "); ok {
				if ref, _, ok := strings.Cut(rest, ": Error creating:"); ok {
					if ns, name, ok := strings.Cut(ref, "/"); ok {
						f.Source = &model.Key{Group: "apps", Kind: kind, Namespace: ns, Name: name}
					}
				}
			}
			out = append(out, f)
		}
		return out
	},
}
