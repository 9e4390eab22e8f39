package integration

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/scheduler"
)

// A scenario is one file of testdata/scheduling: Nodes (the base nodes of
// 00-nodes.yaml when the file has none), PriorityClasses,
// PersistentVolumeClaims, ReplicaSets and Pods, created in that order, the pods one at a
// time, each after the scheduler has answered for the one before.
type scenario struct {
	name    string
	nodes   []*corev1.Node
	classes []*schedulingv1.PriorityClass
	claims  []*corev1.PersistentVolumeClaim
	// replicaSets are created for their selectors only (no controller
	// manager runs): PodTopologySpread's default constraints select with
	// them. Pods name theirs in ownerReferences; the uid is filled in.
	replicaSets []*appsv1.ReplicaSet
	pods        []*corev1.Pod
}

const schedNamespace = "sched"

func readScenarios(t *testing.T) []scenario {
	t.Helper()
	dir := filepath.Join("testdata", "scheduling")
	base, err := readScenario(filepath.Join(dir, "00-nodes.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(paths)
	var out []scenario
	for _, p := range paths {
		if filepath.Base(p) == "00-nodes.yaml" {
			continue
		}
		sc, err := readScenario(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(sc.nodes) == 0 {
			sc.nodes = base.nodes
		}
		if len(sc.pods) == 0 {
			t.Fatalf("%s: no pods", p)
		}
		out = append(out, sc)
	}
	return out
}

func readScenario(path string) (scenario, error) {
	sc := scenario{name: strings.TrimSuffix(filepath.Base(path), ".yaml")}
	data, err := os.ReadFile(path)
	if err != nil {
		return sc, err
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return sc, fmt.Errorf("%s: %w", path, err)
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return sc, fmt.Errorf("%s: %w", path, err)
		}
		var obj any
		switch meta.Kind {
		case "":
			continue
		case "Node":
			n := &corev1.Node{}
			sc.nodes, obj = append(sc.nodes, n), n
		case "PriorityClass":
			c := &schedulingv1.PriorityClass{}
			sc.classes, obj = append(sc.classes, c), c
		case "PersistentVolumeClaim":
			c := &corev1.PersistentVolumeClaim{}
			sc.claims, obj = append(sc.claims, c), c
		case "Pod":
			p := &corev1.Pod{}
			sc.pods, obj = append(sc.pods, p), p
		case "ReplicaSet":
			rs := &appsv1.ReplicaSet{}
			sc.replicaSets, obj = append(sc.replicaSets, rs), rs
		default:
			return sc, fmt.Errorf("%s: kind %s is not part of a scenario", path, meta.Kind)
		}
		if err := yaml.UnmarshalStrict(doc, obj); err != nil {
			return sc, fmt.Errorf("%s: %w", path, err)
		}
	}
	return sc, nil
}

// schedCluster is an API server of its own (sharing the lab's etcd under
// another prefix) with a kube-scheduler in its default profile.
type schedCluster struct {
	c         *cluster
	scheduler *process
	cs        *kubernetes.Clientset
}

func startSchedCluster(t *testing.T) *schedCluster {
	t.Helper()
	c, err := startCluster("sched", env.bins, env.lab.etcdURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.stop)
	cs, err := kubernetes.NewForConfig(c.loader())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: schedNamespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// No controller manager runs: the ServiceAccount admission plugin wants
	// the namespace's default ServiceAccount to exist.
	if _, err := cs.CoreV1().ServiceAccounts(schedNamespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	kc := c.kubeconfig("scheduler", c.adminToken)
	p, err := startProcess("kube-scheduler", filepath.Join(c.dir, "kube-scheduler.log"), env.bins.scheduler,
		"--kubeconfig="+kc,
		"--authentication-kubeconfig="+kc,
		"--authorization-kubeconfig="+kc,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		"--profiling=false",
	)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.stop)
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, Timeout: 5 * time.Second}
	if err := waitFor(p, 2*time.Minute, func() bool {
		resp, err := insecure.Get(fmt.Sprintf("https://127.0.0.1:%d/readyz", port))
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}); err != nil {
		t.Fatal(err)
	}
	return &schedCluster{c: c, scheduler: p, cs: cs}
}

// reset removes every pod, node, claim and PriorityClass a scenario made.
func (s *schedCluster) reset(ctx context.Context, classes []string) error {
	zero := int64(0)
	force := metav1.DeleteOptions{GracePeriodSeconds: &zero}
	if err := s.cs.CoreV1().Pods(schedNamespace).DeleteCollection(ctx, force, metav1.ListOptions{}); err != nil {
		return err
	}
	if err := s.cs.CoreV1().PersistentVolumeClaims(schedNamespace).DeleteCollection(ctx, force, metav1.ListOptions{}); err != nil {
		return err
	}
	if err := s.cs.AppsV1().ReplicaSets(schedNamespace).DeleteCollection(ctx, force, metav1.ListOptions{}); err != nil {
		return err
	}
	if err := s.cs.CoreV1().Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		return err
	}
	for _, name := range classes {
		if err := s.cs.SchedulingV1().PriorityClasses().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	// PVCs carry the pvc-protection finalizer only with the controller
	// manager; wait until everything is gone and the scheduler's informers
	// have seen it.
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		pods, err := s.cs.CoreV1().Pods(schedNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		nodes, err := s.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		return len(pods.Items) == 0 && len(nodes.Items) == 0, nil
	})
	time.Sleep(500 * time.Millisecond)
	return err
}

