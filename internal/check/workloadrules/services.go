package workloadrules

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/calico/selector"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/rule"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Services, DNS names and policies as Windows nodes see them.
func ServiceRules() []rule.Rule {
	return []rule.Rule{ruleBackendLimit, ruleETPLocalDSR, ruleSessionAffinity, ruleDottedNames, ruleCoreDNSOneNode, rulePolicySelectors, rulePolicyWindowsSkips}
}

func svcKey(s *corev1.Service) model.Key {
	return model.Key{Kind: "Service", Namespace: s.Namespace, Name: s.Name}
}

// balanced: kube-proxy programs a load balancer for the Service.
func balanced(s *corev1.Service) bool {
	return s.Spec.Type != corev1.ServiceTypeExternalName && s.Spec.ClusterIP != corev1.ClusterIPNone
}

// windowsEndpoints counts a Service's endpoints on Windows nodes.
func windowsEndpoints(x *rule.Context, eps []rule.Endpoint) int {
	n := 0
	for _, e := range eps {
		if node := x.Node(e.Node); node != nil && rule.IsWindowsNode(node) {
			n++
		}
	}
	return n
}

// maxWindowsBackends is the VFP load balancer's limit on destinations
// (kubernetes/kubernetes#98680; the Kubernetes documentation's "up to 64
// backend pods").
const maxWindowsBackends = 64

var ruleBackendLimit = rule.Rule{
	ID: "HYB050", Name: "windows-service-backends", Severity: rule.Warning,
	Title:    "Service has more than 64 backends for Windows load balancers",
	Examines: []string{"Service", "EndpointSlice.discovery.k8s.io", "Node"},
	Needs:    rule.NeedNodes,
	Description: `kube-proxy on every Windows node programs each Service port as one HNS load balancer holding
all its endpoints, local and remote, and the VFP rule behind it takes at most 64 destinations:
at 65 HNS fails with "invalid number of destinations" (kubernetes/kubernetes#98680), and the
Kubernetes documentation lists the limit among Windows networking limitations. Newer Windows
builds may raise it; the documented limit is 64.`,
	Remediation: `Keep Services reached from Windows nodes at 64 endpoints or fewer: split the workload behind several Services, or scale it down`,
	References:  []rule.Reference{rule.RefWindowsLimits, rule.K8sWindowsNetworking, rule.K8sIssue98680},
	Check: func(x *rule.Context) []rule.Finding {
		if len(x.WindowsNodes()) == 0 {
			return nil
		}
		var out []rule.Finding
		for _, s := range x.Cluster.Services {
			eps := x.Idx().Endpoints[rule.NSName{NS: s.Namespace, Name: s.Name}]
			if !balanced(s) || len(eps) <= maxWindowsBackends {
				continue
			}
			out = append(out, rule.Finding{Object: svcKey(s), Field: "spec.selector",
				Message: fmt.Sprintf("Service %s/%s has %d endpoints (%d on Windows nodes); the HNS load balancer on each Windows node holds at most %d",
					s.Namespace, s.Name, len(eps), windowsEndpoints(x, eps), maxWindowsBackends)})
		}
		return out
	},
}

