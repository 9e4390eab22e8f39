package scheduler

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

func TestFitErrorMessages(t *testing.T) {
	cases := []struct {
		name  string
		pod   func() *corev1.Pod
		nodes func() []*corev1.Node
		state func() *State
		want  string
	}{
		{
			name:  "a Linux pod larger than any worker is refused by taints and cpu, and preemption cannot help anywhere",
			pod:   func() *corev1.Pod { return replica("demo", "big", 0, "3", "") },
			nodes: labNodes,
			want: "0/4 nodes are available: 2 Insufficient cpu, 2 node(s) had untolerated taint(s). " +
				"preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.",
		},
		{
			name:  "a Linux pod that would fit empty workers finds no lower-priority victims on the full ones",
			pod:   func() *corev1.Pod { return replica("demo", "big", 0, "1500m", "") },
			nodes: labNodes,
			state: func() *State {
				s := NewState()
				s.Add(replica("demo", "busy", 0, "1", ""), "k8s-lab-node-1")
				s.Add(replica("demo", "busy", 1, "1", ""), "k8s-lab-node-2")
				return s
			},
			want: "0/4 nodes are available: 2 Insufficient cpu, 2 node(s) had untolerated taint(s). " +
				"preemption: 0/4 nodes are available: 2 No preemption victims found for incoming pod, " +
				"2 Preemption is not helpful for scheduling.",
		},
		{
			name: "a pod with a windows nodeSelector and no toleration matches no Linux worker and is kept off the tainted nodes",
			pod: func() *corev1.Pod {
				p := replica("win-demo", "nosel", 0, "100m", "")
				p.Spec.NodeSelector = map[string]string{"kubernetes.io/os": "windows"}
				return p
			},
			nodes: labNodes,
			want: "0/4 nodes are available: 2 node(s) didn't match Pod's node affinity/selector, 2 node(s) had untolerated taint(s). " +
				"preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.",
		},
		{
			name:  "a Windows pod on a node already running its 60 allowed pods gets Too many pods",
			pod:   func() *corev1.Pod { return aspnetAdmitted(99) },
			nodes: labNodes,
			state: func() *State {
				s := NewState()
				for i := range 60 {
					small := aspnetAdmitted(i)
					small.Spec.Containers[0].Resources = requests("10m", "32Mi")
					s.Add(small, "k8s-lab-win-1")
				}
				return s
			},
			want: "0/4 nodes are available: 1 Too many pods, 1 node(s) had untolerated taint(s), 2 node(s) didn't match Pod's node affinity/selector. " +
				"preemption: 0/4 nodes are available: 1 No preemption victims found for incoming pod, " +
				"3 Preemption is not helpful for scheduling.",
		},
		{
			name: "a pod with preemptionPolicy Never is not eligible to preempt",
			pod: func() *corev1.Pod {
				p := replica("demo", "big", 0, "1500m", "")
				p.Spec.PreemptionPolicy = ptr.To(corev1.PreemptNever)
				return p
			},
			nodes: labNodes,
			state: func() *State {
				s := NewState()
				s.Add(replica("demo", "busy", 0, "1", ""), "k8s-lab-node-1")
				s.Add(replica("demo", "busy", 1, "1", ""), "k8s-lab-node-2")
				return s
			},
			want: "0/4 nodes are available: 2 Insufficient cpu, 2 node(s) had untolerated taint(s). " +
				"preemption: not eligible due to preemptionPolicy=Never.",
		},
		{
			name: "a NotReady Windows node is tainted not-ready even before the controller writes the taint",
			pod:  func() *corev1.Pod { return aspnetAdmitted(0) },
			nodes: func() []*corev1.Node {
				nodes := labNodes()
				nodeNamed(nodes, "k8s-lab-win-1").Status.Conditions[0].Status = corev1.ConditionFalse
				return nodes
			},
			want: "0/4 nodes are available: 2 node(s) didn't match Pod's node affinity/selector, 2 node(s) had untolerated taint(s). " +
				"preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.",
		},
		{
			name: "a cordoned worker and a host port already taken on the other are reported by their own plugins",
			pod: func() *corev1.Pod {
				p := replica("demo", "web", 0, "", "")
				p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
				return p
			},
			nodes: func() []*corev1.Node {
				nodes := labNodes()
				nodeNamed(nodes, "k8s-lab-node-1").Spec.Unschedulable = true
				return nodes
			},
			state: func() *State {
				s := NewState()
				other := replica("demo", "proxy", 0, "", "")
				other.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 8080, HostPort: 8080}}
				s.Add(other, "k8s-lab-node-2")
				return s
			},
			want: "0/4 nodes are available: 1 node(s) didn't have free ports for the requested pod ports, 1 node(s) were unschedulable, " +
				"2 node(s) had untolerated taint(s). preemption: 0/4 nodes are available: " +
				"1 No preemption victims found for incoming pod, 3 Preemption is not helpful for scheduling.",
		},
		{
			name:  "a cluster without nodes says so",
			pod:   func() *corev1.Pod { return replica("demo", "x", 0, "", "") },
			nodes: func() []*corev1.Node { return nil },
			want:  "no nodes available to schedule pods",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var state *State
			if tc.state != nil {
				state = tc.state()
			}
			node, fe := Schedule(tc.pod(), tc.nodes(), state)
			if fe == nil {
				t.Fatalf("scheduled on %s, want a FitError", node)
			}
			if got := fe.Error(); got != tc.want {
				t.Errorf("message differs\n got: %s\nwant: %s", got, tc.want)
			}
		})
	}
}

