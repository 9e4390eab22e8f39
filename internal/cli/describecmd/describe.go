// Package describecmd is `kubectl-hybrid describe`: kubectl's describers
// over the twin.
package describecmd

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/kubectl/pkg/describe"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli/cmdutil"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/report"
)

// DescribeOptions is `kubectl-hybrid describe`.
type DescribeOptions struct {
	Input         cmdutil.Input
	Namespace     string
	AllNamespaces bool
	LabelSelector string
	Node          string
	Now           cmdutil.NowFlag

	args    []string
	kinds   Kinds
	streams genericiooptions.IOStreams
}

// Kinds is what describe shares with get, which the root gives it.
type Kinds struct {
	// Extra are the kinds besides report's (the dataplane's, Events),
	// ages measured from now.
	Extra func(c func() *model.Cluster, node string, now time.Time) []report.Kind
	// Known lists every kind, for the usage error.
	Known func() string
	// Complete completes the first argument with the kinds.
	Complete func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective)
	// Clock is the time without --now.
	Clock func() time.Time
}

// NewCmdDescribe builds the describe command.
func NewCmdDescribe(streams genericiooptions.IOStreams, in cmdutil.Input, kinds Kinds) *cobra.Command {
	o := &DescribeOptions{Input: in, kinds: kinds, streams: streams}
	cmd := &cobra.Command{
		Use:   "describe TYPE [NAME_PREFIX] | TYPE/NAME [flags]",
		Short: "Describe the twin's objects as kubectl describe does",
		Long: `Describe objects of the built twin with kubectl's own describers
(k8s.io/kubectl/pkg/describe): a Kubernetes kind reads its related objects
(a node's pods, a Service's endpoints, a Deployment's ReplicaSets) from the
twin; Calico, operator and dataplane kinds — and Deployments, StatefulSets
and CertificateSigningRequests, whose kubectl describers build their own
API client — print as kubectl prints a custom resource. Events are the
ones the twin's components would record for what it derives (simulated:
one occurrence each, at the twin's time); their ages, and the pods' on a
node, are measured from --now (default: the current time).

As with kubectl, a NAME that names no object describes every object whose
name starts with it.`,
		Example: `  # The Windows node: its conditions, capacity and pods
  kubectl-hybrid describe node k8s-lab-win-1 --lab

  # The hello pods of demo (a name prefix)
  kubectl-hybrid describe pods hello -n demo --lab

  # The IP pools as Calico holds them
  kubectl-hybrid describe ippools --lab`,
		ValidArgsFunction: kinds.Complete,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(args); err != nil {
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
	f.StringVarP(&o.Namespace, "namespace", "n", "", "Namespace (default: the kubeconfig context's when live, else \"default\")")
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "Describe objects across all namespaces")
	f.StringVarP(&o.LabelSelector, "selector", "l", "", "Label selector, as kubectl's -l")
	f.StringVar(&o.Node, "node", "", "For hnsnetworks, hnsendpoints, loadbalancers and routes: the node whose dataplane to describe")
	cmdutil.AddNowFlag(f, &o.Now)
	return cmd
}

// Complete records the arguments.
func (o *DescribeOptions) Complete(args []string) error {
	o.args = args
	return nil
}

// Validate checks the arguments.
func (o *DescribeOptions) Validate() error {
	if len(o.args) == 0 {
		return cmdutil.UsageError("you must specify the type of resource to describe; known types: %s", o.kinds.Known())
	}
	if o.LabelSelector != "" {
		if _, err := labels.Parse(o.LabelSelector); err != nil {
			return cmdutil.UsageError("%v", err)
		}
	}
	return o.Input.Validate()
}

// describeTarget is one kind with the names (or prefixes) asked for.
type describeTarget struct {
	kind  report.Kind
	names []string
}

func (o *DescribeOptions) targets(extra []report.Kind) ([]describeTarget, error) {
	var out []describeTarget
	if strings.Contains(o.args[0], "/") {
		for _, a := range o.args {
			typ, name, ok := strings.Cut(a, "/")
			if !ok || name == "" {
				return nil, cmdutil.UsageError("arguments in resource/name form must have a single resource and name")
			}
			k, err := report.ResolveKind(typ, extra...)
			if err != nil {
				return nil, &cmdutil.ExitError{Code: cmdutil.ExitBadInput, Err: err}
			}
			out = append(out, describeTarget{kind: k, names: []string{name}})
		}
		return out, nil
	}
	kinds, err := report.ResolveKinds(o.args[0], extra...)
	if err != nil {
		return nil, &cmdutil.ExitError{Code: cmdutil.ExitBadInput, Err: err}
	}
	for _, k := range kinds {
		out = append(out, describeTarget{kind: k, names: o.args[1:]})
	}
	return out, nil
}

// Run builds the twin and describes the objects.
func (o *DescribeOptions) Run() error {
	c, err := o.Input.Build(o.streams)
	if err != nil {
		return err
	}
	if o.Namespace == "" {
		o.Namespace = o.Input.DefaultNamespace()
	}
	if o.Namespace == "" {
		o.Namespace = report.DefaultNamespace
	}
	now := o.Now.Or(o.kinds.Clock)
	targets, err := o.targets(o.kinds.Extra(func() *model.Cluster { return c }, o.Node, now))
	if err != nil {
		return err
	}
	var sel labels.Selector
	if o.LabelSelector != "" {
		sel, _ = labels.Parse(o.LabelSelector)
	}
	d := newDescribers(c, now)
	var errs []error
	first := true
	for _, t := range targets {
		all, err := report.SelectKind(c, t.kind, "", o.Namespace, o.AllNamespaces || len(t.names) == 0 && o.AllNamespaces, sel, nil)
		if err != nil {
			return describeError(err)
		}
		objs := all
		if len(t.names) > 0 {
			objs = nil
			for _, n := range t.names {
				matched := byName(all, n, true)
				if len(matched) == 0 {
					matched = byName(all, n, false)
				}
				if len(matched) == 0 {
					errs = append(errs, &report.NotFoundError{Kind: t.kind, Name: n})
					continue
				}
				objs = append(objs, matched...)
			}
		}
		us, err := report.Objects(t.kind, objs)
		if err != nil {
			return err
		}
		for i, u := range us {
			text, err := d.describe(t.kind, objs[i], u)
			if err != nil {
				return fmt.Errorf("describing %s: %w", report.Name(t.kind, objs[i]), err)
			}
			if !first {
				fmt.Fprint(o.streams.Out, "\n\n")
			}
			first = false
			fmt.Fprint(o.streams.Out, text)
		}
	}
	if first && len(errs) == 0 {
		fmt.Fprintln(o.streams.ErrOut, report.NoResourcesMessage(kindsOf(targets), o.Namespace, o.AllNamespaces))
	}
	if len(errs) > 0 {
		return &cmdutil.ExitError{Code: cmdutil.ExitNegative, Err: errors.Join(errs...)}
	}
	return nil
}

func describeError(err error) error {
	var nf *report.NotFoundError
	switch {
	case cmdutil.HasExitCode(err):
		return err
	case errors.As(err, &nf):
		return &cmdutil.ExitError{Code: cmdutil.ExitNegative, Err: err}
	}
	return &cmdutil.ExitError{Code: cmdutil.ExitBadInput, Err: err}
}

func kindsOf(ts []describeTarget) []report.Kind {
	var out []report.Kind
	for _, t := range ts {
		out = append(out, t.kind)
	}
	return out
}

// byName picks the objects named name, or whose names start with it.
func byName(objs []any, name string, exact bool) []any {
	var out []any
	for _, o := range objs {
		m, ok := o.(metav1.Object)
		if !ok {
			continue
		}
		if exact && m.GetName() == name || !exact && strings.HasPrefix(m.GetName(), name) {
			out = append(out, o)
		}
	}
	return out
}

// describers hold kubectl's describers over the twin: the typed ones read
// a fake clientset holding the twin's Kubernetes objects.
type describers struct {
	cluster *model.Cluster
	now     time.Time
	typed   map[schema.GroupKind]describe.ResourceDescriber
}

func newDescribers(c *model.Cluster, now time.Time) *describers {
	return &describers{cluster: c, now: now}
}

func (d *describers) init() {
	if d.typed != nil {
		return
	}
	c := d.cluster
	var objs []runtime.Object
	add := func(o runtime.Object) { objs = append(objs, o.DeepCopyObject()) }
	for _, o := range c.Nodes {
		n := o.DeepCopy()
		if n.UID == "" {
			// The node describer searches events by the node's UID, then by
			// its name as UID (the kubelet's); without a UID the first
			// search would match every event about any node. A stand-in.
			n.UID = types.UID("node-" + n.Name)
		}
		objs = append(objs, n)
		add(nodeLease(o))
	}
	for _, o := range c.Namespaces {
		add(o)
	}
	// kubectl's describers measure ages from the wall clock (time.Since):
	// the copies they read have the timestamps they print as ages — pods'
	// creation (a node's pod list) and events' — moved by the wall clock's
	// lead over now, so that the ages are measured from now.
	lead := time.Since(d.now)
	for _, o := range c.Pods {
		p := o.DeepCopy()
		p.CreationTimestamp = shift(p.CreationTimestamp, lead)
		objs = append(objs, p)
	}
	for _, o := range c.Events {
		e := o.DeepCopy()
		if e.InvolvedObject.Kind == "Node" && e.InvolvedObject.UID == "" {
			e.InvolvedObject.UID = types.UID("node-" + e.InvolvedObject.Name) // the node's stand-in UID
		}
		e.FirstTimestamp, e.LastTimestamp = shift(e.FirstTimestamp, lead), shift(e.LastTimestamp, lead)
		objs = append(objs, e)
	}
	for _, o := range c.Services {
		add(o)
	}
	for _, o := range c.EndpointSlices {
		add(o)
	}
	for _, o := range c.ConfigMaps {
		add(o)
	}
	for _, o := range c.ServiceAccounts {
		add(o)
	}
	for _, o := range c.DaemonSets {
		add(o)
	}
	for _, o := range c.Deployments {
		add(o)
	}
	for _, o := range c.ReplicaSets {
		add(o)
	}
	for _, o := range c.StatefulSets {
		add(o)
	}
	for _, o := range c.NetworkPolicies {
		add(o)
	}
	for _, o := range c.CSRs {
		add(o)
	}
	cs := fake.NewSimpleClientset(objs...) //nolint:staticcheck // NewClientset needs apply configurations the twin's objects lack.
	// The fake lists by label only; the describers also select pods by
	// field (a node's pods: spec.nodeName and status.phase).
	cs.PrependReactor("list", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		la, ok := a.(clienttesting.ListActionImpl)
		if !ok || la.GetListRestrictions().Fields == nil || la.GetListRestrictions().Fields.Empty() {
			return false, nil, nil
		}
		ret, err := cs.Tracker().List(la.GetResource(), la.GetKind(), la.GetNamespace())
		if err != nil {
			return true, nil, err
		}
		items, err := meta.ExtractList(ret)
		if err != nil {
			return true, nil, err
		}
		var keep []runtime.Object
		for _, it := range items {
			if report.MatchesFields(report.KindPod, it, la.GetListRestrictions().Fields) &&
				report.MatchesLabels(it, la.GetListRestrictions().Labels) {
				keep = append(keep, it)
			}
		}
		if err := meta.SetList(ret, keep); err != nil {
			return true, nil, err
		}
		return true, ret, nil
	})
	// Events are searched by field (involvedObject.*), which the fake
	// ignores too.
	cs.PrependReactor("list", "events", func(a clienttesting.Action) (bool, runtime.Object, error) {
		la, ok := a.(clienttesting.ListActionImpl)
		if !ok || la.GetListRestrictions().Fields == nil || la.GetListRestrictions().Fields.Empty() {
			return false, nil, nil
		}
		ret, err := cs.Tracker().List(la.GetResource(), la.GetKind(), la.GetNamespace())
		if err != nil {
			return true, nil, err
		}
		list, ok := ret.(*corev1.EventList)
		if !ok {
			return false, nil, nil
		}
		var keep []corev1.Event
		for _, e := range list.Items {
			if la.GetListRestrictions().Fields.Matches(eventFields(&e)) {
				keep = append(keep, e)
			}
		}
		list.Items = keep
		return true, list, nil
	})
	var client kubernetes.Interface = eventSearching{cs}
	d.typed = map[schema.GroupKind]describe.ResourceDescriber{
		report.KindPod.GroupKind():            &describe.PodDescriber{Interface: client},
		report.KindNode.GroupKind():           &describe.NodeDescriber{Interface: client},
		report.KindNamespace.GroupKind():      &describe.NamespaceDescriber{Interface: client},
		report.KindService.GroupKind():        &describe.ServiceDescriber{Interface: client},
		report.KindEndpointSlice.GroupKind():  &describe.EndpointSliceDescriber{Interface: client},
		report.KindConfigMap.GroupKind():      &describe.ConfigMapDescriber{Interface: client},
		report.KindServiceAccount.GroupKind(): &describe.ServiceAccountDescriber{Interface: client},
		report.KindDaemonSet.GroupKind():      &describe.DaemonSetDescriber{Interface: client},
		report.KindReplicaSet.GroupKind():     &describe.ReplicaSetDescriber{Interface: client},
		report.KindNetworkPolicy.GroupKind():  &describe.NetworkPolicyDescriber{Interface: client},
	}
}

