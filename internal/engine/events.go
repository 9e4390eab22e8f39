package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/scheduler"
)

// Event components, as the recorders name themselves (Source.Component).
const (
	componentKubelet   = "kubelet"
	componentScheduler = "default-scheduler"
)

// event records what a component would record about a pod: core/v1 Events
// as client-go's recorder writes them (tools/record/event.go makeEvent:
// name "<object>.<hex UnixNano>", first and last timestamps, count 1). The
// twin records one occurrence at its reference time; a real kubelet repeats
// a failing sync's event and the count grows.
func (b *builder) event(p *corev1.Pod, typ, reason, component, host, msg string) {
	b.record(corev1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID, APIVersion: "v1"},
		typ, reason, component, host, msg)
}

// nodeEvent records an event about a node as the kubelet does: its node
// reference has the node's name as UID and no namespace, so the event goes
// to "default" (pkg/kubelet/kubelet.go nodeRef; tools/record makeEvent).
func (b *builder) nodeEvent(n *corev1.Node, typ, reason, msg string) {
	b.record(corev1.ObjectReference{Kind: "Node", Name: n.Name, UID: types.UID(n.Name)},
		typ, reason, componentKubelet, n.Name, msg)
}

func (b *builder) record(ref corev1.ObjectReference, typ, reason, component, host, msg string) {
	t := b.ref
	ns := ref.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	// Events recorded in one build get distinct names, as distinct
	// nanoseconds would give them.
	name := fmt.Sprintf("%s.%x", ref.Name, t.UnixNano()+int64(len(b.c.Events)))
	b.c.Events = append(b.c.Events, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: name, Namespace: ns, CreationTimestamp: t},
		InvolvedObject: ref,
		Reason:         reason, Message: msg, Type: typ, Count: 1,
		Source:         corev1.EventSource{Component: component, Host: host},
		FirstTimestamp: t, LastTimestamp: t,
		ReportingController: component, ReportingInstance: host,
	})
}

// networkNotReady says whether the node's container runtime reports its
// network not ready (no CNI configuration: the CNI's node agent never ran
// there), which readiness sets for such nodes.
func networkNotReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status != corev1.ConditionTrue && c.Message == notReadyMessage
		}
	}
	return false
}

// podsWithoutNetwork stops the pods on the pod network of nodes whose
// network is not ready: the kubelet starts no sandbox for them while the
// runtime's network is not ready, records NetworkNotReady and retries
// (pkg/kubelet/kubelet.go SyncPod, NetworkNotReadyErrorMsg). A pod the input
// gives with an address loses it: the twin is the cluster built as if, and
// no CNI ADD has run. The pods stay bound, Pending in ContainerCreating; the
// node lifecycle controller's eviction of pods that do not tolerate the
// not-ready taint (after tolerationSeconds, 300 s by default) is not
// modelled.
func (b *builder) podsWithoutNetwork() {
	c := b.c
	if coreDegraded(c) {
		// The operator stopped before rendering its core (no enabled pool,
		// an invalid Installation): on a running cluster the DaemonSets it
		// rendered before stay and the pods keep running. The twin shows
		// the nodes NotReady (it models a fresh install) but leaves the
		// pods as given; the cascade is for agents the operator's
		// configuration leaves out (no Windows dataplane, no services
		// endpoint for Windows).
		return
	}
	for _, p := range c.Pods {
		if p.Spec.HostNetwork || p.Spec.NodeName == "" ||
			p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		n := b.nodeByName(p.Spec.NodeName)
		if n == nil || !networkNotReady(n) {
			continue
		}
		if b.d.reused(p) {
			b.d.broken = true
			return
		}
		if p.Status.PodIP != "" {
			p.Status.PodIP, p.Status.PodIPs = "", nil
			if c.Observed(keyOf(p)) {
				b.markField(keyOf(p), "status.podIP")
			}
		}
		p.Status.ContainerStatuses = nil
		p.Status.Phase = corev1.PodPending
		b.event(p, corev1.EventTypeWarning, "NetworkNotReady", componentKubelet, n.Name,
			"network is not ready: "+notReadyMessage)
	}
}

// containerFailed records the kubelet's Failed event for a container the
// runtime cannot run on the node: the pull error as the image puller words
// it (pkg/kubelet/images/image_manager.go), or the create error the
// runtime returns, "Error: " and the CRI message
// (pkg/kubelet/kuberuntime/kuberuntime_container.go startContainer). On
// Windows the OS build mismatch comes from HCS creating the container's
// compute system (hcsshim internal/hcs, ERROR_CONTAINER_OS_MISMATCH
// wording), through containerd's task create.
func (b *builder) containerFailed(p *corev1.Pod, n *corev1.Node, c corev1.Container, reason string) {
	msg := reason
	if isWindows(n) && reason == scheduler.MsgOSMismatch {
		// HCS names the compute system after the container's ID, random in
		// containerd: a stand-in.
		sum := sha256.Sum256([]byte(p.Namespace + "/" + p.Name + "/" + string(p.UID) + "/" + c.Name))
		msg = fmt.Sprintf("Error: failed to create containerd task: failed to create shim task: hcs::CreateComputeSystem %s: %s: unknown",
			hex.EncodeToString(sum[:]), reason)
	} else if !strings.HasPrefix(reason, "Failed to pull image") {
		msg = "Error: " + reason
	}
	b.event(p, corev1.EventTypeWarning, "Failed", componentKubelet, n.Name, msg)
}

// coreDegraded says whether the operator reports its calico component
// Degraded.
func coreDegraded(c *model.Cluster) bool {
	for _, ts := range c.TigeraStatuses {
		if ts.Name != "calico" {
			continue
		}
		for _, cond := range ts.Status.Conditions {
			if cond.Type == "Degraded" && cond.Status == "True" {
				return true
			}
		}
	}
	return false
}
