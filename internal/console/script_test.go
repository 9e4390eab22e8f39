package console

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// labWith builds the lab and extra YAML documents.
func labWith(t testing.TB, docs ...string) *model.Cluster {
	t.Helper()
	s, err := load.Load(load.Options{Lab: true, DropRaw: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		objs, err := load.DecodeDocuments(strings.NewReader(d), "extra.yaml")
		if err != nil {
			t.Fatal(err)
		}
		s.Objects = append(s.Objects, objs...)
	}
	c, err := engine.BuildOwned(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRunPodsFillTheirCommandFromTheTwin(t *testing.T) {
	pods, err := LabVerification.RunPods(FromCluster(labWith(t)))
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 1 {
		t.Fatalf("got %d pods, want the check pod only", len(pods))
	}
	for _, want := range []string{"name: check", "image: busybox:1.37", `ping -c 2 172.21.41.6"]`} {
		if !strings.Contains(pods[0], want) {
			t.Errorf("the check pod lacks %q:\n%s", want, pods[0])
		}
	}
}

func TestAStepIsJudgedByItsExitAndItsExpectedProperties(t *testing.T) {
	c := labWith(t)
	for _, tc := range []struct {
		name string
		step Step
		// failed is the verdict's line, "" when the step passes.
		failed string
	}{
		{
			name: "curl.exe reaching the hello Service it names passes",
			step: Step{Prompt: "curl", Target: aspnetapp, Argv: curlWArgv("http://hello.demo.svc.cluster.local/healthz"),
				Expect: Expect{Holds: []string{helloService + " 200\n"}}},
		},
		{
			name: "an output without the address the twin gives fails",
			step: Step{Prompt: "curl", Target: aspnetapp, Argv: curlWArgv("http://hello.demo.svc.cluster.local/healthz"),
				Expect: Expect{Holds: []string{aspnetappService + " 200\n"}}},
			failed: `curl.exe -s -o NUL -w %{remote_ip} %{http_code}\n http://hello.demo.svc.cluster.local/healthz (the output lacks "10.102.98.171 200\n")`,
		},
		{
			name:   "a command expected to fail that succeeds fails",
			step:   Step{Prompt: "curl", Target: aspnetapp, Argv: curlWArgv("http://aspnetapp/"), Expect: Expect{Fail: true}},
			failed: `curl.exe -s -o NUL -w %{remote_ip} %{http_code}\n http://aspnetapp/ (exit 0; expected to fail)`,
		},
		{
			name: "a ping reply TTL the hops to the pinged pod explain passes",
			step: Step{Prompt: "ping", Target: aspnetapp, Argv: []string{"ping", "-n", "1", helloPod}, TTLTo: helloPod},
		},
		{
			name:   "a ping reply TTL other hops would give fails",
			step:   Step{Prompt: "ping", Target: aspnetapp, Argv: []string{"ping", "-n", "1", helloPod}, TTLTo: aspnetappPod},
			failed: "ping -n 1 172.21.172.4 (ttl 63; expected 128 from the hops)",
		},
		{
			name:   "a reference to a Service the twin lacks fails the step",
			step:   Step{Prompt: "curl", Target: aspnetapp, Argv: curlWArgv(`http://{{clusterIP "demo" "nope"}}/`)},
			failed: "deploy/aspnetapp",
		},
		{
			name:   "a probe the twin delivers when it should not fails",
			step:   Step{Target: aspnetapp, Probe: &Probe{What: "curl.exe http://hello", Proto: "tcp", Dst: helloService, Port: 80}, Expect: Expect{Fail: true}},
			failed: "curl.exe http://hello (delivered; expected to fail)",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			failed, err := Script{Title: "test", Steps: []Step{tc.step}}.Run(&out, FromCluster(c))
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(failed, "\n")
			if got != tc.failed {
				t.Errorf("failed = %q, want %q\n%s", got, tc.failed, out.String())
			}
		})
	}
}

func TestATargetIsReadWithKubectlsAliases(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Target
		bad  bool
	}{
		{in: "no/k8s-lab-node-1", want: Target{Kind: KindNode, Name: "k8s-lab-node-1"}},
		{in: "pods/check", want: Target{Kind: KindPod, Namespace: "demo", Name: "check"}},
		{in: "deployment/hello", want: Target{Kind: KindDeploy, Namespace: "demo", Name: "hello"}},
		{in: "svc/hello", bad: true},
		{in: "node/", bad: true},
		{in: "hello", bad: true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseTarget(tc.in, "demo")
			if (err != nil) != tc.bad {
				t.Fatalf("err = %v, want bad=%v", err, tc.bad)
			}
			if !tc.bad && got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
