package windows

// psExec runs a command on a node's emulated PowerShell. The emulation is
// internal/console/powershell, which imports this package, so the tests
// here that print transcripts reach it through this hook; hook_test.go
// (package windows_test) sets it.
var psExec func(n *Node, argv []string) (stdout, stderr string, exit int)

// SetPSExec sets the hook.
func SetPSExec(f func(n *Node, argv []string) (string, string, int)) { psExec = f }
