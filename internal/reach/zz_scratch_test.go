package reach

import (
	"os"
	"strconv"
	"testing"
)

func TestScratchLargeVerify(t *testing.T) {
	apps, _ := strconv.Atoi(os.Getenv("HYBRID_REACH_APPS"))
	if apps <= 0 {
		t.Skip()
	}
	e, err := buildEngine(synthetic(apps, apps/10, apps, 90, 20), widePool)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Compute(e, Options{AllNamespaces: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d pods %d classes, counts %v", m.Stats.Pods, m.Stats.Classes, m.Counts())
	n := verifyAgainstTraces(t, e, m, 300)
	checkDecisions(t, e, 2000)
	t.Logf("verified %d", n)
}
