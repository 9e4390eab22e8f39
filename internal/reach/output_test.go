package reach_test

import (
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach/output"
)

// The package's goldens print through reach/output, as the command does.
func init() { reach.SetPrinters(output.WriteText, output.WriteJSON, output.WriteCSV) }
