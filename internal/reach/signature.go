package reach

import (
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/calico/selector"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/imagecatalog"
)

// Pods are told apart by what reads their labels, not by the labels
// themselves: two pods of one namespace that every selector able to see
// them matches alike (NetworkPolicy podSelectors and peers, Calico policy
// and rule selectors, --from/--to filters) are the same to every policy,
// so they share a class. Clusters label each Deployment apart, and most
// Deployments are named by no selector; keying classes by labels made one
// class per Deployment.

// labelTest is one label selector, or one filter, a pod may match.
type labelTest struct {
	k8s    labels.Selector   // on the pod's labels
	calico selector.Selector // on the labels Calico selectors see
	pod    func(*corev1.Pod) bool
}

// scopedTest is a labelTest with the namespaces it can see: one namespace
// (ns), the namespaces a selector matches (nsMatch), or every one (both
// empty).
type scopedTest struct {
	key     string
	ns      string
	nsMatch func(ns string) bool
	test    labelTest
}

// labelTests collects every selector and filter that reads pod labels,
// once each, and returns the function listing those that see a namespace.
func (an *analyzer) labelTests(owners func(*corev1.Pod) string) func(ns string) []labelTest {
	var all []scopedTest
	seen := map[string]bool{}
	add := func(t scopedTest) {
		if seen[t.key] {
			return
		}
		seen[t.key] = true
		all = append(all, t)
	}
	nsSelMatch := map[string]func(string) bool{}
	k8sNS := func(sel labels.Selector) func(string) bool {
		k := sel.String()
		if f, ok := nsSelMatch[k]; ok {
			return f
		}
		memo := map[string]bool{}
		f := func(ns string) bool {
			m, ok := memo[ns]
			if !ok {
				m = sel.Matches(an.pol.namespaceLabels(ns))
				memo[ns] = m
			}
			return m
		}
		nsSelMatch[k] = f
		return f
	}
	// NetworkPolicy: the podSelector in its namespace; each peer's
	// podSelector where its namespaceSelector (or the policy's namespace)
	// looks.
	for _, list := range an.pol.byNS {
		for _, p := range list {
			if p.sel != nil && !p.sel.Empty() {
				add(scopedTest{key: "k\x00" + p.ns + "\x00" + p.sel.String(), ns: p.ns, test: labelTest{k8s: p.sel}})
			}
			for _, r := range append(append([]*rule(nil), p.inRules...), p.egRules...) {
				for _, s := range r.peers {
					if s.ipBlock != nil || s.invalid || s.podSel == nil || s.podSel.Empty() {
						continue
					}
					if s.nsSel == nil {
						add(scopedTest{key: "k\x00" + p.ns + "\x00" + s.podSel.String(), ns: p.ns, test: labelTest{k8s: s.podSel}})
						continue
					}
					add(scopedTest{key: "k\x00*" + s.nsSel.String() + "\x00" + s.podSel.String(), nsMatch: k8sNS(s.nsSel), test: labelTest{k8s: s.podSel}})
				}
			}
		}
	}
	// Calico policies (judged on Windows endpoints): the policy's
	// selector, and its rules' selectors and not-selectors.
	calicoTests := func(ns string, spec calico.PolicySpec) {
		one := func(src string, scopeNS string) {
			if src == "" {
				return
			}
			sel, err := selector.Parse(src)
			if err != nil || sel == nil {
				return
			}
			add(scopedTest{key: "c\x00" + scopeNS + "\x00" + src, ns: scopeNS, test: labelTest{calico: sel}})
		}
		one(spec.Selector, ns)
		for _, r := range append(append([]calicoRule(nil), spec.Ingress...), spec.Egress...) {
			for _, e := range []calico.EntityRule{r.Source, r.Destination} {
				scope := ns
				if e.NamespaceSelector != "" {
					scope = "" // where the namespace selector looks: every namespace, to be safe
				}
				one(e.Selector, scope)
				one(e.NotSelector, scope)
			}
		}
	}
	for _, p := range an.c.CalicoPolicies {
		calicoTests(p.Namespace, p.Spec)
	}
	for _, p := range an.c.GlobalNetworkPolicies {
		calicoTests("", p.Spec)
	}
	// --from and --to name workloads, Services and labels exactly; pod/NAME
	// is the class of the pod, whatever else it holds.
	for _, f := range append(append([]Filter(nil), an.opt.From...), an.opt.To...) {
		f := f
		switch f.kind {
		case "workload":
			add(scopedTest{key: "f\x00wl\x00" + f.ns + "/" + f.name, ns: f.ns, test: labelTest{pod: func(p *corev1.Pod) bool { return owners(p) == f.name }}})
		case "svc":
			for _, s := range an.c.Services {
				if s.Namespace == f.ns && s.Name == f.name && len(s.Spec.Selector) > 0 {
					sel := labels.SelectorFromSet(s.Spec.Selector)
					add(scopedTest{key: "k\x00" + f.ns + "\x00" + sel.String(), ns: f.ns, test: labelTest{k8s: sel}})
				}
			}
		case "labels":
			add(scopedTest{key: "k\x00\x00" + f.sel.String(), test: labelTest{k8s: f.sel}})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].key < all[j].key })
	byNS := map[string][]labelTest{}
	return func(ns string) []labelTest {
		if l, ok := byNS[ns]; ok {
			return l
		}
		var l []labelTest
		for _, t := range all {
			if t.ns == ns || t.ns == "" && (t.nsMatch == nil || t.nsMatch(ns)) {
				l = append(l, t.test)
			}
		}
		byNS[ns] = l
		return l
	}
}

// writeLabelSig writes which of the tests the pod matches.
func writeLabelSig(key *strings.Builder, p *corev1.Pod, tests []labelTest) {
	var cl map[string]string
	for _, t := range tests {
		var m bool
		switch {
		case t.k8s != nil:
			m = t.k8s.Matches(labels.Set(p.Labels))
		case t.calico != nil:
			if cl == nil {
				// As Felix sees them.
				cl = felix.PodLabels(p)
			}
			m = t.calico.Evaluate(cl)
		default:
			m = t.pod(p)
		}
		if m {
			key.WriteByte('1')
		} else {
			key.WriteByte('0')
		}
	}
}

// specSignature is what of a pod's spec decides what it answers and what
// its named ports are: per container, the workload table's row for its
// image (a known server's listeners) or, for an unknown image, none; and
// its declared ports with their names.
func specSignature(p *corev1.Pod, os string) string {
	var b strings.Builder
	for _, cs := range [][]corev1.Container{p.Spec.Containers, p.Spec.InitContainers} {
		for _, c := range cs {
			if prof := imagecatalog.Lookup(c.Image, os); prof.Known {
				b.WriteString(prof.Row.Pattern)
			}
			b.WriteByte('|')
			for _, cp := range c.Ports {
				b.WriteString(cp.Name)
				b.WriteByte('/')
				b.WriteString(string(cp.Protocol))
				b.WriteByte('/')
				b.WriteString(strconv.Itoa(int(cp.ContainerPort)))
				b.WriteByte(',')
			}
			b.WriteByte(0)
		}
		b.WriteByte(1)
	}
	return b.String()
}

// commonLabels are the labels every member of a class carries.
func commonLabels(c *class) map[string]string {
	out := map[string]string{}
	for k, v := range c.members[0].pod.Labels {
		out[k] = v
	}
	for _, m := range c.members[1:] {
		for k, v := range out {
			if m.pod.Labels[k] != v {
				delete(out, k)
			}
		}
	}
	return out
}
