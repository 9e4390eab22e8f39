package console

import (
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dns"
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// tail is `tail -n`.
func tail(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "")
}

func TestSeedNSLookupTail(t *testing.T) {
	// Seed 000: kubectl run -i --rm check --image=busybox:1.37 --restart=Never --
	//   sh -c 'nslookup aspnetapp.win-demo.svc.cluster.local | tail -3 …'
	const seed = "Name:\taspnetapp.win-demo.svc.cluster.local\nAddress: 10.102.98.171\n\n"
	out, errOut, exit := nsLookup(dnsLab(t), dnsCheckPod, []string{"nslookup", "aspnetapp.win-demo.svc.cluster.local"})
	if exit != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", exit, errOut)
	}
	if got := tail(out, 3); got != seed {
		t.Errorf("tail -3 is\n%q\nthe seed shows\n%q", got, seed)
	}
	if !strings.HasPrefix(out, "Server:\t\t10.96.0.10\nAddress:\t10.96.0.10:53\n\n") {
		t.Errorf("output does not start with the server lines:\n%s", out)
	}
}

func TestNSLookup(t *testing.T) {
	type src func(t *testing.T, c *model.Cluster) dns.Source
	check := func(*testing.T, *model.Cluster) dns.Source { return dnsCheckPod }
	servercore := func(*testing.T, *model.Cluster) dns.Source {
		return dns.Source{Namespace: "win-demo", Pod: "tools", Node: "k8s-lab-win-1", Image: "mcr.microsoft.com/windows/servercore:ltsc2025"}
	}
	tests := []struct {
		name   string
		extra  bool
		from   src
		args   []string
		exit   int
		stdout string // substring
		stderr string // substring
	}{
		{name: "busybox nslookup of an unknown Service prints server can't find and exits 1", from: check,
			args: []string{"nosuch.default.svc.cluster.local"}, exit: 1,
			stdout: "** server can't find nosuch.default.svc.cluster.local: NXDOMAIN\n"},
		{name: "busybox nslookup sends a dotted name as is even where the resolver would search", from: check,
			args: []string{"hello.demo"}, exit: 1, stdout: "** server can't find hello.demo: NXDOMAIN\n"},
		{name: "busybox nslookup expands a single label with every search domain and never sends it bare", from: busyboxInDemo,
			args: []string{"hello"}, exit: 1,
			stdout: "** server can't find hello.cluster.local: NXDOMAIN\n\n** server can't find hello.svc.cluster.local: NXDOMAIN\n\nName:\thello.demo.svc.cluster.local\nAddress: 10.97.141.163\n\n"},
		{name: "busybox nslookup of a forwarded name is non-authoritative", from: check,
			args: []string{"k8s-lab-api.example.com"}, exit: 0,
			stdout: "Non-authoritative answer:\nName:\tk8s-lab-api.example.com\nAddress: 192.168.10.23\n"},
		{name: "busybox nslookup of an address asks for the PTR", from: check,
			args: []string{"10.96.0.10"}, exit: 0,
			stdout: "10.0.96.10.in-addr.arpa\tname = kube-dns.kube-system.svc.cluster.local\n"},
		{name: "busybox nslookup of a headless Service lists every endpoint", extra: true, from: check,
			args: []string{"hello-headless.demo.svc.cluster.local"}, exit: 0,
			stdout: "Name:\thello-headless.demo.svc.cluster.local\nAddress: 172.21.211.25\nName:\thello-headless.demo.svc.cluster.local\nAddress: 172.21.172.4\n"},
		{name: "busybox nslookup of an ExternalName prints the canonical name", extra: true, from: check,
			args: []string{"api.demo.svc.cluster.local"}, exit: 0,
			stdout: "api.demo.svc.cluster.local\tcanonical name = k8s-lab-api.example.com\nName:\tk8s-lab-api.example.com\nAddress: 192.168.10.23\n"},
		{name: "busybox nslookup of a name outside the model is not modeled", from: check,
			args: []string{"learn.microsoft.com"}, exit: exitNotModeled, stderr: "not modeled: external name learn.microsoft.com"},
		{name: "nslookup in the Nano Server aspnetapp pod is not a command", from: dnsAspnetapp,
			args: []string{"hello.demo.svc.cluster.local"}, exit: 9009,
			stderr: "'nslookup' is not recognized as an internal or external command,\noperable program or batch file.\n"},
		{name: "nslookup.exe names the server by its PTR", from: servercore,
			args: []string{"aspnetapp"}, exit: 0,
			stdout: "Server:  kube-dns.kube-system.svc.cluster.local\nAddress:  10.96.0.10\n\nName:    aspnetapp.win-demo.svc.cluster.local\nAddress:  10.102.98.171\n\n"},
		{name: "nslookup.exe appends the search list to a dotted name unlike the Windows resolver", from: servercore,
			args: []string{"hello.demo"}, exit: 0, stdout: "Name:    hello.demo.svc.cluster.local\nAddress:  10.97.141.163\n"},
		{name: "nslookup.exe reports a missing name as Non-existent domain", from: servercore,
			args: []string{"nosuch"}, exit: 1, stderr: "*** kube-dns.kube-system.svc.cluster.local can't find nosuch: Non-existent domain\n"},
		{name: "nslookup.exe lists the addresses of a headless Service", extra: true, from: servercore,
			args: []string{"hello-headless.demo.svc.cluster.local."}, exit: 0,
			stdout: "Addresses:  172.21.211.25\n\t  172.21.172.4\n"},
		{name: "nslookup.exe on the Windows node asks the router", from: func(*testing.T, *model.Cluster) dns.Source { return dns.NodeSource("k8s-lab-win-1") },
			args: []string{"k8s-lab-api.example.com."}, exit: 0,
			stdout: "Server:  router.example.com\nAddress:  192.168.10.1\n\nName:    k8s-lab-api.example.com\nAddress:  192.168.10.23\n", stderr: "Non-authoritative answer:\n"},
		{name: "nslookup on a Linux node is not modeled", from: func(*testing.T, *model.Cluster) dns.Source { return dns.NodeSource("k8s-lab-node-1") },
			args: []string{"k8s-lab-api.example.com"}, exit: exitNotModeled, stderr: "not modeled"},
		{name: "nslookup in an image of unknown tools is not modeled", from: helloPodImage,
			args: []string{"hello"}, exit: exitNotModeled, stderr: "ghcr.io/example/hello:1.2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dnsLab(t)
			if tt.extra {
				c = dnsLabExtra(t)
			}
			out, errOut, exit := nsLookup(c, tt.from(t, c), tt.args)
			if exit != tt.exit {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", exit, tt.exit, out, errOut)
			}
			if !strings.Contains(out, tt.stdout) {
				t.Errorf("stdout\n%s\ndoes not contain\n%s", out, tt.stdout)
			}
			if !strings.Contains(errOut, tt.stderr) {
				t.Errorf("stderr\n%s\ndoes not contain\n%s", errOut, tt.stderr)
			}
		})
	}
}

// helloPodImage is a hello pod: an image whose tools the twin does not know.
func helloPodImage(t *testing.T, c *model.Cluster) dns.Source { return dnsHelloPod(t, c) }

// busyboxInDemo is a busybox pod in the demo namespace.
func busyboxInDemo(*testing.T, *model.Cluster) dns.Source {
	return dns.Source{Namespace: "demo", Pod: "bb", Node: "k8s-lab-node-1", Image: "busybox:1.37"}
}

func TestNSLookupExeWritesTTLsAsPublishedTranscriptsDo(t *testing.T) {
	for _, c := range []struct {
		name string
		ttl  uint32
		want string
	}{
		{"seconds alone", 30, "30 secs"},
		{"minutes and seconds", 67, "1 min 7 secs"},
		{"whole minutes drop the seconds", 300, "5 mins"},
		{"a whole day", 86400, "1 day"},
		{"hours, minutes and seconds", 80204, "22 hours 16 mins 44 secs"},
		{"whole hours", 7200, "2 hours"},
		{"days", 604800, "7 days"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := winDuration(c.ttl); got != c.want {
				t.Errorf("winDuration(%d) = %q, want %q", c.ttl, got, c.want)
			}
		})
	}
}
