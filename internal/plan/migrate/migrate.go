// Package migrate plans the migration of a cluster's Calico settings to
// what Windows nodes need (strictAffinity, the pools' encapsulation, BGP,
// the Windows dataplane): ordered steps through the Tigera operator's
// Installation, each a what-if file stacked on the previous one, with the
// twin's differences and answers after it (simulated), a preflight, a
// rollback and check --expect-windows on the migrated twin.
package migrate

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/crash"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/diff"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plan"
)

// Target is what a migration goes to, given with --to: an Installation
// and/or an IPAMConfiguration. The fields a migration plans are the pools'
// encapsulation, bgp, windowsDataplane, serviceCIDRs and strictAffinity;
// a field the file leaves out keeps the cluster's value.
type Target struct {
	Source       string
	Installation *operator.Installation
	IPAM         *calico.IPAMConfiguration
}

// Request is what `plan migrate` is asked.
type Request struct {
	// To is nil for the default target: what `check --expect-windows`
	// demands of the cluster.
	To *Target
	// APIServer is the kubeconfig's server URL for a live cluster.
	APIServer string
	// Diff says what each step's changes compare (diff.Options{NoReach:
	// true} leaves out the reachability difference).
	Diff diff.Options
}

// Plan is the migration: ordered steps, each a what-if on the previous
// cluster with the twin's answers after it (simulated).
type Plan struct {
	// Target says what the steps go to.
	Target    string         `json:"target"`
	Steps     []Step         `json:"steps"`
	Preflight []plan.Finding `json:"preflight"`
	// PointOfNoReturn is the moment after which Rollback no longer works.
	PointOfNoReturn string         `json:"pointOfNoReturn"`
	Rollback        []RollbackStep `json:"rollback"`
	// After are `check --expect-windows`'s errors on the migrated twin;
	// empty when Windows nodes can join.
	After  []plan.Finding `json:"after"`
	Values []plan.Value   `json:"values"`

	// Final is the migrated twin and FinalSnapshot its input.
	Final         *model.Cluster  `json:"-"`
	FinalSnapshot *model.Snapshot `json:"-"`
}

// Step is one change, through the Installation, the
// IPAMConfiguration or a ConfigMap.
type Step struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// File is the what-if file: -f base -f 01-… -f 02-… is the cluster
	// after step 2.
	File     string   `json:"file"`
	Commands []string `json:"commands"`
	// Changes is what the twin says changes between the cluster before
	// and after the step.
	Changes *diff.Result `json:"changes"`
	Verify  []plan.Check `json:"verify"`
	// Disruption says what the step disturbs: restarts, replaced routes.
	Disruption string `json:"disruption"`
	Why        string `json:"why,omitempty"`

	// Body is the what-if file's content.
	Body     string         `json:"-"`
	Cluster  *model.Cluster `json:"-"`
	rollback []string
}

// RollbackStep undoes one step; the steps are listed in reverse order.
type RollbackStep struct {
	Undoes   string   `json:"undoes"`
	Commands []string `json:"commands"`
}

// Step IDs, in the order a migration runs them.
const (
	StepStrictAffinity   = "strict-affinity"
	StepEncapsulation    = "encapsulation"
	StepBGP              = "bgp"
	StepWindowsDataplane = "windows-dataplane"
	StepServicesEndpoint = "services-endpoint"
)

