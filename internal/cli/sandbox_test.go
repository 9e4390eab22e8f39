package cli

import (
	"strings"
	"testing"
)

// These refusals come before anything is created: they need neither root
// nor network namespaces.
func TestSandboxRefusesBadInputWithExit2(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"a prefix without a trailing dash is refused", []string{"sandbox", "up", "--lab", "--prefix", "kh"}, "prefix"},
		{"a prefix for down is checked too", []string{"sandbox", "down", "--prefix", "../etc-"}, "prefix"},
		{"a pod that does not exist is refused", []string{"sandbox", "up", "--lab", "--pods", "demo/nope"}, "demo/nope"},
		{"a negative probe bound is refused", []string{"sandbox", "test", "--lab", "--max-probes", "-1"}, "--max-probes"},
		{"sandbox takes no arguments", []string{"sandbox", "up", "--lab", "extra"}, "unknown command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := run(t, "", tc.args...)
			if code != ExitBadInput || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d naming %q", code, stderr, ExitBadInput, tc.want)
			}
		})
	}
}

func TestTheProbeClientRefusesAnUnknownKind(t *testing.T) {
	_, stderr, code := run(t, "", "sandbox", "probe", "sctp", "127.0.0.1:1")
	if code != ExitBadInput || !strings.Contains(stderr, "probe takes") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