// nodeLease is the Lease the kubelet keeps renewed in kube-node-lease
// (k8s.io/component-helpers/apimachinery/lease/controller.go, as
// pkg/kubelet/kubelet.go starts it): held by the node, renewed at the
// Ready condition's last heartbeat. Derived: the twin models no renewals.
func nodeLease(n *corev1.Node) *coordinationv1.Lease {
	holder := n.Name
	seconds := int32(40) // the kubelet's nodeLeaseDurationSeconds default
	l := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, Namespace: corev1.NamespaceNodeLease},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds},
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			t := metav1.NewMicroTime(c.LastHeartbeatTime.Time)
			l.Spec.RenewTime = &t
		}
	}
	return l
}

// eventSearching is the fake clientset with the event search's field
// selector the real client builds: the fake's GetFieldSelector selects
// everything, which would give every object its namespace's events.
type eventSearching struct{ *fake.Clientset }

func (c eventSearching) CoreV1() corev1client.CoreV1Interface {
	return eventSearchingCore{c.Clientset.CoreV1()}
}

type eventSearchingCore struct{ corev1client.CoreV1Interface }

func (c eventSearchingCore) Events(namespace string) corev1client.EventInterface {
	return eventSearchingEvents{c.CoreV1Interface.Events(namespace)}
}

