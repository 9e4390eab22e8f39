package load

import (
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/kubeadm"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/meta"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load/declared"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load/rawdoc"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/validate"
)

// Validation says what Load does with an object the API server would
// refuse and with fields no kind declares. The modes are kubectl's
// --validate values, with "warn" the default (see the README).
type Validation int

const (
	// ValidateWarn refuses objects the API server would refuse and warns
	// about unknown fields.
	ValidateWarn Validation = iota
	// ValidateStrict also refuses unknown fields (the API server's Strict
	// field validation).
	ValidateStrict
	// ValidateIgnore keeps every object, with a warning for each refusal
	// and unknown field.
	ValidateIgnore
)

// ParseValidation reads a --validate value as kubectl does: strict (or
// true), warn, ignore (or false).
func ParseValidation(s string) (Validation, bool) {
	switch strings.ToLower(s) {
	case "warn":
		return ValidateWarn, true
	case "strict", "true":
		return ValidateStrict, true
	case "ignore", "false":
		return ValidateIgnore, true
	}
	return 0, false
}

// maxRefusals caps the refusals listed in one error.
const maxRefusals = 20

// validator collects, in input order, what the API server would say about
// the objects of one Load.
type validator struct {
	mode Validation
	// dropRaw: the generic values of modeled kinds are not kept
	// (Options.DropRaw), so such objects may be decoded directly.
	dropRaw bool

	mu      sync.Mutex
	pending map[*model.Object][]finding // found while building, in parallel
	// lines locates the fields of Services and IPPools, for the checks
	// across objects that run once everything is read.
	lines map[*model.Object]func(rawdoc.FieldPath) int

	refused  []*Error
	warnings []string
}

func newValidator(mode Validation) *validator {
	return &validator{mode: mode, pending: map[*model.Object][]finding{}, lines: map[*model.Object]func(rawdoc.FieldPath) int{}}
}

// emitted records what was found in o, now that o comes in input order.
func (v *validator) emitted(o *model.Object) {
	v.mu.Lock()
	found := v.pending[o]
	delete(v.pending, o)
	v.mu.Unlock()
	for _, f := range found {
		v.report(f)
	}
}

// report files one finding by the mode.
func (v *validator) report(f finding) {
	switch {
	case v.mode == ValidateIgnore:
		v.warnings = append(v.warnings, f.err.Error()+" (kept: validation is off)")
	case f.bypassed:
		v.warnings = append(v.warnings, f.err.Error()+" (Calico's API server refuses this; a crd.projectcalico.org object is stored without its checks)")
	case f.unknown && v.mode == ValidateWarn:
		v.warnings = append(v.warnings, f.err.Error())
	default:
		v.refused = append(v.refused, f.err)
	}
}

// finding is one thing found in an object.
type finding struct {
	err     *Error
	unknown bool // an unknown field, not a refusal
	// bypassed is a check of Calico's API server (libcalico-go) on an
	// object written to Calico's CRDs directly, which only the CRD schema
	// checks: a warning.
	bypassed bool
}

// calicoCheck reports whether e is one of Calico's own checks of an object
// of Calico's kinds (its spec; names are the API server's).
func calicoCheck(obj *model.Object, e *field.Error) bool {
	return obj.GVK.Group == calico.CRDGroup && strings.HasPrefix(e.Field, "spec.")
}

// check runs the per-object checks on a built object; c locates its fields.
func (d *decoder) check(c *candidate, obj *model.Object, k meta.Kind, label string, unknown []declared.Field) {
	v := d.val
	var found []finding
	for _, u := range unknown {
		msg := "unknown field " + strconv.Quote(u.Path.Dotted())
		if u.CaseOf != "" {
			msg += " (field names are case-sensitive: " + strconv.Quote(u.CaseOf) + " is declared; the value is dropped)"
		}
		found = append(found, finding{err: d.errorAt(c.lineOf(u.Path), label, "%s", msg), unknown: true})
	}
	// A what-if marker is no object to create: only its name is read.
	var errs field.ErrorList
	if _, marker := markerOf(obj); !marker {
		errs = validate.Object(obj.Typed, k)
	}
	for _, e := range errs {
		found = append(found, finding{err: d.errorAt(errorLine(c.lineNear, e), label, "%s", e.Error()), bypassed: calicoCheck(obj, e)})
	}
	if needsLines(obj.Typed) {
		v.mu.Lock()
		v.lines[obj] = c.lineNear // holds the object's parsed document
		v.mu.Unlock()
	}
	if len(found) == 0 {
		return
	}
	v.mu.Lock()
	v.pending[obj] = found
	v.mu.Unlock()
}

// needsLines reports whether the checks across objects may name a field
// of typed: an IPPool's CIDR, a Service's node ports.
func needsLines(typed any) bool {
	switch t := typed.(type) {
	case *calico.IPPool:
		return true
	case *corev1.Service:
		for _, p := range t.Spec.Ports {
			if p.NodePort != 0 {
				return true
			}
		}
	}
	return false
}

