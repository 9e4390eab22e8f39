// Package admission models what kube-apiserver does to a Pod between
// `kubectl apply` and etcd, for the parts that matter on hybrid
// Linux/Windows clusters:
//
//   - mutating admission: NamespaceLifecycle (AdmitNamespace),
//     ServiceAccount (AdmitServiceAccount), Priority (AdmitPriority, with
//     SystemPriorityClasses), DefaultTolerationSeconds (DefaultTolerations)
//     and RuntimeClass (ApplyRuntimeClass), in the order kube-apiserver runs
//     them (pkg/kubeapiserver/options/plugins.go AllOrderedPlugins), before
//     the registry generates a generateName pod's name;
//   - object validation: a subset of pkg/apis/core/validation/validation.go
//     (ValidatePodCreate: the metadata, then ValidatePod's spec rules),
//     reported with the apimachinery field errors the real server uses, and
//     printed the way kubectl prints them (FormatInvalid);
//   - the warnings the registry sends with a valid pod (PodWarnings, after
//     pkg/api/pod/warnings.go), which kubectl prints as "Warning: …";
//   - validating admission: Pod Security Admission (CheckPodSecurity), backed
//     by the real k8s.io/pod-security-admission checks.
//
// The real order for a create is: mutating admission, then validation, then
// validating admission. A pod that fails ValidatePod never reaches Pod
// Security, so callers should stop at the first stage that rejects.
//
// Nothing here talks to a cluster; every function is pure apart from the
// documented mutation of its pod argument.
package admission