// realOutcome is what the real scheduler did with one pod, as the pod's
// first update after creation shows it.
type realOutcome struct {
	node            string
	reason, message string
	nominated       string
	none            bool // no answer at all (another scheduler's pod)
	victim          bool // marked for deletion by the end of the scenario
}

func (o realOutcome) String() string {
	switch {
	case o.none:
		return "no condition"
	case o.node != "":
		return "bound to " + o.node
	}
	s := fmt.Sprintf("%s: %s", o.reason, o.message)
	if o.nominated != "" {
		s += " (nominated " + o.nominated + ")"
	}
	return s
}

func firstOutcome(p *corev1.Pod) (realOutcome, bool) {
	if p.Spec.NodeName != "" {
		return realOutcome{node: p.Spec.NodeName}, true
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return realOutcome{reason: c.Reason, message: c.Message, nominated: p.Status.NominatedNodeName}, true
		}
	}
	return realOutcome{}, false
}

// run creates the scenario and returns the real outcome of each pod, and
// the pods as the API server stored them (admission applied).
func (s *schedCluster) run(ctx context.Context, sc scenario) ([]realOutcome, []*corev1.Pod, error) {
	for _, pc := range sc.classes {
		if _, err := s.cs.SchedulingV1().PriorityClasses().Create(ctx, pc.DeepCopy(), metav1.CreateOptions{}); err != nil {
			return nil, nil, err
		}
	}
	for _, c := range sc.claims {
		c = c.DeepCopy()
		c.Namespace = schedNamespace
		if _, err := s.cs.CoreV1().PersistentVolumeClaims(schedNamespace).Create(ctx, c, metav1.CreateOptions{}); err != nil {
			return nil, nil, err
		}
	}
	uids := map[string]types.UID{}
	for _, rs := range sc.replicaSets {
		rs = rs.DeepCopy()
		rs.Namespace = schedNamespace
		created, err := s.cs.AppsV1().ReplicaSets(schedNamespace).Create(ctx, rs, metav1.CreateOptions{})
		if err != nil {
			return nil, nil, err
		}
		uids[rs.Name] = created.UID
	}
	for _, n := range sc.nodes {
		created, err := s.cs.CoreV1().Nodes().Create(ctx, n.DeepCopy(), metav1.CreateOptions{})
		if err != nil {
			return nil, nil, err
		}
		created.Status = n.Status
		if created, err = s.cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			return nil, nil, err
		}
		// The TaintNodesByCondition admission plugin gives a new node the
		// not-ready taint; the node lifecycle controller, which does not
		// run here, takes it off a Ready node. The scenario's taints are
		// what the node carries once that is done.
		created.Spec.Taints = n.Spec.Taints
		if _, err := s.cs.CoreV1().Nodes().Update(ctx, created, metav1.UpdateOptions{}); err != nil {
			return nil, nil, err
		}
	}
	time.Sleep(700 * time.Millisecond) // the scheduler's node informer catches up
	var outs []realOutcome
	var stored []*corev1.Pod
	for _, p := range sc.pods {
		p = p.DeepCopy()
		p.Namespace = schedNamespace
		for i, ref := range p.OwnerReferences {
			if uid, ok := uids[ref.Name]; ok && ref.Kind == "ReplicaSet" {
				p.OwnerReferences[i].UID = uid
			}
		}
		w, err := s.cs.CoreV1().Pods(schedNamespace).Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", p.Name).String()})
		if err != nil {
			return nil, nil, err
		}
		created, err := s.cs.CoreV1().Pods(schedNamespace).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			w.Stop()
			return nil, nil, fmt.Errorf("pod %s: %w", p.Name, err)
		}
		if p.Status.Phase != "" {
			// A pod the scenario gives a status (bound, running or
			// finished) is load, not a question for the scheduler.
			created.Status = p.Status
			if created, err = s.cs.CoreV1().Pods(schedNamespace).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
				w.Stop()
				return nil, nil, fmt.Errorf("pod %s status: %w", p.Name, err)
			}
		}
		stored = append(stored, created.DeepCopy())
		out, ok := firstOutcome(created)
		limit := time.After(15 * time.Second)
		if created.Spec.SchedulerName != corev1.DefaultSchedulerName {
			limit = time.After(2 * time.Second)
		}
		for !ok {
			select {
			case ev, open := <-w.ResultChan():
				if !open {
					w.Stop()
					return nil, nil, fmt.Errorf("pod %s: watch closed", p.Name)
				}
				if ev.Type == watch.Modified {
					if cur, isPod := ev.Object.(*corev1.Pod); isPod {
						out, ok = firstOutcome(cur)
					}
				}
			case <-limit:
				out, ok = realOutcome{none: true}, true
			}
		}
		w.Stop()
		outs = append(outs, out)
	}
	// Victims: the scheduler deletes them (gracefully; no kubelet finishes
	// the job) after adding the DisruptionTarget condition.
	time.Sleep(300 * time.Millisecond)
	list, err := s.cs.CoreV1().Pods(schedNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, err
	}
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			continue
		}
		for i := range sc.pods {
			if sc.pods[i].Name == p.Name {
				outs[i].victim = true
			}
		}
	}
	return outs, stored, nil
}

