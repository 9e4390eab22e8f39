package admission

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/validate"
)

// Options carries the kube-apiserver settings that change pod validation.
type Options struct {
	// AllowPrivileged is kube-apiserver's --allow-privileged. kubeadm sets it
	// to true; when false, privileged containers and hostProcess pods are
	// rejected ("disallowed by cluster policy").
	AllowPrivileged bool
}

// DefaultOptions returns the settings of a kubeadm-built API server.
func DefaultOptions() Options {
	return Options{AllowPrivileged: true}
}

// Detail texts of pkg/apis/core/validation/validation.go that callers may
// want to match on.
const (
	msgWindowsForbidden  = "cannot be set for a windows pod"
	msgLinuxWindowsOpts  = "windows options cannot be set for a linux pod"
	msgHostProcessAll    = "If pod contains any hostProcess containers then all containers must be HostProcess containers"
	msgHostProcessNet    = "hostNetwork must be true if pod contains any hostProcess containers"
	msgHostProcessPolicy = "hostProcess containers are disallowed by cluster policy"
	msgPrivilegedPolicy  = "disallowed by cluster policy"
	msgHostNetworkPort   = "must match `containerPort` when `hostNetwork` is true"
	msgHostUsersFalse    = "when `hostUsers` is false"
)

// supportedOS is validation.go's validOS set, already in sorted order.
var supportedOS = []corev1.OSName{corev1.Linux, corev1.Windows}

// ValidatePodCreate is what the API server's validation finds in a pod
// create: the metadata errors (name, namespace, labels, annotations) first,
// then ValidatePod's, as pkg/apis/core/validation ValidatePod lists them.
func ValidatePodCreate(pod *corev1.Pod, opts Options) field.ErrorList {
	if pod == nil {
		return nil
	}
	return append(validate.PodMeta(pod), ValidatePod(pod, opts)...)
}

// ValidatePod runs the subset of the API server's create-time pod validation
// (pkg/apis/core/validation/validation.go ValidatePodCreate) that hybrid
// clusters trip over, and returns the errors in the order ValidatePodSpec
// appends them:
//
//  1. containers: at least one; name required and a DNS-1123 label; image
//     required; resource quantities (validateResources); the container
//     security context (ValidateSecurityContext: privileged under cluster
//     policy, IDs, procMount, seccompProfile, windowsOptions); names unique;
//  2. initContainers, then ephemeralContainers: the same common checks,
//     names unique across all lists;
//  3. hostNetwork: hostPort must equal containerPort (validatePodHostNetworkDeps);
//  4. the pod security context (validatePodSpecSecurityContext: IDs,
//     sysctls, seccompProfile, windowsOptions);
//  5. shareProcessNamespace with hostPID (validateShareProcessNamespace),
//     then the matchFields of node-affinity terms (validateAffinity, of
//     which only validateNodeFieldSelectors is modelled);
//  6. Windows hostProcess rules (validateWindowsHostProcessPod), for any OS;
//  7. hostUsers=false with host namespaces (validateHostUsers);
//  8. spec.os: name required and linux or windows (validateOS), then the
//     Linux-only (validateLinux) or Windows-only (validateWindows) field rules;
//  9. ValidatePodCreate: no ephemeral containers on create.
//
// Everything else ValidatePodSpec checks (volumes, probes, ports, env, DNS,
// the rest of the affinity syntax, tolerations syntax, ...) is out of scope;
// the pod's metadata is ValidatePodCreate's.
//
// The pod is taken as the client sent it, before API defaulting; where a
// default would hide an error (hostPort 0 on a hostNetwork pod is defaulted to
// containerPort) the check allows for it.
func ValidatePod(pod *corev1.Pod, opts Options) field.ErrorList {
	if pod == nil {
		return nil
	}
	fld := field.NewPath("spec")
	errs := validatePodSpec(&pod.Spec, fld, opts)
	if len(pod.Spec.EphemeralContainers) > 0 {
		errs = append(errs, field.Forbidden(fld.Child("ephemeralContainers"), "cannot be set on create"))
	}
	return errs
}

