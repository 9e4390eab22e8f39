package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const verifyExample = "../../examples/verify-actual"

// copyActual copies the example actual folder into a temporary one.
func copyActual(t *testing.T) string { t.Helper(); return copyFolder(t, verifyExample) }

// copyFolder copies an example actual folder into a temporary one.
func copyFolder(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// edit replaces old with new in one file of an actual folder, failing when
// old is not there (a mutation that changes nothing would test nothing).
func edit(t *testing.T, dir, file, old, new string) {
	t.Helper()
	p := filepath.Join(dir, file)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("%s does not hold %q", file, old)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(data), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// editJSON decodes a ConvertTo-Json file, changes it and writes it back
// (indented differently from PowerShell, which must not matter).
func editJSON(t *testing.T, dir, file string, change func([]map[string]any) []map[string]any) {
	t.Helper()
	p := filepath.Join(dir, file)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	head, body, _ := strings.Cut(string(data), "\n")
	var v []map[string]any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatal(err)
	}
	out, err := json.MarshalIndent(change(v), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(head+"\n"+string(out)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestTheLabsOwnAnswersVerifyClean(t *testing.T) {
	for _, output := range []string{"text", "json"} {
		t.Run(output, func(t *testing.T) {
			args := []string{"verify", "--actual", verifyExample, "--lab", "-o", output}
			out, errOut, code := run(t, "", args...)
			if code != ExitOK {
				t.Fatalf("exit %d, want 0\n%s%s", code, out, errOut)
			}
			got := fmt.Sprintf("$ kubectl-hybrid %s\n%s--- stderr\n%s--- exit %d\n", strings.Join(args, " "), out, errOut, code)
			goldenFile(t, "verify-the-lab-example-as-"+output+".txt", got)
		})
	}
}

const (
	win   = "k8s-lab-win-1"
	node1 = "k8s-lab-node-1"
	node2 = "k8s-lab-node-2"
)

// TestEachPerturbationIsOneNamedDiscrepancy changes one thing in a copy of
// the lab's outputs and expects exactly that one discrepancy, with the
// component that writes it and its first likely cause.
func TestEachPerturbationIsOneNamedDiscrepancy(t *testing.T) {
	without := func(ip string) func([]map[string]any) []map[string]any {
		return func(v []map[string]any) []map[string]any {
			var out []map[string]any
			for _, e := range v {
				if e["IPAddress"] != ip {
					out = append(out, e)
				}
			}
			return out
		}
	}
	cases := []struct {
		name     string
		mutate   func(t *testing.T, dir string)
		node     string
		kind     string
		change   string
		producer string
		cause    string
	}{
		{"a missing route to a remote block", func(t *testing.T, d string) {
			edit(t, d, node2+"/ip-route.txt", "172.21.211.0/26 via 172.21.211.0 dev vxlan.calico onlink mtu 1450 \n", "")
		}, node2, "route", "missing", "Felix", "calico-node"},
		{"an extra route to a block no node holds", func(t *testing.T, d string) {
			edit(t, d, node2+"/ip-route.txt", "blackhole", "172.21.99.0/26 via 172.21.99.0 dev vxlan.calico onlink mtu 1450\nblackhole")
		}, node2, "route", "extra", "Felix", "removed or re-created"},
		{"a route with another MTU", func(t *testing.T, d string) {
			edit(t, d, node2+"/ip-route.txt", "172.21.70.192/26 via 172.21.70.192 dev vxlan.calico onlink mtu 1450", "172.21.70.192/26 via 172.21.70.192 dev vxlan.calico onlink mtu 1410")
		}, node2, "route", "changed", "Felix", "IPAM block"},
		{"a host route from DHCP", func(t *testing.T, d string) {
			edit(t, d, node2+"/ip-route.txt", "default via 192.168.10.1 dev ens18 proto static", "default via 192.168.10.1 dev ens18 proto dhcp metric 100")
		}, node2, "route", "changed", "host network", "netplan"},
		{"a missing neighbour of the Windows VTEP", func(t *testing.T, d string) {
			edit(t, d, node1+"/ip-neigh-vxlan.txt", "172.21.41.1 lladdr 00:15:5d:eb:90:ae PERMANENT\n", "")
		}, node1, "neighbour", "missing", "Felix", "tunnel address and MAC"},
		{"a neighbour with a wrong VTEP MAC", func(t *testing.T, d string) {
			edit(t, d, node1+"/ip-neigh-vxlan.txt", "66:79:81:e0:1a:7d", "66:79:81:e0:1a:7e")
		}, node1, "neighbour", "changed", "Felix", "tunnel address and MAC"},
		{"an FDB entry tunnelling to the wrong node", func(t *testing.T, d string) {
			edit(t, d, node1+"/bridge-fdb-vxlan.txt", "dst 192.168.10.23", "dst 192.168.10.99")
		}, node1, "fdb entry", "changed", "Felix", "tunnel address and MAC"},
		{"an FDB entry with a wrong VTEP MAC", func(t *testing.T, d string) {
			edit(t, d, node1+"/bridge-fdb-vxlan.txt", "00:15:5d:eb:90:ae dst", "00:15:5d:eb:90:af dst")
		}, node1, "fdb entry", "changed", "Felix", "tunnel address and MAC"},
		{"a VTEP with a wrong MAC", func(t *testing.T, d string) {
			edit(t, d, node2+"/ip-link-vxlan.txt", "link/ether 66:05:38:46:ab:ea", "link/ether 66:05:38:46:ab:eb")
		}, node2, "vxlan device", "changed", "Felix", "FelixConfiguration"},
		{"a VTEP with another VNI", func(t *testing.T, d string) {
			edit(t, d, node2+"/ip-link-vxlan.txt", "vxlan id 4096", "vxlan id 4097")
		}, node2, "vxlan device", "changed", "Felix", "vxlanVNI"},
		{"a missing nft element of the cluster IPs", func(t *testing.T, d string) {
			edit(t, d, node2+"/nft-kube-proxy.txt", "10.96.0.1, 10.96.0.10,", "10.96.0.1,")
		}, node2, "nft element", "missing", "kube-proxy", "endpoints differ"},
		{"a service map element pointing at another chain", func(t *testing.T, d string) {
			edit(t, d, node2+"/nft-kube-proxy.txt", "10.97.141.163 . tcp . 80 : goto service-VSI2YVQZ-demo/hello/tcp/http", "10.97.141.163 . tcp . 80 : goto service-VSI2YVQZ-demo/hello/tcp/old")
		}, node2, "nft element", "changed", "kube-proxy", "endpoints differ"},
		{"a service chain with one backend less", func(t *testing.T, d string) {
			edit(t, d, node2+"/nft-kube-proxy.txt", "numgen random mod 2 map { 0 : 172.21.172.4 . 8080, 1 : 172.21.211.25 . 8080 }", "numgen random mod 1 map { 0 : 172.21.172.4 . 8080 }")
		}, node2, "nft rule", "changed", "kube-proxy", "endpoints differ"},
		{"a wrong DR MAC in a RemoteSubnetRoute", func(t *testing.T, d string) {
			edit(t, d, win+"/hns-networks.json", "66-05-38-46-ab-ea", "66-05-38-46-ab-eb")
		}, win, "hns network policy", "changed", "calico-node-windows", "tunnel address and MAC"},
		{"a missing RemoteSubnetRoute", func(t *testing.T, d string) {
			editJSON(t, d, win+"/hns-networks.json", func(v []map[string]any) []map[string]any {
				for _, n := range v {
					if n["Name"] == "Calico" {
						ps := n["Policies"].([]any)
						n["Policies"] = ps[:len(ps)-1]
					}
				}
				return v
			})
		}, win, "hns network policy", "missing", "calico-node-windows", "tunnel address and MAC"},
		{"an extra HNS network left over from an earlier install", func(t *testing.T, d string) {
			editJSON(t, d, win+"/hns-networks.json", func(v []map[string]any) []map[string]any {
				return append(v, map[string]any{"ID": "6d3a1a43-6e9a-4f7f-9a40-5b1d3f1e8a11", "Name": "vxlan0", "Type": "Overlay",
					"Subnets":  []any{map[string]any{"AddressPrefix": "10.244.1.0/24", "GatewayAddress": "10.244.1.1"}},
					"Policies": []any{map[string]any{"Type": "RemoteSubnetRoute", "DestinationPrefix": "10.244.0.0/24"}}})
			})
		}, win, "hns network", "extra", "calico-node-windows", "left over"},
		{"the Calico HNS network with the wrong subnet", func(t *testing.T, d string) {
			edit(t, d, win+"/hns-networks.json", `"AddressPrefix":  "172.21.41.0/26"`, `"AddressPrefix":  "172.21.40.0/26"`)
		}, win, "hns network", "changed", "calico-node-windows", "left over"},
		{"a missing remote HNS endpoint of a service backend", func(t *testing.T, d string) {
			editJSON(t, d, win+"/hns-endpoints.json", without("172.21.211.25"))
		}, win, "hns endpoint", "missing", "kube-proxy-windows", "endpoints differ"},
		{"a pod endpoint whose ACL blocks what it should allow", func(t *testing.T, d string) {
			edit(t, d, win+"/hns-endpoints.json", `"Action":  "Allow",
                             "Direction":  "In",
                             "Id":  "profile-kns.win-demo-MQEUCbpjktS8xYB5-0"`, `"Action":  "Block",
                             "Direction":  "In",
                             "Id":  "profile-kns.win-demo-MQEUCbpjktS8xYB5-0"`)
		}, win, "hns endpoint policy", "changed", "calico-node-windows", "NetworkPolicies"},
		{"a missing kube-proxy load balancer in hnsdiag", func(t *testing.T, d string) {
			data, err := os.ReadFile(filepath.Join(d, win, "hnsdiag-all.txt"))
			if err != nil {
				t.Fatal(err)
			}
			s := string(data)
			at := strings.Index(s, "Load Balancer    : 7b13433c")
			end := strings.Index(s[at+1:], "Load Balancer")
			edit(t, d, win+"/hnsdiag-all.txt", s[at:at+1+end], "")
		}, win, "hns load balancer", "missing", "kube-proxy-windows", "kube-proxy-windows is not running"},
		{"a missing policy list", func(t *testing.T, d string) {
			data, err := os.ReadFile(filepath.Join(d, win, "hns-policylist.txt"))
			if err != nil {
				t.Fatal(err)
			}
			s := string(data)
			at := strings.Index(s, "ActivityId       : b5573871")
			end := strings.Index(s[at:], "\n\n")
			edit(t, d, win+"/hns-policylist.txt", s[at:at+end+2], "")
		}, win, "hns load balancer", "missing", "kube-proxy-windows", "kube-proxy-windows is not running"},
		{"the host's vEthernet adapter down", func(t *testing.T, d string) {
			edit(t, d, win+"/netadapter.txt", "Hyper-V Virtual Ethernet Adapter              Up  ", "Hyper-V Virtual Ethernet Adapter              Down")
		}, win, "net adapter", "changed", "calico-node-windows", "down or was renamed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyActual(t)
			tc.mutate(t, dir)
			out, errOut, code := run(t, "", "verify", "--actual", dir, "--lab", "-o", "json")
			if code != ExitNegative {
				t.Fatalf("exit %d, want 1\n%s%s", code, out, errOut)
			}
			var res struct {
				Discrepancies []struct {
					Node, Kind, Change, Producer string
					Causes                       []struct{ Cause, Confirm string }
				}
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if len(res.Discrepancies) != 1 {
				t.Fatalf("%d discrepancies, want 1:\n%s", len(res.Discrepancies), out)
			}
			d := res.Discrepancies[0]
			if d.Node != tc.node || d.Kind != tc.kind || d.Change != tc.change || !strings.Contains(d.Producer, tc.producer) {
				t.Fatalf("got %s %s %s by %s, want %s %s %s by %s", d.Node, d.Change, d.Kind, d.Producer, tc.node, tc.change, tc.kind, tc.producer)
			}
			var causes []string
			for _, c := range d.Causes {
				if c.Confirm == "" {
					t.Errorf("cause %q has no command that confirms it", c.Cause)
				}
				causes = append(causes, c.Cause)
			}
			if len(causes) == 0 || !strings.Contains(strings.Join(causes, "\n"), tc.cause) {
				t.Errorf("causes do not mention %q:\n%s", tc.cause, strings.Join(causes, "\n"))
			}
			text, _, _ := run(t, "", "verify", "--actual", dir, "--lab")
			goldenFile(t, "verify-"+strings.ReplaceAll(tc.name, " ", "-")+".txt", text)
		})
	}
}

func TestVerifyRefusesBadInputWithFileAndLine(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(t *testing.T, dir string)
		want   string
	}{
		{"a file without the command line", func(t *testing.T, d string) {
			edit(t, d, node2+"/ip-route.txt", "# ip route\n", "")
		}, node2 + "/ip-route.txt:1: the first line must be"},
		{"a first line that names no command", func(t *testing.T, d string) {
			edit(t, d, node2+"/ip-route.txt", "# ip route", "#")
		}, `ip-route.txt:1: the first line must be "# COMMAND" (the command as typed); it names no command`},
		{"a route whose destination is no prefix", func(t *testing.T, d string) {
			edit(t, d, node2+"/ip-route.txt", "172.21.70.192/26 via", "172.21.70.300/26 via")
		}, "ip-route.txt:4: destination"},
		{"broken JSON", func(t *testing.T, d string) {
			edit(t, d, win+"/hns-networks.json", `"Name":  "Calico",`, `"Name":  "Calico"`)
		}, "hns-networks.json:34: invalid JSON"},
		{"a node the twin does not have", func(t *testing.T, d string) {
			if err := os.Rename(filepath.Join(d, node2), filepath.Join(d, "k8s-lab-node-9")); err != nil {
				t.Fatal(err)
			}
		}, `the twin's input has no node "k8s-lab-node-9"`},
		{"a Windows command on a Linux node", func(t *testing.T, d string) {
			edit(t, d, node2+"/ip-route.txt", "# ip route", "# Get-NetAdapter")
		}, `"Get-NetAdapter" does not run on Linux node k8s-lab-node-2`},
		{"a file beside the node folders", func(t *testing.T, d string) {
			if err := os.WriteFile(filepath.Join(d, "notes.txt"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "notes.txt: expected a folder per node"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyActual(t)
			tc.mutate(t, dir)
			out, errOut, code := run(t, "", "verify", "--actual", dir, "--lab")
			if code != ExitBadInput {
				t.Fatalf("exit %d, want 2\n%s%s", code, out, errOut)
			}
			if !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
				t.Fatalf("stderr %q, want one line with %q", errOut, tc.want)
			}
		})
	}
}
