package check

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestABlockTooSmallForTheWindowsReservationIsOneFindingNotANegativeMaxPods(t *testing.T) {
	fail, err := os.ReadFile(filepath.Join("testdata", "HYB021", "fail.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, bs := range []int{30, 31, 32} {
		t.Run(fmt.Sprintf("blockSize %d", bs), func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "installation.yaml")
			y := strings.Replace(string(fail), "blockSize: 27", fmt.Sprintf("blockSize: %d", bs), 1)
			if err := os.WriteFile(f, []byte(y), 0o644); err != nil {
				t.Fatal(err)
			}
			rep := mustRun(t, build(t, true, f), Options{Only: []string{"HYB021", "HYB022"}})
			if len(rep.Findings) != 1 {
				t.Fatalf("%d findings, want one:%s", len(rep.Findings), describe(rep.Findings))
			}
			got := rep.Findings[0]
			want := fmt.Sprintf("makes /%d blocks of %d address(es), no more than the 4 Calico reserves on Windows", bs, 1<<(32-bs))
			if got.RuleID != "HYB021" || !strings.Contains(got.Message, want) || strings.Contains(got.Remediation, "maxPods: -") {
				t.Errorf("finding %s %q (fix %q), want HYB021 saying %q", got.RuleID, got.Message, got.Remediation, want)
			}
		})
	}
}