func validatePodSpec(spec *corev1.PodSpec, fld *field.Path, opts Options) field.ErrorList {
	// The default for hostUsers is true.
	hostUsers := spec.HostUsers == nil || *spec.HostUsers
	var errs field.ErrorList
	errs = append(errs, validateContainers(spec.Containers, fld.Child("containers"), hostUsers, opts)...)
	errs = append(errs, validateInitContainers(spec.InitContainers, spec.Containers, fld.Child("initContainers"), hostUsers, opts)...)
	errs = append(errs, validateEphemeralContainers(spec, fld.Child("ephemeralContainers"), hostUsers, opts)...)
	errs = append(errs, validateHostNetworkPorts(spec, fld)...)
	errs = append(errs, validatePodSecurityContext(spec, fld.Child("securityContext"))...)
	if spec.ShareProcessNamespace != nil && *spec.ShareProcessNamespace && spec.HostPID {
		errs = append(errs, field.Invalid(fld.Child("shareProcessNamespace"), true, "ShareProcessNamespace and HostPID cannot both be enabled"))
	}
	errs = append(errs, validateNodeFieldSelectors(spec, fld)...)
	errs = append(errs, validateHostProcess(spec, fld, opts)...)
	errs = append(errs, validateHostUsers(spec, fld)...)
	if spec.OS != nil {
		// validation.go: OS-specific rules run only once spec.os itself is valid.
		osErrs := validateOS(spec.OS, fld.Child("os"))
		switch {
		case len(osErrs) > 0:
			errs = append(errs, osErrs...)
		case spec.OS.Name == corev1.Linux:
			errs = append(errs, validateLinuxOnly(spec, fld)...)
		case spec.OS.Name == corev1.Windows:
			errs = append(errs, validateWindowsOnly(spec, fld)...)
		}
	}
	return errs
}

// validateContainers follows validation.go validateContainers: an empty
// list is a single Required error; duplicate names (empty ones included) are
// reported on the later container.
func validateContainers(containers []corev1.Container, fld *field.Path, hostUsers bool, opts Options) field.ErrorList {
	if len(containers) == 0 {
		return field.ErrorList{field.Required(fld, "")}
	}
	var errs field.ErrorList
	names := sets.New[string]()
	for i := range containers {
		c := &containers[i]
		p := fld.Index(i)
		errs = append(errs, validateContainerCommon(c, p, hostUsers, opts)...)
		if names.Has(c.Name) {
			errs = append(errs, field.Duplicate(p.Child("name"), c.Name))
		} else {
			names.Insert(c.Name)
		}
	}
	return errs
}

// validateInitContainers follows validation.go validateInitContainers: init
// names must not repeat each other nor any regular container name.
func validateInitContainers(inits, regular []corev1.Container, fld *field.Path, hostUsers bool, opts Options) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i := range regular {
		names.Insert(regular[i].Name)
	}
	for i := range inits {
		c := &inits[i]
		p := fld.Index(i)
		errs = append(errs, validateContainerCommon(c, p, hostUsers, opts)...)
		if names.Has(c.Name) {
			errs = append(errs, field.Duplicate(p.Child("name"), c.Name))
		} else if c.Name != "" {
			names.Insert(c.Name)
		}
	}
	return errs
}

// validateEphemeralContainers is the part of validation.go
// validateEphemeralContainers modelled here: names unique across all three
// lists, then the common container checks. (Its rules on fields ephemeral
// containers may not set, such as ports and probes, are not modelled.)
func validateEphemeralContainers(spec *corev1.PodSpec, fld *field.Path, hostUsers bool, opts Options) field.ErrorList {
	if len(spec.EphemeralContainers) == 0 {
		return nil
	}
	var errs field.ErrorList
	names := sets.New[string]()
	for i := range spec.Containers {
		names.Insert(spec.Containers[i].Name)
	}
	for i := range spec.InitContainers {
		names.Insert(spec.InitContainers[i].Name)
	}
	for i := range spec.EphemeralContainers {
		ec := &spec.EphemeralContainers[i]
		p := fld.Index(i)
		if ec.Name != "" && names.Has(ec.Name) {
			errs = append(errs, field.Duplicate(p.Child("name"), ec.Name))
		} else {
			names.Insert(ec.Name)
		}
		c := corev1.Container(ec.EphemeralContainerCommon)
		errs = append(errs, validateContainerCommon(&c, p, hostUsers, opts)...)
	}
	return errs
}