// Compute plans the migration of the input cluster to the target.
// The base twin is in.Cluster (Build of in.Snapshot); each step's twin is
// derived from the previous one on the previous step's snapshot with that
// step's objects layered on it (engine.Derive, equal to a Build).
func Compute(in plan.Input, req Request) (*Plan, error) {
	c := in.Cluster
	inst := inputInstallation(c, in.Snapshot)
	if inst == nil {
		return nil, fmt.Errorf("the input has no operator.tigera.io Installation: plan migrate changes Calico through the Tigera operator's Installation (https://docs.tigera.io/calico/latest/reference/installation/api)")
	}
	r := plan.NewReader(c)
	m := &Plan{Target: "what check --expect-windows demands"}
	if req.To != nil {
		m.Target = req.To.Source
	}
	want, err := targetOf(c, inst, req.To)
	if err != nil {
		return nil, err
	}
	if want.windows {
		want.serviceCIDR = r.ServiceCIDR()
	}
	endpoint := r.Endpoint(req.APIServer)
	steps, err := deriveSteps(c, in.Snapshot, inst, want, endpoint)
	if err != nil {
		return nil, err
	}
	for i := range steps {
		steps[i].File = fmt.Sprintf("%02d-%s.yaml", i+1, steps[i].ID)
	}
	// Each step's twin is derived from the previous step's twin alone, so
	// the derivations run ahead of the comparisons, which read the twins
	// without changing them: on more than one CPU the two overlap.
	stop := make(chan struct{})
	defer close(stop)
	// check --expect-windows on the migrated twin and the preflight read
	// the twins and the steps' IDs only: they run as soon as the last twin
	// is derived, beside the comparisons still to come, on a copy of the
	// steps the comparisons do not write.
	ended := make(chan ending, 1)
	ahead := slices.Clone(steps)
	twins := deriveTwins(c, in.Snapshot, steps, stop, func(final *model.Cluster) {
		var e ending
		defer func() {
			if r := recover(); r != nil {
				e = ending{crashed: crash.Recovered(r)}
			}
			ended <- e
		}()
		e = finish(c, in.Snapshot, inst, ahead, final)
	})
	prev := diff.NewTwin(c)
	// While the first step is derived, the base twin's reach matrix is
	// made on the CPU the comparison would leave idle, when a step will
	// need it: the encapsulation step changes the IP pools and the
	// services endpoint step replaces calico-kube-controllers' pod, both
	// of which the matrix reads (diff reachKinds); the others read as the
	// twin before them does. A failure is the first comparison's to tell.
	prepared := make(chan struct{})
	var prepCrash crash.Group
	if has(steps, StepEncapsulation) || has(steps, StepServicesEndpoint) {
		go func() {
			defer close(prepared)
			defer prepCrash.Recover()
			_ = prev.PrepareReach(req.Diff)
		}()
	} else {
		close(prepared)
	}
	snap := in.Snapshot
	for i := range steps {
		st := &steps[i]
		d := <-twins
		if i == 0 {
			<-prepared // no comparison reads the twin while it is prepared
			prepCrash.Repanic()
		}
		if d.crashed != nil {
			panic(d.crashed)
		}
		if d.err != nil {
			return nil, d.err
		}
		snap, st.Cluster = d.snap, d.cluster
		twin := diff.NewTwin(d.cluster)
		ch, err := diff.CompareTwins(prev, twin, req.Diff)
		if err != nil {
			return nil, fmt.Errorf("step %s: comparing the twins before and after: %w", st.ID, err)
		}
		st.Changes = ch
		st.Verify = verify(st.ID, twin)
		st.Disruption = disruption(st.ID, ch)
		prev = twin
	}
	m.Steps = withWindowsFollowUps(steps)
	if m.Steps == nil {
		m.Steps = []Step{}
	}
	m.Final, m.FinalSnapshot = prev.Cluster(), snap
	m.PointOfNoReturn = "the first Windows node joins (kubectl hybrid plan join-windows): a Windows node works only with VXLAN Always, BGP off and strictAffinity, so from then on the rollback below would cut it off; until then every step can be undone"
	for i := len(steps) - 1; i >= 0; i-- {
		m.Rollback = append(m.Rollback, RollbackStep{Undoes: steps[i].ID, Commands: steps[i].rollback})
	}
	if m.Rollback == nil {
		m.Rollback = []RollbackStep{}
	}
	end := <-ended
	if end.crashed != nil {
		panic(end.crashed)
	}
	if end.err != nil {
		return nil, end.err
	}
	m.Preflight = end.preflight
	m.After = []plan.Finding{}
	for _, f := range end.rep.Findings {
		if f.Severity == check.Error {
			m.After = append(m.After, plan.Finding{ID: f.RuleID, Severity: string(f.Severity), Blocking: true, Object: f.Object.String(), Message: f.Message, WayOut: f.Remediation})
		}
	}
	m.Values = r.Values()
	return m, nil
}

// derived is one step's twin and the snapshot it is built from, or why
// the step could not be applied.
type derived struct {
	snap    *model.Snapshot
	cluster *model.Cluster
	err     error
	// crashed is a panic of the derivation, raised again by the
	// comparisons' goroutine (internal/crash).
	crashed *crash.Panic
}

// ending is check --expect-windows on the migrated twin and the
// preflight, or why the check failed.
type ending struct {
	rep       *check.Report
	preflight []plan.Finding
	err       error
	crashed   *crash.Panic
}