var ruleETPLocalDSR = rule.Rule{
	ID: "HYB051", Name: "etp-local-without-dsr", Severity: rule.Error,
	Title:    "externalTrafficPolicy: Local Service on Windows nodes whose kube-proxy has no DSR",
	Examines: []string{"Service", "EndpointSlice.discovery.k8s.io", "DaemonSet.apps"},
	Description: `On Windows, externalTrafficPolicy: Local is implemented with Direct Server Return: kube-proxy
marks the NodePort, external and load-balancer IP rules DSR. Without --enable-dsr=true the
Windows node's kube-proxy cannot honour the policy, and traffic to the Service's Windows
endpoints through a node port or load balancer fails (kubernetes/kubernetes#109780).`,
	Remediation: `Run kube-proxy-windows with --enable-dsr=true (sig-windows-tools' start.ps1 does), or use externalTrafficPolicy: Cluster`,
	References:  []rule.Reference{rule.RefWinkernel, rule.RefWindowsLimits, rule.K8sWindowsNetworking, rule.K8sIssue109780},
	Check: func(x *rule.Context) []rule.Finding {
		var noDSR []string
		for _, p := range windowsKubeProxies(x) {
			if !p.script && !p.dsr && !p.config {
				noDSR = append(noDSR, rule.ObjectString(p.w.Key))
			}
		}
		if len(noDSR) == 0 {
			return nil
		}
		var out []rule.Finding
		for _, s := range x.Cluster.Services {
			if s.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyLocal {
				continue
			}
			win := windowsEndpoints(x, x.Idx().Endpoints[rule.NSName{NS: s.Namespace, Name: s.Name}])
			if win == 0 {
				continue
			}
			out = append(out, rule.Finding{Object: svcKey(s), Field: "spec.externalTrafficPolicy",
				Message: fmt.Sprintf("Service %s/%s has externalTrafficPolicy: Local and %s on Windows nodes, but %s runs without DSR",
					s.Namespace, s.Name, rule.Plural(win, "endpoint"), strings.Join(noDSR, ", "))})
		}
		return out
	},
}

// buildNumber is the third part of a Windows build ("10.0.17763" → 17763).
func buildNumber(build string) int {
	return hybrid.ParseWindowsKernel(build).Number
}

var ruleSessionAffinity = rule.Rule{
	ID: "HYB052", Name: "session-affinity-windows-build", Severity: rule.Warning,
	Title:    "sessionAffinity: ClientIP on Windows nodes older than Windows Server 2022",
	Examines: []string{"Service", "Node"},
	Needs:    rule.NeedNodes,
	Description: `winkernel kube-proxy implements ClientIP affinity with the HNS source-IP distribution, which
Windows supports from Windows Server 2022 (HNS 12.0); on older nodes kube-proxy only logs
"Session Affinity is not supported on this version of Windows" and balances every connection.`,
	Remediation: `Run the Windows nodes on Windows Server 2022 or later, or drop sessionAffinity from the Service`,
	References:  []rule.Reference{rule.RefWinkernel, rule.WinkernelProxier},
	Check: func(x *rule.Context) []rule.Finding {
		var old []string
		for _, n := range x.WindowsNodes() {
			if b, _ := rule.WindowsVersion(n); b != "" && buildNumber(b) > 0 && buildNumber(b) < 20348 {
				old = append(old, fmt.Sprintf("%s (%s)", n.Name, b))
			}
		}
		if len(old) == 0 {
			return nil
		}
		var out []rule.Finding
		for _, s := range x.Cluster.Services {
			if s.Spec.SessionAffinity != corev1.ServiceAffinityClientIP || !balanced(s) {
				continue
			}
			out = append(out, rule.Finding{Object: svcKey(s), Field: "spec.sessionAffinity",
				Message: fmt.Sprintf("Service %s/%s uses sessionAffinity: ClientIP, which kube-proxy cannot apply on %s", s.Namespace, s.Name, rule.ListNames(old, 3))})
		}
		return out
	},
}

// dnsDomain is kubeadm's networking.dnsDomain (default cluster.local).
func dnsDomain(c *model.Cluster) string {
	if cc := c.Kubeadm.Cluster; cc != nil && cc.Networking.DNSDomain != "" {
		return strings.TrimSuffix(cc.Networking.DNSDomain, ".")
	}
	return "cluster.local"
}

// hostTokens returns the runs of DNS-name characters in s that contain a
// dot, lowercased, without leading or trailing dots and hyphens.
func hostTokens(s string) []string {
	var out []string
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		t := strings.Trim(strings.ToLower(s[start:end]), ".-")
		if strings.Contains(t, ".") {
			out = append(out, t)
		}
		start = -1
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '.' || ch == '-' {
			if start < 0 {
				start = i
			}
			continue
		}
		flush(i)
	}
	flush(len(s))
	return out
}

