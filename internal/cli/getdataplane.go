package cli

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plane"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/report"
)

// dataplaneGroup is the API group the compiled dataplanes' objects are
// printed under: they are not Kubernetes objects (HNS and the kernel hold
// them), so the group is the tool's own.
const dataplaneGroup = "dataplane.kubectl-hybrid.io"

// hostnameLabel carries an object's node, so -l selects by node.
const hostnameLabel = corev1.LabelHostname

// Dataplane kinds: what get shows from the compiled node dataplanes rather
// than from the cluster's objects.
var (
	kindHNSNetwork   = report.Kind{Group: dataplaneGroup, Version: "v1alpha1", Kind: "HNSNetwork", Resource: "hnsnetworks", Singular: "hnsnetwork", ShortNames: []string{"hnsnet"}}
	kindHNSEndpoint  = report.Kind{Group: dataplaneGroup, Version: "v1alpha1", Kind: "HNSEndpoint", Resource: "hnsendpoints", Singular: "hnsendpoint", ShortNames: []string{"hnsep"}}
	kindLoadBalancer = report.Kind{Group: dataplaneGroup, Version: "v1alpha1", Kind: "HNSLoadBalancer", Resource: "loadbalancers", Singular: "loadbalancer", ShortNames: []string{"hnslb", "lb"}}
	kindRoute        = report.Kind{Group: dataplaneGroup, Version: "v1alpha1", Kind: "Route", Resource: "routes", Singular: "route"}
)

// dataplaneKinds returns the dataplane kinds with their sources: the
// objects of node (every node when "") compiled from c once, when first
// asked for.
func dataplaneKinds(c func() *model.Cluster, node string) []report.Kind {
	return dataplaneKindsOf(&dataplane{cluster: c, node: node})
}

// dataplaneKindsOf is dataplaneKinds over dp, whose plane may be made
// already (serve's warm one).
func dataplaneKindsOf(dp *dataplane) []report.Kind {
	node := dp.node
	columns := func(names ...string) []metav1.TableColumnDefinition {
		cols := []metav1.TableColumnDefinition{{Name: "Node", Type: "string"}}
		if node != "" {
			cols[0].Priority = 1 // one node: the column says nothing unless -o wide
		}
		for _, n := range names {
			cols = append(cols, metav1.TableColumnDefinition{Name: n, Type: "string"})
		}
		return cols
	}
	return []report.Kind{
		kindHNSNetwork.WithSource(columns(windows.NetworkColumns...), func() ([]any, error) { return dp.windowsRows("hnsnetworks") }),
		kindHNSEndpoint.WithSource(columns(windows.EndpointColumns...), func() ([]any, error) { return dp.windowsRows("hnsendpoints") }),
		kindLoadBalancer.WithSource(columns(windows.LoadBalancerColumns...), func() ([]any, error) { return dp.windowsRows("loadbalancers") }),
		kindRoute.WithSource(columns("DESTINATION", "TYPE", "GATEWAY", "DEV", "PROTO", "SCOPE", "METRIC", "MTU", "OWNER"), dp.routes),
	}
}

