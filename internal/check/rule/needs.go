package rule

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Need is one input a rule cannot judge without: it is met when the input
// holds an object of any of its kinds ("Installation.operator.tigera.io").
type Need []string

// KubeconfigFiles is the input of the kubeconfig rules, named as Examines
// and Needs name it.
const KubeconfigFiles = "kubeconfig files (--kubeconfig-files)"

// Kinds a Need may name, and how to tell whether the cluster holds one
// (observed or derived: the Nodes the Cluster kind describes count).
var needKinds = map[string]func(x *Context) bool{
	"Installation.operator.tigera.io":      func(x *Context) bool { return x.Cluster.Installation != nil },
	"TigeraStatus.operator.tigera.io":      func(x *Context) bool { return len(x.Cluster.TigeraStatuses) > 0 },
	"IPPool.projectcalico.org":             func(x *Context) bool { return len(x.Cluster.IPPools) > 0 },
	"IPAMConfiguration.projectcalico.org":  func(x *Context) bool { return x.Cluster.IPAMConfig != nil },
	"FelixConfiguration.projectcalico.org": func(x *Context) bool { return len(x.Cluster.FelixConfigs) > 0 },
	"ClusterConfiguration.kubeadm.k8s.io":  func(x *Context) bool { return x.Cluster.Kubeadm.Cluster != nil },
	"InitConfiguration.kubeadm.k8s.io":     func(x *Context) bool { return x.Cluster.Kubeadm.Init != nil },
	"Node":                                 func(x *Context) bool { return len(x.Cluster.Nodes) > 0 },
	KubeconfigFiles:                        func(x *Context) bool { return len(x.Kubeconfigs) > 0 },
}

// checkNeeds refuses a Need that names a kind needKinds does not know, or
// one the rule does not list in Examines: a rule can only need what it
// reads.
func checkNeeds(rule *Rule) error {
	for _, n := range rule.Needs {
		if len(n) == 0 {
			return fmt.Errorf("rule %s: an empty need", rule.ID)
		}
		for _, k := range n {
			if _, ok := needKinds[k]; !ok {
				return fmt.Errorf("rule %s: needs %q, which is not a kind a rule may need", rule.ID, k)
			}
			if !slices.Contains(rule.Examines, k) {
				return fmt.Errorf("rule %s: needs %q but does not list it in Examines", rule.ID, k)
			}
		}
	}
	return nil
}

// examinesCluster reports whether the rule reads the cluster (every rule
// but the kubeconfig ones).
func examinesCluster(r *Rule) bool {
	for _, k := range r.Examines {
		if k != KubeconfigFiles {
			return true
		}
	}
	return false
}

// NotRun are the rules left out of a run for one cause.
type NotRun struct {
	// Cause: "the input holds no cluster", "Installation.operator.tigera.io
	// was not read: forbidden …", "no Installation.operator.tigera.io in
	// the input".
	Cause string
	Rules []*Rule
	// Fault: the input should have given what the rules need (it holds no
	// cluster, or a kind could not be read); otherwise it simply lacks it.
	Fault bool
}

// HoldsCluster reports whether the input gave an object of a kind the twin
// models.
func HoldsCluster(c *model.Cluster) bool {
	notModeled := make(map[model.Key]bool, len(c.NotModeled))
	for _, o := range c.NotModeled {
		notModeled[o.Key] = true
	}
	for k := range c.Origins {
		if !notModeled[k] {
			return true
		}
	}
	return false
}

// Causes, the first that applies wins.
const (
	causeNoCluster       = "the input holds no cluster"
	causeKubeconfigsOnly = "only kubeconfig files were given"
)

// WhyNotRun says why a rule cannot run on this input, "" when it can: the
// input holds no cluster, a kind it examines was not read (both faults of
// the input), or the input lacks what it needs.
func WhyNotRun(r *Rule, x *Context, noCluster, kubeconfigsOnly bool, unread map[string]model.UnreadKind) (cause string, fault bool) {
	if examinesCluster(r) {
		switch {
		case kubeconfigsOnly:
			return causeKubeconfigsOnly, false
		case noCluster:
			return causeNoCluster, true
		}
	}
	for _, k := range r.Examines {
		if u, ok := unread[k]; ok {
			return fmt.Sprintf("%s was not read: %s", k, u.Reason), true
		}
	}
	for _, n := range r.Needs {
		met := false
		for _, k := range n {
			if needKinds[k](x) {
				met = true
				break
			}
		}
		if !met {
			return "no " + OrList(n) + " in the input", false
		}
	}
	return "", false
}

// OrList joins "a", "a or b", "a, b or c".
func OrList(s []string) string {
	if len(s) <= 1 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// AddNotRun files a rule under its cause, causes in the order they first
// come up.
func AddNotRun(groups []NotRun, cause string, fault bool, r *Rule) []NotRun {
	for i := range groups {
		if groups[i].Cause == cause {
			groups[i].Rules = append(groups[i].Rules, r)
			return groups
		}
	}
	return append(groups, NotRun{Cause: cause, Rules: []*Rule{r}, Fault: fault})
}

// RuleIDs lists the rules' IDs.
func RuleIDs(rules []*Rule) []string {
	out := make([]string, len(rules))
	for i, r := range rules {
		out[i] = r.ID
	}
	return out
}

// Kinds rules need, as Examines names them.
const (
	KindInstallation = "Installation.operator.tigera.io"
	KindTigeraStatus = "TigeraStatus.operator.tigera.io"
	KindIPPool       = "IPPool.projectcalico.org"
	kindIPAMConfig   = "IPAMConfiguration.projectcalico.org"
	KindFelixConfig  = "FelixConfiguration.projectcalico.org"
	KindKubeadmCC    = "ClusterConfiguration.kubeadm.k8s.io"
	KindKubeadmInit  = "InitConfiguration.kubeadm.k8s.io"
	KindNode         = "Node"
)

// Needs the rules share.
var (
	NeedInstallation = []Need{{KindInstallation}}
	// NeedCalico: any of the objects that say Calico is installed
	// (Context.usesCalico).
	NeedCalico = Need{KindInstallation, kindIPAMConfig, KindIPPool}
	NeedNodes  = []Need{{KindNode}}
)