func finish(c *model.Cluster, snap *model.Snapshot, inst *operator.Installation, steps []Step, final *model.Cluster) ending {
	rep, err := check.Run(final, check.Options{ExpectWindows: true})
	if err != nil {
		return ending{err: fmt.Errorf("check on the migrated cluster: %w", err)}
	}
	return ending{rep: rep, preflight: preflight(c, snap, inst, steps, final, rep)}
}

// deriveTwins derives the steps' twins in order, each from the one before
// on the previous snapshot with the step's objects layered on it
// (engine.Derive, equal to a Build), and sends them on the channel it
// returns; after an error it sends nothing more. It stops early when stop
// is closed. After the last step, last is called with the last twin (the
// base twin when there are no steps). A panic ends the derivations and is
// sent as the next one's crashed.
func deriveTwins(base *model.Cluster, snap *model.Snapshot, steps []Step, stop <-chan struct{}, last func(*model.Cluster)) <-chan derived {
	// Room for every step and a panic: no send blocks on a reader gone.
	out := make(chan derived, len(steps)+1)
	go func() {
		defer close(out)
		defer func() {
			if r := recover(); r != nil {
				out <- derived{crashed: crash.Recovered(r)}
			}
		}()
		prev := base
		for i := range steps {
			select {
			case <-stop:
				return
			default:
			}
			d := deriveStep(prev, snap, &steps[i])
			select {
			case out <- d:
			case <-stop:
				return
			}
			if d.err != nil {
				return
			}
			prev, snap = d.cluster, d.snap
		}
		last(prev)
	}()
	return out
}

// deriveStep applies one step to the twin before it. The step changes
// only Calico's configuration: its twin is the previous one's, with what
// reads that configuration built again.
func deriveStep(prev *model.Cluster, before *model.Snapshot, st *Step) derived {
	objs, err := plan.Decode(st.File, st.Body)
	if err != nil {
		return derived{err: err}
	}
	snap := plan.Layer(before, objs...)
	next, err := engine.Derive(prev, before, snap)
	if err != nil {
		return derived{err: fmt.Errorf("step %s applied to the twin: %w", st.ID, err)}
	}
	return derived{snap: snap, cluster: next}
}

// inputInstallation is the Installation as the input gave it (the patches
// and what-ifs change the user's object, not the operator's defaults), else
// the twin's.
func inputInstallation(c *model.Cluster, snap *model.Snapshot) *operator.Installation {
	for _, o := range snap.Objects {
		if t, ok := o.Typed.(*operator.Installation); ok {
			return t
		}
	}
	return c.Installation
}

func inputIPAM(snap *model.Snapshot) *calico.IPAMConfiguration {
	for _, o := range snap.Objects {
		if t, ok := o.Typed.(*calico.IPAMConfiguration); ok && t.Name == "default" {
			return t
		}
	}
	return nil
}

// want is the target: the pools' encapsulation by index in the input's
// Installation, bgp, strictAffinity and the Windows prerequisites.
type want struct {
	strict      bool
	encap       []string // by pool index; empty keeps the pool's
	bgp         string
	windows     bool // windowsDataplane HNS, serviceCIDRs, the ConfigMap
	serviceCIDR string
}

// effective is the Installation as the operator reads it: the input's
// fields, else the twin's defaulted ones (an unset bgp or encapsulation is
// the operator's default, not "unchanged").
func effectiveBGP(c *model.Cluster, in *operator.Installation) string {
	if cn := in.Spec.CalicoNetwork; cn != nil && cn.BGP != nil {
		return *cn.BGP
	}
	if c.Installation != nil && c.Installation.Spec.CalicoNetwork != nil && c.Installation.Spec.CalicoNetwork.BGP != nil {
		return *c.Installation.Spec.CalicoNetwork.BGP
	}
	return "Enabled"
}

func pools(in *operator.Installation) []operator.IPPool {
	if in == nil || in.Spec.CalicoNetwork == nil {
		return nil
	}
	return in.Spec.CalicoNetwork.IPPools
}

// effectivePools are the input's pools, or the operator's defaulted ones
// when the input names none.
func effectivePools(c *model.Cluster, in *operator.Installation) []operator.IPPool {
	if ps := pools(in); len(ps) > 0 {
		return ps
	}
	return pools(c.Installation)
}

func isIPv4(cidr string) bool {
	p, err := netip.ParsePrefix(cidr)
	return err == nil && p.Addr().Is4()
}