// isDataplaneKind says whether a get argument names only dataplane kinds
// (as --node requires).
func isDataplaneKind(word string) bool {
	for _, w := range strings.Split(word, ",") {
		w = strings.ToLower(strings.TrimSpace(w))
		found := false
		for _, k := range []report.Kind{kindHNSNetwork, kindHNSEndpoint, kindLoadBalancer, kindRoute} {
			if w == k.Resource || w == k.Singular || w == k.Resource+"."+k.Group || slices.Contains(k.ShortNames, w) {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// dataplane compiles the node dataplanes a get asks for, once: those of
// its node alone when one is named.
type dataplane struct {
	cluster func() *model.Cluster
	node    string

	planeOnce sync.Once
	pl        *plane.Plane
	planeErr  error

	once   sync.Once
	wnodes map[string]*windows.Node
	err    error
}

// plane is the cluster's plane, made on first use.
func (d *dataplane) plane() (*plane.Plane, error) {
	d.planeOnce.Do(func() { d.pl, d.planeErr = plane.New(d.cluster()) })
	return d.pl, d.planeErr
}

func (d *dataplane) checkNode() error {
	if d.node != "" && !hasNode(d.cluster(), d.node) {
		return &exitError{code: ExitNegative, err: fmt.Errorf("Error from server (NotFound): nodes %q not found", d.node)}
	}
	return nil
}

func (d *dataplane) windows() (map[string]*windows.Node, error) {
	d.once.Do(func() {
		var pl *plane.Plane
		if pl, d.err = d.plane(); d.err == nil {
			d.wnodes, d.err = windowsNodes(pl, d.node)
		}
		if d.err != nil {
			d.err = fmt.Errorf("compiling the Windows dataplane: %w", d.err)
		}
	})
	return d.wnodes, d.err
}

func (d *dataplane) windowsRows(kind string) ([]any, error) {
	if err := d.checkNode(); err != nil {
		return nil, err
	}
	wnodes, err := d.windows()
	if err != nil {
		return nil, err
	}
	if d.node != "" {
		if _, ok := wnodes[d.node]; !ok {
			return nil, usageError("node %s is not a Windows node: %s exist only on Windows nodes", d.node, kind)
		}
	}
	var out []any
	for _, wn := range windows.SortedNodes(wnodes) {
		switch kind {
		case "hnsnetworks":
			for _, r := range wn.NetworkRows() {
				out = append(out, dataplaneRow(wn.Name, r.Name, r, r.Cells()))
			}
		case "hnsendpoints":
			for _, r := range wn.EndpointRows() {
				out = append(out, dataplaneRow(wn.Name, r.ID, r, r.Cells()))
			}
		case "loadbalancers":
			for _, r := range wn.LoadBalancerRows() {
				out = append(out, dataplaneRow(wn.Name, r.ID, r, r.Cells()))
			}
		}
	}
	return out, nil
}

func (d *dataplane) routes() ([]any, error) {
	if err := d.checkNode(); err != nil {
		return nil, err
	}
	pl, err := d.plane()
	if err != nil {
		return nil, fmt.Errorf("compiling the Linux dataplane: %w", err)
	}
	lnodes := map[string]*linux.Node{}
	if d.node == "" {
		lnodes = pl.LinuxNodes()
	} else if ln := pl.Linux(d.node); ln != nil {
		lnodes[d.node] = ln
	}
	var out []any
	for _, name := range sortedKeys(lnodes) {
		if d.node != "" && name != d.node {
			continue
		}
		for _, r := range lnodes[name].Routes() {
			gw := ""
			if r.Via.IsValid() {
				gw = r.Via.String()
			}
			spec := map[string]any{"destination": r.Destination(), "type": string(r.Type), "gateway": gw, "dev": r.Dev,
				"proto": r.Proto, "scope": r.Scope, "metric": r.Metric, "mtu": r.MTU, "owner": r.Owner, "why": r.Why, "route": r.String()}
			out = append(out, dataplaneRow(name, routeName(r.Destination()), spec,
				[]string{r.Destination(), string(r.Type), dash(gw), dash(r.Dev), dash(r.Proto), dash(r.Scope), dashInt(r.Metric), dashInt(r.MTU), dash(r.Owner)}))
		}
	}
	// A Windows node routes to other blocks with the Calico network's
	// RemoteSubnetRoute policies.
	wnodes, err := d.windows()
	if err != nil {
		return nil, err
	}
	for _, wn := range windows.SortedNodes(wnodes) {
		for _, nw := range wn.NetworkRows() {
			for _, r := range nw.RemoteSubnetRoutes {
				out = append(out, dataplaneRow(wn.Name, routeName(r.DestinationPrefix), r,
					[]string{r.DestinationPrefix, "vxlan", r.ProviderAddress, "HNS network " + nw.Name, "RemoteSubnetRoute", "-", "-", "-", "felix"}))
			}
		}
	}
	return out, nil
}

// routeName makes a destination an object name: "10.0.0.0/24" is
// "10.0.0.0-24" (names cannot hold a slash).
func routeName(dst string) string { return strings.ReplaceAll(dst, "/", "-") }

// dataplaneRow is one dataplane object: its node as a label and in the
// table, spec the row's fields as the JSON it encodes to.
func dataplaneRow(node, name string, spec any, cells []string) *report.Row {
	var m map[string]any
	if data, err := json.Marshal(spec); err == nil {
		_ = utiljson.Unmarshal(data, &m) // numbers as int64, as report.Objects reads them
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": m}}
	if name == "" {
		name = "-"
	}
	u.SetName(name)
	u.SetLabels(map[string]string{hostnameLabel: node})
	row := &report.Row{Unstructured: u, Cells: []any{node}}
	for _, c := range cells {
		row.Cells = append(row.Cells, c)
	}
	return row
}

// windowsNodes compiles the Windows dataplane of the node named, or of
// every Windows node when name is "": a node's HNS state holds a load
// balancer per Service port and an endpoint per remote backend of the
// whole cluster, so one node asked for costs one node, not all of them.
func windowsNodes(pl *plane.Plane, name string) (map[string]*windows.Node, error) {
	if name == "" {
		return pl.WindowsNodes()
	}
	out := map[string]*windows.Node{}
	wn, err := pl.Windows(name)
	if err != nil {
		return nil, err
	}
	if wn != nil {
		out[name] = wn
	}
	return out, nil
}

func hasNode(c *model.Cluster, name string) bool {
	for _, n := range c.Nodes {
		if n.Name == name {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func dashInt(n int) string {
	if n == 0 {
		return "-"
	}
	return strconv.Itoa(n)
}
