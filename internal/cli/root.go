// Package cli holds one file per command. Each command has an options
// struct with Complete → Validate → Run; Execute maps errors to the
// documented exit codes.
package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/cmdutil"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/collectcmd"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/describecmd"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/docscmd"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/gencmd"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/labcmd"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/logscmd"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/plancmd"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/reportcmd"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/sandboxcmd"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/servecmd"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/verifycmd"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/crash"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/textsafe"
)

// Exit codes, documented in the README (cmdutil says what each means).
const (
	ExitOK         = cmdutil.ExitOK
	ExitNegative   = cmdutil.ExitNegative
	ExitBadInput   = cmdutil.ExitBadInput
	ExitInternal   = cmdutil.ExitInternal
	ExitIncomplete = cmdutil.ExitIncomplete
)

// exitError carries an exit code chosen by a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

// ExitCode is the carried exit code (cmdutil.HasExitCode).
func (e *exitError) ExitCode() int { return e.code }

// usageError marks a wrong flag or argument.
func usageError(format string, args ...any) error {
	return &exitError{code: ExitBadInput, err: fmt.Errorf(format, args...)}
}

// NewRootCmd builds the command tree.
func NewRootCmd(streams genericiooptions.IOStreams) *cobra.Command {
	name := "kubectl-hybrid"
	root := &cobra.Command{
		Use:   name,
		Short: "A digital twin and verifier of hybrid Linux/Windows Kubernetes clusters",
		Long: `kubectl-hybrid derives what every component of a hybrid Linux/Windows cluster
would do — kubeadm, the Tigera operator, Calico IPAM, the scheduler and
admission — from manifests (-f) or the built-in lab (--lab), and shows it.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// cobra's `completion bash|zsh|fish|powershell`; kubectl's plugin
	// completion calls `__complete` through scripts/kubectl_complete-hybrid.
	root.Version = version()
	root.SetVersionTemplate("kubectl-hybrid {{.Version}}\n")
	// kubectl's log-level flag (-v=N, klog's); here a level of 1 or more
	// adds the stack to the report of an internal error.
	root.PersistentFlags().IntP("v", "v", 0, "Verbosity: 1 or more prints the stack trace of an internal error")
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &exitError{code: ExitBadInput, err: err}
	})
	root.AddCommand(
		NewCmdVersion(streams),
		NewCmdGet(streams),
		describecmd.NewCmdDescribe(streams, newInput(), describeKinds()),
		labcmd.NewCmdLab(streams, clock, labInput),
		NewCmdDump(streams),
		NewCmdExec(streams),
		logscmd.NewCmdLogs(streams, newInput()),
		NewCmdCheck(streams),
		NewCmdTrace(streams),
		NewCmdReach(streams),
		NewCmdDiff(streams),
		plancmd.NewCmdPlan(streams, newPlanInput),
		gencmd.NewCmdGen(streams),
		reportcmd.NewCmdReport(streams, newInput()),
		sandboxcmd.NewCmdSandbox(streams, newInput),
		verifycmd.NewCmdVerify(streams, newInput()),
		collectcmd.NewCmdCollect(streams),
		servecmd.NewCmdServe(streams, newServeInput(), serveBase()),
		docscmd.NewCmdDocs(streams, root, version()),
	)
	// Made now rather than when the tree first runs, so the reference
	// lists it however it is rendered.
	root.InitDefaultCompletionCmd()
	return root
}

// Execute runs the command line and returns the process exit code. Errors
// are printed once, as "error: …" the way kubectl prints them.
func Execute(streams genericiooptions.IOStreams, args []string) int {
	detectStyles(streams.Out, streams.ErrOut)
	// Text is escaped on its way out; JSON and YAML printers take the
	// writer underneath (textsafe.Raw).
	out, errOut := textsafe.NewWriter(streams.Out), textsafe.NewWriter(streams.ErrOut)
	streams.Out, streams.ErrOut = out, errOut
	defer func() {
		_ = out.Flush()
		_ = errOut.Flush()
	}()
	root := NewRootCmd(streams)
	if asPlugin(commandName()) {
		// Run as a kubectl plugin: help and usage say "kubectl hybrid …"
		// while the command's own name stays one word, so cobra still
		// finds subcommands and completions by it.
		root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl hybrid"}
		renameExamples(root, "kubectl-hybrid ", "kubectl hybrid ")
	}
	return executeCmd(root, streams, args)
}

// executeCmd runs args on a command tree and prints the error.
func executeCmd(root *cobra.Command, streams genericiooptions.IOStreams, args []string) int {
	root.SetArgs(args)
	err := executeRecovered(root, streams)
	if err == nil {
		return ExitOK
	}
	code := exitCode(err)
	var refusals *load.Refusals
	if errors.As(err, &refusals) {
		for _, w := range refusals.Warnings {
			fmt.Fprintf(streams.ErrOut, "Warning: %s\n", w)
		}
		// One refused field a line, each a message of its own.
		for _, line := range strings.Split(refusals.Error(), "\n") {
			if !strings.HasPrefix(line, "…") {
				line = "error: " + line
			}
			fmt.Fprintln(streams.ErrOut, line)
		}
		return code
	}
	if msg := err.Error(); msg != "" {
		if !strings.HasPrefix(msg, "error: ") && !strings.HasPrefix(msg, "Error from server") && !strings.HasPrefix(msg, "The ") && !strings.HasPrefix(msg, "command terminated") {
			msg = "error: " + msg
		}
		fmt.Fprintln(streams.ErrOut, msg)
	}
	return code
}

// executeRecovered runs the command tree and turns a panic — in the
// command or in a goroutine it started (internal/crash passes those back) —
// into one line asking for a bug report, with the stack only at -v=1 or
// more. A panic is a bug whatever the input: bad input has its own message
// and exit code 2.
func executeRecovered(root *cobra.Command, streams genericiooptions.IOStreams) (err error) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		p := crash.Recovered(r)
		if v, _ := root.PersistentFlags().GetInt("v"); v > 0 {
			fmt.Fprintf(streams.ErrOut, "panic: %v\n\n%s\n", p.Value, p.Stack)
		}
		what, _, _ := strings.Cut(fmt.Sprint(p.Value), "\n")
		err = &exitError{code: ExitInternal, err: fmt.Errorf("%s%s; please report this bug with the command line and its input (-v=1 prints the stack)", internalErrorPrefix, what)}
	}()
	return root.Execute()
}

// internalErrorPrefix starts the message of a recovered panic; tests look
// for it.
const internalErrorPrefix = "internal error: "

func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	var ce *cmdutil.ExitError
	if errors.As(err, &ce) {
		return ce.Code
	}
	var le *load.Error
	var be *engine.Error
	if errors.As(err, &le) || errors.As(err, &be) {
		return ExitBadInput
	}
	if strings.HasPrefix(err.Error(), "unknown command") || strings.HasPrefix(err.Error(), "unknown flag") ||
		strings.Contains(err.Error(), "arg(s)") {
		return ExitBadInput
	}
	return ExitInternal
}

// clock is the time AGE columns are measured against; tests fix it.
var clock = time.Now
