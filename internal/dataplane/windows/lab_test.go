package windows

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/golden"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

var update = golden.Update

const (
	winNode = "k8s-lab-win-1"
	// observedSandbox is aspnetapp-769559d8ff-dkp9z's sandbox ID on the lab
	// (seed 000: crictl pods, Get-NetAdapter).
	observedSandbox = "df1924ad959c693c6dc07f1f797f63458fa53dcc81f8126755c3a4509e87a15e"
)

var (
	labOnce    sync.Once
	labCluster *model.Cluster
	labNodes   map[string]*Node
	labErr     error
)

// lab compiles the built-in lab. The observed sandbox ID is given the way
// the twin proposes to carry it: the SandboxIDAnnotation on the pod.
func lab(t testing.TB) *Node {
	t.Helper()
	labOnce.Do(func() {
		s, err := load.Load(load.Options{Lab: true})
		if err != nil {
			labErr = err
			return
		}
		c, err := engine.Build(s)
		if err != nil {
			labErr = err
			return
		}
		for _, p := range c.Pods {
			if p.Namespace == "win-demo" && p.Name == "aspnetapp-769559d8ff-dkp9z" {
				if p.Annotations == nil {
					p.Annotations = map[string]string{}
				}
				p.Annotations[SandboxIDAnnotation] = observedSandbox
			}
		}
		labCluster = c
		labNodes, labErr = Compile(c)
	})
	if labErr != nil {
		t.Fatal(labErr)
	}
	n := labNodes[winNode]
	if n == nil {
		t.Fatalf("no compiled node %s", winNode)
	}
	return n
}

// checkGolden compares got with testdata/golden/<name>.golden; -update
// rewrites it, a mismatch leaves actual_<name>.golden next to it.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", "golden", name+".golden"), got)
}

// transcript runs commands and prints them as a console would, with stderr
// and the exit code after a marker line.
func transcript(n *Node, cmds ...string) string {
	var sb strings.Builder
	for _, c := range cmds {
		for i, l := range strings.Split(c, "\n") {
			if i == 0 {
				sb.WriteString(`PS C:\> ` + l + "\n")
			} else {
				sb.WriteString(l + "\n")
			}
		}
		out, errOut, code := psExec(n, []string{c})
		sb.WriteString(out)
		if errOut != "" || code != 0 {
			fmt.Fprintf(&sb, "[stderr, exit %d]\n%s", code, errOut)
		}
	}
	return sb.String()
}

// seedExcerpt reads a seed excerpt: the PS C:\> lines (with their
// continuation lines) are the script, the rest the printed output.
func seedExcerpt(t *testing.T, name string) (script, output string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "seed", name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	var cmd, out []string
	cont := false
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, `PS C:\> `):
			cmd = append(cmd, strings.TrimPrefix(l, `PS C:\> `))
		case cont:
			cmd[len(cmd)-1] += "\n" + l
		default:
			out = append(out, l)
		}
		tl := strings.TrimSpace(l)
		cont = len(cmd) > 0 && (strings.HasSuffix(tl, "|") || strings.HasSuffix(tl, ",")) && (strings.HasPrefix(l, `PS C:\> `) || cont)
	}
	return strings.Join(cmd, "\n"), strings.Join(out, "\n")
}

var guidRE = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)

// TestSeed000PrintsWhatTheWindowsNodePrinted runs every HNS command of seed
// 000 on the compiled lab. Excerpts without "..." must match exactly; the
// others must contain the seed's lines in the seed's order (HNS's random
// IDs masked where the seed shows them).
func TestSeed000PrintsWhatTheWindowsNodePrinted(t *testing.T) {
	n := lab(t)
	for _, name := range []string{"networks", "calico_ep", "firewall", "netadapter", "subnet_policies",
		"remote_subnet_routes", "endpoints", "policy_groups", "exception_list", "loadbalancers"} {
		t.Run(name, func(t *testing.T) {
			script, want := seedExcerpt(t, name)
			got, errOut, code := psExec(n, []string{script})
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			want = strings.TrimRight(want, "\n")
			gotT := strings.TrimRight(got, "\n")
			if !strings.Contains(want, "...") {
				if gotT != want {
					t.Errorf("output differs from the seed\n got:\n%s\nwant:\n%s", gotT, want)
				}
				return
			}
			wantLines := strings.Split(guidRE.ReplaceAllString(want, "GUID"), "\n")
			gotLines := strings.Split(guidRE.ReplaceAllString(gotT, "GUID"), "\n")
			j := 0
			for _, w := range wantLines {
				if w == "..." {
					continue
				}
				for j < len(gotLines) && gotLines[j] != w {
					j++
				}
				if j == len(gotLines) {
					t.Fatalf("seed line %q not found (in order) in:\n%s", w, got)
				}
				j++
			}
		})
	}
}

