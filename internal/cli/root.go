// Package cli holds one file per command. Each command has an options
// struct with Complete → Validate → Run; Execute maps errors to the
// documented exit codes.
package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
)

// Exit codes, documented in the README.
const (
	ExitOK       = 0 // success
	ExitNegative = 1 // the command's answer is "no": findings, not delivered
	ExitBadInput = 2 // bad input or usage: the message names file, document and line
	ExitInternal = 3 // the live cluster is unreachable or failing, or the tool itself failed
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
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &exitError{code: ExitBadInput, err: err}
	})
	root.AddCommand(
		NewCmdVersion(streams),
		NewCmdGet(streams),
		NewCmdLab(streams),
		NewCmdDump(streams),
		NewCmdExec(streams),
		NewCmdCheck(streams),
		NewCmdTrace(streams),
		NewCmdReach(streams),
		NewCmdPlan(streams),
		NewCmdGen(streams),
		NewCmdDocs(streams, root),
	)
	return root
}

// Execute runs the command line and returns the process exit code. Errors
// are printed once, as "error: …" the way kubectl prints them.
func Execute(streams genericiooptions.IOStreams, args []string) int {
	root := NewRootCmd(streams)
	if strings.HasPrefix(filepath.Base(commandName()), "kubectl-") {
		// Run as a kubectl plugin: help and usage say "kubectl hybrid …"
		// while the command's own name stays one word, so cobra still
		// finds subcommands and completions by it.
		root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl hybrid"}
	}
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	code := exitCode(err)
	if msg := err.Error(); msg != "" {
		if !strings.HasPrefix(msg, "error: ") && !strings.HasPrefix(msg, "Error from server") && !strings.HasPrefix(msg, "The ") && !strings.HasPrefix(msg, "command terminated") {
			msg = "error: " + msg
		}
		fmt.Fprintln(streams.ErrOut, msg)
	}
	return code
}

func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
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