// validateContainerCommon is the part of validation.go validateContainerCommon
// (name, image, ports, resources, security context) modelled here.
func validateContainerCommon(c *corev1.Container, p *field.Path, hostUsers bool, opts Options) field.ErrorList {
	var errs field.ErrorList
	namePath := p.Child("name")
	if c.Name == "" {
		errs = append(errs, field.Required(namePath, ""))
	} else {
		for _, msg := range validation.IsDNS1123Label(c.Name) {
			errs = append(errs, field.Invalid(namePath, c.Name, msg))
		}
	}
	if c.Image == "" {
		errs = append(errs, field.Required(p.Child("image"), ""))
	}
	errs = append(errs, validateContainerPorts(c.Ports, p.Child("ports"))...)
	errs = append(errs, validateResources(&c.Resources, p.Child("resources"))...)
	errs = append(errs, validateContainerSecurityContext(c.SecurityContext, p.Child("securityContext"), hostUsers, opts)...)
	return errs
}

// validateContainerPorts follows validation.go validateContainerPorts: port
// names well formed and unique within the container, port numbers in range,
// a known protocol (an empty one is defaulted to TCP before validation).
func validateContainerPorts(ports []corev1.ContainerPort, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, port := range ports {
		p := fld.Index(i)
		if port.Name != "" {
			if msgs := validation.IsValidPortName(port.Name); len(msgs) != 0 {
				for _, msg := range msgs {
					errs = append(errs, field.Invalid(p.Child("name"), port.Name, msg))
				}
			} else if names.Has(port.Name) {
				errs = append(errs, field.Duplicate(p.Child("name"), port.Name))
			} else {
				names.Insert(port.Name)
			}
		}
		if port.ContainerPort == 0 {
			errs = append(errs, field.Required(p.Child("containerPort"), ""))
		} else {
			for _, msg := range validation.IsValidPortNum(int(port.ContainerPort)) {
				errs = append(errs, field.Invalid(p.Child("containerPort"), port.ContainerPort, msg))
			}
		}
		if port.HostPort != 0 {
			for _, msg := range validation.IsValidPortNum(int(port.HostPort)) {
				errs = append(errs, field.Invalid(p.Child("hostPort"), port.HostPort, msg))
			}
		}
		switch port.Protocol {
		case "", corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP:
		default:
			errs = append(errs, field.NotSupported(p.Child("protocol"), port.Protocol,
				[]corev1.Protocol{corev1.ProtocolSCTP, corev1.ProtocolTCP, corev1.ProtocolUDP}))
		}
	}
	return errs
}

// validateHostNetworkPorts is validatePodHostNetworkDeps for a Pod: with
// hostNetwork, each regular container's hostPort must equal its
// containerPort. A zero hostPort is skipped because pod defaulting copies
// containerPort into it before validation runs.
func validateHostNetworkPorts(spec *corev1.PodSpec, fld *field.Path) field.ErrorList {
	if !spec.HostNetwork {
		return nil
	}
	var errs field.ErrorList
	for i := range spec.Containers {
		for j, port := range spec.Containers[i].Ports {
			if port.HostPort != 0 && port.HostPort != port.ContainerPort {
				p := fld.Child("containers").Index(i).Child("ports").Index(j).Child("hostPort")
				errs = append(errs, field.Invalid(p, port.HostPort, msgHostNetworkPort))
			}
		}
	}
	return errs
}

// visitContainers walks init, regular and ephemeral containers in the order
// of pkg/apis/core/pods VisitContainersWithPath.
func visitContainers(spec *corev1.PodSpec, fld *field.Path, visit func(c *corev1.Container, p *field.Path)) {
	for i := range spec.InitContainers {
		visit(&spec.InitContainers[i], fld.Child("initContainers").Index(i))
	}
	for i := range spec.Containers {
		visit(&spec.Containers[i], fld.Child("containers").Index(i))
	}
	for i := range spec.EphemeralContainers {
		c := corev1.Container(spec.EphemeralContainers[i].EphemeralContainerCommon)
		visit(&c, fld.Child("ephemeralContainers").Index(i))
	}
}

