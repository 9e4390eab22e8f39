package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestCompletionScriptsAreGeneratedForEveryShell(t *testing.T) {
	cases := []struct {
		shell string
		// marker is a line only that shell's script has.
		marker string
	}{
		{"bash", "complete -o default -F __start_kubectl-hybrid kubectl-hybrid"},
		{"zsh", "#compdef kubectl-hybrid"},
		{"fish", "complete -c kubectl-hybrid"},
		{"powershell", "Register-ArgumentCompleter"},
	}
	for _, tc := range cases {
		t.Run(tc.shell, func(t *testing.T) {
			out, errOut, code := run(t, "", "completion", tc.shell)
			if code != ExitOK || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			if !strings.Contains(out, tc.marker) {
				t.Errorf("the %s script lacks %q", tc.shell, tc.marker)
			}
		})
	}
}

func TestTheBashCompletionScriptPassesBashSyntaxCheck(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash on PATH")
	}
	out, _, code := run(t, "", "completion", "bash")
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	script := filepath.Join(t.TempDir(), "kubectl-hybrid.bash")
	if err := os.WriteFile(script, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{script, "../../scripts/kubectl_complete-hybrid"} {
		if msg, err := exec.Command(bash, "-n", path).CombinedOutput(); err != nil {
			t.Errorf("bash -n %s: %v\n%s", path, err, msg)
		}
	}
}

// kubectl runs kubectl_complete-hybrid with the words after "kubectl
// hybrid" and reads one completion a line, then ":<directive>".
func TestKubectlsPluginCompletionGetsCommandsAndResourceTypes(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on PATH")
	}
	bin := t.TempDir()
	// The test binary runs as kubectl-hybrid (TestMain, childEnv).
	if err := os.Symlink(os.Args[0], filepath.Join(bin, "kubectl-hybrid")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"the commands", []string{""}, []string{"get", "describe", "check", "completion"}},
		{"the resource types of get", []string{"get", ""}, []string{"pods", "hnsendpoints", "routes", "all"}},
		{"the formats of -o", []string{"get", "pods", "-o", ""}, []string{"jsonpath", "custom-columns", "yaml"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(sh, append([]string{"../../scripts/kubectl_complete-hybrid"}, tc.args...)...)
			cmd.Env = append(os.Environ(), childEnv+"=1", "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+filepath.Join(bin, "none"))
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v", err)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if last := lines[len(lines)-1]; !strings.HasPrefix(last, ":") {
				t.Errorf("the last line %q is not a directive", last)
			}
			got := map[string]bool{}
			for _, l := range lines {
				name, _, _ := strings.Cut(l, "\t")
				got[name] = true
			}
			for _, w := range tc.want {
				if !got[w] {
					t.Errorf("no completion %q in:\n%s", w, out)
				}
			}
		})
	}
}
