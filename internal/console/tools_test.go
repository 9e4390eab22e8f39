package console

import (
	"strings"
	"testing"
)

// The seed's lines, compared with the seed text itself.
func TestTheSeedsVerificationOutputsAreReproduced(t *testing.T) {
	seed := readSeed(t, "000")
	e := lab(t)
	curlW := []string{"curl.exe", "-s", "-o", "NUL", "-w", `%{remote_ip} %{http_code}\n`}
	for _, tc := range []struct {
		name     string
		src, ns  string
		argv     []string
		wantOut  string // exact stdout; lines must also be in the seed
		wantCode int
		prefixes []string // lines whose beginning (up to "time") the seed shows
	}{
		{name: "curl.exe from aspnetapp reaches hello by its full name through its ClusterIP",
			src: "deploy/aspnetapp", ns: "win-demo", argv: append(curlW, "http://hello.demo.svc.cluster.local/healthz"), wantOut: "10.97.141.163 200\n"},
		{name: "curl.exe cannot resolve the dotted short name hello.demo and exits 6",
			src: "deploy/aspnetapp", ns: "win-demo", argv: append(append([]string{}, curlW...), "--max-time", "5", "http://hello.demo/healthz"), wantOut: " 000\n", wantCode: 6},
		{name: "curl.exe resolves the single-label name aspnetapp with the search suffixes",
			src: "deploy/aspnetapp", ns: "win-demo", argv: append(append([]string{}, curlW...), "http://aspnetapp/"), wantOut: "10.102.98.171 200\n"},
		{name: "ping from aspnetapp to hello shows the seed's reply lines",
			src: "deploy/aspnetapp", ns: "win-demo", argv: []string{"ping", "-n", "2", "172.21.172.4"},
			prefixes: []string{"Pinging 172.21.172.4 with 32 bytes of data:", "Reply from 172.21.172.4: bytes=32 time=13ms TTL=63", "Reply from 172.21.172.4: bytes=32 time<1ms TTL=63"}},
		{name: "ping from aspnetapp to 1.1.1.1 ends with the seed's statistics",
			src: "deploy/aspnetapp", ns: "win-demo", argv: []string{"ping -n 2 1.1.1.1 | tail -3"},
			wantOut: "    Packets: Sent = 2, Received = 2, Lost = 0 (0% loss),\nApproximate round trip times in milli-seconds:\n    Minimum = 9ms, Maximum = 9ms, Average = 9ms\n"},
		{name: "busybox ping from check shows ttl 126 in the seed's format",
			src: "pod/check", ns: "default", argv: []string{"ping", "-c", "2", "172.21.41.6"},
			prefixes: []string{"PING 172.21.41.6 (172.21.41.6): 56 data bytes", "64 bytes from 172.21.41.6: seq=0 ttl=126 time=", "64 bytes from 172.21.41.6: seq=1 ttl=126 time="}},
		{name: "nslookup in check ends with the seed's three lines",
			src: "pod/check", ns: "default", argv: []string{"sh", "-c", "nslookup aspnetapp.win-demo.svc.cluster.local | tail -3"},
			wantOut: "Name:\taspnetapp.win-demo.svc.cluster.local\nAddress: 10.102.98.171\n\n"},
		{name: "wget in check gets the page whose title the seed greps",
			src: "pod/check", ns: "default", argv: []string{"sh", "-c", `wget -qO- http://aspnetapp.win-demo.svc.cluster.local | grep -o "<title>[^<]*</title>"`},
			wantOut: "<title>Welcome to .NET - AspNetCoreRazorApp</title>\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := execIn(t, e, tc.src, tc.ns, tc.argv...)
			if o.Code != tc.wantCode {
				t.Errorf("exit %d, want %d (stderr %q)", o.Code, tc.wantCode, o.Stderr)
			}
			if tc.wantOut != "" {
				if o.Stdout != tc.wantOut {
					t.Errorf("stdout %q, want %q", o.Stdout, tc.wantOut)
				}
				for _, l := range strings.Split(strings.TrimRight(tc.wantOut, "\n"), "\n") {
					if strings.TrimSpace(l) != "" && !strings.Contains(seed, l) {
						t.Errorf("expectation %q is not the seed's text", l)
					}
				}
			}
			for _, p := range tc.prefixes {
				if !strings.Contains(seed, p) {
					t.Errorf("expectation %q is not the seed's text", p)
				}
				if !strings.Contains(o.Stdout, "\n"+p) && !strings.HasPrefix(o.Stdout, p) {
					t.Errorf("stdout lacks a line starting %q:\n%s", p, o.Stdout)
				}
			}
		})
	}
}

