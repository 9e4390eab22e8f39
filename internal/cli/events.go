package cli

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/eventtable"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/report"
)

// extraKinds are the kinds get and describe resolve besides report's: the
// dataplane kinds and the twin's Events, whose ages are measured from now.
func extraKinds(c func() *model.Cluster, node string, now time.Time) []report.Kind {
	return append(dataplaneKinds(c, node), eventtable.WithSource(func() []*corev1.Event {
		if c == nil {
			return nil
		}
		return c().Events
	}, now))
}
