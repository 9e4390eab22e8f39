package migrate

import (
	"os"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/calico/calicoctl"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/diff"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plan"
)

const mainCluster = "../../../examples/main-cluster"

func migrate(t *testing.T, req Request, files ...string) *Plan {
	t.Helper()
	m, err := Compute(input(t, false, files...), req)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func step(t *testing.T, m *Plan, id string) *Step {
	t.Helper()
	for i := range m.Steps {
		if m.Steps[i].ID == id {
			return &m.Steps[i]
		}
	}
	t.Fatalf("no step %s in %v", id, stepIDs(m))
	return nil
}

func stepIDs(m *Plan) []string {
	var out []string
	for _, s := range m.Steps {
		out = append(out, s.ID)
	}
	return out
}

func expectOf(t *testing.T, s *Step, prefix string) string {
	t.Helper()
	for _, v := range s.Verify {
		if strings.HasPrefix(v.Command, prefix) {
			return v.Expect
		}
	}
	t.Fatalf("step %s has no check %q", s.ID, prefix)
	return ""
}

func TestTheMainClusterMigratesStrictAffinityThenEncapsulationThenBGPThroughTheInstallation(t *testing.T) {
	m := migrate(t, Request{Diff: diff.Options{NoReach: true}}, mainCluster)
	got := strings.Join(stepIDs(m), ",")
	if !strings.HasPrefix(got, "strict-affinity,encapsulation,bgp,") {
		t.Fatalf("steps %s, want strict-affinity, encapsulation and bgp first, in that order", got)
	}
	for _, s := range m.Steps {
		for _, c := range s.Commands {
			if strings.Contains(c, "ippool") {
				t.Errorf("step %s edits a pool directly: %s", s.ID, c)
			}
		}
	}
	for id, want := range map[string]string{
		StepStrictAffinity: "kubectl patch ipamconfigurations default",
		StepEncapsulation:  "kubectl patch installation default",
		StepBGP:            "kubectl patch installation default",
	} {
		if c := step(t, m, id).Commands; len(c) != 1 || !strings.HasPrefix(c[0], want) {
			t.Errorf("step %s runs %q, want %s…", id, c, want)
		}
	}
	for i, s := range m.Steps {
		if want := strings.TrimPrefix(s.File, s.File[:3]); want != s.ID+".yaml" || s.File[:2] != []string{"01", "02", "03", "04", "05"}[i] {
			t.Errorf("step %d file %s", i+1, s.File)
		}
	}
}

// The twin's own route compilation after the step, against the two lines
// the seed prints (kept beside the test; iproute2 ends each line with a
// space, which the article dropped).
func TestAfterTheEncapsulationStepNode1RoutesToItsNeighboursThroughVXLANAsTheSeedShows(t *testing.T) {
	m := migrate(t, Request{Diff: diff.Options{NoReach: true}}, mainCluster)
	got := expectOf(t, step(t, m, StepEncapsulation), "ip route | grep vxlan")
	seed, err := os.ReadFile("testdata/seed-node-1-vxlan-routes.txt")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(got, "\n"), "\n") {
		lines = append(lines, strings.TrimRight(l, " "))
	}
	if strings.Join(lines, "\n")+"\n" != string(seed) {
		t.Errorf("ip route | grep vxlan on k8s-node-1:\n%s\nwant:\n%s", got, seed)
	}
	// Before the step the same command finds nothing: the routes went
	// through ens18 (CrossSubnet within one subnet).
	base := diff.NewTwin(input(t, false, mainCluster).Cluster)
	if before := routesGrep(base, "k8s-node-1", "vxlan"); before != "" {
		t.Errorf("before the migration node-1 already routes through vxlan:\n%s", before)
	}
}