// twinRun replays the scenario through the twin's scheduler: each pod as
// the API server stored it, against the pods placed before it. Where the
// real scheduler bound a pod to one of the twin's equally scored
// candidates, the twin follows that choice, so that later pods see the
// same cluster.
func twinRun(sc scenario, stored []*corev1.Pod, real []realOutcome) ([]scheduler.Outcome, []string) {
	state := scheduler.NewState()
	claims := make([]string, 0, len(sc.claims))
	for _, c := range sc.claims {
		claims = append(claims, schedNamespace+"/"+c.Name)
	}
	state.SetClaims(claims)
	var outs []scheduler.Outcome
	var diffs []string
	victims := map[string]bool{}
	for i, p := range stored {
		o := scheduler.Decide(p, sc.nodes, state)
		outs = append(outs, o)
		r := real[i]
		twin := describeTwin(o)
		switch {
		case r.none || o.NoAnswer:
			if !(r.none && o.NoAnswer) {
				diffs = append(diffs, fmt.Sprintf("pod %s: real %s, twin %s", p.Name, r, twin))
			}
		case r.node != "":
			if o.Node == "" || !slices.Contains(o.Candidates, r.node) {
				diffs = append(diffs, fmt.Sprintf("pod %s: real %s, twin %s", p.Name, r, twin))
			}
			if o.Node != "" {
				state.Add(p, r.node)
			}
		default:
			if o.Condition == nil || o.Condition.Reason != r.reason || o.Condition.Message != r.message || o.NominatedNode != r.nominated {
				diffs = append(diffs, fmt.Sprintf("pod %s:\n  real %s\n  twin %s", p.Name, r, twin))
			}
			for _, v := range o.Victims {
				victims[v] = true
			}
		}
	}
	for i, p := range stored {
		if tv := victims[schedNamespace+"/"+p.Name]; tv != real[i].victim {
			diffs = append(diffs, fmt.Sprintf("pod %s: real victim %v, twin victim %v", p.Name, real[i].victim, tv))
		}
	}
	return outs, diffs
}

func describeTwin(o scheduler.Outcome) string {
	switch {
	case o.NoAnswer:
		return "no condition"
	case o.Node != "":
		return fmt.Sprintf("bound to %s (candidates %s)", o.Node, strings.Join(o.Candidates, ", "))
	case o.Condition != nil:
		s := fmt.Sprintf("%s: %s", o.Condition.Reason, o.Condition.Message)
		if o.NominatedNode != "" {
			s += " (nominated " + o.NominatedNode + ")"
		}
		return s
	}
	return "nothing"
}

// TestSchedulerMatchesKubeScheduler runs every scenario of
// testdata/scheduling through a real kube-scheduler and through the twin
// and compares, pod by pod, the node (or, where the real scheduler picks at
// random among equal scores, that its node is one of the twin's
// candidates), the Pending condition's reason and message, the nominated
// node and the preemption victims.
func TestSchedulerMatchesKubeScheduler(t *testing.T) {
	scenarios := readScenarios(t)
	if len(scenarios) < 50 {
		t.Errorf("%d scenarios; the corpus should hold at least 50", len(scenarios))
	}
	s := startSchedCluster(t)
	ctx := context.Background()
	agree, pods, podsAgree := 0, 0, 0
	var prevClasses []string
	for _, sc := range scenarios {
		if err := s.reset(ctx, prevClasses); err != nil {
			t.Fatalf("%s: reset: %v", sc.name, err)
		}
		prevClasses = prevClasses[:0]
		for _, pc := range sc.classes {
			prevClasses = append(prevClasses, pc.Name)
		}
		real, stored, err := s.run(ctx, sc)
		if err != nil {
			t.Errorf("%s: %v", sc.name, err)
			continue
		}
		_, diffs := twinRun(sc, stored, real)
		pods += len(sc.pods)
		bad := map[string]bool{}
		for _, d := range diffs {
			name, _, _ := strings.Cut(strings.TrimPrefix(d, "pod "), ":")
			bad[name] = true
		}
		podsAgree += len(sc.pods) - len(bad)
		if len(diffs) == 0 {
			agree++
			continue
		}
		t.Errorf("%s: the twin differs from kube-scheduler %s:\n%s", sc.name, env.bins.apiserverVersion, strings.Join(diffs, "\n"))
	}
	t.Logf("%d of %d scenarios agree, %d of %d pods", agree, len(scenarios), podsAgree, pods)
}
