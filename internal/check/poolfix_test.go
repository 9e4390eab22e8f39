package check

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPoolFixesGoThroughTheInstallationWhenTheOperatorOwnsThePool(t *testing.T) {
	fail, err := os.ReadFile(filepath.Join("testdata", "HYB021", "fail.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, rule, doc string
		want, notWant   string
	}{
		{"a block too small for Windows in an operator-owned pool is fixed in the Installation",
			"HYB021", strings.Replace(string(fail), "blockSize: 27", "blockSize: 30", 1),
			"kubectl patch installation default --type=json", "kubectl patch ippool"},
		{"an operator-owned pool's encapsulation is fixed in the Installation",
			"HYB001", strings.Replace(string(fail), "encapsulation: VXLAN\n", "encapsulation: VXLANCrossSubnet\n", 1),
			"kubectl patch installation default --type=json", "kubectl patch ippool"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := tc.doc
			f := filepath.Join(t.TempDir(), "installation.yaml")
			if err := os.WriteFile(f, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			rep := mustRun(t, build(t, true, f), Options{Only: []string{tc.rule}})
			if len(rep.Findings) == 0 {
				t.Fatalf("no %s finding for:\n%s", tc.rule, doc)
			}
			for _, fd := range rep.Findings {
				if !strings.Contains(fd.Remediation, tc.want) || strings.Contains(fd.Remediation, tc.notWant) {
					t.Errorf("fix %q, want %q and not %q", fd.Remediation, tc.want, tc.notWant)
				}
			}
		})
	}
}
