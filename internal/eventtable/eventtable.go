// Package eventtable prints the twin's Events as `kubectl get events` does:
// a kind whose rows carry kubectl's event columns, with every duration
// measured from a given moment rather than the wall clock.
package eventtable

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/duration"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/report"
)

// Kind is core/v1 Event as kubectl resolves it (events, ev).
var Kind = report.Kind{Version: "v1", Kind: "Event", Resource: "events", Singular: "event", ShortNames: []string{"ev"}, Namespaced: true}

// Columns are kubectl's event columns (pkg/printers/internalversion
// printers.go eventColumnDefinitions); -o wide adds the Priority 1 ones.
var Columns = []metav1.TableColumnDefinition{
	{Name: "Last Seen", Type: "string"},
	{Name: "Type", Type: "string"},
	{Name: "Reason", Type: "string"},
	{Name: "Object", Type: "string"},
	{Name: "Subobject", Type: "string", Priority: 1},
	{Name: "Source", Type: "string", Priority: 1},
	{Name: "Message", Type: "string"},
	{Name: "First Seen", Type: "string", Priority: 1},
	{Name: "Count", Type: "integer", Priority: 1},
	{Name: "Name", Type: "string", Priority: 1},
}

// WithSource is Kind listing events (read when first asked for), with ages
// measured from now.
func WithSource(events func() []*corev1.Event, now time.Time) report.Kind {
	return Kind.WithSource(Columns, func() ([]any, error) {
		evs := append([]*corev1.Event(nil), events()...)
		// The API server lists by key: namespace, then name.
		sort.SliceStable(evs, func(i, j int) bool {
			if evs[i].Namespace != evs[j].Namespace {
				return evs[i].Namespace < evs[j].Namespace
			}
			return evs[i].Name < evs[j].Name
		})
		out := make([]any, 0, len(evs))
		for _, e := range evs {
			r, err := Row(e, now)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		return out, nil
	})
}

// Row is one event's object and cells, as printEvent fills them.
func Row(e *corev1.Event, now time.Time) (*report.Row, error) {
	data, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("event %s/%s: %w", e.Namespace, e.Name, err)
	}
	var m map[string]any
	if err := utiljson.Unmarshal(data, &m); err != nil { // numbers as int64
		return nil, fmt.Errorf("event %s/%s: %w", e.Namespace, e.Name, err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion("v1")
	u.SetKind("Event")
	first := since(now, e.FirstTimestamp.Time)
	if e.FirstTimestamp.IsZero() {
		first = since(now, e.EventTime.Time)
	}
	last := since(now, e.LastTimestamp.Time)
	if e.LastTimestamp.IsZero() {
		last = first
	}
	count := e.Count
	if e.Series != nil {
		last, count = since(now, e.Series.LastObservedTime.Time), e.Series.Count
	} else if count == 0 {
		count = 1 // a singleton event of the events.k8s.io API
	}
	target := strings.ToLower(e.InvolvedObject.Kind)
	if e.InvolvedObject.Name != "" {
		target += "/" + e.InvolvedObject.Name
	}
	return &report.Row{Unstructured: u, Cells: []any{
		last, e.Type, e.Reason, target, e.InvolvedObject.FieldPath,
		source(e), strings.TrimSpace(e.Message), first, int64(count), e.Name,
	}}, nil
}

// since is kubectl's translateTimestampSince measured from now.
func since(now, t time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t))
}

// source is formatEventSource: the component, then ", instance" when known.
func source(e *corev1.Event) string {
	comp, inst := e.Source.Component, e.Source.Host
	if comp == "" {
		comp = e.ReportingController
	}
	if inst == "" {
		inst = e.ReportingInstance
	}
	if inst == "" {
		return comp
	}
	return comp + ", " + inst
}
