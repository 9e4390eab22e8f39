package classes

import (
	"net/netip"
	"sort"
	"strconv"

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

// LabelTest is one label selector, or one filter, a pod may match.
type LabelTest struct {
	K8s    labels.Selector   // on the pod's labels
	Calico selector.Selector // on the labels Calico selectors see
	Pod    func(*corev1.Pod) bool
}

// ScopedTest is a labelTest with the namespaces it can see: one namespace
// (ns), the namespaces a selector matches (nsMatch), or every one (both
// empty).
type ScopedTest struct {
	Key     string
	NS      string
	NsMatch func(ns string) bool
	Test    LabelTest
}

// LabelTests collects every selector and filter that reads pod labels,
// once each, and returns the function listing those that see a namespace.
func (an *Prep) LabelTests(owners func(*corev1.Pod) string) func(ns string) []LabelTest {
	var all []ScopedTest
	seen := map[string]bool{}
	add := func(t ScopedTest) {
		if seen[t.Key] {
			return
		}
		seen[t.Key] = true
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
				m = sel.Matches(an.Pol.NamespaceLabels(ns))
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
	for _, list := range an.Pol.ByNS {
		for _, p := range list {
			if p.Sel != nil && !p.Sel.Empty() {
				add(ScopedTest{Key: "k\x00" + p.NS + "\x00" + p.Sel.String(), NS: p.NS, Test: LabelTest{K8s: p.Sel}})
			}
			for _, r := range append(append([]*Rule(nil), p.InRules...), p.EgRules...) {
				for _, s := range r.Peers {
					if s.IpBlock != nil || s.Invalid || s.PodSel == nil || s.PodSel.Empty() {
						continue
					}
					if s.NsSel == nil {
						add(ScopedTest{Key: "k\x00" + p.NS + "\x00" + s.PodSel.String(), NS: p.NS, Test: LabelTest{K8s: s.PodSel}})
						continue
					}
					add(ScopedTest{Key: "k\x00*" + s.NsSel.String() + "\x00" + s.PodSel.String(), NsMatch: k8sNS(s.NsSel), Test: LabelTest{K8s: s.PodSel}})
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
			add(ScopedTest{Key: "c\x00" + scopeNS + "\x00" + src, NS: scopeNS, Test: LabelTest{Calico: sel}})
		}
		one(spec.Selector, ns)
		for _, r := range append(append([]CalicoRule(nil), spec.Ingress...), spec.Egress...) {
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
	for _, p := range an.C.CalicoPolicies {
		calicoTests(p.Namespace, p.Spec)
	}
	for _, p := range an.C.GlobalNetworkPolicies {
		calicoTests("", p.Spec)
	}
	// --from and --to name workloads, Services and labels exactly; pod/NAME
	// is the class of the pod, whatever else it holds.
	for _, f := range an.Filters {
		f := f
		switch f.Kind {
		case "workload":
			add(ScopedTest{Key: "f\x00wl\x00" + f.NS + "/" + f.Name, NS: f.NS, Test: LabelTest{Pod: func(p *corev1.Pod) bool { return owners(p) == f.Name }}})
		case "svc":
			for _, s := range an.C.Services {
				if s.Namespace == f.NS && s.Name == f.Name && len(s.Spec.Selector) > 0 {
					sel := labels.SelectorFromSet(s.Spec.Selector)
					add(ScopedTest{Key: "k\x00" + f.NS + "\x00" + sel.String(), NS: f.NS, Test: LabelTest{K8s: sel}})
				}
			}
		case "labels":
			add(ScopedTest{Key: "k\x00\x00" + f.Sel.String(), Test: LabelTest{K8s: f.Sel}})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Key < all[j].Key })
	byNS := map[string][]LabelTest{}
	return func(ns string) []LabelTest {
		if l, ok := byNS[ns]; ok {
			return l
		}
		var l []LabelTest
		for _, t := range all {
			if t.NS == ns || t.NS == "" && (t.NsMatch == nil || t.NsMatch(ns)) {
				l = append(l, t.Test)
			}
		}
		byNS[ns] = l
		return l
	}
}

// AppendLabelSig appends which of the tests the pod matches to key;
// calico are the pod's labels as Calico selectors see them (its Felix
// endpoint's).
func AppendLabelSig(key []byte, p *corev1.Pod, tests []LabelTest, calico map[string]string) []byte {
	for _, t := range tests {
		var m bool
		switch {
		case t.K8s != nil:
			m = t.K8s.Matches(labels.Set(p.Labels))
		case t.Calico != nil:
			m = t.Calico.Evaluate(calico)
		default:
			m = t.Pod(p)
		}
		if m {
			key = append(key, '1')
		} else {
			key = append(key, '0')
		}
	}
	return key
}

// labelSigs appends label signatures (AppendLabelSig), each computed once
// per set of labels: pods whose Felix endpoints have one LabelSet have
// equal labels, namespace and service account, so every selector test
// answers alike for them; a test on the pod itself (a workload filter)
// reads more than the labels, and so does a pod without an endpoint of
// its own: those are computed each time.
type labelSigs struct {
	calc *felix.Calc
	memo map[int32][]byte
}

// hasPodTest reports whether a test reads the pod itself, not its labels.
func hasPodTest(tests []LabelTest) bool {
	for _, t := range tests {
		if t.Pod != nil {
			return true
		}
	}
	return false
}

// append appends the pod's signature; podTests is hasPodTest(tests).
func (s *labelSigs) append(key []byte, p *corev1.Pod, ip netip.Addr, tests []LabelTest, podTests bool) []byte {
	ep := s.calc.EndpointAt(ip)
	if ep == nil || ep.Pod != p {
		ep = EndpointOf(s.calc, p)
	}
	set := ep.LabelSet
	if set < 0 || podTests {
		return AppendLabelSig(key, p, tests, ep.Labels)
	}
	if sig, ok := s.memo[set]; ok {
		return append(key, sig...)
	}
	n := len(key)
	key = AppendLabelSig(key, p, tests, ep.Labels)
	s.memo[set] = append([]byte(nil), key[n:]...)
	return key
}

// AppendSpecSignature appends what of a pod's spec decides what it
// answers and what its named ports are: per container, the workload
// table's row for its image (a known server's listeners) or, for an
// unknown image, none; and its declared ports with their names. lookup is
// imagecatalog.Lookup's row pattern, "" for an unknown image.
func AppendSpecSignature(b []byte, p *corev1.Pod, os string, lookup func(image, os string) string) []byte {
	for _, cs := range [][]corev1.Container{p.Spec.Containers, p.Spec.InitContainers} {
		for _, c := range cs {
			b = append(b, lookup(c.Image, os)...)
			b = append(b, '|')
			for _, cp := range c.Ports {
				b = append(b, cp.Name...)
				b = append(b, '/')
				b = append(b, cp.Protocol...)
				b = append(b, '/')
				b = strconv.AppendInt(b, int64(cp.ContainerPort), 10)
				b = append(b, ',')
			}
			b = append(b, 0)
		}
		b = append(b, 1)
	}
	return b
}

// ImagePatterns returns imagecatalog.Lookup's row pattern for an image on
// an OS ("" for an unknown image), each looked up once.
func ImagePatterns() func(image, os string) string {
	memo := map[[2]string]string{}
	return func(image, os string) string {
		k := [2]string{image, os}
		pat, ok := memo[k]
		if !ok {
			if prof := imagecatalog.Lookup(image, os); prof.Known {
				pat = prof.Row.Pattern
			}
			memo[k] = pat
		}
		return pat
	}
}

// CommonLabels are the labels every member of a class carries.
func CommonLabels(c *Class) map[string]string {
	out := map[string]string{}
	for k, v := range c.Members[0].Pod.Labels {
		out[k] = v
	}
	for _, m := range c.Members[1:] {
		for k, v := range out {
			if m.Pod.Labels[k] != v {
				delete(out, k)
			}
		}
	}
	return out
}
