package engine

import (
	"fmt"
	"net"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// The node lifecycle controller's words for a node whose kubelet stopped
// posting status (pkg/controller/nodelifecycle/node_lifecycle_controller.go
// tryUpdateNodeHealth), and the kubelet's for a runtime that does not answer
// (pkg/kubelet/runtime.go runtimeErrors).
const (
	nodeStatusUnknownReason = "NodeStatusUnknown"
	nodeStatusUnknown       = "Kubelet stopped posting node status."
	runtimeDown             = "container runtime is down"
)

// kubeadm's certificates: backdated 5 minutes, the API server's serving
// certificate valid for a year (cmd/kubeadm/app/constants
// CertificateBackdate, CertificateValidityPeriod).
const (
	certBackdate = 5 * time.Minute
	certValidity = 365 * 24 * time.Hour
)

// hostFailure applies the node's HostState to its Ready condition, as the
// kubelet and the node lifecycle controller would leave it, and says
// whether it did (readiness then leaves the node alone):
//   - a stopped kubelet, a kubelet stuck after the Windows vSwitch took the
//     host's address (its connection to the API server died with the old
//     interface), or a clock outside the API server certificate's validity
//     (every request fails TLS verification): nothing posts the node's
//     status, and after the grace period the controller sets Ready Unknown
//     and the unreachable taints;
//   - containerd stopped: the kubelet posts Ready False, "container runtime
//     is down" (its PLEG message, which names how long ago PLEG last ran,
//     is left out), and the controller adds the not-ready taints.
//
// Either way the controller marks the node's pods not Ready
// (pkg/controller/util/node MarkPodsNotReady); eviction after the taints'
// tolerationSeconds is not modelled.
func (b *builder) hostFailure(n *corev1.Node) bool {
	st := b.c.HostStates[n.Name]
	if st == nil {
		return false
	}
	stopped := map[string]bool{}
	for _, s := range st.Spec.Services {
		if s.Status == hybrid.ServiceStopped {
			stopped[s.Name] = true
		}
	}
	unknown := ""
	switch {
	case stopped[hybrid.ServiceKubelet]:
		unknown = "the kubelet service is stopped"
	case st.Spec.KubeletStuck:
		unknown = "the kubelet lost its connection to the API server when the vSwitch moved the host's address and is stuck (simulated)"
	default:
		if msg := b.clockError(n, st.Spec.ClockOffset); msg != "" {
			unknown = "the kubelet's requests fail: " + msg
		}
	}
	switch {
	case unknown != "":
		n.Status.Conditions = []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionUnknown,
			Reason: nodeStatusUnknownReason, Message: nodeStatusUnknown,
			LastHeartbeatTime: b.ref, LastTransitionTime: b.ref,
		}}
		n.Spec.Taints = append(n.Spec.Taints,
			corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule},
			corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute, TimeAdded: &b.ref},
		)
		b.note(model.Warning, model.Key{Kind: "Node", Name: n.Name}, "%s: %s", n.Name, unknown)
	case stopped[hybrid.ServiceContainerd]:
		n.Status.Conditions = []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionFalse,
			Reason: "KubeletNotReady", Message: runtimeDown,
			LastHeartbeatTime: b.ref, LastTransitionTime: b.ref,
		}}
		n.Spec.Taints = append(n.Spec.Taints,
			corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule},
			corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute, TimeAdded: &b.ref},
		)
	default:
		return false
	}
	if b.podsNotReady == nil {
		b.podsNotReady = map[string]bool{}
	}
	b.podsNotReady[n.Name] = true
	// The controller records the transition (nodelifecycle
	// RecordNodeStatusChange).
	b.record(corev1.ObjectReference{Kind: "Node", Name: n.Name, UID: n.UID}, corev1.EventTypeNormal, "NodeNotReady",
		"node-controller", "", fmt.Sprintf("Node %s status is now: NodeNotReady", n.Name))
	return true
}

// clockError is the error the node's kubelet gets verifying the API
// server's certificate with its clock offset from the control plane's
// (crypto/x509 CertificateInvalidError Expired), "" when the host's time
// is within the certificate's validity.
func (b *builder) clockError(n *corev1.Node, offset string) string {
	if offset == "" {
		return ""
	}
	d, err := time.ParseDuration(offset)
	if err != nil {
		return "" // refused at load
	}
	issued, ok := b.initTime()
	if !ok {
		return ""
	}
	notBefore, notAfter := issued.Add(-certBackdate), issued.Add(-certBackdate).Add(certValidity)
	now := b.ref.Add(d)
	var why string
	switch {
	case now.Before(notBefore):
		why = fmt.Sprintf("current time %s is before %s", now.UTC().Format(time.RFC3339), notBefore.UTC().Format(time.RFC3339))
	case now.After(notAfter):
		why = fmt.Sprintf("current time %s is after %s", now.UTC().Format(time.RFC3339), notAfter.UTC().Format(time.RFC3339))
	default:
		return ""
	}
	return fmt.Sprintf("Get \"https://%s/api/v1/nodes/%s?timeout=10s\": tls: failed to verify certificate: x509: certificate has expired or is not yet valid: %s",
		b.apiEndpoint(), n.Name, why)
}

// initTime is when kubeadm init made the certificates: the control-plane
// host's join.
func (b *builder) initTime() (time.Time, bool) {
	for _, h := range b.hosts {
		if h.controlPlane {
			if h.Observed.CreationTimestamp != nil {
				return h.Observed.CreationTimestamp.Time, true
			}
			if h.observed != nil {
				return h.observed.CreationTimestamp.Time, true
			}
		}
	}
	return time.Time{}, false
}

// apiEndpoint is the address the kubelets' kubeconfig names: kubeadm's
// controlPlaneEndpoint, else the init node's advertise address.
func (b *builder) apiEndpoint() string {
	if cc := b.c.Kubeadm.Cluster; cc != nil && cc.ControlPlaneEndpoint != "" {
		if _, _, err := net.SplitHostPort(cc.ControlPlaneEndpoint); err == nil {
			return cc.ControlPlaneEndpoint
		}
		return net.JoinHostPort(cc.ControlPlaneEndpoint, "6443")
	}
	addr, port := b.apiAdvertise()
	return net.JoinHostPort(addr, strconv.Itoa(int(port)))
}

// markPodsNotReady sets the Ready condition of the pods on nodes the node
// lifecycle controller found not ready to False (their containers' own
// statuses are the kubelet's last, so kubectl's READY column keeps them).
func (b *builder) markPodsNotReady() {
	if len(b.podsNotReady) == 0 {
		return
	}
	for _, p := range b.c.Pods {
		if !b.podsNotReady[p.Spec.NodeName] {
			continue
		}
		if b.d.reused(p) {
			b.d.broken = true
			return
		}
		for i := range p.Status.Conditions {
			if p.Status.Conditions[i].Type == corev1.PodReady {
				p.Status.Conditions[i].Status = corev1.ConditionFalse
				p.Status.Conditions[i].LastTransitionTime = b.ref
			}
		}
	}
}