// targetOf reads the target: --to's fields, or what check --expect-windows
// demands (check's HYB001-HYB005 and HYB007).
func targetOf(c *model.Cluster, in *operator.Installation, to *Target) (want, error) {
	ps := effectivePools(c, in)
	w := want{encap: make([]string, len(ps)), bgp: effectiveBGP(c, in)}
	if to == nil {
		vxlan := false
		for i, p := range ps {
			enc := p.Encapsulation
			if isIPv4(p.CIDR) && enc != "VXLAN" && enc != "None" {
				enc = "VXLAN" // Calico for Windows: VXLAN, or None with BGP
			}
			w.encap[i] = enc
			vxlan = vxlan || strings.HasPrefix(enc, "VXLAN")
		}
		if vxlan {
			w.bgp = "Disabled"
		}
		w.strict, w.windows = true, true
		return w, nil
	}
	if to.IPAM != nil {
		w.strict = to.IPAM.Spec.StrictAffinity
	} else if c.IPAMConfig != nil {
		w.strict = c.IPAMConfig.Spec.StrictAffinity
	}
	for i, p := range ps {
		w.encap[i] = p.Encapsulation
	}
	if ti := to.Installation; ti != nil {
		if err := onlyPlannedFields(in, ti, to.Source); err != nil {
			return w, err
		}
		if cn := ti.Spec.CalicoNetwork; cn != nil {
			if cn.BGP != nil {
				w.bgp = *cn.BGP
			}
			for _, tp := range cn.IPPools {
				i := slices.IndexFunc(ps, func(p operator.IPPool) bool {
					return (tp.Name != "" && p.Name == tp.Name) || (tp.Name == "" && p.CIDR == tp.CIDR)
				})
				if i < 0 {
					return w, fmt.Errorf("%s: IP pool %s %s is not in the cluster's Installation; plan migrate changes existing pools' encapsulation only", to.Source, tp.Name, tp.CIDR)
				}
				if tp.Encapsulation != "" {
					w.encap[i] = tp.Encapsulation
				}
			}
			w.windows = cn.WindowsDataplane != nil && *cn.WindowsDataplane == "HNS"
		}
	}
	return w, nil
}

// plannedFields are the Installation fields a migration changes; the rest
// of a --to Installation must agree with the cluster's.
var plannedFields = map[string]bool{"calicoNetwork.bgp": true, "calicoNetwork.windowsDataplane": true, "calicoNetwork.ipPools": true, "serviceCIDRs": true}

func onlyPlannedFields(cur, to *operator.Installation, source string) error {
	a, b := asMap(cur.Spec), asMap(to.Spec)
	var bad []string
	var walk func(prefix string, x, y map[string]any)
	walk = func(prefix string, x, y map[string]any) {
		for k, v := range y {
			path := strings.TrimPrefix(prefix+"."+k, ".")
			if plannedFields[path] {
				continue
			}
			if sub, ok := v.(map[string]any); ok {
				xs, _ := x[k].(map[string]any)
				walk(path, xs, sub)
				continue
			}
			if !reflect.DeepEqual(x[k], v) {
				bad = append(bad, path)
			}
		}
	}
	walk("", a, b)
	// Within the pools, only the encapsulation is planned.
	for _, tp := range pools(to) {
		for _, cp := range pools(cur) {
			if (tp.Name != "" && tp.Name == cp.Name) || (tp.Name == "" && tp.CIDR == cp.CIDR) {
				tp.Encapsulation, tp.Name = cp.Encapsulation, cp.Name
				if !reflect.DeepEqual(asMap(tp), asMap(cp)) && !poolSubset(asMap(tp), asMap(cp)) {
					bad = append(bad, "calicoNetwork.ipPools["+cp.Name+"] (other than encapsulation)")
				}
			}
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return fmt.Errorf("%s: Installation field(s) %s differ from the cluster's; plan migrate plans strictAffinity, the pools' encapsulation, bgp, windowsDataplane and serviceCIDRs only", source, strings.Join(bad, ", "))
	}
	return nil
}

// poolSubset: every field the --to pool sets has the cluster pool's value.
func poolSubset(to, cur map[string]any) bool {
	for k, v := range to {
		if !reflect.DeepEqual(cur[k], v) {
			return false
		}
	}
	return true
}

func asMap(v any) map[string]any {
	raw, _ := json.Marshal(v)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	if m == nil {
		m = map[string]any{}
	}
	return m
}
