package windows_test

import (
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/console/powershell"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows"
)

func init() { windows.SetPSExec(powershell.Exec) }
