package hybrid

// What-if markers: annotations that make an object of a later input source
// (a what-if file layered with -f, or diff's --what-if) act on the object
// of the same kind, namespace and name that an earlier source gave (the
// lab, an earlier -f, diff's base) instead of replacing it. The marked
// object itself is never added: only its kind, name and these annotations
// (and, for taint, its spec.taints) are read.
const (
	// DeleteAnnotation "true" removes the earlier object, as kubectl
	// delete would.
	DeleteAnnotation = Group + "/delete"
	// ActionAnnotation names an imperative step done on the earlier
	// object (one of the Action* values).
	ActionAnnotation = Group + "/action"
)

// Actions, and the kinds each applies to.
const (
	// ActionApprove and ActionDeny add the Approved or Denied condition to
	// a CertificateSigningRequest (kubectl certificate approve|deny).
	ActionApprove = "approve"
	ActionDeny    = "deny"
	// ActionCordon and ActionUncordon set or clear a Node's
	// spec.unschedulable (kubectl cordon|uncordon).
	ActionCordon   = "cordon"
	ActionUncordon = "uncordon"
	// ActionTaint adds the marker's spec.taints to a Node, each replacing
	// a taint with the same key and effect (kubectl taint nodes).
	ActionTaint = "taint"
	// ActionDrain cordons a Node and evicts its pods but DaemonSet and
	// mirror pods (kubectl drain --ignore-daemonsets --delete-emptydir-data
	// --force): a controller's pods are re-created by the twin wherever the
	// scheduler puts them; a pod without a controller is gone.
	ActionDrain = "drain"
	// ActionRestart sets the pod template annotation RestartedAtAnnotation
	// of a Deployment, DaemonSet or StatefulSet (kubectl rollout restart),
	// which rolls its pods.
	ActionRestart = "restart"
)

// RestartedAtAnnotation is the pod template annotation kubectl rollout
// restart sets (kubectl pkg/polymorphichelpers/objectrestarter.go).
const RestartedAtAnnotation = "kubectl.kubernetes.io/restartedAt"

// ActionKinds lists, per action, the kinds it applies to.
var ActionKinds = map[string][]string{
	ActionApprove:  {"CertificateSigningRequest"},
	ActionDeny:     {"CertificateSigningRequest"},
	ActionCordon:   {"Node"},
	ActionUncordon: {"Node"},
	ActionTaint:    {"Node"},
	ActionDrain:    {"Node"},
	ActionRestart:  {"Deployment", "DaemonSet", "StatefulSet"},
}

// IsMarker reports whether annotations make an object a what-if marker
// (delete or action) rather than an object of its own.
func IsMarker(annotations map[string]string) bool {
	_, del := annotations[DeleteAnnotation]
	_, act := annotations[ActionAnnotation]
	return del || act
}
