package check

import (
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/rule"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

func TestARulePanicIsAnErrorNotAVerdict(t *testing.T) {
	reg, err := rule.NewRegistry(rule.Rule{ID: "HYB900", Name: "boom", Title: "t", Severity: rule.Error,
		Check: func(*rule.Context) []rule.Finding { panic("bug") }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(&model.Cluster{}, Options{Registry: reg}); err == nil {
		t.Error("a panicking rule gives no error")
	}
}