// partialServiceName reports whether token is a dotted but incomplete name
// of an existing Service: name.namespace, name.namespace.svc, and so on up
// to (not including) the full name.namespace.svc.<domain>.
func partialServiceName(x *rule.Context, token, domain string) (full string, ok bool) {
	labels := strings.Split(token, ".")
	if len(labels) < 2 {
		return "", false
	}
	if _, exists := x.Idx().Services[rule.NSName{NS: labels[1], Name: labels[0]}]; !exists {
		return "", false
	}
	full = labels[0] + "." + labels[1] + ".svc." + domain
	want := strings.Split(full, ".")
	if len(labels) >= len(want) {
		return "", false
	}
	for i := range labels {
		if labels[i] != want[i] {
			return "", false
		}
	}
	return full, true
}

// dottedName is one use of a partial service name.
type dottedName struct {
	obj   model.Key
	field string
	value string
	full  string
}

// scanText reports every partial service name in s.
func scanText(x *rule.Context, s, domain string, found func(token, full string)) {
	if !strings.Contains(s, ".") {
		return
	}
	for _, t := range hostTokens(s) {
		if full, ok := partialServiceName(x, t, domain); ok {
			found(t, full)
		}
	}
}

var ruleDottedNames = rule.Rule{
	ID: "HYB053", Name: "windows-dotted-service-name", Severity: rule.Error,
	Title:    "Windows workload uses a dotted short Service name",
	Examines: []string{"Deployment.apps", "StatefulSet.apps", "DaemonSet.apps", "Pod", "ConfigMap", "Service"},
	Description: `The Windows DNS client treats any name with a dot as fully qualified and does not append the
search suffixes, unlike ndots:5 on Linux. From a Windows pod "hello" (same namespace) and
"hello.demo.svc.cluster.local" resolve, but "hello.demo" does not (curl.exe exits with 6,
"could not resolve host"). The rule looks for names of existing Services written as
name.namespace (or name.namespace.svc) in the env, command and args of Windows workloads and in
the ConfigMaps they read.`,
	Remediation: `Write Service names of other namespaces in full in Windows workloads: hello.demo.svc.cluster.local instead of hello.demo`,
	References:  []rule.Reference{rule.RefWindowsLimits, rule.RefWindowsVerify, rule.K8sDNSWindows, rule.K8sWindowsNetworking},
	Check: func(x *rule.Context) []rule.Finding {
		domain := dnsDomain(x.Cluster)
		var hits []dottedName
		type cmRef struct {
			cm   rule.NSName
			keys map[string]bool // nil: every key
		}
		for _, w := range x.Idx().Workloads {
			if !w.Intent || w.HostProcess {
				continue
			}
			var refs []cmRef
			rule.EachContainer(w.Spec, func(c *corev1.Container, path string) {
				for i, v := range c.Command {
					scanText(x, v, domain, func(t, full string) {
						hits = append(hits, dottedName{w.Key, w.Path(fmt.Sprintf("%s.command[%d]", path, i)), t, full})
					})
				}
				for i, v := range c.Args {
					scanText(x, v, domain, func(t, full string) {
						hits = append(hits, dottedName{w.Key, w.Path(fmt.Sprintf("%s.args[%d]", path, i)), t, full})
					})
				}
				for i, e := range c.Env {
					scanText(x, e.Value, domain, func(t, full string) {
						hits = append(hits, dottedName{w.Key, w.Path(fmt.Sprintf("%s.env[%d].value", path, i)) + " (" + e.Name + ")", t, full})
					})
					if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
						refs = append(refs, cmRef{rule.NSName{NS: w.Key.Namespace, Name: e.ValueFrom.ConfigMapKeyRef.Name}, map[string]bool{e.ValueFrom.ConfigMapKeyRef.Key: true}})
					}
				}
				for _, ef := range c.EnvFrom {
					if ef.ConfigMapRef != nil {
						refs = append(refs, cmRef{rule.NSName{NS: w.Key.Namespace, Name: ef.ConfigMapRef.Name}, nil})
					}
				}
			})
			for _, v := range w.Spec.Volumes {
				if v.ConfigMap != nil {
					refs = append(refs, cmRef{rule.NSName{NS: w.Key.Namespace, Name: v.ConfigMap.Name}, nil})
				}
			}
			for _, r := range refs {
				cm := x.Idx().ConfigMaps[r.cm]
				if cm == nil {
					continue
				}
				for _, k := range rule.SortedKeys(cm.Data) {
					if r.keys != nil && !r.keys[k] {
						continue
					}
					scanText(x, cm.Data[k], domain, func(t, full string) {
						hits = append(hits, dottedName{model.Key{Kind: "ConfigMap", Namespace: cm.Namespace, Name: cm.Name}, "data." + k, t, full})
					})
				}
			}
		}
		seen := map[string]bool{}
		var out []rule.Finding
		for _, h := range hits {
			id := fmt.Sprint(h.obj, h.field, h.value)
			if seen[id] {
				continue
			}
			seen[id] = true
			out = append(out, rule.Finding{Object: h.obj, Field: h.field,
				Message:     fmt.Sprintf("%q is a dotted short Service name; Windows does not append search suffixes to names with a dot, so it does not resolve from Windows pods", h.value),
				Remediation: fmt.Sprintf("Replace %s with %s", h.value, h.full)})
		}
		return out
	},
}

