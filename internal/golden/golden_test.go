package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDiffMarksLinesOnlyOneSideHas(t *testing.T) {
	got := Diff("a\nb\nc", "a\nx\nc")
	for _, want := range []string{`  "a"`, `- "b"`, `+ "x"`, `  "c"`} {
		if !strings.Contains(got, want) {
			t.Errorf("diff %q lacks %q", got, want)
		}
	}
}

func TestAMismatchLeavesTheActualOutputBesideTheGoldenFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.txt")
	if err := os.WriteFile(path, []byte("want\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ft := &fakeT{TB: t}
	Check(ft, path, "got\n")
	if !ft.failed {
		t.Fatal("a mismatch must fail")
	}
	b, err := os.ReadFile(filepath.Join(dir, "actual_x.txt"))
	if err != nil || string(b) != "got\n" {
		t.Fatalf("actual file %q, %v", b, err)
	}
	ft = &fakeT{TB: t}
	Check(ft, path, "want\n")
	if ft.failed {
		t.Fatal("a match must pass")
	}
	if _, err := os.Stat(filepath.Join(dir, "actual_x.txt")); !os.IsNotExist(err) {
		t.Fatal("a match removes the stale actual file")
	}
}

type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Errorf(string, ...any) { f.failed = true }
func (f *fakeT) Helper()               {}
