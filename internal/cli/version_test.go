package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestTheVersionPrintsAsJSONAndYAML(t *testing.T) {
	for _, format := range []string{"json", "yaml"} {
		t.Run(format, func(t *testing.T) {
			out, errOut, code := run(t, "", "version", "-o", format)
			if code != ExitOK || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			var v VersionInfo
			var err error
			if format == "json" {
				err = json.Unmarshal([]byte(out), &v)
			} else {
				err = yaml.UnmarshalStrict([]byte(out), &v)
			}
			if err != nil {
				t.Fatalf("%s does not decode: %v\n%s", format, err, out)
			}
			if v.Version != version() || v.Models.Kubernetes == "" || v.GoVersion == "" {
				t.Errorf("incomplete version: %+v", v)
			}
		})
	}
}

func TestTheRootCommandAnswersDashDashVersion(t *testing.T) {
	out, _, code := run(t, "", "--version")
	if code != ExitOK || strings.TrimSpace(out) != "kubectl-hybrid "+version() {
		t.Errorf("exit %d, stdout %q", code, out)
	}
}

func TestHelpNamesKubectlHybridOnlyWhenKubectlStartedIt(t *testing.T) {
	cases := []struct {
		name  string
		argv0 string
		want  string
	}{
		{"kubectl starts the plugin by its path on PATH", "/usr/local/bin/kubectl-hybrid", "kubectl hybrid get"},
		{"a shell starts it by name", "kubectl-hybrid", "kubectl-hybrid get"},
		{"a shell starts it by a relative path", "./kubectl-hybrid", "kubectl-hybrid get"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			saved := osArgs
			osArgs = func() []string { return []string{tc.argv0} }
			defer func() { osArgs = saved }()
			out, _, code := run(t, "", "get", "--help")
			if code != ExitOK {
				t.Fatalf("exit %d", code)
			}
			if !strings.Contains(out, "  "+tc.want+" ipamblocks --lab") {
				t.Errorf("the examples do not start with %q:\n%s", tc.want, out)
			}
			if !strings.Contains(out, "Usage:\n  "+tc.want+" TYPE") {
				t.Errorf("the usage does not start with %q:\n%s", tc.want, out)
			}
		})
	}
}

func TestTheReferenceNamesTheBinaryHoweverItWasStarted(t *testing.T) {
	saved := osArgs
	osArgs = func() []string { return []string{"/usr/local/bin/kubectl-hybrid"} }
	defer func() { osArgs = saved }()
	out, _, code := run(t, "", "docs")
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	if strings.Contains(out, "kubectl hybrid ") || !strings.Contains(out, "  kubectl-hybrid get ipamblocks --lab") {
		t.Errorf("the reference started as a plugin names the examples otherwise:\n%.2000s", out)
	}
}