var ruleCoreDNSOneNode = rule.Rule{
	ID: "HYB054", Name: "coredns-one-node", Severity: rule.Warning,
	Title:    "All CoreDNS replicas run on one node",
	Examines: []string{"Deployment.apps", "Pod"},
	Description: `kubeadm's CoreDNS prefers, but does not require, replicas on different nodes, and the
scheduler never moves running pods. Replicas started while only the control plane existed stay
there after workers join; losing that node then takes cluster DNS with it, for Linux and Windows
pods alike. A rollout restart spreads them.`,
	Remediation: `kubectl -n kube-system rollout restart deployment coredns`,
	References:  []rule.Reference{rule.RefServingCerts, rule.K8sCoreDNS},
	Check: func(x *rule.Context) []rule.Finding {
		w := x.Idx().ByWorkload[model.Key{Group: "apps", Kind: "Deployment", Namespace: "kube-system", Name: "coredns"}]
		if w == nil || len(x.Cluster.Nodes) < 2 {
			return nil
		}
		nodes := map[string]bool{}
		for _, p := range w.Pods {
			if p.Spec.NodeName != "" {
				nodes[p.Spec.NodeName] = true
			}
		}
		if len(nodes) != 1 {
			return nil
		}
		node := rule.SortedKeys(nodes)[0]
		return []rule.Finding{{Object: w.Key, Field: "spec.template.spec.affinity",
			Message: fmt.Sprintf("all %s of CoreDNS run on %s; cluster DNS goes down with that node", rule.Plural(len(w.Pods), "replica"), node)}}
	},
}

// calicoPodLabels are the labels Calico selectors see on a pod
// (felix.PodLabels: the Felix calculation's).
func calicoPodLabels(p *corev1.Pod) map[string]string { return felix.PodLabels(p) }

// calicoNamespaceLabels are the labels a namespaceSelector sees
// (felix.NamespaceLabels).
func calicoNamespaceLabels(ns *corev1.Namespace) map[string]string { return felix.NamespaceLabels(ns) }

// policyScope: which pods a policy's or rule's selector can select: those
// of the policy's namespace, of namespaces a namespaceSelector selects, or
// of all namespaces for a global policy.
type policyScope struct {
	namespace string // "" for all
	nsSel     selector.Selector
	nsText    string // nsSel's text (holds)
}

// holds reports whether the scope holds the pods of namespace ns. A
// namespace selector reads only the namespace's labels: it is evaluated
// once per selector and namespace (a namespace the cluster does not hold
// is selected by none).
func holds(x *rule.Context, s policyScope, ns string) bool {
	if s.nsSel == nil {
		return s.namespace == "" || s.namespace == ns
	}
	selected := func() bool {
		o := x.Namespace(ns)
		return o != nil && s.nsSel.Evaluate(calicoNamespaceLabels(o))
	}
	if s.nsText == "" {
		return selected()
	}
	cp := calicoPods(x)
	m, ok := cp.nsSel[s.nsText]
	if !ok {
		m = map[string]bool{}
		cp.nsSel[s.nsText] = m
	}
	in, ok := m[ns]
	if !ok {
		in = selected()
		m[ns] = in
	}
	return in
}