// TestSeedRemoteSubnetRoutesInTheSeedsOrder pins the three routes, in the
// seed's order, to the exact table rows the seed prints.
func TestSeedRemoteSubnetRoutesInTheSeedsOrder(t *testing.T) {
	n := lab(t)
	out, _, _ := psExec(n, []string{"$net = Get-HnsNetwork | Where-Object Name -eq Calico; $net.Policies | Where-Object Type -eq RemoteSubnetRoute | Format-Table DestinationPrefix, ProviderAddress, DistributedRouterMacAddress, IsolationId"})
	rows := strings.Split(strings.TrimSpace(out), "\n")[2:]
	want := []string{
		"172.21.211.0/26   192.168.10.24   66-ee-f4-61-98-50                  4096",
		"172.21.70.192/26  192.168.10.23   66-79-81-e0-1a-7d                  4096",
		"172.21.172.0/26   192.168.10.26   66-05-38-46-ab-ea                  4096",
	}
	if strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("routes:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
}

// TestSeedDNSLoadBalancersShareTheCoreDNSEndpoints: two load balancers for
// 10.96.0.10 port 53, UDP and TCP, over the same CoreDNS endpoint IDs.
func TestSeedDNSLoadBalancersShareTheCoreDNSEndpoints(t *testing.T) {
	n := lab(t)
	var udp, tcp *LoadBalancer
	for _, lb := range n.LoadBalancers() {
		if len(lb.FrontendVIPs) == 1 && lb.FrontendVIPs[0] == "10.96.0.10" && lb.ExternalPort == 53 {
			switch lb.Protocol {
			case 17:
				udp = lb
			case 6:
				tcp = lb
			}
		}
	}
	if udp == nil || tcp == nil {
		t.Fatalf("want UDP and TCP load balancers for 10.96.0.10:53, have %v %v", udp, tcp)
	}
	if strings.Join(udp.EndpointIDs, ",") != strings.Join(tcp.EndpointIDs, ",") || len(udp.EndpointIDs) != 2 {
		t.Errorf("UDP %v and TCP %v should be the same two CoreDNS endpoints", udp.EndpointIDs, tcp.EndpointIDs)
	}
	if strings.Join(udp.Backends, ",") != "172.21.172.3,172.21.70.199" {
		t.Errorf("backends %v", udp.Backends)
	}
	if udp.SourceVIP != "172.21.41.2" || !udp.DSR() {
		t.Errorf("source VIP %s (want Calico_ep 172.21.41.2), DSR %v (start.ps1 passes --enable-dsr=true)", udp.SourceVIP, udp.DSR())
	}
}

// TestSeedEndpointFacts checks the endpoint facts seed 000 states.
func TestSeedEndpointFacts(t *testing.T) {
	n := lab(t)
	byIP := map[string]*Endpoint{}
	for _, ep := range n.Endpoints() {
		byIP[ep.IPAddress] = ep
	}
	for ip, want := range map[string]string{
		"172.21.41.6":   "0E-2A-ac-15-29-06",
		"172.21.41.5":   "0E-2A-ac-15-29-05",
		"172.21.211.25": "02-11-ac-15-d3-19",
		"172.21.41.2":   "00:15:5d:0a:00:05",
		"10.96.0.10":    "00:15:5d:0a:00:05",
	} {
		if ep := byIP[ip]; ep == nil || ep.MacAddress != want {
			t.Errorf("%s: endpoint %+v, want MAC %s", ip, ep, want)
		}
	}
	if ep := byIP["172.21.41.2"]; ep.Name != "Calico_ep" || !ep.IsRemoteEndpoint {
		t.Errorf("Calico_ep: %+v", ep)
	}
	if ep := byIP["172.21.211.25"]; ep.Policies[0].PA != "192.168.10.24" {
		t.Errorf("the remote endpoint of hello on node-1 should have PA 192.168.10.24: %+v", ep.Policies)
	}
	if ep := byIP["172.21.41.6"]; ep.Name != observedSandbox+"_Calico" || ep.ACLCount != 7 {
		t.Errorf("pod endpoint: name %s, %d ACLs", ep.Name, ep.ACLCount)
	}
}

// TestGoldenCommands prints every emulated command on the lab.
func TestGoldenCommands(t *testing.T) {
	n := lab(t)
	podPort := ""
	for _, ep := range n.Endpoints() {
		if ep.IPAddress == "172.21.41.6" {
			podPort = ep.ID
		}
	}
	groups := map[string][]string{
		"hns_default_views": {"Get-HnsNetwork", "Get-HnsEndpoint", "Get-HnsNamespace", "Get-HnsPolicyList"},
		"hns_json": {
			"Get-HnsNetwork | ConvertTo-Json -Depth 10",
			"Get-HnsEndpoint | Where-Object IPAddress -eq 172.21.41.6 | ConvertTo-Json -Depth 10",
			"Get-HnsEndpoint | Where-Object IsRemoteEndpoint | Select-Object -First 2 | ConvertTo-Json -Depth 10",
			"Get-HnsNamespace | ConvertTo-Json -Depth 10",
			"Get-HnsPolicyList | ConvertTo-Json -Depth 10",
			"Get-HnsNetwork | ConvertTo-Json",
		},
		"seed_pipelines": {
			"Get-HnsNetwork | Select-Object Name, Type,\n    @{n='Subnet';e={$_.Subnets.AddressPrefix}}, @{n='Gateway';e={$_.Subnets.GatewayAddress}}, ManagementIP |\n    Format-Table",
			"Get-HnsEndpoint | Where-Object Name -eq Calico_ep | Format-List Name, IPAddress, VirtualNetworkName",
			"Get-HnsEndpoint | Sort-Object IsRemoteEndpoint, IPAddress | Format-Table IPAddress, MacAddress, IsRemoteEndpoint",
			"$net = Get-HnsNetwork | Where-Object Name -eq Calico\n$net.Subnets.Policies | ConvertTo-Json -Compress",
			"$net = Get-HnsNetwork | Where-Object Name -eq Calico\n$net.Policies | Where-Object Type -eq RemoteSubnetRoute |\n    Format-Table DestinationPrefix, ProviderAddress, DistributedRouterMacAddress, IsolationId",
			"$ep = Get-HnsEndpoint | Where-Object IPAddress -eq 172.21.41.6\n$ep.Policies | Group-Object Type | Format-Table Count, Name",
			"$ep = Get-HnsEndpoint | Where-Object IPAddress -eq 172.21.41.6\n($ep.Policies | Where-Object { $_.Type -eq 'OutBoundNAT' -and $_.ExceptionList }).ExceptionList",
			"$ep = Get-HnsEndpoint | Where-Object IPAddress -eq 172.21.41.6\n$ep.Policies | Where-Object Type -eq ACL | Format-Table Id, Direction, Action, Priority, RuleType, RemoteAddresses",
		},
		"host": {
			"Get-NetAdapter",
			"Get-NetAdapter | Format-Table Name, InterfaceDescription, MacAddress",
			"Get-NetAdapter -Name 'vEthernet (DrPort*'",
			"Get-NetFirewallRule",
			"Get-NetFirewallRule -Name OverlayTraffic4789UDP | Format-Table Name, DisplayName, Enabled, Direction, Action",
			"Get-NetFirewallRule -Name nope",
		},
		"hnsdiag": {"hnsdiag list networks", "hnsdiag list endpoints", "hnsdiag list namespaces", "hnsdiag list loadbalancers", "hnsdiag list all"},
		"vfpctrl": {
			"vfpctrl /list-vmswitch-port",
			"vfpctrl /port " + podPort + " /list-layer",
			"vfpctrl /port " + podPort + " /layer ACL_ENDPOINT_LAYER /list-group",
			"vfpctrl /port " + podPort + " /layer ACL_ENDPOINT_LAYER /list-rule",
			"vfpctrl /port " + podPort + " /layer LB_DSR /group LB_DSR_IPv4_OUT /list-rule",
			"vfpctrl /port " + podPort + " /layer SLB_NAT_LAYER /list-rule",
			"vfpctrl /port " + podPort + " /layer VNET_ENCAP_LAYER /list-rule",
			"vfpctrl /port nope /list-layer",
		},
		"errors": {
			"Get-NetIPAddress -AddressFamily IPv4",
			"Get-HnsEndpoint | Format-Table -Bogus",
			"Get-HnsEndpoint | Where-Object { $_.Name -eq }",
			"Get-HnsEndpoint | hnsdiag list endpoints",
			"ipconfig /all",
		},
	}
	for name, cmds := range groups {
		t.Run(name, func(t *testing.T) { checkGolden(t, name, transcript(n, cmds...)) })
	}
}

// TestGoldenRows prints the typed rows the get commands show.
func TestGoldenRows(t *testing.T) {
	n := lab(t)
	var sb strings.Builder
	table := func(cols []string, rows [][]string) {
		w := make([]int, len(cols))
		for i, c := range cols {
			w[i] = len(c)
		}
		for _, r := range rows {
			for i, c := range r {
				w[i] = max(w[i], len(c))
			}
		}
		for _, r := range append([][]string{cols}, rows...) {
			var line strings.Builder
			for i, c := range r {
				line.WriteString(c + strings.Repeat(" ", w[i]-len(c)+3))
			}
			sb.WriteString(strings.TrimRight(line.String(), " ") + "\n")
		}
		sb.WriteString("\n")
	}
	var rows [][]string
	for _, r := range n.NetworkRows() {
		rows = append(rows, r.Cells())
	}
	table(NetworkColumns, rows)
	rows = nil
	for _, r := range n.EndpointRows() {
		rows = append(rows, r.Cells())
	}
	table(EndpointColumns, rows)
	rows = nil
	for _, r := range n.LoadBalancerRows() {
		rows = append(rows, r.Cells())
	}
	table(LoadBalancerColumns, rows)
	sb.WriteString("Warnings:\n")
	for _, w := range n.Warnings {
		sb.WriteString("  " + w + "\n")
	}
	sb.WriteString("Notes:\n")
	for _, w := range n.Notes {
		sb.WriteString("  " + w + "\n")
	}
	checkGolden(t, "rows", sb.String())
}
