package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/textsafe"
)

// CheckOptions is `kubectl-hybrid check`.
type CheckOptions struct {
	Input           InputOptions
	Output          string
	FailOn          string
	Rules           []string
	Skip            []string
	ExpectWindows   bool
	KubeconfigFiles []string
	// ListRules prints the rule catalogue instead of checking (hidden; the
	// docs/checks.md generator: --list-rules -o markdown).
	ListRules bool
	// Config is a check configuration file (--config).
	Config string

	config    *check.Config
	failOnSet bool
	failOn    check.Severity
	registry  *check.Registry
	streams   genericiooptions.IOStreams
}

// NewCmdCheck builds the check command.
func NewCmdCheck(streams genericiooptions.IOStreams) *cobra.Command {
	o := &CheckOptions{streams: streams}
	cmd := &cobra.Command{
		Use:   "check [-f FILE|DIR|-] [--lab] [flags]",
		Short: "Verify every constraint of a hybrid Linux/Windows cluster",
		Long: `Check the twin built from the manifests (-f) or the built-in lab (--lab)
against the constraints of a hybrid Linux/Windows cluster: Calico for
Windows' requirements (VXLAN without cross-subnet, no BGP, strictAffinity,
windowsDataplane, serviceCIDRs, kubernetes-services-endpoint, VNI and port),
Windows nodes' joins and kubelet settings, what reaches Windows nodes and
how, kube-proxy on Windows, Services, DNS names and policies as HNS sees
them, host firewalls, and kubeconfig files (--kubeconfig-files).

Windows readiness blockers are errors when the cluster has Windows nodes,
lists Windows hosts, or --expect-windows is given, and warnings otherwise.
A finding is suppressed by the annotation kubectl-hybrid.io/skip-checks
listing rule IDs on the object or on the object it derives from.

Rules whose input is missing are not run and are listed with the cause:
all of them when the input holds no cluster, those examining a kind the live
cluster did not give, and those whose needs the manifests lack (no
Installation). See docs/checks.md.

Exit codes: 0 when no finding reaches --fail-on, 1 when one does, 2 for bad
input or usage, 3 when the cluster cannot be read, 4 when no finding reaches
--fail-on but the check is incomplete: the input holds no cluster, or a kind
a selected rule examines could not be read (--skip those rules to check the
rest).`,
		Example: `  # Before adding Windows nodes: what blocks them?
  kubectl-hybrid check -f examples/main-cluster --expect-windows

  # In CI, as SARIF for GitHub code scanning, failing on warnings too
  kubectl-hybrid check -f examples/main-cluster -o sarif --fail-on warning > check.sarif

  # One rule on the lab with a what-if file
  kubectl-hybrid check --lab -f examples/what-if/no-strict-affinity.yaml --rule HYB003

  # Rules, severities and suppressions from a file, as JUnit XML for CI
  kubectl-hybrid check -f examples/main-cluster --config examples/check-config.yaml -o junit > check.xml

  # The second-context trap: two admin.conf files with kubeadm's names
  kubectl-hybrid check --kubeconfig-files ~/.kube/config,lab-admin.conf`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.failOnSet = cmd.Flags().Changed("fail-on")
			if err := o.Complete(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run()
		},
	}
	o.Input.AddFlags(cmd.Flags())
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", "", "Output format: text, json, sarif or junit (with --list-rules: text, json or markdown)")
	f.StringVar(&o.FailOn, "fail-on", string(check.Error), "Exit 1 when a finding is at least this severe: error, warning, info or never")
	f.StringSliceVar(&o.Rules, "rule", nil, "Run only these rules (IDs or names; repeatable or comma-separated)")
	f.StringSliceVar(&o.Skip, "skip", nil, "Do not run these rules (IDs or names; repeatable or comma-separated)")
	f.BoolVar(&o.ExpectWindows, "expect-windows", false, "Windows nodes are planned: report readiness blockers as errors even before one joins")
	f.StringSliceVar(&o.KubeconfigFiles, "kubeconfig-files", nil, "Kubeconfig files to check for clusters, users and contexts that collide by name (comma-separated)")
	f.StringVar(&o.Config, "config", "", "A check configuration file: rules to include or exclude, severities, failOn and suppressions (see the command's help)")
	f.BoolVar(&o.ListRules, "list-rules", false, "Print the rule catalogue instead of checking (-o text|json|markdown)")
	_ = f.MarkHidden("list-rules")
	return cmd
}

// Complete loads the rule catalogue and reads --fail-on.
func (o *CheckOptions) Complete() error {
	reg, err := check.Default()
	if err != nil {
		return &exitError{code: ExitInternal, err: err}
	}
	o.registry = reg
	if o.Config != "" {
		data, err := os.ReadFile(o.Config)
		if err != nil {
			return &exitError{code: ExitBadInput, err: fmt.Errorf("--config: %w", err)}
		}
		cfg, err := check.ParseConfig(o.Config, data, reg)
		if err != nil {
			return &exitError{code: ExitBadInput, err: err}
		}
		o.config = cfg
		if len(o.Rules) == 0 {
			o.Rules = cfg.Rules.Include
		}
		o.Skip = append(o.Skip, cfg.Rules.Exclude...)
		if cfg.FailOn != "" && !o.failOnSet {
			o.FailOn = cfg.FailOn
		}
	}
	if o.FailOn != "never" {
		s, err := check.ParseSeverity(o.FailOn)
		if err != nil {
			return usageError("--fail-on: %v (or never)", err)
		}
		o.failOn = s
	}
	return nil
}

