package plan

import (
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/console/powershell"
)

// settingCommands change state to a value given in full: running them again
// with the same arguments changes nothing.
var settingCommands = map[string]bool{
	"Set-ItemProperty": true, "w32tm": true, "Restart-Service": true, "Set-NetFirewallRule": true,
	"New-Item": true, "Set-Location": true, "curl.exe": true, "Out-Null": true,
}

// readingCommands only read.
var readingCommands = map[string]bool{
	"Get-WindowsFeature": true, "Get-NetFirewallRule": true, "Get-Service": true, "Test-Path": true, "Get-Item": true,
}

// A state-changing command not in settingCommands must sit behind a
// Where-Object in its pipeline (it runs only when the state read before
// says the change is still to be made).
func TestEveryScriptParsesAndGuardsEveryChange(t *testing.T) {
	b := labPlan(t)
	n := 0
	for _, f := range b.Nodes[0].Files {
		if !strings.HasSuffix(f.Path, ".ps1") {
			continue
		}
		n++
		t.Run(f.Path, func(t *testing.T) {
			sts, err := powershell.ParseScript(f.Body)
			if err != nil {
				t.Fatalf("the PowerShell reader refuses it: %v\n%s", err, f.Body)
			}
			for _, st := range sts {
				guarded := false
				for _, c := range st.Commands {
					switch {
					case c == "Where-Object":
						guarded = true
					case settingCommands[c], readingCommands[c]:
					case !guarded:
						t.Errorf("%s runs unguarded in %v", c, st.Commands)
					}
				}
			}
		})
	}
	if n != 7 {
		t.Errorf("%d scripts, want 7", n)
	}
}

func TestEveryHostStepSaysWhatARerunDoes(t *testing.T) {
	for _, s := range labPlan(t).Steps {
		if s.Idempotent == "" {
			t.Errorf("step %s says nothing about a re-run", s.ID)
		}
	}
}
