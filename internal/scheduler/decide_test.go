package scheduler

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// named aims p at nodes by metadata.name requirements in one term, as the
// DaemonSet controller does with one.
func named(p *corev1.Pod, names ...string) *corev1.Pod {
	var reqs []corev1.NodeSelectorRequirement
	for _, n := range names {
		reqs = append(reqs, corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{n}})
	}
	p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: reqs}},
	}}}
	return p
}

func hostPortPod(name string, port int32, sidecar bool) *corev1.Pod {
	p := replica("demo", name, 0, "100m", "")
	p.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": "k8s-lab-node-1"}
	c := corev1.Container{Name: "c", Image: "x", Ports: []corev1.ContainerPort{{ContainerPort: port, HostPort: port}}}
	if sidecar {
		c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
		p.Spec.InitContainers = []corev1.Container{c}
	} else {
		p.Spec.Containers = append(p.Spec.Containers, c)
	}
	return p
}

const notHelpful = " preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."

func TestDecide(t *testing.T) {
	cases := []struct {
		name  string
		pod   func() *corev1.Pod
		state func() *State
		// node and candidates when bound; reason and message when not.
		node       string
		candidates []string
		reason     string
		message    string
		nominated  string
		noAnswer   bool
	}{
		{
			name:       "a pod aimed at one node by metadata.name is filtered on that node only",
			pod:        func() *corev1.Pod { return named(replica("demo", "ds", 0, "100m", ""), "k8s-lab-node-2") },
			node:       "k8s-lab-node-2",
			candidates: []string{"k8s-lab-node-2"},
		},
		{
			name:    "a pod aimed at the Windows node without the toleration counts the other nodes under NodeAffinity",
			pod:     func() *corev1.Pod { return named(replica("demo", "ds", 0, "100m", ""), "k8s-lab-win-1") },
			reason:  corev1.PodReasonUnschedulable,
			message: "0/4 nodes are available: 1 node(s) had untolerated taint(s), 3 node(s) didn't satisfy plugin(s) [NodeAffinity]." + notHelpful,
		},
		{
			name:    "a pod aimed at a node that does not exist finds every node left out",
			pod:     func() *corev1.Pod { return named(replica("demo", "ds", 0, "100m", ""), "k8s-lab-node-9") },
			reason:  corev1.PodReasonUnschedulable,
			message: "0/4 nodes are available: 4 node(s) didn't satisfy plugin(s) [NodeAffinity]." + notHelpful,
		},
		{
			name: "metadata.name requirements no node meets together are a PreFilter conflict, and the PostFilter step fails reading its state",
			pod: func() *corev1.Pod {
				return named(replica("demo", "ds", 0, "100m", ""), "k8s-lab-node-1", "k8s-lab-node-2")
			},
			reason:  corev1.PodReasonUnschedulable,
			message: "0/4 nodes are available: pod affinity terms conflict. not found",
		},
		{
			name: "a claim that does not exist keeps the pod Pending",
			pod: func() *corev1.Pod {
				p := replica("demo", "db", 0, "100m", "")
				p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}
				return p
			},
			state:   func() *State { s := NewState(); s.SetClaims([]string{"demo/other"}); return s },
			reason:  corev1.PodReasonUnschedulable,
			message: `0/4 nodes are available: persistentvolumeclaim "data" not found. not found`,
		},
		{
			name: "a pod with scheduling gates waits with the SchedulingGated condition",
			pod: func() *corev1.Pod {
				p := replica("demo", "gated", 0, "100m", "")
				p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/wait"}}
				return p
			},
			reason:  corev1.PodReasonSchedulingGated,
			message: "Scheduling is blocked due to non-empty scheduling gates",
		},
		{
			name: "a pod for another scheduler gets no condition",
			pod: func() *corev1.Pod {
				p := replica("demo", "mine", 0, "100m", "")
				p.Spec.SchedulerName = "my-scheduler"
				return p
			},
			noAnswer: true,
		},
		{
			name: "a Succeeded pod on the node holds no cpu",
			pod: func() *corev1.Pod {
				p := replica("demo", "next", 0, "1500m", "")
				p.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": "k8s-lab-node-1"}
				return p
			},
			state: func() *State {
				s := NewState()
				done := replica("demo", "done", 0, "1800m", "")
				done.Status.Phase = corev1.PodSucceeded
				s.Add(done, "k8s-lab-node-1")
				return s
			},
			node:       "k8s-lab-node-1",
			candidates: []string{"k8s-lab-node-1"},
		},
		{
			name: "a sidecar's host port is taken on its node",
			pod:  func() *corev1.Pod { return hostPortPod("plain", 15000, false) },
			state: func() *State {
				s := NewState()
				s.Add(hostPortPod("side", 15000, true), "k8s-lab-node-1")
				return s
			},
			reason: corev1.PodReasonUnschedulable,
			message: "0/4 nodes are available: 1 node(s) didn't have free ports for the requested pod ports, 1 node(s) didn't match Pod's node affinity/selector, 2 node(s) had untolerated taint(s)." +
				" preemption: 0/4 nodes are available: 1 No preemption victims found for incoming pod, 3 Preemption is not helpful for scheduling.",
		},
		{
			name: "preemption that finds room nominates the node and says so",
			pod: func() *corev1.Pod {
				p := replica("demo", "urgent", 0, "1", "")
				p.Spec.Priority = ptr.To[int32](1000)
				return p
			},
			state: func() *State {
				s := NewState()
				s.Add(replica("demo", "low", 0, "1500m", ""), "k8s-lab-node-1")
				mid := replica("demo", "mid", 0, "1500m", "")
				mid.Spec.Priority = ptr.To[int32](100)
				s.Add(mid, "k8s-lab-node-2")
				return s
			},
			reason:    corev1.PodReasonUnschedulable,
			message:   "0/4 nodes are available: 2 Insufficient cpu, 2 node(s) had untolerated taint(s). preemption: found a potential placement for pod on node k8s-lab-node-1, preempting 1 victims",
			nominated: "k8s-lab-node-1",
		},
		{
			name:       "two equal workers are both candidates",
			pod:        func() *corev1.Pod { return replica("demo", "web", 0, "100m", "64Mi") },
			node:       "k8s-lab-node-1",
			candidates: []string{"k8s-lab-node-1", "k8s-lab-node-2"},
		},
		{
			name: "balanced allocation sends a cpu-heavy pod where memory is used",
			pod:  func() *corev1.Pod { return replica("demo", "cruncher", 0, "800m", "100Mi") },
			state: func() *State {
				s := NewState()
				s.Add(replica("demo", "cpu-user", 0, "1", "100Mi"), "k8s-lab-node-1")
				s.Add(replica("demo", "mem-user", 0, "100m", "1900Mi"), "k8s-lab-node-2")
				return s
			},
			node:       "k8s-lab-node-2",
			candidates: []string{"k8s-lab-node-2"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			state := NewState()
			if tc.state != nil {
				state = tc.state()
			}
			o := Decide(tc.pod(), labNodes(), state)
			if o.NoAnswer != tc.noAnswer {
				t.Fatalf("NoAnswer %v, want %v", o.NoAnswer, tc.noAnswer)
			}
			if o.Node != tc.node || !slices.Equal(o.Candidates, tc.candidates) {
				t.Errorf("node %q candidates %v, want %q %v", o.Node, o.Candidates, tc.node, tc.candidates)
			}
			var reason, message string
			if o.Condition != nil {
				reason, message = o.Condition.Reason, o.Condition.Message
			}
			if reason != tc.reason || message != tc.message {
				t.Errorf("condition %s: %s\nwant      %s: %s", reason, message, tc.reason, tc.message)
			}
			if o.NominatedNode != tc.nominated {
				t.Errorf("nominated %q, want %q", o.NominatedNode, tc.nominated)
			}
		})
	}
}