func TestFitErrorDetailsNameWhatTheMessageHides(t *testing.T) {
	_, fe := Schedule(replica("demo", "big", 0, "3", ""), labNodes(), nil)
	want := map[string]string{
		"k8s-lab-master-1": "untolerated taint node-role.kubernetes.io/control-plane:NoSchedule",
		"k8s-lab-win-1":    "untolerated taint os=windows:NoSchedule",
		"k8s-lab-node-1":   "cpu requested 3000, used 0 of 2000",
	}
	for node, d := range want {
		if fe.Details[node] != d {
			t.Errorf("%s: detail %q, want %q", node, fe.Details[node], d)
		}
	}
}

func TestPreemptionNominatesANodeWhenLowerPriorityPodsMakeRoom(t *testing.T) {
	s := NewState()
	s.Add(replica("demo", "filler", 0, "1", ""), "k8s-lab-node-1")
	s.Add(replica("demo", "filler", 1, "500m", ""), "k8s-lab-node-1")
	s.Add(replica("demo", "filler", 2, "1", ""), "k8s-lab-node-2")
	s.Add(replica("demo", "filler", 3, "1", ""), "k8s-lab-node-2")
	pod := replica("demo", "redis", 0, "1", "")
	pod.Spec.Priority = ptr.To[int32](1000)
	_, fe := Schedule(pod, labNodes(), s)
	if fe == nil {
		t.Fatal("want a FitError")
	}
	want := "0/4 nodes are available: 2 Insufficient cpu, 2 node(s) had untolerated taint(s). preemption: found a potential placement for pod on node k8s-lab-node-1, preempting 1 victims"
	if fe.Error() != want {
		t.Errorf("got %s\nwant %s", fe.Error(), want)
	}
	// Reprieving in name order keeps filler-0 on node-1 and filler-2 on
	// node-2; one priority-0 victim each, so the name decides.
	if fe.NominatedNode != "k8s-lab-node-1" || !slices.Equal(fe.Victims, []string{"demo/filler-1"}) {
		t.Errorf("nominated %s with victims %v", fe.NominatedNode, fe.Victims)
	}
}

func TestScheduleSpreadsReplicasLikeTheSeedObserved(t *testing.T) {
	// Seed 000: hello's two replicas landed on k8s-lab-node-1 and -2; the
	// aspnetapp replicas both on the Windows node.
	nodes := labNodes()
	s := NewState()
	var got []string
	for i := range 2 {
		p := replica("demo", "hello-55fb8f8684", i, "100m", "32Mi")
		n, fe := Schedule(p, nodes, s)
		if fe != nil {
			t.Fatal(fe)
		}
		s.Add(p, n)
		got = append(got, n)
	}
	for i := range 2 {
		p := aspnetAdmitted(i)
		n, fe := Schedule(p, nodes, s)
		if fe != nil {
			t.Fatal(fe)
		}
		s.Add(p, n)
		got = append(got, n)
	}
	want := []string{"k8s-lab-node-1", "k8s-lab-node-2", "k8s-lab-win-1", "k8s-lab-win-1"}
	if !slices.Equal(got, want) {
		t.Errorf("placements %v, want %v", got, want)
	}
	if len(s.Pods("k8s-lab-win-1")) != 2 {
		t.Errorf("state should hold both Windows replicas")
	}
}

