package console

import (
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dns"
	"strings"
	"testing"
)

func TestResolveDNSNameParameters(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		host   string
		qtype  uint16
		server string
		err    string // substring; "" for none
	}{
		{name: "a name alone asks for A", args: []string{"hello"}, host: "hello", qtype: dns.TypeA},
		{name: "the second positional argument is the type", args: []string{"hello", "srv"}, host: "hello", qtype: dns.TypeSRV},
		{name: "named parameters may come in any order and be shortened", args: []string{"-Ty", "SRV", "-N", "x.y", "-Se", "10.96.0.10"}, host: "x.y", qtype: dns.TypeSRV, server: "10.96.0.10"},
		{name: "switches that change nothing modeled are taken", args: []string{"-DnsOnly", "-NoHostsFile", "x"}, host: "x", qtype: dns.TypeA},
		{name: "a server must be an address", args: []string{"x", "-Server", "dns.example"}, err: "an address is needed"},
		{name: "an unknown parameter is refused", args: []string{"x", "-CacheOnly"}, err: "parameter -CacheOnly"},
		{name: "a type the twin does not answer is refused", args: []string{"x", "-Type", "MX"}, err: "-Type MX"},
		{name: "a parameter without its value is refused", args: []string{"-Name"}, err: "without a value"},
		{name: "no name at all is refused", args: []string{"-DnsOnly"}, err: "prompts for -Name"},
		{name: "a third positional argument is refused", args: []string{"x", "A", "y"}, err: "arguments A y"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host, qtype, server, err := parseResolveDNSName(tt.args)
			if tt.err != "" {
				if !strings.Contains(err, tt.err) {
					t.Fatalf("error %q, want one saying %q", err, tt.err)
				}
				return
			}
			if err != "" || host != tt.host || qtype != tt.qtype || server != tt.server {
				t.Errorf("got %q %s %q (error %q), want %q %s %q", host, dns.TypeString(qtype), server, err, tt.host, dns.TypeString(tt.qtype), tt.server)
			}
		})
	}
}

func TestResolveDNSNameRefusesWhatItCannotKnow(t *testing.T) {
	servercore := dns.Source{Namespace: "win-demo", Pod: "tools", Node: "k8s-lab-win-1", Image: "mcr.microsoft.com/windows/servercore:ltsc2025"}
	tests := []struct {
		name string
		args []string
		why  string
	}{
		{"a forwarded answer's TTL is not known", []string{"k8s-lab-api.example.com"}, "TTL of k8s-lab-api.example.com"},
		{"an answer without records would print the authority SOA", []string{"hello.demo.svc.cluster.local", "AAAA"}, "SOA of the authority section"},
		{"a Linux pod has no Resolve-DnsName", []string{"hello"}, "runs on Windows"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from := servercore
			if i == 2 {
				from = dnsCheckPod
			}
			_, errOut, exit := resolveDNSName(dnsLab(t), from, tt.args)
			if exit != exitNotModeled || !strings.Contains(errOut, tt.why) {
				t.Errorf("exit %d, stderr %q; want not modeled saying %q", exit, errOut, tt.why)
			}
		})
	}
}

func FuzzResolveDNSNameParameters(f *testing.F) {
	for _, s := range []string{"hello", "-Type SRV _http._tcp.hello", "-Name x -Server 10.96.0.10", "x A y", "-", "-N"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		host, _, server, err := parseResolveDNSName(strings.Fields(line))
		if err == "" && host == "" {
			t.Errorf("%q: no error and no name", line)
		}
		if err != "" && (host != "" || server != "") {
			t.Errorf("%q: error %q with a result", line, err)
		}
	})
}
