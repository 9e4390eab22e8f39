package scheduler

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/golden"
)

// scenarioDir holds the scheduling scenarios the integration tests also run
// through a real kube-scheduler.
var scenarioDir = filepath.Join("..", "..", "test", "integration", "testdata", "scheduling")

type scenarioFile struct {
	nodes   []*corev1.Node
	classes map[string]int32
	claims  []string
	pods    []*corev1.Pod
}

func readScenarioFile(t *testing.T, path string) scenarioFile {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sc := scenarioFile{classes: map[string]int32{}}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return sc
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		switch meta.Kind {
		case "Node":
			n := &corev1.Node{}
			mustUnmarshal(t, doc, n)
			sc.nodes = append(sc.nodes, n)
		case "PriorityClass":
			c := &schedulingv1.PriorityClass{}
			mustUnmarshal(t, doc, c)
			sc.classes[c.Name] = c.Value
		case "PersistentVolumeClaim":
			c := &corev1.PersistentVolumeClaim{}
			mustUnmarshal(t, doc, c)
			sc.claims = append(sc.claims, "sched/"+c.Name)
		case "Pod":
			p := &corev1.Pod{}
			mustUnmarshal(t, doc, p)
			p.Namespace = "sched"
			sc.pods = append(sc.pods, p)
		}
	}
}

func mustUnmarshal(t *testing.T, doc []byte, obj any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		t.Fatal(err)
	}
}

// TestScenarioOutcomes records in a golden file what the model does with
// every pod of the scheduling scenarios, each placed on its first
// candidate. The integration test holds the same scenarios to a real
// kube-scheduler; this one shows a change in the model at once.
func TestScenarioOutcomes(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(scenarioDir, "*.yaml"))
	if err != nil || len(paths) < 50 {
		t.Fatalf("%d scenarios in %s (%v)", len(paths), scenarioDir, err)
	}
	sort.Strings(paths)
	base := readScenarioFile(t, paths[0]).nodes
	var b strings.Builder
	for _, path := range paths[1:] {
		sc := readScenarioFile(t, path)
		if len(sc.nodes) == 0 {
			sc.nodes = base
		}
		state := NewState()
		state.SetClaims(sc.claims)
		fmt.Fprintf(&b, "%s\n", strings.TrimSuffix(filepath.Base(path), ".yaml"))
		for _, p := range sc.pods {
			// What the Priority admission plugin resolves.
			if v, ok := sc.classes[p.Spec.PriorityClassName]; ok {
				p.Spec.Priority = &v
			}
			o := Decide(p, sc.nodes, state)
			switch {
			case o.NoAnswer:
				fmt.Fprintf(&b, "  %s: no answer (schedulerName %s)\n", p.Name, p.Spec.SchedulerName)
			case o.Node != "":
				fmt.Fprintf(&b, "  %s: bound to %s (candidates %s)\n", p.Name, o.Node, strings.Join(o.Candidates, ", "))
				state.Add(p, o.Node)
			default:
				fmt.Fprintf(&b, "  %s: %s: %s\n", p.Name, o.Condition.Reason, o.Condition.Message)
				if o.NominatedNode != "" {
					fmt.Fprintf(&b, "    nominated %s, victims %s\n", o.NominatedNode, strings.Join(o.Victims, ", "))
				}
			}
		}
	}
	golden.Check(t, filepath.Join("testdata", "scenarios.golden"), b.String())
}
