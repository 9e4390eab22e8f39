package cli

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/verify"
)

// verifySeedExample holds node outputs printed while the lab was built,
// verbatim, many cut with a pipeline or "...", one file per command.
const verifySeedExample = "../../examples/verify-actual-seed"

func verifyJSON(t *testing.T, dir string) (verify.Result, int) {
	t.Helper()
	out, errOut, code := run(t, "", "verify", "--actual", dir, "--lab", "-o", "json")
	var res verify.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("exit %d: %v\n%s%s", code, err, out, errOut)
	}
	return res, code
}

func TestTheLabsPrintedNodeOutputsVerifyWithNoDiscrepancy(t *testing.T) {
	res, code := verifyJSON(t, verifySeedExample)
	if code != 0 || len(res.Discrepancies) != 0 {
		t.Fatalf("exit %d, %d discrepancies: %+v", code, len(res.Discrepancies), res.Discrepancies)
	}
	if res.Outputs != 18 || res.Nodes != 3 {
		t.Errorf("read %d outputs of %d nodes, want 18 of 3", res.Outputs, res.Nodes)
	}
	// What the twin cannot answer is listed, never dropped; so are the
	// outputs cut short, whose left-out part is not compared.
	var notes []string
	for _, n := range res.NotCompared {
		reason, _, _ := strings.Cut(n.Reason, ":")
		notes = append(notes, n.File+": "+reason)
	}
	sort.Strings(notes)
	want := []string{
		"k8s-lab-node-2/pgrep-bird.txt: the twin does not answer it",
		"k8s-lab-node-2/ss-bgp.txt: the twin does not answer it",
		"k8s-lab-win-1/hns-endpoints-table.txt: the output is cut short (\"...\")",
		"k8s-lab-win-1/hnsdiag-loadbalancers.txt: the output is cut short (\"...\")",
		"k8s-lab-win-1/netadapter-table.txt: the output is cut short (\"...\")",
	}
	if strings.Join(notes, "\n") != strings.Join(want, "\n") {
		t.Errorf("not compared:\n%s\nwant:\n%s", strings.Join(notes, "\n"), strings.Join(want, "\n"))
	}
}

func TestAPerturbedFilteredOutputIsOneNamedDiscrepancy(t *testing.T) {
	cases := []struct {
		name, file, old, new string
		kind                 string
		change               verify.Change
	}{
		{"a route cut with grep whose gateway changed", "k8s-lab-node-1/ip-route-grep.txt",
			"via 172.21.41.1", "via 172.21.41.9", "route", verify.Changed},
		{"a VTEP MAC in the first lines of ip -d link", "k8s-lab-node-1/ip-link-vxlan-head.txt",
			"66:ee:f4:61:98:50", "66:ee:f4:61:98:51", "vxlan device", verify.Changed},
		{"a VNI in the part grep -o keeps", "k8s-lab-node-2/ip-link-vxlan-grep.txt",
			"vxlan id 4096", "vxlan id 4097", "output line", verify.Changed},
		{"a RemoteSubnetRoute's provider address in a Format-Table", "k8s-lab-win-1/hns-calico-remotesubnetroutes.txt",
			"192.168.10.24", "192.168.10.29", "output line", verify.Changed},
		{"an extra remote endpoint in a listing cut short", "k8s-lab-win-1/hns-endpoints-table.txt",
			"172.21.41.6   0E-2A-ac-15-29-06", "172.21.41.6   0E-2A-ac-15-29-06\n172.21.41.9   0E-2A-ac-15-29-09", "output line", verify.Extra},
		{"a load balancer's VIP in hnsdiag cut short is an extra line", "k8s-lab-win-1/hnsdiag-loadbalancers.txt",
			"Virtual IPs      : 10.96.0.10\n    Direct IP IDs    : 2b87a046", "Virtual IPs      : 10.96.0.11\n    Direct IP IDs    : 2b87a046", "output line", verify.Extra},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyFolder(t, verifySeedExample)
			edit(t, dir, tc.file, tc.old, tc.new)
			res, code := verifyJSON(t, dir)
			if code != ExitNegative || len(res.Discrepancies) != 1 {
				t.Fatalf("exit %d with %d discrepancies, want exit 1 with one: %+v", code, len(res.Discrepancies), res.Discrepancies)
			}
			d := res.Discrepancies[0]
			if d.File != tc.file || d.Kind != tc.kind || d.Change != tc.change || len(d.Causes) == 0 {
				t.Errorf("got %s %s %s (%d causes), want %s %s %s", d.File, d.Change, d.Kind, len(d.Causes), tc.file, tc.change, tc.kind)
			}
		})
	}
}

// The lab's route table printed before its Windows node joined and before
// the hello pods ran lacks exactly the two routes they brought.
func TestARouteTablePrintedBeforeTheWindowsNodeJoinedLacksItsTwoRoutes(t *testing.T) {
	res, code := verifyJSON(t, "../../examples/verify-actual-seed-before-windows")
	var got []string
	for _, d := range res.Discrepancies {
		got = append(got, string(d.Change)+" "+d.Expected.Key)
	}
	want := "missing unicast 172.21.172.4/32\nmissing unicast 172.21.41.0/26"
	if code != ExitNegative || strings.Join(got, "\n") != want {
		t.Errorf("exit %d, got:\n%s\nwant:\n%s", code, strings.Join(got, "\n"), want)
	}
}