// validateHostProcess follows validation.go validateWindowsHostProcessPod,
// which runs for every pod whatever its spec.os: a container inherits the
// pod's hostProcess unless it sets its own; once any container is a
// hostProcess container, all must be, hostNetwork must be on, and the API
// server must allow privileged pods.
func validateHostProcess(spec *corev1.PodSpec, fld *field.Path, opts Options) field.ErrorList {
	var podValue *bool
	if sc := spec.SecurityContext; sc != nil && sc.WindowsOptions != nil {
		podValue = sc.WindowsOptions.HostProcess
	}
	var errs field.ErrorList
	containers, hostProcess := 0, 0
	visitContainers(spec, fld, func(c *corev1.Container, p *field.Path) {
		containers++
		var own *bool
		if c.SecurityContext != nil && c.SecurityContext.WindowsOptions != nil {
			own = c.SecurityContext.WindowsOptions.HostProcess
		}
		if podValue != nil && own != nil && *podValue != *own {
			errs = append(errs, field.Invalid(p.Child("securityContext", "windowsOptions", "hostProcess"), *own,
				fmt.Sprintf("pod hostProcess value must be identical if both are specified, was %v", *podValue)))
		}
		if (own != nil && *own) || (own == nil && podValue != nil && *podValue) {
			hostProcess++
		}
	})
	if hostProcess == 0 {
		return errs
	}
	if hostProcess != containers {
		errs = append(errs, field.Invalid(fld, "", msgHostProcessAll))
	}
	if !spec.HostNetwork {
		errs = append(errs, field.Invalid(fld.Child("hostNetwork"), false, msgHostProcessNet))
	}
	if !opts.AllowPrivileged {
		errs = append(errs, field.Forbidden(fld, msgHostProcessPolicy))
	}
	return errs
}

// validateHostUsers follows validation.go validateHostUsers. The HostPID and
// HostIPC paths are capitalised upstream, and kept so here.
func validateHostUsers(spec *corev1.PodSpec, fld *field.Path) field.ErrorList {
	if spec.HostUsers == nil || *spec.HostUsers {
		return nil
	}
	var errs field.ErrorList
	if spec.HostNetwork {
		errs = append(errs, field.Forbidden(fld.Child("hostNetwork"), msgHostUsersFalse))
	}
	if spec.HostPID {
		errs = append(errs, field.Forbidden(fld.Child("HostPID"), msgHostUsersFalse))
	}
	if spec.HostIPC {
		errs = append(errs, field.Forbidden(fld.Child("HostIPC"), msgHostUsersFalse))
	}
	return errs
}

// validateOS follows validation.go validateOS: an empty name is Required on
// spec.os.name and stops there; an unknown one is NotSupported on spec.os.
func validateOS(os *corev1.PodOS, fld *field.Path) field.ErrorList {
	if os.Name == "" {
		return field.ErrorList{field.Required(fld.Child("name"), "")}
	}
	for _, name := range supportedOS {
		if os.Name == name {
			return nil
		}
	}
	return field.ErrorList{field.NotSupported(fld, os.Name, supportedOS)}
}

// validateLinuxOnly follows validation.go validateLinux: windowsOptions are
// refused on the pod and on every container of a linux pod.
func validateLinuxOnly(spec *corev1.PodSpec, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if sc := spec.SecurityContext; sc != nil && sc.WindowsOptions != nil {
		errs = append(errs, field.Forbidden(fld.Child("securityContext", "windowsOptions"), msgLinuxWindowsOpts))
	}
	visitContainers(spec, fld, func(c *corev1.Container, p *field.Path) {
		if c.SecurityContext != nil && c.SecurityContext.WindowsOptions != nil {
			errs = append(errs, field.Forbidden(p.Child("securityContext", "windowsOptions"), msgLinuxWindowsOpts))
		}
	})
	return errs
}

// linuxOnlyField is one Linux-only field and whether the pod sets it.
type linuxOnlyField struct {
	path *field.Path
	set  bool
}