func TestAfterTheBGPStepCalicoNodeRunsTheVXLANBackendWithTheFelixOnlyProbeAndNoBGP(t *testing.T) {
	m := migrate(t, Request{Diff: diff.Options{NoReach: true}}, mainCluster)
	s := step(t, m, StepBGP)
	var ds *appsv1.DaemonSet
	for _, d := range s.Cluster.DaemonSets {
		if d.Namespace == "calico-system" && d.Name == "calico-node" {
			ds = d
		}
	}
	if ds == nil {
		t.Fatal("no calico-node DaemonSet after the BGP step")
	}
	ctr := ds.Spec.Template.Spec.Containers[0]
	backend := ""
	for _, e := range ctr.Env {
		if e.Name == "CALICO_NETWORKING_BACKEND" {
			backend = e.Value
		}
	}
	if backend != "vxlan" {
		t.Errorf("backend %q, want vxlan", backend)
	}
	if ctr.ReadinessProbe == nil || ctr.ReadinessProbe.Exec == nil ||
		strings.Join(ctr.ReadinessProbe.Exec.Command, " ") != "/usr/bin/calico component node health --felix-ready" {
		t.Errorf("readiness probe %+v, want the Felix-only one", ctr.ReadinessProbe)
	}
	if got := expectOf(t, s, "kubectl -n calico-system get ds calico-node"); got != "vxlan\n[\"/usr/bin/calico\",\"component\",\"node\",\"health\",\"--felix-ready\"]" {
		t.Errorf("the jsonpath check predicts %q", got)
	}
	status := expectOf(t, s, "sudo calicoctl node status")
	if status != "Calico process is running.\n\nNone of the BGP backend processes (BIRD or GoBGP) are running.\n" {
		t.Errorf("calicoctl node status after the BGP step:\n%s", status)
	}
	// The step before still runs BIRD with the mesh.
	enc := step(t, m, StepEncapsulation).Cluster
	before, _, _ := calicoctl.NodeStatus(enc, "k8s-node-1")
	if !strings.Contains(before, "| 192.168.10.17 | node-to-node mesh | up    |") || !strings.Contains(before, "| 192.168.10.21 | node-to-node mesh | up    |") {
		t.Errorf("calicoctl node status before the BGP step:\n%s", before)
	}
	if !strings.Contains(s.Disruption, "calico-system/calico-node restarts 3 pod(s)") {
		t.Errorf("disruption %q does not name calico-node's rollout", s.Disruption)
	}
}

