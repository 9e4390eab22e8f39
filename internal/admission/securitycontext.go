package admission

import (
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Limits and patterns of validation.go validateWindowsSecurityContextOptions
// (pkg/apis/core/validation/validation.go): a GMSA credential spec is at
// most 64 KiB; runAsUserName is "[DOMAIN\]USER" with a NetBIOS or DNS domain
// under 256 characters and a user of at most 104.
const (
	maxGMSACredentialSpecKiB     = 64
	maxRunAsUserNameDomainLength = 256
	maxRunAsUserNameUserLength   = 104
)

var (
	ctrlRegex         = regexp.MustCompile(`[[:cntrl:]]+`)
	validNetBiosRegex = regexp.MustCompile(`^[^\\/:\*\?"<>|\.][^\\/:\*\?"<>|]{0,14}$`)
	// dnsLabelFormat is validation.go's own pattern, which, unlike
	// IsDNS1123Subdomain, allows upper case.
	dnsLabelFormat                 = `[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?`
	validWindowsUserDomainDNSRegex = regexp.MustCompile(fmt.Sprintf(`^%s(?:\.%s)*$`, dnsLabelFormat, dnsLabelFormat))
	invalidUserNameCharsRegex      = regexp.MustCompile(`["/\\:;|=,\+\*\?<>@\[\]]`)
	invalidUserNameDotsSpacesRegex = regexp.MustCompile(`^[\. ]+$`)
)

// validateWindowsOptions follows validation.go
// validateWindowsSecurityContextOptions, for a pod's or a container's
// windowsOptions, whatever the pod's OS.
func validateWindowsOptions(o *corev1.WindowsSecurityContextOptions, fld *field.Path) field.ErrorList {
	if o == nil {
		return nil
	}
	var errs field.ErrorList
	if o.GMSACredentialSpecName != nil {
		for _, msg := range validation.IsDNS1123Subdomain(*o.GMSACredentialSpecName) {
			errs = append(errs, field.Invalid(fld.Child("gmsaCredentialSpecName"), o.GMSACredentialSpecName, msg))
		}
	}
	if o.GMSACredentialSpec != nil {
		if l := len(*o.GMSACredentialSpec); l == 0 {
			errs = append(errs, field.Invalid(fld.Child("gmsaCredentialSpec"), o.GMSACredentialSpec, "gmsaCredentialSpec cannot be an empty string"))
		} else if l > maxGMSACredentialSpecKiB*1024 {
			errs = append(errs, field.Invalid(fld.Child("gmsaCredentialSpec"), o.GMSACredentialSpec,
				fmt.Sprintf("gmsaCredentialSpec size must be under %d KiB", maxGMSACredentialSpecKiB)))
		}
	}
	if o.RunAsUserName != nil {
		errs = append(errs, validateRunAsUserName(o.RunAsUserName, fld.Child("runAsUserName"))...)
	}
	return errs
}

// validateRunAsUserName is the runAsUserName part of
// validateWindowsSecurityContextOptions: the first three faults stop the
// checks; the domain and user rules are all reported.
func validateRunAsUserName(name *string, p *field.Path) field.ErrorList {
	invalid := func(msg string) *field.Error { return field.Invalid(p, name, msg) }
	switch {
	case *name == "":
		return field.ErrorList{invalid("runAsUserName cannot be an empty string")}
	case ctrlRegex.MatchString(*name):
		return field.ErrorList{invalid("runAsUserName cannot contain control characters")}
	}
	parts := strings.Split(*name, `\`)
	if len(parts) > 2 {
		return field.ErrorList{invalid("runAsUserName cannot contain more than one backslash")}
	}
	var errs field.ErrorList
	domain, user, hasDomain := "", parts[0], len(parts) == 2
	if hasDomain {
		domain, user = parts[0], parts[1]
	}
	if len(domain) >= maxRunAsUserNameDomainLength {
		errs = append(errs, invalid(fmt.Sprintf("runAsUserName's Domain length must be under %d characters", maxRunAsUserNameDomainLength)))
	}
	if hasDomain && !validNetBiosRegex.MatchString(domain) && !validWindowsUserDomainDNSRegex.MatchString(domain) {
		errs = append(errs, invalid("runAsUserName's Domain doesn't match the NetBios nor the DNS format"))
	}
	if l := len(user); l == 0 {
		errs = append(errs, invalid("runAsUserName's User cannot be empty"))
	} else if l > maxRunAsUserNameUserLength {
		errs = append(errs, invalid(fmt.Sprintf("runAsUserName's User length must not be longer than %d characters", maxRunAsUserNameUserLength)))
	}
	if invalidUserNameDotsSpacesRegex.MatchString(user) {
		errs = append(errs, invalid("runAsUserName's User cannot contain only periods or spaces"))
	}
	if invalidUserNameCharsRegex.MatchString(user) {
		errs = append(errs, invalid(`runAsUserName's User cannot contain the following characters: "/\:;|=,+*?<>@[]`))
	}
	return errs
}

// validateSeccompProfile follows validation.go validateSeccompProfileField:
// a type is required and must be known; Localhost needs a profile. (The
// localhostProfile path rules and the "can only be set" error, whose value is
// the internal struct, are not modelled.)
func validateSeccompProfile(sp *corev1.SeccompProfile, fld *field.Path) field.ErrorList {
	if sp == nil {
		return nil
	}
	var errs field.ErrorList
	switch sp.Type {
	case corev1.SeccompProfileTypeLocalhost, corev1.SeccompProfileTypeRuntimeDefault, corev1.SeccompProfileTypeUnconfined:
	case "":
		errs = append(errs, field.Required(fld.Child("type"), "type is required when seccompProfile is set"))
	default:
		errs = append(errs, field.NotSupported(fld.Child("type"), sp.Type, []corev1.SeccompProfileType{
			corev1.SeccompProfileTypeLocalhost, corev1.SeccompProfileTypeRuntimeDefault, corev1.SeccompProfileTypeUnconfined}))
	}
	if sp.Type == corev1.SeccompProfileTypeLocalhost && sp.LocalhostProfile == nil {
		errs = append(errs, field.Required(fld.Child("localhostProfile"), "must be set when seccomp type is Localhost"))
	}
	return errs
}

// validateContainerSecurityContext follows validation.go
// ValidateSecurityContext: privileged under cluster policy, user and group
// IDs, procMount, seccompProfile, then windowsOptions. hostUsers is whether
// the pod shares the host's user namespace (hostUsers unset or true).
func validateContainerSecurityContext(sc *corev1.SecurityContext, fld *field.Path, hostUsers bool, opts Options) field.ErrorList {
	if sc == nil {
		return nil
	}
	var errs field.ErrorList
	if sc.Privileged != nil && *sc.Privileged && !opts.AllowPrivileged {
		errs = append(errs, field.Forbidden(fld.Child("privileged"), msgPrivilegedPolicy))
	}
	errs = append(errs, runAsIDs(sc.RunAsUser, sc.RunAsGroup, fld)...)
	if sc.ProcMount != nil {
		switch *sc.ProcMount {
		case corev1.DefaultProcMount, corev1.UnmaskedProcMount:
		default:
			errs = append(errs, field.NotSupported(fld.Child("procMount"), *sc.ProcMount,
				[]corev1.ProcMountType{corev1.DefaultProcMount, corev1.UnmaskedProcMount}))
		}
		if hostUsers && *sc.ProcMount == corev1.UnmaskedProcMount {
			errs = append(errs, field.Invalid(fld.Child("procMount"), sc.ProcMount, "`hostUsers` must be false to use `Unmasked`"))
		}
	}
	errs = append(errs, validateSeccompProfile(sc.SeccompProfile, fld.Child("seccompProfile"))...)
	errs = append(errs, validateWindowsOptions(sc.WindowsOptions, fld.Child("windowsOptions"))...)
	return errs
}

// runAsIDs checks runAsUser, then runAsGroup, as the container's and the
// pod's security contexts both do (validation.go ValidateSecurityContext,
// validatePodSpecSecurityContext).
func runAsIDs(user, group *int64, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if user != nil {
		errs = append(errs, invalidEach(fld.Child("runAsUser"), *user, validation.IsValidUserID(*user))...)
	}
	if group != nil {
		errs = append(errs, invalidEach(fld.Child("runAsGroup"), *group, validation.IsValidGroupID(*group))...)
	}
	return errs
}

// invalidEach is one Invalid error per message of a validation function.
func invalidEach(p *field.Path, v int64, msgs []string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range msgs {
		errs = append(errs, field.Invalid(p, v, msg))
	}
	return errs
}

// validatePodSecurityContext follows validation.go
// validatePodSpecSecurityContext: IDs, sysctls, seccompProfile and
// windowsOptions of the pod's security context.
func validatePodSecurityContext(spec *corev1.PodSpec, fld *field.Path) field.ErrorList {
	sc := spec.SecurityContext
	if sc == nil {
		return nil
	}
	var errs field.ErrorList
	if sc.FSGroup != nil {
		errs = append(errs, invalidEach(fld.Child("fsGroup"), *sc.FSGroup, validation.IsValidGroupID(*sc.FSGroup))...)
	}
	errs = append(errs, runAsIDs(sc.RunAsUser, sc.RunAsGroup, fld)...)
	for g, gid := range sc.SupplementalGroups {
		errs = append(errs, invalidEach(fld.Child("supplementalGroups").Index(g), gid, validation.IsValidGroupID(gid))...)
	}
	errs = append(errs, validateSysctls(spec, fld.Child("sysctls"))...)
	errs = append(errs, validateSeccompProfile(sc.SeccompProfile, fld.Child("seccompProfile"))...)
	errs = append(errs, validateWindowsOptions(sc.WindowsOptions, fld.Child("windowsOptions"))...)
	return errs
}

// Sysctl names, after validation.go IsValidSysctlName.
const sysctlMaxLength = 253

var sysctlRegexp = regexp.MustCompile(`^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$`)

// validateSysctls follows validation.go validateSysctls and
// ValidateHostSysctl: names well formed and unique, and no sysctl of a
// namespace the pod shares with the host.
func validateSysctls(spec *corev1.PodSpec, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := map[string]bool{}
	for i, s := range spec.SecurityContext.Sysctls {
		p := fld.Index(i).Child("name")
		switch {
		case s.Name == "":
			errs = append(errs, field.Required(p, ""))
		case len(s.Name) > sysctlMaxLength || !sysctlRegexp.MatchString(s.Name):
			errs = append(errs, field.Invalid(p, s.Name, fmt.Sprintf("must have at most %d characters and match regex %s", sysctlMaxLength, sysctlRegexp)))
		case names[s.Name]:
			errs = append(errs, field.Duplicate(p, s.Name))
		}
		switch ns := sysctlNamespace(s.Name); {
		case spec.HostNetwork && ns == "Net":
			errs = append(errs, field.Invalid(p, s.Name, "may not be specified when 'hostNetwork' is true"))
		case spec.HostIPC && ns == "IPC":
			errs = append(errs, field.Invalid(p, s.Name, "may not be specified when 'hostIPC' is true"))
		}
		names[s.Name] = true
	}
	return errs
}

// sysctlNamespace is the Linux namespace a sysctl belongs to, after
// k8s.io/component-helpers node/util/sysctl GetNamespace: a name written
// with slashes has its dots and slashes swapped first (NormalizeName); net.*
// is the network namespace, the System V IPC limits and fs.mqueue.* the IPC
// namespace.
func sysctlNamespace(name string) string {
	if i := strings.IndexAny(name, "./"); i >= 0 && name[i] == '/' {
		name = strings.Map(func(r rune) rune {
			switch r {
			case '.':
				return '/'
			case '/':
				return '.'
			}
			return r
		}, name)
	}
	switch name {
	case "kernel.sem", "kernel.shmall", "kernel.shmmax", "kernel.shmmni", "kernel.shm_rmid_forced",
		"kernel.msgmax", "kernel.msgmnb", "kernel.msgmni":
		return "IPC"
	}
	switch {
	case strings.HasPrefix(name, "net."):
		return "Net"
	case strings.HasPrefix(name, "fs.mqueue."):
		return "IPC"
	}
	return ""
}