// validateWindowsOnly follows validation.go validateWindows: the pod
// security context's Linux-only fields, then the spec's host namespace
// fields, then each container's security context.
func validateWindowsOnly(spec *corev1.PodSpec, fld *field.Path) field.ErrorList {
	sc := spec.SecurityContext
	if sc == nil {
		sc = &corev1.PodSecurityContext{}
	}
	scPath := fld.Child("securityContext")
	podFields := []linuxOnlyField{
		{scPath.Child("appArmorProfile"), sc.AppArmorProfile != nil},
		{scPath.Child("seLinuxOptions"), sc.SELinuxOptions != nil},
		{scPath.Child("seccompProfile"), sc.SeccompProfile != nil},
		{scPath.Child("fsGroup"), sc.FSGroup != nil},
		{scPath.Child("fsGroupChangePolicy"), sc.FSGroupChangePolicy != nil},
		{scPath.Child("sysctls"), len(sc.Sysctls) > 0},
		{scPath.Child("runAsUser"), sc.RunAsUser != nil},
		{scPath.Child("runAsGroup"), sc.RunAsGroup != nil},
		{scPath.Child("supplementalGroups"), sc.SupplementalGroups != nil},
		{scPath.Child("supplementalGroupsPolicy"), sc.SupplementalGroupsPolicy != nil},
		{scPath.Child("seLinuxChangePolicy"), sc.SELinuxChangePolicy != nil},
		{fld.Child("hostUsers"), spec.HostUsers != nil},
		{fld.Child("hostPID"), spec.HostPID},
		{fld.Child("hostIPC"), spec.HostIPC},
		{fld.Child("shareProcessNamespace"), spec.ShareProcessNamespace != nil},
	}
	var errs field.ErrorList
	for _, f := range podFields {
		if f.set {
			errs = append(errs, field.Forbidden(f.path, msgWindowsForbidden))
		}
	}
	visitContainers(spec, fld, func(c *corev1.Container, p *field.Path) {
		csc := c.SecurityContext
		if csc == nil {
			return
		}
		cp := p.Child("securityContext")
		containerFields := []linuxOnlyField{
			{cp.Child("appArmorProfile"), csc.AppArmorProfile != nil},
			{cp.Child("seLinuxOptions"), csc.SELinuxOptions != nil},
			{cp.Child("seccompProfile"), csc.SeccompProfile != nil},
			{cp.Child("capabilities"), csc.Capabilities != nil},
			{cp.Child("readOnlyRootFilesystem"), csc.ReadOnlyRootFilesystem != nil},
			{cp.Child("privileged"), csc.Privileged != nil},
			{cp.Child("allowPrivilegeEscalation"), csc.AllowPrivilegeEscalation != nil},
			{cp.Child("procMount"), csc.ProcMount != nil},
			{cp.Child("runAsUser"), csc.RunAsUser != nil},
			{cp.Child("runAsGroup"), csc.RunAsGroup != nil},
		}
		for _, f := range containerFields {
			if f.set {
				errs = append(errs, field.Forbidden(f.path, msgWindowsForbidden))
			}
		}
	})
	return errs
}

// validateNodeFieldSelectors follows validation.go
// ValidateNodeFieldSelectorRequirement for the matchFields of the pod's
// required and preferred node-affinity terms: only metadata.name, only In
// or NotIn, with exactly one value that is a valid node name.
func validateNodeFieldSelectors(spec *corev1.PodSpec, fld *field.Path) field.ErrorList {
	if spec.Affinity == nil || spec.Affinity.NodeAffinity == nil {
		return nil
	}
	na := spec.Affinity.NodeAffinity
	fld = fld.Child("affinity", "nodeAffinity")
	var errs field.ErrorList
	check := func(reqs []corev1.NodeSelectorRequirement, p *field.Path) {
		for i, r := range reqs {
			rp := p.Child("matchFields").Index(i)
			switch r.Operator {
			case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
				if len(r.Values) != 1 {
					errs = append(errs, field.Required(rp.Child("values"), "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"))
				}
			default:
				errs = append(errs, field.Invalid(rp.Child("operator"), r.Operator, "not a valid selector operator"))
			}
			if r.Key != metav1.ObjectNameField {
				errs = append(errs, field.Invalid(rp.Child("key"), r.Key, "not a valid field selector key"))
				continue
			}
			for j, v := range r.Values {
				for _, msg := range apivalidation.NameIsDNSSubdomain(v, false) {
					errs = append(errs, field.Invalid(rp.Child("values").Index(j), v, msg))
				}
			}
		}
	}
	if req := na.RequiredDuringSchedulingIgnoredDuringExecution; req != nil {
		for i, t := range req.NodeSelectorTerms {
			check(t.MatchFields, fld.Child("requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms").Index(i))
		}
	}
	for i, t := range na.PreferredDuringSchedulingIgnoredDuringExecution {
		check(t.Preference.MatchFields, fld.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i).Child("preference"))
	}
	return errs
}