// Validate checks the flags.
func (o *CheckOptions) Validate() error {
	if o.ListRules {
		switch o.Output {
		case "", check.ListText, check.ListJSON, check.ListMarkdown:
			return nil
		}
		return usageError("unable to match a printer suitable for the output format %q, allowed formats are: json,markdown,text", o.Output)
	}
	switch o.Output {
	case "", check.OutputText, check.OutputJSON, check.OutputSARIF, check.OutputJUnit:
	default:
		return usageError("unable to match a printer suitable for the output format %q, allowed formats are: json,junit,sarif,text", o.Output)
	}
	for _, names := range [][]string{o.Rules, o.Skip} {
		for _, n := range names {
			if _, ok := o.registry.Lookup(n); !ok {
				return usageError("%v", &check.UnknownRuleError{Name: n})
			}
		}
	}
	if len(o.KubeconfigFiles) > 0 && len(o.Input.Filenames) == 0 && !o.Input.Lab {
		return nil // only the kubeconfig files are checked
	}
	return o.Input.Validate()
}

// Run checks the cluster and prints the report; findings at or above
// --fail-on make the exit code 1.
func (o *CheckOptions) Run() error {
	out := o.streams.Out
	if o.ListRules {
		return check.WriteRules(out, o.registry.Rules(), o.Output)
	}
	kubeconfigs, err := o.readKubeconfigs()
	if err != nil {
		return err
	}
	c, unread, err := o.buildCluster()
	if err != nil {
		return err
	}
	rep, err := check.Run(c, check.Options{
		ExpectWindows: o.ExpectWindows, Only: o.Rules, Skip: o.Skip, Kubeconfigs: kubeconfigs, Registry: o.registry,
		Unread: unread, KubeconfigsOnly: o.kubeconfigsOnly(),
	})
	if err == nil && o.config != nil {
		o.config.Apply(rep)
	}
	if err != nil {
		var ur *check.UnknownRuleError
		if errors.As(err, &ur) {
			return &exitError{code: ExitBadInput, err: err}
		}
		return err
	}
	switch o.Output {
	case check.OutputJSON:
		err = check.WriteJSON(textsafe.Raw(out), rep)
	case check.OutputSARIF:
		err = check.WriteSARIF(textsafe.Raw(out), rep, check.SARIFOptions{ToolVersion: version()})
	case check.OutputJUnit:
		err = check.WriteJUnit(textsafe.Raw(out), rep)
	default:
		err = writeStyled(out, false, func(w io.Writer) error { return check.WriteText(w, rep) }, colorCheck)
	}
	if err != nil {
		return err
	}
	// A finding is a definite "no" whatever was not read; only a run that
	// would otherwise pass is held back as incomplete.
	if rep.Fails(o.failOn) {
		return &exitError{code: ExitNegative}
	}
	if rep.Incomplete() {
		return &exitError{code: ExitIncomplete, err: incompleteError(rep)}
	}
	return nil
}

// incompleteError says why a run that found nothing proves nothing.
func incompleteError(rep *check.Report) error {
	if rep.NoCluster {
		return errors.New("check incomplete: the input holds no cluster (no object of a kind the twin models), so no rule could judge it")
	}
	var kinds []string
	for _, u := range rep.Unread {
		kinds = append(kinds, u.String())
	}
	rules := fmt.Sprintf("%d rules", notRunFaults(rep))
	if notRunFaults(rep) == 1 {
		rules = "1 rule"
	}
	return fmt.Errorf("check incomplete: %s did not run because the cluster did not give %s; --skip them to check the rest",
		rules, strings.Join(kinds, ", "))
}

// notRunFaults counts the rules that did not run for a fault of the input.
func notRunFaults(rep *check.Report) int {
	n := 0
	for _, g := range rep.NotRun {
		if g.Fault {
			n += len(g.Rules)
		}
	}
	return n
}

func (o *CheckOptions) kubeconfigsOnly() bool { return len(o.KubeconfigFiles) > 0 && o.Input.Live() }

// buildCluster builds the twin from -f/--lab, or an empty cluster when only
// kubeconfig files are checked, with the kinds the input could not give.
func (o *CheckOptions) buildCluster() (*model.Cluster, []model.UnreadKind, error) {
	if o.kubeconfigsOnly() {
		c, err := engine.Build(&model.Snapshot{})
		return c, nil, err
	}
	return o.Input.BuildUnread(o.streams)
}

func (o *CheckOptions) readKubeconfigs() ([]*check.Kubeconfig, error) {
	var out []*check.Kubeconfig
	for _, name := range o.KubeconfigFiles {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, &exitError{code: ExitBadInput, err: fmt.Errorf("--kubeconfig-files: %v", err)}
		}
		kc, err := check.ParseKubeconfig(name, data)
		if err != nil {
			return nil, &exitError{code: ExitBadInput, err: fmt.Errorf("--kubeconfig-files: %v", err)}
		}
		out = append(out, kc)
	}
	return out, nil
}
