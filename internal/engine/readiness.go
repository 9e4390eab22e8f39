package engine

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine/controllers"
)

// The CNI's node agents: a node is Ready once its agent runs, because only
// then does the CNI configuration exist (seed 000: "NetworkPluginNotReady …
// cni plugin not initialized" until calico-node-windows has run).
var cniAgents = map[string]string{
	hybrid.OSLinux:   "calico-system/calico-node",
	hybrid.OSWindows: "calico-system/calico-node-windows",
}

const notReadyMessage = "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized"

// readiness sets the Ready condition of every derived node from the
// admitted DaemonSet pods, with the not-ready taints the node lifecycle
// controller keeps on a NotReady node (pkg/controller/nodelifecycle).
// Observed nodes keep their observed status.
func (b *builder) readiness(daemonPods []*corev1.Pod) {
	agentOn := map[string]bool{}
	for _, p := range daemonPods {
		_, owner := controllers.ControllerOf(p)
		if cniAgents[hybrid.OSLinux] == p.Namespace+"/"+owner || cniAgents[hybrid.OSWindows] == p.Namespace+"/"+owner {
			agentOn[p.Spec.NodeName] = true
		}
	}
	for _, h := range b.hosts {
		if h.observed != nil {
			continue
		}
		n := b.nodeByName(h.Name)
		if n == nil {
			continue
		}
		if b.hostFailure(n) {
			continue
		}
		if agentOn[n.Name] {
			n.Status.Conditions = []corev1.NodeCondition{{
				Type: corev1.NodeReady, Status: corev1.ConditionTrue,
				Reason: "KubeletReady", Message: "kubelet is posting ready status",
				LastHeartbeatTime: b.ref, LastTransitionTime: b.ref,
			}}
			continue
		}
		n.Status.Conditions = []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionFalse,
			Reason: "KubeletNotReady", Message: notReadyMessage,
			LastHeartbeatTime: b.ref, LastTransitionTime: b.ref,
		}}
		// The kubelet's first Ready condition differs from none: it records
		// the transition (pkg/kubelet/nodestatus/setters.go ReadyCondition).
		b.nodeEvent(n, corev1.EventTypeNormal, "NodeNotReady", fmt.Sprintf("Node %s status is now: NodeNotReady", n.Name))
		n.Spec.Taints = append(n.Spec.Taints,
			corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule},
			corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute, TimeAdded: &b.ref},
		)
	}
}
