package admission

import (
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// Result is the outcome of Pod Security Admission for one pod create.
type Result struct {
	// Allowed is false when the namespace's enforce level refuses the pod.
	Allowed bool
	// Enforce is the effective enforce policy, e.g. "restricted:latest".
	Enforce string
	// Err is the Forbidden StatusError the API server returns when the pod is
	// refused, nil otherwise; FormatError(Err) is kubectl's line.
	Err error
	// Message is Err's text, e.g. `pods "x" is forbidden: violates
	// PodSecurity "restricted:latest": ...`, or "" when allowed.
	Message string
	// Warnings are the response warnings of an allowed pod ("would violate
	// PodSecurity ..."); kubectl prints each as "Warning: <text>".
	Warnings []string
	// AuditViolation is the pod-security.kubernetes.io/audit-violations audit
	// annotation, "" when the audit level passes.
	AuditViolation string
}

// privilegedLatest is the API server's default for every mode when no
// AdmissionConfiguration overrides it (kubeadm writes none).
var privilegedLatest = psaapi.LevelVersion{Level: psaapi.LevelPrivileged, Version: psaapi.LatestVersion()}

// evaluator holds the library's checks; built once, safe for concurrent use.
var evaluator = sync.OnceValues(func() (policy.Evaluator, error) {
	return policy.NewEvaluator(policy.DefaultChecks(), nil)
})

// CheckPodSecurity evaluates pod against the Pod Security levels named by
// ns's labels (pod-security.kubernetes.io/enforce, enforce-version, warn,
// warn-version, audit, audit-version), with the checks of the
// k8s.io/pod-security-admission library, and builds the response the way its
// admission package does (admission/admission.go EvaluatePod):
//
//   - a namespace that is privileged for all three modes allows everything;
//   - a failing enforce level gives a Forbidden error
//     `pods "<name>" is forbidden: violates PodSecurity "<level>:<version>": <details>`;
//   - the audit level only annotates;
//   - warnings are added only to allowed pods, as
//     `would violate PodSecurity "<level>:<version>": <details>`.
//
// Label parsing, including the "warn defaults to a stricter enforce level"
// rule and the fallbacks for bad values, is the library's PolicyToEvaluate.
// Windows relaxations (no seccomp, capabilities or allowPrivilegeEscalation
// requirements for spec.os.name=windows from v1.25 on) come from the
// library's checks. A nil namespace means no labels. The pod is named by
// pod.Name, else its generateName prefix (the real server would already have
// appended the random suffix).
func CheckPodSecurity(ns *corev1.Namespace, pod *corev1.Pod) Result {
	var labels map[string]string
	if ns != nil {
		labels = ns.Labels
	}
	defaults := psaapi.Policy{Enforce: privilegedLatest, Audit: privilegedLatest, Warn: privilegedLatest}
	nsPolicy, labelErrs := psaapi.PolicyToEvaluate(labels, defaults)
	res := Result{Allowed: true, Enforce: nsPolicy.Enforce.String()}
	if len(labelErrs) == 0 && nsPolicy.FullyPrivileged() {
		return res
	}
	ev, err := evaluator()
	if err != nil {
		// Only reachable if the library's own check list is inconsistent.
		res.Allowed = false
		res.Err = apierrors.NewInternalError(err)
		res.Message = res.Err.Error()
		return res
	}
	results := map[psaapi.LevelVersion]policy.AggregateCheckResult{}
	evaluate := func(lv psaapi.LevelVersion) policy.AggregateCheckResult {
		if r, ok := results[lv]; ok {
			return r
		}
		r := policy.AggregateCheckResults(ev.EvaluatePod(lv, &pod.ObjectMeta, &pod.Spec))
		results[lv] = r
		return r
	}

	if enforce := evaluate(nsPolicy.Enforce); !enforce.Allowed {
		res.Allowed = false
		res.Err = apierrors.NewForbidden(podsResource, podName(pod),
			fmt.Errorf("violates PodSecurity %q: %s", nsPolicy.Enforce.String(), enforce.ForbiddenDetail()))
		res.Message = res.Err.Error()
	}
	if audit := evaluate(nsPolicy.Audit); !audit.Allowed {
		res.AuditViolation = fmt.Sprintf("would violate PodSecurity %q: %s", nsPolicy.Audit.String(), audit.ForbiddenDetail())
	}
	if res.Allowed {
		if warn := evaluate(nsPolicy.Warn); !warn.Allowed {
			res.Warnings = append(res.Warnings,
				fmt.Sprintf("would violate PodSecurity %q: %s", nsPolicy.Warn.String(), warn.ForbiddenDetail()))
		}
	}
	return res
}

// podName is the name validating admission sees: by then the registry has
// generated the name, which the twin approximates with the prefix.
func podName(pod *corev1.Pod) string {
	if pod.Name != "" {
		return pod.Name
	}
	return pod.GenerateName
}
