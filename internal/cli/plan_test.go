package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const labBeforeWin1 = "../plan/testdata/lab-before-win-1"

func TestPlanJoinWindowsExitsWithTheDocumentedCodes(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		in   string // a piece of stdout or stderr
	}{
		{"the lab before its Windows node is clean", []string{"plan", "join-windows", "k8s-lab-win-1", "--ip", "192.168.10.25", "--cpu", "4", "--memory", "8Gi", "-f", labBeforeWin1, "-o", "json"}, ExitOK, `"tunnelAddress": "172.21.41.1"`},
		{"the main cluster after migration is clean", []string{"plan", "join-windows", "k8s-win-1", "--ip", "192.168.10.40", "--cpu", "4", "--memory", "8Gi", "-f", "../../examples/main-cluster", "-f", "../../examples/what-if/main-cluster-migrated.yaml", "-o", "yaml"}, ExitOK, "windowsDataplane: HNS"},
		{"the main cluster is refused", []string{"plan", "join-windows", "k8s-win-1", "--ip", "192.168.10.40", "-f", "../../examples/main-cluster"}, ExitNegative, "HYB002"},
		{"a NODE without --ip is bad usage", []string{"plan", "join-windows", "w1", "-f", labBeforeWin1}, ExitBadInput, "one --ip per NODE"},
		{"an address that is not IPv4 is bad usage", []string{"plan", "join-windows", "w1", "--ip", "x", "-f", labBeforeWin1}, ExitBadInput, "not an IPv4 address"},
		{"an unknown output is bad usage", []string{"plan", "join-windows", "w1", "--ip", "192.168.10.31", "-o", "wide", "-f", labBeforeWin1}, ExitBadInput, "allowed formats"},
		{"a missing input file is bad input", []string{"plan", "join-windows", "w1", "--ip", "192.168.10.31", "-f", "no-such-dir"}, ExitBadInput, "no-such-dir"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(t, "", tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr: %s", code, tc.code, errOut)
			}
			if !strings.Contains(out+errOut, tc.in) {
				t.Errorf("output lacks %q:\n%s\n%s", tc.in, out, errOut)
			}
		})
	}
}

func TestPlanJoinWindowsWritesTheFilesAsTheyGoOntoMachines(t *testing.T) {
	dir := t.TempDir()
	nodes := filepath.Join(dir, "nodes.txt")
	if err := os.WriteFile(nodes, []byte("# name address\nw2 192.168.10.32\nw3 192.168.10.33 10.0.20348\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	outDir := filepath.Join(dir, "out")
	_, errOut, code := run(t, "", "plan", "join-windows", "w1", "--ip", "192.168.10.31", "--nodes", nodes, "--cpu", "4", "--memory", "8Gi",
		"-f", labBeforeWin1, "--output-dir", outDir)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, f := range []string{"RUNBOOK.md", "cluster/kube-proxy-windows.yaml", "cluster/runtimeclass-windows-2025.yaml",
		"cluster/runtimeclass-windows-2022.yaml", "w1/C/k/join.yaml", "w3/C/k/patches/kubeletconfiguration.yaml", "w2/C/k/plan/07-join.ps1"} {
		if _, err := os.Stat(filepath.Join(outDir, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
}

func TestPlanMigrateExitsWithTheDocumentedCodes(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "svc.yaml")
	if err := os.WriteFile(other, []byte("apiVersion: v1\nkind: Service\nmetadata:\n  name: x\nspec:\n  ports:\n  - port: 80\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "ipam.yaml")
	if err := os.WriteFile(target, []byte("apiVersion: projectcalico.org/v3\nkind: IPAMConfiguration\nmetadata:\n  name: default\nspec:\n  strictAffinity: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		code int
		in   string
	}{
		{"the main cluster migrates cleanly", []string{"plan", "migrate", "--no-reach", "-f", "../../examples/main-cluster", "-o", "json"}, ExitOK, `"id": "bgp"`},
		{"the lab needs nothing", []string{"plan", "migrate", "--lab"}, ExitOK, "Nothing to do"},
		{"a --to IPAMConfiguration plans strictAffinity alone", []string{"plan", "migrate", "--no-reach", "-f", "../../examples/main-cluster", "--to", target}, ExitNegative, "Step 1: Set IPAM strictAffinity to true"},
		{"a --to file with another kind is bad input", []string{"plan", "migrate", "-f", "../../examples/main-cluster", "--to", other}, ExitBadInput, "a Service"},
		{"a missing --to file is bad input", []string{"plan", "migrate", "-f", "../../examples/main-cluster", "--to", filepath.Join(dir, "nope.yaml")}, ExitBadInput, "nope.yaml"},
		{"an unknown output is bad usage", []string{"plan", "migrate", "--lab", "-o", "yaml"}, ExitBadInput, "allowed formats"},
		{"an argument is bad usage", []string{"plan", "migrate", "x", "--lab"}, ExitBadInput, "no arguments"},
		{"an input without an Installation cannot be migrated", []string{"plan", "migrate", "-f", other}, ExitNegative, "no operator.tigera.io Installation"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(t, "", tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr: %s", code, tc.code, errOut)
			}
			if !strings.Contains(out+errOut, tc.in) {
				t.Errorf("output lacks %q:\n%s\n%s", tc.in, out, errOut)
			}
		})
	}
}

func TestPlanMigrateWritesTheRunbookAndOneStackingFilePerStep(t *testing.T) {
	outDir := filepath.Join(t.TempDir(), "out")
	_, errOut, code := run(t, "", "plan", "migrate", "--no-reach", "-f", "../../examples/main-cluster", "--output-dir", outDir)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	files := []string{"01-strict-affinity.yaml", "02-encapsulation.yaml", "03-bgp.yaml", "04-services-endpoint.yaml", "05-windows-dataplane.yaml"}
	for _, f := range append([]string{"RUNBOOK.md"}, files...) {
		if _, err := os.Stat(filepath.Join(outDir, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	// -f base -f 01 -f 02 is the cluster after step 2.
	out, errOut, code := run(t, "", "get", "ippools", "-f", "../../examples/main-cluster",
		"-f", filepath.Join(outDir, files[0]), "-f", filepath.Join(outDir, files[1]))
	if code != ExitOK || !strings.Contains(out, "Always") {
		t.Errorf("the cluster after step 2: exit %d\n%s\n%s", code, out, errOut)
	}
}