type eventSearchingEvents struct{ corev1client.EventInterface }

// GetFieldSelector is client-go's (typed/core/v1/event_expansion.go).
func (eventSearchingEvents) GetFieldSelector(name, namespace, kind, uid *string) fields.Selector {
	set := fields.Set{}
	for k, v := range map[string]*string{"involvedObject.name": name, "involvedObject.namespace": namespace,
		"involvedObject.kind": kind, "involvedObject.uid": uid} {
		if v != nil {
			set[k] = *v
		}
	}
	return set.AsSelector()
}

// shift moves a timestamp (a zero one stays zero).
func shift(t metav1.Time, d time.Duration) metav1.Time {
	if t.IsZero() {
		return t
	}
	return metav1.NewTime(t.Add(d))
}

// eventFields are an Event's field labels (pkg/registry/core/event
// strategy.go ToSelectableFields).
func eventFields(e *corev1.Event) fields.Set {
	return fields.Set{
		"metadata.name":                  e.Name,
		"metadata.namespace":             e.Namespace,
		"involvedObject.kind":            e.InvolvedObject.Kind,
		"involvedObject.namespace":       e.InvolvedObject.Namespace,
		"involvedObject.name":            e.InvolvedObject.Name,
		"involvedObject.uid":             string(e.InvolvedObject.UID),
		"involvedObject.apiVersion":      e.InvolvedObject.APIVersion,
		"involvedObject.resourceVersion": e.InvolvedObject.ResourceVersion,
		"involvedObject.fieldPath":       e.InvolvedObject.FieldPath,
		"reason":                         e.Reason,
		"reportingComponent":             e.ReportingController,
		"source":                         e.Source.Component,
		"type":                           e.Type,
	}
}