// countSelected counts the pods on the pod network a selector selects.
// key names sel and scope (their sources): counts are remembered by it,
// and pods are visited by namespace with their Calico labels made once —
// a scan of every pod, building its labels, per rule was O(rules × pods).
func countSelected(x *rule.Context, sel selector.Selector, scope policyScope, key string) int {
	cp := calicoPods(x)
	if n, ok := cp.counts[key]; ok {
		return n
	}
	n := 0
	count := func(ns string) {
		for _, l := range cp.labels(ns) {
			if sel.Evaluate(l) {
				n++
			}
		}
	}
	switch {
	case scope.nsSel != nil:
		for ns := range cp.pods {
			if holds(x, scope, ns) {
				count(ns)
			}
		}
	case scope.namespace != "":
		count(scope.namespace)
	default:
		for ns := range cp.pods {
			count(ns)
		}
	}
	cp.counts[key] = n
	return n
}

// calicoPodSet holds the pods on the pod network by namespace, their
// labels as Calico selectors see them (made per namespace on first use),
// and countSelected's results.
type calicoPodSet struct {
	pods   map[string][]*corev1.Pod
	byNS   map[string][]map[string]string
	counts map[string]int
	// nsSel remembers, per namespace selector, the namespaces it selects
	// (holds): rules repeat a few selectors over every namespace.
	nsSel map[string]map[string]bool
}

func (cp *calicoPodSet) labels(ns string) []map[string]string {
	ls, ok := cp.byNS[ns]
	if !ok {
		for _, p := range cp.pods[ns] {
			ls = append(ls, calicoPodLabels(p))
		}
		cp.byNS[ns] = ls
	}
	return ls
}

func calicoPods(x *rule.Context) *calicoPodSet {
	return x.Memo(calicoPodsKey{}, func() any {
		cp := &calicoPodSet{pods: map[string][]*corev1.Pod{}, byNS: map[string][]map[string]string{}, counts: map[string]int{}, nsSel: map[string]map[string]bool{}}
		for _, p := range x.Cluster.Pods {
			if p.Spec.HostNetwork || p.Status.PodIP == "" {
				continue
			}
			cp.pods[p.Namespace] = append(cp.pods[p.Namespace], p)
		}
		return cp
	}).(*calicoPodSet)
}

// calicoPodsKey memoizes calicoPods in the Context.
type calicoPodsKey struct{}

// scopeKey names a rule side's selector and scope for countSelected.
func scopeKey(policyNS string, e calico.EntityRule) string {
	if e.NamespaceSelector != "" {
		return e.Selector + "\x00sel\x00" + e.NamespaceSelector
	}
	return e.Selector + "\x00ns\x00" + policyNS
}

func ruleScope(policyNS string, e calico.EntityRule) (policyScope, error) {
	if e.NamespaceSelector != "" {
		sel, err := selector.Parse(e.NamespaceSelector)
		return policyScope{nsSel: sel, nsText: e.NamespaceSelector}, err
	}
	return policyScope{namespace: policyNS}, nil
}

