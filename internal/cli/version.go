package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/textsafe"
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

// VersionInfo is what version -o json|yaml prints.
type VersionInfo struct {
	Version   string `json:"version"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
	// Models are the upstream releases the twin reproduces.
	Models VersionModels `json:"models"`
}

// VersionModels names the modelled releases.
type VersionModels struct {
	Kubernetes     string `json:"kubernetes"`
	Calico         string `json:"calico"`
	TigeraOperator string `json:"tigeraOperator"`
	Windows        string `json:"windows"`
}

func versionInfo() VersionInfo {
	return VersionInfo{
		Version:   version(),
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
		Models:    VersionModels{Kubernetes: "1.37", Calico: "3.33", TigeraOperator: "1.44", Windows: "Windows Server 2025 (10.0.26100)"},
	}
}

// VersionOptions is `kubectl-hybrid version`.
type VersionOptions struct {
	Output  string
	streams genericiooptions.IOStreams
}

// NewCmdVersion prints the tool's version and what it models.
func NewCmdVersion(streams genericiooptions.IOStreams) *cobra.Command {
	o := &VersionOptions{streams: streams}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version of kubectl-hybrid",
		Example: `  # The version and the modelled releases
  kubectl-hybrid version

  # The same as JSON, as kubectl version -o json
  kubectl-hybrid version -o json`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run()
		},
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "One of 'yaml' or 'json'")
	return cmd
}

// Validate checks -o.
func (o *VersionOptions) Validate() error {
	switch o.Output {
	case "", "json", "yaml":
		return nil
	}
	return usageError("--output must be 'yaml' or 'json'")
}

// Run prints the version.
func (o *VersionOptions) Run() error {
	v := versionInfo()
	switch o.Output {
	case "json":
		data, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(textsafe.Raw(o.streams.Out), "%s\n", data)
		return err
	case "yaml":
		data, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = textsafe.Raw(o.streams.Out).Write(data)
		return err
	}
	fmt.Fprintf(o.streams.Out, "kubectl-hybrid %s\n", v.Version)
	fmt.Fprintf(o.streams.Out, "Models: Kubernetes %s, Calico %s (Tigera operator %s), %s\n", v.Models.Kubernetes, v.Models.Calico, v.Models.TigeraOperator, v.Models.Windows)
	return nil
}

func commandName() string {
	if len(osArgs()) > 0 {
		return osArgs()[0]
	}
	return ""
}

// osArgs is the process's arguments; a variable so tests can replace it.
var osArgs = func() []string { return os.Args }