func TestTheMigratedMainClusterPassesJoinWindowsWithNoBlockingFinding(t *testing.T) {
	m := migrate(t, Request{Diff: diff.Options{NoReach: true}}, mainCluster)
	if len(m.After) != 0 {
		t.Errorf("check --expect-windows on the migrated twin: %+v", m.After)
	}
	b, err := plan.Compute(plan.Input{Cluster: m.Final, Snapshot: m.FinalSnapshot},
		plan.Request{Nodes: []plan.NodeRequest{{Name: "k8s-win-1", Address: "192.168.10.40", CPU: "4", Memory: "8Gi"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range b.Findings {
		if f.Blocking {
			t.Errorf("blocking finding after the migration: %s %s", f.ID, f.Message)
		}
	}
	if b.Refused {
		t.Error("join-windows refuses the migrated cluster")
	}
}

// The step files stack: -f base -f 01 … -f 05 builds the migrated twin.
func TestTheStepFilesStackOnTheInputToTheMigratedCluster(t *testing.T) {
	m := migrate(t, Request{Diff: diff.Options{NoReach: true}}, mainCluster)
	dir := t.TempDir()
	files := []string{mainCluster}
	for name, body := range Files(m) {
		if err := os.WriteFile(dir+"/"+name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range m.Steps {
		files = append(files, dir+"/"+s.File)
	}
	got := input(t, false, files...).Cluster
	if got.IPPools[0].Spec.VXLANMode != "Always" || *got.Installation.Spec.CalicoNetwork.BGP != "Disabled" ||
		!got.IPAMConfig.Spec.StrictAffinity || *got.Installation.Spec.CalicoNetwork.WindowsDataplane != "HNS" {
		t.Errorf("the stacked files give pool %s, bgp %s, strictAffinity %t", got.IPPools[0].Spec.VXLANMode,
			*got.Installation.Spec.CalicoNetwork.BGP, got.IPAMConfig.Spec.StrictAffinity)
	}
	if d, err := diff.Compare(m.Final, got, diff.Options{NoReach: true}); err != nil || !d.Empty() {
		var b strings.Builder
		if d != nil {
			_ = d.WriteText(&b)
		}
		t.Errorf("the stacked files differ from the plan's final twin (%v):\n%s", err, b.String())
	}
}

func TestTheLabAlreadyMigratedNeedsNoStep(t *testing.T) {
	m := migrate(t, Request{}, "../../../examples/lab")
	if len(m.Steps) != 0 {
		t.Errorf("the lab gets steps %v", stepIDs(m))
	}
	if len(m.After) != 0 {
		t.Errorf("the lab fails check --expect-windows: %+v", m.After)
	}
}

func TestAClusterLackingOnlyStrictAffinityGetsOnlyThatStep(t *testing.T) {
	m := migrate(t, Request{Diff: diff.Options{NoReach: true}}, "../../../examples/lab", "../../../examples/what-if/no-strict-affinity.yaml")
	if got := strings.Join(stepIDs(m), ","); got != StepStrictAffinity {
		t.Errorf("steps %s, want only strict-affinity", got)
	}
}

func TestATargetFileChoosesTheSteps(t *testing.T) {
	cases := []struct {
		name, doc string
		want      string
		err       string
	}{
		{"an IPAMConfiguration alone sets strictAffinity only",
			"apiVersion: projectcalico.org/v3\nkind: IPAMConfiguration\nmetadata:\n  name: default\nspec:\n  strictAffinity: true\n",
			StepStrictAffinity, ""},
		{"an Installation with VXLAN and BGP off changes the pool and BGP, not Windows",
			"apiVersion: operator.tigera.io/v1\nkind: Installation\nmetadata:\n  name: default\nspec:\n  calicoNetwork:\n    bgp: Disabled\n    ipPools:\n    - name: default-ipv4-ippool\n      cidr: 172.20.0.0/16\n      encapsulation: VXLAN\n",
			"encapsulation,bgp", ""},
		{"a field the plan does not change is refused",
			"apiVersion: operator.tigera.io/v1\nkind: Installation\nmetadata:\n  name: default\nspec:\n  calicoNetwork:\n    linuxDataplane: BPF\n",
			"", "calicoNetwork.linuxDataplane"},
		{"a pool the cluster does not have is refused",
			"apiVersion: operator.tigera.io/v1\nkind: Installation\nmetadata:\n  name: default\nspec:\n  calicoNetwork:\n    ipPools:\n    - name: other\n      cidr: 10.10.0.0/16\n      encapsulation: VXLAN\n",
			"", "is not in the cluster's Installation"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := load.DecodeDocuments(strings.NewReader(tc.doc), "to.yaml")
			if err != nil {
				t.Fatal(err)
			}
			to := targetFrom(objs)
			m, err := Compute(input(t, false, mainCluster), Request{To: to, Diff: diff.Options{NoReach: true}})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one naming %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(stepIDs(m), ","); got != tc.want {
				t.Errorf("steps %s, want %s", got, tc.want)
			}
		})
	}
}

func TestADirectPoolEditThatTheOperatorRevertsIsWarned(t *testing.T) {
	edit := t.TempDir() + "/pool.yaml"
	doc := "apiVersion: projectcalico.org/v3\nkind: IPPool\nmetadata:\n  name: default-ipv4-ippool\n  labels:\n    app.kubernetes.io/managed-by: tigera-operator\nspec:\n  cidr: 172.20.0.0/16\n  blockSize: 26\n  vxlanMode: Always\n  ipipMode: Never\n  natOutgoing: true\n  nodeSelector: all()\n"
	if err := os.WriteFile(edit, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	m := migrate(t, Request{Diff: diff.Options{NoReach: true}}, mainCluster, edit)
	found := false
	for _, f := range m.Preflight {
		if f.ID == MigPoolEdit && strings.Contains(f.Message, "vxlanMode Always (Installation: CrossSubnet)") {
			found = true
		}
	}
	if !found {
		t.Errorf("no warning of the direct pool edit in %+v", m.Preflight)
	}
	// The encapsulation step is still planned: the edit does not last.
	step(t, m, StepEncapsulation)
}

func TestAPodOnAnotherNodesBlockIsABorrowedAddress(t *testing.T) {
	c := input(t, false, mainCluster).Cluster
	var pod = c.Pods[0]
	for _, p := range c.Pods {
		if !p.Spec.HostNetwork && p.Spec.NodeName == "k8s-node-1" {
			pod = p
		}
	}
	pod = pod.DeepCopy()
	pod.Spec.NodeName = "k8s-node-2" // its address is in node-1's block
	if got := borrowed(&model.Cluster{Pods: append(c.Pods, pod), IPAMBlocks: c.IPAMBlocks}); len(got) != 1 || !strings.Contains(got[0].Message, "borrowed from k8s-node-1's block") {
		t.Errorf("borrowed: %+v", got)
	}
}

// targetFrom is what --to reads from the documents.
func targetFrom(objs []*model.Object) *Target {
	snap := &model.Snapshot{Objects: objs}
	to := &Target{Source: "to.yaml", IPAM: inputIPAM(snap)}
	for _, o := range objs {
		if o.GVK.Kind == "Installation" {
			to.Installation = inputInstallation(nil, snap)
		}
	}
	return to
}

func TestAnIPBlockNamingNodeAddressesAsksForTheTunnelAddresses(t *testing.T) {
	np := t.TempDir() + "/np.yaml"
	doc := "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: from-nodes\n  namespace: default\nspec:\n  podSelector: {}\n  ingress:\n  - from:\n    - ipBlock:\n        cidr: 192.168.10.20/32\n"
	if err := os.WriteFile(np, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	m := migrate(t, Request{Diff: diff.Options{NoReach: true}}, mainCluster, np)
	var got []string
	for _, f := range m.Preflight {
		if f.ID == MigIPBlock {
			got = append(got, f.Object+": "+f.Message)
		}
	}
	tunnel := ""
	for _, n := range m.Final.Nodes {
		if n.Name == "k8s-node-1" {
			tunnel = n.Annotations["projectcalico.org/IPv4VXLANTunnelAddr"]
		}
	}
	if tunnel == "" || len(got) != 1 || !strings.Contains(got[0], "k8s-node-1 192.168.10.20 → add "+tunnel+"/32") || strings.Contains(got[0], "k8s-node-2") {
		t.Errorf("ipBlock findings %q (node-1's tunnel address %q)", got, tunnel)
	}
}

// Over the whole migration pods keep reaching each other: only the source
// address of host-network traffic changes, which no pod-to-pod cell sees.
func TestTheWholeMigrationChangesNoPodToPodReachability(t *testing.T) {
	in := input(t, false, mainCluster)
	m, err := Compute(in, Request{Diff: diff.Options{NoReach: true}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := diff.Compare(in.Cluster, m.Final, diff.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Reach == nil {
		t.Fatal("no reachability difference computed")
	}
	for _, c := range d.Reach.Changes {
		if !strings.HasPrefix(c.From, "node/") {
			t.Errorf("pod-to-pod reachability changes: %s -> %s:%d %s (%s -> %s)", c.From, c.To, c.Port, c.Effect, c.Before.Verdict, c.After.Verdict)
		}
	}
}

func TestAFirewallBlockingVXLANBlocksTheMigrationInPreflight(t *testing.T) {
	raw, err := os.ReadFile(mainCluster + "/00-cluster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	blocked := strings.Replace(string(raw), "  network:\n", "  network:\n    firewall:\n      - name: no-vxlan\n        hosts: [k8s-node-2]\n        protocol: UDP\n        ports: [4789]\n        action: Block\n", 1)
	f := t.TempDir() + "/00-cluster.yaml"
	if err := os.WriteFile(f, []byte(blocked), 0o644); err != nil {
		t.Fatal(err)
	}
	m := migrate(t, Request{Diff: diff.Options{NoReach: true}}, mainCluster, f)
	var got []plan.Finding
	for _, p := range m.Preflight {
		if p.ID == MigVXLANPort && p.Blocking {
			got = append(got, p)
		}
	}
	if len(got) == 0 || !strings.Contains(got[0].Message, "k8s-node-2") {
		t.Errorf("blocking VXLAN findings %+v", got)
	}
}