func TestScoringOrder(t *testing.T) {
	cases := []struct {
		name  string
		pod   func() *corev1.Pod
		nodes func() []*corev1.Node
		state func() *State
		want  string
	}{
		{
			name:  "an unrelated pod goes to the less loaded worker",
			pod:   func() *corev1.Pod { return replica("demo", "solo", 0, "100m", "") },
			nodes: labNodes,
			state: func() *State {
				s := NewState()
				s.Add(replica("demo", "other", 0, "1", "1Gi"), "k8s-lab-node-1")
				return s
			},
			want: "k8s-lab-node-2",
		},
		{
			// PodTopologySpread's default constraints (hostname, maxSkew 3)
			// outweigh LeastAllocated here.
			name:  "spreading by owner wins over load",
			pod:   func() *corev1.Pod { return replica("demo", "web", 1, "100m", "") },
			nodes: labNodes,
			state: func() *State {
				s := NewState()
				s.Add(replica("demo", "web", 0, "100m", ""), "k8s-lab-node-2")
				s.Add(replica("demo", "other", 0, "1", "1Gi"), "k8s-lab-node-1")
				return s
			},
			want: "k8s-lab-node-1",
		},
		{
			name: "a PreferNoSchedule taint breaks a tie",
			pod:  func() *corev1.Pod { return replica("demo", "solo", 0, "100m", "") },
			nodes: func() []*corev1.Node {
				nodes := labNodes()
				n := nodeNamed(nodes, "k8s-lab-node-1")
				n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "maintenance", Effect: corev1.TaintEffectPreferNoSchedule})
				return nodes
			},
			want: "k8s-lab-node-2",
		},
		{
			name: "preferred node affinity breaks a tie",
			pod: func() *corev1.Pod {
				p := replica("demo", "solo", 0, "100m", "")
				p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
					PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
						Weight: 10,
						Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{
							Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: []string{"k8s-lab-node-2"},
						}}},
					}},
				}}
				return p
			},
			nodes: labNodes,
			want:  "k8s-lab-node-2",
		},
		{
			name: "required node affinity with NotIn and a toleration can target the control plane",
			pod: func() *corev1.Pod {
				p := replica("kube-system", "coredns", 0, "100m", "70Mi")
				p.Spec.Tolerations = []corev1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
				p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
					RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
						MatchExpressions: []corev1.NodeSelectorRequirement{
							{Key: "kubernetes.io/os", Operator: corev1.NodeSelectorOpIn, Values: []string{"linux"}},
							{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"k8s-lab-node-1", "k8s-lab-node-2"}},
						},
					}}},
				}}
				return p
			},
			nodes: labNodes,
			want:  "k8s-lab-master-1",
		},
		{
			name: "a pod already bound by nodeName is not filtered",
			pod: func() *corev1.Pod {
				p := replica("demo", "pinned", 0, "100", "")
				p.Spec.NodeName = "k8s-lab-master-1"
				return p
			},
			nodes: labNodes,
			want:  "k8s-lab-master-1",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var state *State
			if tc.state != nil {
				state = tc.state()
			}
			got, fe := Schedule(tc.pod(), tc.nodes(), state)
			if fe != nil {
				t.Fatalf("unexpected FitError: %v", fe)
			}
			if got != tc.want {
				t.Errorf("scheduled on %s, want %s", got, tc.want)
			}
		})
	}
}

func TestRequiredAffinityOperators(t *testing.T) {
	node := labNode("n", "linux", "2", "4Gi", 110)
	node.Labels["gen"] = "5"
	cases := []struct {
		name string
		req  corev1.NodeSelectorRequirement
		want bool
	}{
		{"Exists matches a present label", corev1.NodeSelectorRequirement{Key: "gen", Operator: corev1.NodeSelectorOpExists}, true},
		{"DoesNotExist fails on a present label", corev1.NodeSelectorRequirement{Key: "gen", Operator: corev1.NodeSelectorOpDoesNotExist}, false},
		{"NotIn matches an absent label", corev1.NodeSelectorRequirement{Key: "zone", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"a"}}, true},
		{"Gt compares numerically", corev1.NodeSelectorRequirement{Key: "gen", Operator: corev1.NodeSelectorOpGt, Values: []string{"4"}}, true},
		{"Lt compares numerically", corev1.NodeSelectorRequirement{Key: "gen", Operator: corev1.NodeSelectorOpLt, Values: []string{"4"}}, false},
		{"Gt with a non-number matches nothing", corev1.NodeSelectorRequirement{Key: "gen", Operator: corev1.NodeSelectorOpGt, Values: []string{"x"}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{tc.req},
				}}},
			}}}}
			if got := matchesRequiredAffinity(pod, node); got != tc.want {
				t.Errorf("match = %v, want %v", got, tc.want)
			}
		})
	}
	byName := &corev1.Pod{Spec: corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
			{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"other"}}}},
			{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n"}}}},
		}},
	}}}}
	if !matchesRequiredAffinity(byName, node) {
		t.Error("terms are ORed: the second metadata.name term should match")
	}
}

func TestPodRequests(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{
			{Name: "sidecar", RestartPolicy: &always, Resources: requests("200m", "")},
			{Name: "migrate", Resources: requests("2", "")},
		},
		Containers: []corev1.Container{
			{Name: "app", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("64Mi")}}},
			{Name: "log", Resources: requests("100m", "32Mi")},
		},
		Overhead: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")},
	}}
	r := podRequests(pod)
	// Limits stand in for missing requests: 500m+100m+200m sidecar = 800m
	// against the 2 cpu init container plus the sidecar before it (2200m);
	// then overhead.
	if r.milliCPU != 2250 || r.memory != (64+32)*1024*1024 {
		t.Errorf("requests cpu=%dm memory=%d", r.milliCPU, r.memory)
	}
}

func TestFitErrorReasonsSortAsStrings(t *testing.T) {
	fe := &FitError{NumAllNodes: 12, Reasons: map[string][]string{}}
	for i := range 10 {
		fe.Reasons[strings.Repeat("a", i+1)] = []string{"Insufficient memory"}
	}
	fe.Reasons["x"] = []string{ReasonUntoleratedTaint}
	fe.Reasons["y"] = []string{ReasonUntoleratedTaint}
	want := "0/12 nodes are available: 10 Insufficient memory, 2 node(s) had untolerated taint(s)."
	if fe.Error() != want {
		t.Errorf("got %s", fe.Error())
	}
}