var describeSettings = describe.DescriberSettings{ShowEvents: true, ChunkSize: 500}

func (d *describers) describe(k report.Kind, o any, u interface {
	GetNamespace() string
	GetName() string
	MarshalJSON() ([]byte, error)
}) (string, error) {
	if _, ok := o.(runtime.Object); ok {
		d.init()
		if typed, ok := d.typed[k.GroupKind()]; ok {
			return typed.Describe(u.GetNamespace(), u.GetName(), describeSettings)
		}
	}
	// Any other kind prints as kubectl's generic describer prints a custom
	// resource; it reads the object through an in-process transport that
	// answers with the object (and no events): nothing leaves the process.
	data, err := u.MarshalJSON()
	if err != nil {
		return "", err
	}
	cfg := &rest.Config{Host: "http://twin.invalid", Transport: objectTransport(data)}
	mapping := &meta.RESTMapping{
		Resource:         schema.GroupVersionResource{Group: k.Group, Version: k.Version, Resource: k.Resource},
		GroupVersionKind: k.GroupVersionKind(),
		Scope:            meta.RESTScopeRoot,
	}
	if k.Namespaced {
		mapping.Scope = meta.RESTScopeNamespace
	}
	g, ok := describe.GenericDescriberFor(mapping, cfg)
	if !ok {
		return "", fmt.Errorf("no describer for %s", k.Resource)
	}
	return g.Describe(u.GetNamespace(), u.GetName(), describeSettings)
}

// objectTransport answers every request with the object, and event lists
// with an empty list.
type objectTransport []byte

func (t objectTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	body := []byte(t)
	if strings.HasSuffix(r.URL.Path, "/events") {
		body = []byte(`{"kind":"EventList","apiVersion":"v1","metadata":{},"items":[]}`)
	}
	return &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": []string{"application/json"}},
		Body:       io.NopCloser(bytes.NewReader(body)),
		Request:    r,
	}, nil
}
