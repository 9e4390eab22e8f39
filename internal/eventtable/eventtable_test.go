package eventtable

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/report"
)

var now = time.Date(2026, 11, 6, 21, 20, 40, 0, time.UTC)

func TestAnEventRowHasKubectlsCells(t *testing.T) {
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }
	micro := func(d time.Duration) metav1.MicroTime { return metav1.NewMicroTime(now.Add(-d)) }
	cases := []struct {
		name string
		e    corev1.Event
		want []any
	}{
		{"a kubelet event about a pod",
			corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "p.1"}, Type: "Warning", Reason: "NetworkNotReady", Message: "network is not ready ",
				InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p"}, Source: corev1.EventSource{Component: "kubelet", Host: "n"},
				FirstTimestamp: at(5 * time.Minute), LastTimestamp: at(30 * time.Second), Count: 7},
			[]any{"30s", "Warning", "NetworkNotReady", "pod/p", "", "kubelet, n", "network is not ready", "5m", int64(7), "p.1"}},
		{"a singleton of the events API",
			corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Type: "Normal", Reason: "Scheduled",
				InvolvedObject:      corev1.ObjectReference{Kind: "Pod", Name: "q", FieldPath: "spec.containers{c}"},
				ReportingController: "default-scheduler", EventTime: micro(2 * time.Hour)},
			[]any{"120m", "Normal", "Scheduled", "pod/q", "spec.containers{c}", "default-scheduler", "", "120m", int64(1), "x"}},
		{"a series",
			corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Type: "Warning", Reason: "BackOff",
				InvolvedObject: corev1.ObjectReference{Kind: "Node"}, EventTime: micro(3 * 24 * time.Hour),
				Series: &corev1.EventSeries{Count: 12, LastObservedTime: micro(90 * time.Second)}},
			[]any{"90s", "Warning", "BackOff", "node", "", "", "", "3d", int64(12), "s"}},
		{"no time at all",
			corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "z"}},
			[]any{"<unknown>", "", "", "", "", "", "", "<unknown>", int64(1), "z"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Row(&tc.e, now)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(r.Cells, tc.want) {
				t.Errorf("cells\n%#v, want\n%#v", r.Cells, tc.want)
			}
			if r.GetKind() != "Event" || r.GetAPIVersion() != "v1" || r.GetName() != tc.e.Name {
				t.Errorf("object %s %s %s", r.GetAPIVersion(), r.GetKind(), r.GetName())
			}
		})
	}
}

func TestEventsAreListedByNamespaceThenName(t *testing.T) {
	evs := []*corev1.Event{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "win-demo", Name: "b"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "z"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "win-demo", Name: "a"}},
	}
	k := WithSource(func() []*corev1.Event { return evs }, now)
	if k.Resource != "events" || !k.Namespaced {
		t.Fatalf("kind %+v", k)
	}
	objs, err := report.SelectKind(nil, k, "", "", true, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		r := o.(*report.Row)
		got = append(got, r.GetNamespace()+"/"+r.GetName())
	}
	if want := []string{"default/z", "win-demo/a", "win-demo/b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}
