package diff

// Result is everything that differs between two twins. Every list is
// sorted; an empty list is omitted from JSON.
type Result struct {
	// Nodes are the nodes whose dataplane differs (or that only one twin
	// has), by name.
	Nodes []NodeDiff `json:"nodes,omitempty"`
	// NodeNotes say what the nodes' states leave out on either side
	// (what the twin does not model), when some node differs.
	NodeNotes []string `json:"nodeNotes,omitempty"`
	// Workloads are the DaemonSets, Deployments and StatefulSets whose pod
	// template differs, with the pods a rollout restarts.
	Workloads []WorkloadDiff `json:"workloads,omitempty"`
	// TigeraStatus are the operator's status objects whose conditions
	// differ.
	TigeraStatus []StatusDiff `json:"tigeraStatus,omitempty"`
	// Objects are the API objects added, removed or changed, with the
	// fields that changed.
	Objects []ObjectChange `json:"objects,omitempty"`
	// Reach is the reachability difference; nil when not asked for.
	Reach *ReachDiff `json:"reach,omitempty"`
	// Deferred are the object changes Windows nodes apply only to
	// endpoints created afterwards or to a re-created HNS network, with
	// the procedure that applies them.
	Deferred []Deferred `json:"notAppliedToExisting,omitempty"`
}

// Empty reports whether the two twins do not differ.
func (r *Result) Empty() bool {
	return len(r.Nodes) == 0 && len(r.Workloads) == 0 && len(r.TigeraStatus) == 0 &&
		len(r.Objects) == 0 && (r.Reach == nil || len(r.Reach.Changes) == 0)
}

// Change says what became of an object or an entry.
type Change string

// Changes.
const (
	Added   Change = "added"
	Removed Change = "removed"
	Changed Change = "changed"
)

// Lines is a set difference: entries only the after twin has (Added) and
// only the before twin has (Removed), each in the form the node's own
// tool prints it, sorted.
type Lines struct {
	Added   []string `json:"added,omitempty"`
	Removed []string `json:"removed,omitempty"`
}

// Empty reports whether both sides hold the same entries.
func (l Lines) Empty() bool { return len(l.Added) == 0 && len(l.Removed) == 0 }

// NodeDiff is what changes in one node's dataplane.
type NodeDiff struct {
	Node string `json:"node"`
	OS   string `json:"os"`
	// Change is added or removed for a node only one twin has (its whole
	// state is then listed as added or removed), changed otherwise.
	Change Change `json:"change"`
	// Linux: ip route, ip neigh and bridge fdb of vxlan.calico, and the
	// nftables rulesets (kube-proxy's table, Felix's).
	Routes    Lines `json:"routes,omitzero"`
	Neighbors Lines `json:"neighbors,omitzero"`
	FDB       Lines `json:"fdb,omitzero"`
	KubeProxy Lines `json:"kubeProxyNftables,omitzero"`
	Felix     Lines `json:"felixNftables,omitzero"`
	// Windows: HNS networks (with their policies: RemoteSubnetRoutes),
	// endpoints (with their policies and ACLs), load balancers and the VFP
	// rules of every port.
	Networks      Lines `json:"hnsNetworks,omitzero"`
	Endpoints     Lines `json:"hnsEndpoints,omitzero"`
	LoadBalancers Lines `json:"hnsLoadBalancers,omitzero"`
	VFP           Lines `json:"vfp,omitzero"`
	// RulesReordered names the nftables chains whose rules are the same
	// set in another order (order decides the first match).
	RulesReordered []string `json:"rulesReordered,omitempty"`
}

// Sections are a node diff's parts in print order, with their titles.
func (n *NodeDiff) Sections() []Section {
	return []Section{
		{"routes (ip route)", n.Routes},
		{"neighbours (ip neigh show dev vxlan.calico)", n.Neighbors},
		{"FDB (bridge fdb show dev vxlan.calico)", n.FDB},
		{"nftables: kube-proxy", n.KubeProxy},
		{"nftables: Felix", n.Felix},
		{"HNS networks", n.Networks},
		{"HNS endpoints", n.Endpoints},
		{"HNS load balancers", n.LoadBalancers},
		{"VFP rules", n.VFP},
	}
}

// Section is one titled part of a node diff.
type Section struct {
	Title string
	Lines Lines
}

// WorkloadDiff is a controller whose pod template (or rollout-relevant
// spec) differs.
type WorkloadDiff struct {
	Workload ObjectRef `json:"workload"`
	Change   Change    `json:"change"`
	// Template are the changed fields of spec.template.
	Template []FieldChange `json:"template,omitempty"`
	// Restarts are the pods (namespace/name) the rollout replaces: every
	// pod of a changed template, unless the update strategy is OnDelete.
	Restarts []string `json:"restarts,omitempty"`
	// Rollout says how the controller rolls the change out.
	Rollout string `json:"rollout,omitempty"`
}

// StatusDiff is a TigeraStatus whose conditions differ.
type StatusDiff struct {
	Name   string   `json:"name"`
	Before []string `json:"before,omitempty"`
	After  []string `json:"after,omitempty"`
}

// ObjectRef names an object.
type ObjectRef struct {
	Group     string `json:"group,omitempty"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// String is "Kind[.group] [namespace/]name".
func (o ObjectRef) String() string {
	k := o.Kind
	if o.Group != "" {
		k += "." + o.Group
	}
	if o.Namespace != "" {
		return k + " " + o.Namespace + "/" + o.Name
	}
	return k + " " + o.Name
}

// ObjectChange is an object added, removed or changed.
type ObjectChange struct {
	Object ObjectRef     `json:"object"`
	Change Change        `json:"change"`
	Fields []FieldChange `json:"fields,omitempty"`
}

// FieldChange is one changed field by JSON path, with its values as JSON
// (a string bare); an empty value is a field only the other side has.
type FieldChange struct {
	Path   string `json:"path"`
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
}

// ReachDiff is the reachability difference: the cells of the reach matrix
// (internal/reach) whose verdict changes, for the pods and nodes both
// twins hold.
type ReachDiff struct {
	Changes []ReachChange `json:"changes,omitempty"`
	// Notes say what the comparison leaves out.
	Notes []string `json:"notes,omitempty"`
}

// ReachChange is a source and destination whose verdict changes: a class
// of pods (or a node) to a class of pods at a port, or to a Service port.
type ReachChange struct {
	// From is the source as reach labels it (a class, "node/NAME"), and
	// FromPods the pods it stands for (namespace/name), both as the after
	// twin has them.
	From     string   `json:"from"`
	FromPods []string `json:"fromPods,omitempty"`
	To       string   `json:"to"`
	ToPods   []string `json:"toPods,omitempty"`
	Port     int      `json:"port"`
	Proto    string   `json:"proto,omitempty"`
	// Gained: allowed only after; Lost: allowed only before; otherwise a
	// changed verdict (partial, denied for another reason).
	Effect string  `json:"effect"`
	Before Verdict `json:"before"`
	After  Verdict `json:"after"`
}

// Verdict is one side's answer for a cell.
type Verdict struct {
	Verdict string `json:"verdict"`
	Reason  string `json:"reason,omitempty"`
	Hop     string `json:"hop,omitempty"`
}

// Reach effects.
const (
	Gained  = "gained"
	Lost    = "lost"
	Altered = "changed"
)
