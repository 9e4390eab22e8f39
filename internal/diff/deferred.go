package diff

import (
	"regexp"
	"sort"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Deferred is a change that the API accepts at once but Windows nodes
// apply only to what is created afterwards. For natOutgoing the node
// sections model the interval (existing endpoints keep their OutBoundNAT);
// for the VNI and port, and in reachability, they show the state after the
// procedure (every endpoint and the HNS network re-created), simulated.
type Deferred struct {
	Object ObjectRef `json:"object"`
	Field  string    `json:"field"`
	Before string    `json:"before,omitempty"`
	After  string    `json:"after,omitempty"`
	// Applies says what takes the new value and what keeps the old one.
	Applies string `json:"applies"`
	// Nodes are the Windows nodes of the after twin that keep the old
	// value until the procedure has run on them.
	Nodes []string `json:"nodes"`
	// Procedure is what applies the change to a node.
	Procedure []string `json:"procedure"`
}

// deferredField is one field whose change Windows applies only to new
// objects.
type deferredField struct {
	group, kind string
	path        *regexp.Regexp
	applies     string
	network     bool   // the HNS network must be re-created, not only the pods
	unset       string // the value an unset field means
}

// The Calico CNI plugin puts OutBoundNAT on a pod's HNS endpoint at CNI ADD
// (cni-plugin/pkg/dataplane/windows/dataplane_windows.go) and nothing
// updates an existing endpoint's policies; the VNI is the VSID subnet policy
// of the Calico overlay network, which the plugin creates once and reuses
// while a network of that name exists, and HNS cannot change a network in
// place. Calico's own limitations page says so for both ("NATOutgoing is
// applied only at pod creation"; changing the VNI needs a drain and the
// network deleted).
var deferredFields = []deferredField{
	{calico.Group, "IPPool", regexp.MustCompile(`^spec\.natOutgoing$`),
		"new pods only: OutBoundNAT is put on a pod's HNS endpoint at CNI ADD; existing Windows endpoints keep their OutBoundNAT policy (or its absence) until the pod is re-created", false, "false"},
	{operator.Group, "Installation", regexp.MustCompile(`^spec\.calicoNetwork\.ipPools\[[^\]]+\]\.natOutgoing$`),
		"new pods only: the operator updates the IP pool, and OutBoundNAT is put on a pod's HNS endpoint at CNI ADD; existing Windows endpoints keep their OutBoundNAT policy (or its absence) until the pod is re-created", false, "Enabled"}, // tigera/operator pkg/controller/ippool/defaults.go
	{calico.Group, "FelixConfiguration", regexp.MustCompile(`^spec\.vxlanVNI$`),
		"nothing existing: the VNI is the VSID policy of the Calico HNS network, created once and reused while it exists; HNS cannot update a network in place, so the network and every endpoint on it keep the old VNI until the network is deleted and re-created", true, "4096"},
	{calico.Group, "FelixConfiguration", regexp.MustCompile(`^spec\.vxlanPort$`),
		"nothing existing on Windows: the Calico HNS network and its endpoints keep their VXLAN settings until the network is deleted and re-created (and Windows decapsulates only UDP 4789)", true, "4789"},
}

// ProcedurePods re-creates the pods of a Windows node; ProcedureNetwork
// also re-creates its Calico HNS network. Get-HnsNetwork and
// Remove-HnsNetwork come from the hns.psm1 module of microsoft/SDN that
// Calico for Windows ships.
var (
	ProcedurePods = []string{
		"kubectl drain <node> --ignore-daemonsets --delete-emptydir-data (the pods are re-created elsewhere, or here after uncordon, with the new setting)",
		"kubectl uncordon <node>",
	}
	ProcedureNetwork = []string{
		"kubectl drain <node> --ignore-daemonsets --delete-emptydir-data",
		"on the node: Stop-Service kubelet (no pod starts while the network is gone)",
		`on the node: Import-Module hns.psm1; Get-HnsNetwork | Where-Object Name -Like "Calico*" | Remove-HnsNetwork`,
		"on the node: Start-Service kubelet",
		"kubectl -n calico-system delete pod -l k8s-app=calico-node-windows --field-selector spec.nodeName=<node>; kubectl -n kube-system delete pod -l k8s-app=kube-proxy-windows --field-selector spec.nodeName=<node> (they restart and program the network the CNI plugin re-creates with the new settings)",
		"kubectl uncordon <node>",
	}
)

// deferredChanges finds, among the object changes, those Windows nodes
// apply only to new endpoints or a re-created network; none when the after
// twin has no Windows node.
func deferredChanges(objs []ObjectChange, after *model.Cluster) []Deferred {
	var nodes []string
	for _, n := range after.Nodes {
		if nodeOS(n) == hybrid.OSWindows {
			nodes = append(nodes, n.Name)
		}
	}
	if len(nodes) == 0 {
		return nil
	}
	sort.Strings(nodes)
	var out []Deferred
	for _, o := range objs {
		if o.Change != Changed {
			continue
		}
		for _, f := range o.Fields {
			for _, d := range deferredFields {
				if o.Object.Group != d.group || o.Object.Kind != d.kind || !d.path.MatchString(f.Path) {
					continue
				}
				// Felix's and the API's defaults (felix/config/config_params.go
				// VXLANVNI 4096, VXLANPort 4789): unset and the default
				// are the same setting.
				if or(f.Before, d.unset) == or(f.After, d.unset) {
					continue
				}
				proc := ProcedurePods
				if d.network {
					proc = ProcedureNetwork
				}
				out = append(out, Deferred{Object: o.Object, Field: f.Path, Before: f.Before, After: f.After,
					Applies: d.applies, Nodes: nodes, Procedure: proc})
			}
		}
	}
	return out
}

func or(v, unset string) string {
	if v == "" {
		return unset
	}
	return v
}

// natDeferred reports whether a natOutgoing change is among the deferred.
func natDeferred(ds []Deferred) bool {
	for _, d := range ds {
		if strings.HasSuffix(d.Field, ".natOutgoing") {
			return true
		}
	}
	return false
}

// keepExistingNAT gives the endpoints a Windows node had before (same pod,
// same address) their OutBoundNAT policy and VFP rules from before: the CNI
// plugin set them at CNI ADD and nothing updates them
// (cni-plugin/pkg/dataplane/windows/dataplane_windows.go). Endpoints only
// the after twin has keep the new settings.
func keepExistingNAT(a, b *state) {
	heads := func(s *state) map[string]bool {
		out := map[string]bool{}
		for _, l := range s.endpoints {
			if i := strings.Index(l, " kind "); i > 0 && !strings.Contains(l[:i], ": ") {
				out[l[:i]] = true
			}
		}
		return out
	}
	ha, hb := heads(a), heads(b)
	ports := map[string]bool{}
	isNAT := map[string]bool{}
	for h := range hb {
		if !ha[h] {
			continue
		}
		isNAT[h+": OutBoundNAT"] = true
		// The port is named by its endpoint's pod, else its address.
		rest := strings.TrimPrefix(h, "endpoint ")
		if i := strings.Index(rest, " pod "); i >= 0 {
			ports["port pod "+rest[i+len(" pod "):]+" layer SLB_NAT_LAYER "] = true
		} else if i := strings.IndexByte(rest, ' '); i >= 0 {
			ports["port "+rest[:i]+" layer SLB_NAT_LAYER "] = true
		} else {
			ports["port "+rest+" layer SLB_NAT_LAYER "] = true
		}
	}
	epNAT := func(l string) bool {
		for p := range isNAT {
			if strings.HasPrefix(l, p) {
				return true
			}
		}
		return false
	}
	vfpNAT := func(l string) bool {
		if !strings.Contains(l, "rule OUTBOUNDNAT") {
			return false
		}
		for p := range ports {
			if strings.HasPrefix(l, p) {
				return true
			}
		}
		return false
	}
	b.endpoints = swap(a.endpoints, b.endpoints, epNAT)
	b.vfp = swap(a.vfp, b.vfp, vfpNAT)
}

// swap is b without the lines keep selects, plus a's lines keep selects.
func swap(a, b []string, keep func(string) bool) []string {
	out := make([]string, 0, len(b))
	for _, l := range b {
		if !keep(l) {
			out = append(out, l)
		}
	}
	for _, l := range a {
		if keep(l) {
			out = append(out, l)
		}
	}
	return out
}
