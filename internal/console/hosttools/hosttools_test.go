package hosttools_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/console"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/console/hosttools"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/golden"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

func lab(t *testing.T, files ...string) *model.Cluster {
	t.Helper()
	s, err := load.Load(load.Options{Lab: true, Filenames: files})
	if err != nil {
		t.Fatal(err)
	}
	c, err := engine.Build(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func render(target string, argv []string, stdout, stderr string, code int) string {
	return fmt.Sprintf("$ %s -- %s\n--- stdout\n%s--- stderr\n%s--- exit %d\n", target, strings.Join(argv, " "), stdout, stderr, code)
}

const getService = "Get-Service kubelet, containerd, vmcompute, hns | Format-Table -AutoSize Status, Name, StartType"

// Every host command through the console, as `kubectl-hybrid exec`
// runs it, compared with testdata/golden.
func TestHostCommandsMatchTheirGoldenFiles(t *testing.T) {
	for _, tc := range []struct {
		file   string
		files  []string
		target string
		ns     string
		argv   []string
	}{
		{"windows-get-service", nil, "node/k8s-lab-win-1", "", []string{getService}},
		{"windows-get-service-default-view", nil, "node/k8s-lab-win-1", "", []string{"Get-Service"}},
		{"windows-get-service-kubelet-stopped", []string{"testdata/kubelet-stopped.yaml"}, "node/k8s-lab-win-1", "", []string{"Get-Service kubelet | Format-Table Status, Name, StartType"}},
		{"windows-get-service-unknown-name", nil, "node/k8s-lab-win-1", "", []string{"Get-Service kubelet, docker"}},
		{"windows-crictl-version", nil, "node/k8s-lab-win-1", "", []string{"crictl", "version"}},
		{"windows-crictl-version-runtime", nil, "node/k8s-lab-win-1", "", []string{"crictl version | Select-String Runtime"}},
		{"windows-crictl-version-containerd-stopped", []string{"testdata/containerd-stopped.yaml"}, "node/k8s-lab-win-1", "", []string{"crictl", "version"}},
		{"windows-crictl-images", nil, "node/k8s-lab-win-1", "", []string{"crictl", "images"}},
		{"windows-containerd-config-dump", nil, "node/k8s-lab-win-1", "", []string{"containerd.exe", "config", "dump"}},
		{"windows-containerd-config-dump-filtered", nil, "node/k8s-lab-win-1", "", []string{`containerd.exe config dump | Select-String "^version|default_runtime_name|runhcs-wcow-process\]|runtime_type|bin_dirs|conf_dir|sandbox ="`}},
		{"windows-get-netipaddress", nil, "node/k8s-lab-win-1", "", []string{"Get-NetIPAddress -AddressFamily IPv4 | Where-Object PrefixOrigin -ne WellKnown | Format-Table InterfaceAlias, IPAddress, PrefixLength"}},
		{"windows-ipconfig", nil, "node/k8s-lab-win-1", "", []string{"ipconfig"}},
		{"windows-build-and-ubr", nil, "node/k8s-lab-win-1", "", []string{`Get-ItemProperty 'HKLM:\SOFTWARE\Microsoft\Windows NT\CurrentVersion' | Select-Object ProductName, InstallationType, CurrentBuild, UBR`}},
		{"windows-get-process-hostprocess", nil, "node/k8s-lab-win-1", "", []string{"Get-Process calico, kube-proxy | Format-Table -AutoSize Id, SI, ProcessName, Path"}},
		{"windows-get-process-container-session", nil, "node/k8s-lab-win-1", "", []string{"Get-Process | Where-Object SessionId -eq 3 | Sort-Object ProcessName | Format-Table -AutoSize Id, SI, ProcessName"}},
		{"aspnetapp-echo-username-and-ver", nil, "pod/aspnetapp-769559d8ff-dkp9z", "win-demo", []string{"cmd", "/c", "echo %USERNAME% & ver"}},
		{"aspnetapp-has-no-whoami", nil, "pod/aspnetapp-769559d8ff-dkp9z", "win-demo", []string{"cmd", "/c", "whoami"}},
		{"servercore-whoami", []string{"testdata/servercore-pod.yaml"}, "pod/tools", "win-demo", []string{"cmd", "/c", "whoami"}},
		{"linux-systemctl-status-kubelet", nil, "node/k8s-lab-node-1", "", []string{"systemctl", "status", "kubelet"}},
		{"linux-systemctl-status-containerd", nil, "node/k8s-lab-node-1", "", []string{"systemctl", "status", "containerd"}},
		{"linux-systemctl-status-kubelet-stopped", []string{"testdata/linux-kubelet-stopped.yaml"}, "node/k8s-lab-node-1", "", []string{"systemctl", "status", "kubelet"}},
		{"linux-journalctl-kubelet", nil, "node/k8s-lab-node-1", "", []string{"journalctl", "-u", "kubelet"}},
		{"linux-crictl-version-grep", nil, "node/k8s-lab-node-1", "", []string{"crictl version | grep Runtime"}},
		{"linux-containerd-config-dump", nil, "node/k8s-lab-node-1", "", []string{"containerd", "config", "dump"}},
		{"windows-test-netconnection-api-port", nil, "node/k8s-lab-win-1", "", []string{"Test-NetConnection k8s-lab-api.example.com -Port 6443"}},
		{"windows-test-netconnection-closed-port", nil, "node/k8s-lab-win-1", "", []string{"Test-NetConnection", "k8s-lab-api.example.com", "-Port", "6444"}},
		{"windows-test-netconnection-ping", nil, "node/k8s-lab-win-1", "", []string{"Test-NetConnection k8s-lab-api.example.com"}},
		{"windows-test-netconnection-bad-port", nil, "node/k8s-lab-win-1", "", []string{"Test-NetConnection k8s-lab-api.example.com -Port 70000"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			tw := console.FromCluster(lab(t, tc.files...))
			target, err := console.ParseTarget(tc.target, tc.ns)
			if err != nil {
				t.Fatal(err)
			}
			o, err := console.Exec(tw, target, tc.argv)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "golden", tc.file+".txt"), render(tc.target, tc.argv, o.Stdout, o.Stderr, o.Code))
		})
	}
}

