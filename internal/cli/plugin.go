package cli

import (
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/cmdutil"
)

// asPlugin says whether argv[0] is kubectl starting the plugin: kubectl
// execs the kubectl-hybrid it found on PATH by its full path
// (k8s.io/kubectl/pkg/cmd/plugin.go DefaultPluginHandler.Execute), while a
// shell passes the name as typed, "kubectl-hybrid" or "./kubectl-hybrid".
func asPlugin(argv0 string) bool {
	return filepath.IsAbs(argv0) && strings.HasPrefix(filepath.Base(argv0), "kubectl-")
}

// renameExamples makes every example start the tool by the name it was
// started by (from is the name they use).
func renameExamples(c *cobra.Command, from, to string) { cmdutil.RenameExamples(c, from, to) }