func TestHelloReachesAspnetappByNameAndNslookupAnswersItsClusterIP(t *testing.T) {
	e := lab(t)
	o := execIn(t, e, "deploy/hello", "demo", "wget", "-qO-", "http://aspnetapp.win-demo.svc.cluster.local")
	if o.Code != 0 || !strings.Contains(o.Stdout, "<title>Welcome to .NET - AspNetCoreRazorApp</title>") {
		t.Errorf("wget: exit %d, %q %q", o.Code, o.Stdout, o.Stderr)
	}
	o = execIn(t, e, "deploy/hello", "demo", "nslookup", "aspnetapp.win-demo.svc.cluster.local")
	if o.Code != 0 || !strings.Contains(o.Stdout, "Name:\taspnetapp.win-demo.svc.cluster.local\nAddress: 10.102.98.171\n") {
		t.Errorf("nslookup: exit %d, %q", o.Code, o.Stdout)
	}
}

func TestTheNodeItselfPingsAspnetappWithTTL127(t *testing.T) {
	e := lab(t)
	o := execIn(t, e, "node/k8s-lab-node-1", "", "ping", "-c", "1", "172.21.41.6")
	if o.Code != 0 || !strings.Contains(o.Stdout, "64 bytes from 172.21.41.6: icmp_seq=1 ttl=127 time=") {
		t.Errorf("exit %d:\n%s", o.Code, o.Stdout)
	}
}

// The case: curl.exe in the Windows pod to hello.demo fails once a
// GlobalNetworkPolicy denies hello's ingress from win-demo.
func TestCurlFromTheWindowsPodToHelloFailsUnderADenyingGlobalNetworkPolicy(t *testing.T) {
	before := execIn(t, lab(t), "deploy/aspnetapp", "win-demo", "curl.exe", "-s", "-m", "5", "http://hello.demo.svc.cluster.local")
	after := execIn(t, buildWith(t, gnpDenyWinDemoToHello), "deploy/aspnetapp", "win-demo", "curl.exe", "-s", "-m", "5", "http://hello.demo.svc.cluster.local")
	if before.Code != 0 {
		t.Fatalf("without the policy curl.exe exits %d: %s%s", before.Code, before.Stdout, before.Stderr)
	}
	if after.Code == 0 {
		t.Fatalf("with the policy curl.exe still succeeds: %s", after.Stdout)
	}
}

// With egress denied, the tools fail the way they fail on a real cluster:
// busybox wget cannot resolve, nslookup times out.
func TestToolsInAPodWhoseDNSIsBlockedFailLikeTheRealOnes(t *testing.T) {
	e := buildWith(t, denyEgressDemo)
	o := execIn(t, e, "deploy/hello", "demo", "wget", "-qO-", "http://aspnetapp.win-demo.svc.cluster.local")
	if o.Code != 1 || o.Stderr != "wget: bad address 'aspnetapp.win-demo.svc.cluster.local'\n" {
		t.Errorf("wget: %d %q", o.Code, o.Stderr)
	}
	o = execIn(t, e, "deploy/hello", "demo", "nslookup", "aspnetapp.win-demo.svc.cluster.local")
	if o.Code != 1 || !strings.Contains(o.Stdout, "connection timed out; no servers could be reached") {
		t.Errorf("nslookup: %d %q", o.Code, o.Stdout)
	}
}
