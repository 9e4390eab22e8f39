// Package cmdutil is what the command packages under internal/cli share
// with the root command: the exit codes and the error that carries one,
// and the input flags (-f, --lab or the live cluster) a command builds its
// twin from. It is the command layer's small common ground, as kubectl's
// pkg/cmd/util is.
package cmdutil

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Exit codes, documented in the README.
const (
	ExitOK       = 0 // success
	ExitNegative = 1 // the command's answer is "no": findings, not delivered
	ExitBadInput = 2 // bad input or usage: the message names file, document and line
	ExitInternal = 3 // the live cluster is unreachable or failing, or the tool itself failed
	// ExitIncomplete: the command could not judge what it was asked to: the
	// input holds no cluster, or a kind it needs could not be read from the
	// live cluster (check).
	ExitIncomplete = 4
)

// ExitError carries an exit code chosen by a command; a nil Err prints
// nothing.
type ExitError struct {
	Code int
	Err  error
}

// Error is the carried error's message, "" without one.
func (e *ExitError) Error() string {
	if e.Err == nil {
		return ""
	}
	return e.Err.Error()
}

// Unwrap is the carried error.
func (e *ExitError) Unwrap() error { return e.Err }

// ExitCode is the carried exit code.
func (e *ExitError) ExitCode() int { return e.Code }

// HasExitCode reports whether err carries an exit code a command chose.
func HasExitCode(err error) bool {
	var ec interface{ ExitCode() int }
	return errors.As(err, &ec)
}

// UsageError marks a wrong flag or argument.
func UsageError(format string, args ...any) error {
	return &ExitError{Code: ExitBadInput, Err: fmt.Errorf(format, args...)}
}

// Input is the input flags a command builds its twin from; the root
// command's input options implement it.
type Input interface {
	AddFlags(fs *pflag.FlagSet)
	Validate() error
	Build(streams genericiooptions.IOStreams) (*model.Cluster, error)
	// Source says what the twin is built from ("--lab -f a.yaml").
	Source() string
	// DefaultNamespace is -n's default: the kubeconfig context's namespace
	// on a live cluster, "" for files and the lab.
	DefaultNamespace() string
}

// RenameExamples makes every example start the tool by the name it was
// started by (from is the name they use).
func RenameExamples(c *cobra.Command, from, to string) {
	c.Example = strings.ReplaceAll(c.Example, from, to)
	for _, sub := range c.Commands() {
		RenameExamples(sub, from, to)
	}
}
