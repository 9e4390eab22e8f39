package sandbox

import (
	"strings"
	"sync"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/golden"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

var (
	labOnce  sync.Once
	labC     *model.Cluster
	labNodes map[string]*linux.Node
	labErr   error
)

// lab builds the built-in lab and compiles its Linux nodes, once.
func lab(t testing.TB) (*model.Cluster, map[string]*linux.Node) {
	if t != nil {
		t.Helper()
	}
	labOnce.Do(func() {
		s, err := load.Load(load.Options{Lab: true})
		if err != nil {
			labErr = err
			return
		}
		if labC, labErr = engine.Build(s); labErr != nil {
			return
		}
		labNodes, labErr = linux.Compile(labC)
	})
	if labErr != nil && t != nil {
		t.Fatal(labErr)
	}
	return labC, labNodes
}

func labPlan(t testing.TB, o Options) *Plan {
	t.Helper()
	c, nodes := lab(t)
	p, err := Build(c, nodes, Zone(c), o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTheLabPlanIsTheGoldenScript(t *testing.T) {
	var b strings.Builder
	if err := labPlan(t, Options{}).WriteScript(&b); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/lab-plan.sh", b.String())
}

func TestEveryStepActsInsideANamespaceOfThePlan(t *testing.T) {
	p := labPlan(t, Options{Prefix: "kht-"})
	own := map[string]bool{}
	for _, n := range p.Namespaces {
		own[n.Name] = true
		if !strings.HasPrefix(n.Name, "kht-") {
			t.Errorf("namespace %s does not carry the prefix", n.Name)
		}
	}
	for _, s := range p.Steps {
		ns, ok := stepNamespace(s.Argv)
		if !ok || !own[ns] {
			t.Errorf("step %q does not act inside a namespace of the plan", shellJoin(s.Argv))
		}
	}
}

func TestPlanRefusals(t *testing.T) {
	c, nodes := lab(t)
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"a prefix without a trailing dash is refused", Options{Prefix: "kh"}, "prefix"},
		{"a prefix with upper-case letters is refused", Options{Prefix: "KH-"}, "prefix"},
		{"a pod that does not exist is refused", Options{Pods: []string{"demo/nope"}}, "demo/nope"},
		{"a host-network pod cannot be selected", Options{Pods: []string{"kube-system/kube-proxy-mc9qf"}}, "kube-proxy-mc9qf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Build(c, nodes, nil, tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error naming %q", err, tc.want)
			}
		})
	}
}

func TestSelectedPodsAloneGetNamespacesAndUnselectedVethsAreNoted(t *testing.T) {
	p := labPlan(t, Options{Pods: []string{"demo/hello-55fb8f8684-69mvv", "win-demo/aspnetapp-769559d8ff-dkp9z"}})
	var pods []string
	for _, n := range p.Namespaces {
		if n.Pod != "" {
			pods = append(pods, n.Pod)
		}
	}
	if strings.Join(pods, " ") != "demo/hello-55fb8f8684-69mvv win-demo/aspnetapp-769559d8ff-dkp9z" {
		t.Errorf("pods %v", pods)
	}
	noted := false
	for _, n := range p.Notes {
		if strings.Contains(n, "demo/hello-55fb8f8684-nztv2 is not selected") {
			noted = true
		}
	}
	if !noted {
		t.Errorf("the unselected hello pod is not noted: %v", p.Notes)
	}
}

func TestSymbolicPrioritiesBecomeTheKernelsNumbers(t *testing.T) {
	_, nodes := lab(t)
	s := nftScript(nodes["k8s-lab-node-2"])
	for _, want := range []string{"priority -110;", "priority -100;", "priority 0;", "priority 100;"} {
		if !strings.Contains(s, want) {
			t.Errorf("the script lacks %q", want)
		}
	}
	if priorityRE.MatchString(s) {
		t.Errorf("a symbolic priority is left: %s", priorityRE.FindString(s))
	}
}

// A node on an IPIP pool sets up the kernel's tunl0 with the twin's MTU
// and address before the routes through it.
func TestAnIPIPNodeSetsUpTunl0BeforeItsRoutes(t *testing.T) {
	_, p := planOf(t, false, []string{"../../examples/main-cluster", "../cli/testdata/main-cluster-ipip.yaml"}, Options{})
	ns := ""
	for _, n := range p.Namespaces {
		if n.Node == "k8s-node-1" && n.Kind == KindNode {
			ns = n.Name
		}
	}
	want := []string{
		"ip -n " + ns + " link set tunl0 mtu 1480 up",
		"ip -n " + ns + " addr add 172.20.211.0/32 dev tunl0",
		"ip -n " + ns + " route add 172.20.172.0/26 via 192.168.10.21 dev tunl0 proto bird onlink",
	}
	at := 0
	for _, st := range p.Steps {
		if at < len(want) && strings.Join(st.Argv, " ") == want[at] {
			at++
		}
	}
	if ns == "" || at < len(want) {
		t.Errorf("the plan lacks, in order, %q (found %d)", want, at)
	}
}

// planOf loads the files (over the lab with lab), builds the twin,
// compiles its Linux nodes and plans the sandbox.
func planOf(t testing.TB, lab bool, files []string, o Options) (*model.Cluster, *Plan) {
	t.Helper()
	s, err := load.Load(load.Options{Lab: lab, Filenames: files})
	if err != nil {
		t.Fatal(err)
	}
	c, err := engine.Build(s)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := linux.Compile(c)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(c, nodes, Zone(c), o)
	if err != nil {
		t.Fatal(err)
	}
	return c, p
}