var rulePolicySelectors = rule.Rule{
	ID: "HYB055", Name: "policy-src-dst-selectors", Severity: rule.Warning,
	Title:    "Policy rule with both source and destination selectors applies to Windows endpoints",
	Examines: []string{"NetworkPolicy.projectcalico.org", "GlobalNetworkPolicy.projectcalico.org", "Pod"},
	Description: `Felix turns each policy rule into HNS ACLs on every Windows endpoint the policy applies to. A
rule with both a source and a destination selector becomes ACLs over the cross product of the
addresses both select (local addresses × remote addresses, in chunks of 4000), and Calico's
documentation warns that such rules use a lot of Windows dataplane resources and should be split
into separate ingress and egress rules. The finding gives the expanded count: endpoints ×
source addresses × destination addresses.`,
	Remediation: `Split the rule: an ingress rule with the source selector in a policy selecting the destination pods, and an egress rule with the destination selector in a policy selecting the source pods`,
	References:  []rule.Reference{rule.RefWindowsPolicies, rule.CalicoLimitations, rule.CalicoPolicy},
	Check: func(x *rule.Context) []rule.Finding {
		type pol struct {
			key  model.Key
			ns   string
			spec calico.PolicySpec
		}
		var pols []pol
		for _, p := range x.Cluster.CalicoPolicies {
			pols = append(pols, pol{model.Key{Group: calico.Group, Kind: "NetworkPolicy", Namespace: p.Namespace, Name: p.Name}, p.Namespace, p.Spec})
		}
		for _, p := range x.Cluster.GlobalNetworkPolicies {
			pols = append(pols, pol{model.Key{Group: calico.Group, Kind: "GlobalNetworkPolicy", Name: p.Name}, "", p.Spec})
		}
		var winPods []*corev1.Pod
		for _, n := range x.WindowsNodes() {
			for _, p := range x.Idx().PodsByNode[n.Name] {
				if !p.Spec.HostNetwork && p.Status.PodIP != "" {
					winPods = append(winPods, p)
				}
			}
		}
		if len(winPods) == 0 {
			return nil
		}
		// Their Calico labels, made once rather than per policy, and their
		// positions by namespace: a policy's scope is read per namespace,
		// not per pod.
		winLabels := make([]map[string]string, len(winPods))
		winByNS := map[string][]int{}
		var winNS []string
		for i, wp := range winPods {
			winLabels[i] = calicoPodLabels(wp)
			if _, ok := winByNS[wp.Namespace]; !ok {
				winNS = append(winNS, wp.Namespace)
			}
			winByNS[wp.Namespace] = append(winByNS[wp.Namespace], i)
		}
		var out []rule.Finding
		for _, p := range pols {
			var both []string
			var rules []calico.Rule
			for i, r := range p.spec.Ingress {
				if r.Source.Selector != "" && r.Destination.Selector != "" {
					both, rules = append(both, fmt.Sprintf("spec.ingress[%d]", i)), append(rules, r)
				}
			}
			for i, r := range p.spec.Egress {
				if r.Source.Selector != "" && r.Destination.Selector != "" {
					both, rules = append(both, fmt.Sprintf("spec.egress[%d]", i)), append(rules, r)
				}
			}
			if len(both) == 0 {
				continue
			}
			sel, err := selector.Parse(p.spec.Selector)
			if err != nil {
				continue
			}
			scope := policyScope{namespace: p.ns}
			if p.spec.NamespaceSelector != "" {
				if ns, err := selector.Parse(p.spec.NamespaceSelector); err == nil {
					scope = policyScope{nsSel: ns, nsText: p.spec.NamespaceSelector}
				}
			}
			endpoints := 0
			for _, ns := range winNS {
				if !holds(x, scope, ns) {
					continue
				}
				for _, i := range winByNS[ns] {
					if sel.Evaluate(winLabels[i]) {
						endpoints++
					}
				}
			}
			if endpoints == 0 {
				continue
			}
			for i, r := range rules {
				src, err1 := selector.Parse(r.Source.Selector)
				dst, err2 := selector.Parse(r.Destination.Selector)
				srcScope, err3 := ruleScope(p.ns, r.Source)
				dstScope, err4 := ruleScope(p.ns, r.Destination)
				if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
					continue
				}
				ns, nd := countSelected(x, src, srcScope, scopeKey(p.ns, r.Source)), countSelected(x, dst, dstScope, scopeKey(p.ns, r.Destination))
				out = append(out, rule.Finding{Object: p.key, Field: both[i],
					Message: fmt.Sprintf("%s has both a source (%s) and a destination (%s) selector and applies to %s; each gets ACLs over %d source × %d destination addresses (%d pairs per endpoint, %d in all)",
						both[i], r.Source.Selector, r.Destination.Selector, rule.Plural(endpoints, "Windows endpoint"), ns, nd, ns*nd, endpoints*ns*nd)})
			}
		}
		return out
	},
}
