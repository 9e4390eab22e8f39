package cli

import (
	"fmt"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// Version is set at build time with -ldflags "-X …/internal/cli.Version=v0.1.0";
// otherwise the module version from the build info is shown.
var Version = ""

func version() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "v0.0.0-dev"
}

// NewCmdVersion prints the tool's version and what it models.
func NewCmdVersion(streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of kubectl-hybrid",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintf(streams.Out, "kubectl-hybrid %s\n", version())
			fmt.Fprintln(streams.Out, "Models: Kubernetes 1.37, Calico 3.33 (Tigera operator), Windows Server 2025 (10.0.26100)")
			return nil
		},
	}
}

func commandName() string {
	if len(osArgs()) > 0 {
		return osArgs()[0]
	}
	return ""
}

// osArgs is the process's arguments; a variable so tests can replace it.
var osArgs = func() []string { return os.Args }