// finish runs the checks across objects on the loaded snapshot and returns
// the refusals as one error.
func (v *validator) finish(snap *model.Snapshot) error {
	nodePorts := validate.DefaultNodePorts
	// The operator's pools exist before any applied by hand.
	var pools []validate.Pool
	var poolObjs []*model.Object
	for _, o := range snap.Objects {
		if inst, ok := o.Typed.(*operator.Installation); ok && inst.Spec.CalicoNetwork != nil {
			for _, p := range inst.Spec.CalicoNetwork.IPPools {
				pools = append(pools, validate.Pool{Name: p.Name, CIDR: p.CIDR, Managed: true})
				poolObjs = append(poolObjs, o)
			}
		}
	}
	for _, o := range snap.Objects {
		switch t := o.Typed.(type) {
		case *kubeadm.ClusterConfiguration:
			for _, a := range t.APIServer.ExtraArgs {
				if a.Name == "service-node-port-range" {
					if r, err := utilnet.ParsePortRange(a.Value); err == nil {
						nodePorts = *r
					}
				}
			}
		case *calico.IPPool:
			pools = append(pools, validate.Pool{Name: t.Name, CIDR: t.Spec.CIDR})
			poolObjs = append(poolObjs, o)
		}
	}
	for _, o := range snap.Objects {
		if svc, ok := o.Typed.(*corev1.Service); ok {
			v.across(o, validate.NodePorts(svc, nodePorts))
		}
	}
	for i, errs := range validate.PoolOverlaps(pools) {
		v.across(poolObjs[i], errs)
	}
	if len(v.refused) == 0 {
		snap.Warnings = append(snap.Warnings, v.warnings...)
		return nil
	}
	return &Refusals{Errors: v.refused, Warnings: append(snap.Warnings, v.warnings...)}
}

func (v *validator) across(o *model.Object, errs field.ErrorList) {
	for _, e := range errs {
		line := o.Origin.Line
		if lineOf := v.lines[o]; lineOf != nil {
			line = errorLine(lineOf, e)
		}
		err := &Error{File: o.Origin.File, Doc: o.Origin.Doc, Line: line, Object: keyLabel(o.Key), Msg: e.Error()}
		v.report(finding{err: err, bypassed: calicoCheck(o, e)})
	}
}

// Refusals are the objects of an input the API server would refuse, one
// *Error per refused field in input order, with the warnings found on the
// way (Load returns no snapshot to hold them).
type Refusals struct {
	Errors   []*Error
	Warnings []string
}

func (r *Refusals) Error() string {
	var b strings.Builder
	for i, e := range r.Errors {
		if i == maxRefusals {
			b.WriteString("\n… and " + strconv.Itoa(len(r.Errors)-i) + " more")
			break
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Unwrap gives the *Error values to errors.As (IsBadInput).
func (r *Refusals) Unwrap() []error {
	out := make([]error, len(r.Errors))
	for i, e := range r.Errors {
		out[i] = e
	}
	return out
}

// errorLine is the line of a field error: of the offending key when the
// error is about a map key (labels, annotations, selectors' matchLabels),
// else of the field.
func errorLine(lineOf func(rawdoc.FieldPath) int, e *field.Error) int {
	p := pathOfField(e.Field)
	if s, ok := e.BadValue.(string); ok && len(p) > 0 {
		switch p[len(p)-1].Key {
		case "labels", "annotations", "matchLabels":
			if l := lineOf(p.With(rawdoc.KeyElem(s))); l > 0 {
				return l
			}
		}
	}
	return lineOf(p)
}

// pathOfField reads a field.Path string: spec.ports[0].port,
// metadata.labels[key.with.dots] (a subscript runs to the first "]").
func pathOfField(s string) rawdoc.FieldPath {
	var p rawdoc.FieldPath
	for i := 0; i < len(s); {
		switch s[i] {
		case '.':
			i++
		case '[':
			j := strings.IndexByte(s[i+1:], ']')
			if j < 0 {
				return append(p, rawdoc.KeyElem(s[i+1:]))
			}
			sub := s[i+1 : i+1+j]
			if n, err := strconv.Atoi(sub); err == nil && n >= 0 && strconv.Itoa(n) == sub {
				p = append(p, rawdoc.IndexElem(n))
			} else {
				p = append(p, rawdoc.KeyElem(sub))
			}
			i += j + 2
		default:
			j := strings.IndexAny(s[i:], ".[")
			if j < 0 {
				j = len(s) - i
			}
			p = append(p, rawdoc.KeyElem(s[i:i+j]))
			i += j
		}
	}
	return p
}

// dropCaseVariants removes from m the keys that encoding/json would read
// into a field of another case, so that the typed object holds what the API
// server would store. It reports whether it removed any.
func dropCaseVariants(m map[string]any, unknown []declared.Field) bool {
	dropped := false
	for _, u := range unknown {
		if u.CaseOf == "" || len(u.Path) == 0 {
			continue
		}
		parent, ok := rawdoc.ValueAt(m, u.Path[:len(u.Path)-1])
		if !ok {
			continue
		}
		if pm, ok := parent.(map[string]any); ok {
			delete(pm, u.Path[len(u.Path)-1].Key)
			dropped = true
		}
	}
	return dropped
}