// crictl's ages count to a pinned time.
func TestCrictlListingsMatchTheirGoldenFiles(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	c := lab(t)
	for _, tc := range []struct{ file, node, cmd string }{
		{"windows-crictl-pods", "k8s-lab-win-1", "pods"},
		{"windows-crictl-ps", "k8s-lab-win-1", "ps"},
		{"linux-crictl-pods", "k8s-lab-node-1", "pods"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			argv := []string{"crictl", tc.cmd}
			r, ok, err := hosttools.Node(c, tc.node, argv, hosttools.Options{Now: now})
			if err != nil || !ok {
				t.Fatalf("crictl %s: handled %v, %v", tc.cmd, ok, err)
			}
			golden.Check(t, filepath.Join("testdata", "golden", tc.file+".txt"), render("node/"+tc.node, argv, r.Stdout, r.Stderr, r.Code))
		})
	}
}

// w32tm's times are the node's clock at a pinned time.
func TestW32tmMatchesItsGoldenFiles(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		file  string
		files []string
		line  string
	}{
		{"windows-w32tm-query-status", nil, "w32tm /query /status"},
		{"windows-w32tm-stratum-and-source", nil, "w32tm /query /status | Select-String 'Stratum|Source'"},
		{"windows-w32tm-query-source", nil, "w32tm /query /source"},
		{"windows-w32tm-clock-behind", []string{"testdata/clock-behind.yaml"}, "w32tm /query /status"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			argv := []string{tc.line}
			r, ok, err := hosttools.Node(lab(t, tc.files...), "k8s-lab-win-1", argv, hosttools.Options{Now: now})
			if err != nil || !ok {
				t.Fatalf("handled %v, %v", ok, err)
			}
			golden.Check(t, filepath.Join("testdata", "golden", tc.file+".txt"), render("node/k8s-lab-win-1", argv, r.Stdout, r.Stderr, r.Code))
		})
	}
}

// The kubelet's log at a pinned time.
func TestKubeletLogMatchesItsGoldenFiles(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		file  string
		files []string
		line  string
	}{
		{"windows-kubelet-err-log-healthy", nil, `Get-Content C:\var\log\kubelet\kubelet.err.log -Tail 30`},
		{"windows-kubelet-err-log-clock-before-certificates", []string{"testdata/clock-before-certificates.yaml"}, `Get-Content C:\var\log\kubelet\kubelet.err.log -Tail 8`},
		{"windows-kubelet-err-log-kubelet-stopped", []string{"testdata/kubelet-stopped.yaml"}, `Get-Content C:\var\log\kubelet\kubelet.err.log -Tail 30`},
		{"windows-kubelet-err-log-without-tail", nil, `Get-Content C:\var\log\kubelet\kubelet.err.log`},
		{"windows-get-content-other-file", nil, `Get-Content C:\k\config`},
	} {
		t.Run(tc.file, func(t *testing.T) {
			argv := []string{tc.line}
			r, ok, err := hosttools.Node(lab(t, tc.files...), "k8s-lab-win-1", argv, hosttools.Options{Now: now})
			if err != nil || !ok {
				t.Fatalf("handled %v, %v", ok, err)
			}
			golden.Check(t, filepath.Join("testdata", "golden", tc.file+".txt"), render("node/k8s-lab-win-1", argv, r.Stdout, r.Stderr, r.Code))
		})
	}
}

// The transcript of Get-Service on the joined Windows node, as printed.
const seedGetService = `
 Status Name       StartType
 ------ ----       ---------
Running containerd Automatic
Running hns           Manual
Running kubelet    Automatic
Running vmcompute     Manual

`

func TestGetServiceReproducesTheTranscript(t *testing.T) {
	o, err := console.Exec(console.FromCluster(lab(t)), console.Target{Kind: console.KindNode, Name: "k8s-lab-win-1"}, []string{getService})
	if err != nil {
		t.Fatal(err)
	}
	if o.Stdout != seedGetService || o.Code != 0 {
		t.Errorf("Get-Service printed\n%q\nwant\n%q", o.Stdout, seedGetService)
	}
}

func TestCrictlPodsNamesEachPodsRuntimeHandler(t *testing.T) {
	r, _, err := hosttools.Node(lab(t), "k8s-lab-win-1", []string{"crictl", "pods"}, hosttools.Options{Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"df1924ad959c6", // the observed sandbox ID, truncated as crictl does
		"aspnetapp-769559d8ff-dkp9z   win-demo            0                   runhcs-wcow-process",
		"calico-node-windows-q54h2    calico-system       0                   (default)",
	} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("crictl pods lacks %q:\n%s", want, r.Stdout)
		}
	}
}
