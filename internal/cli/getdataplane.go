package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/textsafe"
)

// dataplaneKinds are what get shows from the compiled node dataplanes
// rather than from the cluster's objects.
var dataplaneKinds = map[string]string{
	"hnsnetworks": "hnsnetworks", "hnsnetwork": "hnsnetworks", "hnsnet": "hnsnetworks",
	"hnsendpoints": "hnsendpoints", "hnsendpoint": "hnsendpoints", "hnsep": "hnsendpoints",
	"loadbalancers": "loadbalancers", "loadbalancer": "loadbalancers", "hnslb": "loadbalancers", "lb": "loadbalancers",
	"routes": "routes", "route": "routes",
}

// getDataplane prints one dataplane kind for one node (or every node the
// kind exists on) as a table like the seed's Format-Table output, or as JSON.
func getDataplane(w io.Writer, c *model.Cluster, kind, node, output string) error {
	var rows [][]string
	var header []string
	var objs []any
	wantNode := func(name string) bool { return node == "" || name == node }
	if node != "" && !hasNode(c, node) {
		return &exitError{code: ExitNegative, err: fmt.Errorf("Error from server (NotFound): nodes %q not found", node)}
	}
	switch kind {
	case "routes":
		header = []string{"NODE", "DESTINATION", "TYPE", "GATEWAY", "DEV", "PROTO", "SCOPE", "METRIC", "MTU", "OWNER"}
		lnodes, err := linux.Compile(c)
		if err != nil {
			return fmt.Errorf("compiling the Linux dataplane: %w", err)
		}
		for _, name := range sortedKeys(lnodes) {
			if !wantNode(name) {
				continue
			}
			for _, r := range lnodes[name].Routes() {
				gw := ""
				if r.Via.IsValid() {
					gw = r.Via.String()
				}
				rows = append(rows, []string{name, r.Destination(), string(r.Type), dash(gw), dash(r.Dev), dash(r.Proto), dash(r.Scope), dashInt(r.Metric), dashInt(r.MTU), dash(r.Owner)})
				objs = append(objs, map[string]any{"node": name, "route": r.String(), "owner": r.Owner, "why": r.Why})
			}
		}
		// A Windows node routes to other blocks with the Calico network's
		// RemoteSubnetRoute policies.
		wnodes, err := windowsNodes(c, node)
		if err != nil {
			return fmt.Errorf("compiling the Windows dataplane: %w", err)
		}
		for _, wn := range windows.SortedNodes(wnodes) {
			if !wantNode(wn.Name) {
				continue
			}
			for _, nw := range wn.NetworkRows() {
				for _, r := range nw.RemoteSubnetRoutes {
					rows = append(rows, []string{wn.Name, r.DestinationPrefix, "vxlan", r.ProviderAddress, "HNS network " + nw.Name, "RemoteSubnetRoute", "-", "-", "-", "felix"})
					objs = append(objs, r)
				}
			}
		}
	default:
		wnodes, err := windowsNodes(c, node)
		if err != nil {
			return fmt.Errorf("compiling the Windows dataplane: %w", err)
		}
		if node != "" {
			if _, ok := wnodes[node]; !ok {
				return usageError("node %s is not a Windows node: %s exist only on Windows nodes", node, kind)
			}
		}
		for _, wn := range windows.SortedNodes(wnodes) {
			if !wantNode(wn.Name) {
				continue
			}
			switch kind {
			case "hnsnetworks":
				header = append([]string{"NODE"}, windows.NetworkColumns...)
				for _, r := range wn.NetworkRows() {
					rows = append(rows, append([]string{wn.Name}, r.Cells()...))
					objs = append(objs, r)
				}
			case "hnsendpoints":
				header = append([]string{"NODE"}, windows.EndpointColumns...)
				for _, r := range wn.EndpointRows() {
					rows = append(rows, append([]string{wn.Name}, r.Cells()...))
					objs = append(objs, r)
				}
			case "loadbalancers":
				header = append([]string{"NODE"}, windows.LoadBalancerColumns...)
				for _, r := range wn.LoadBalancerRows() {
					rows = append(rows, append([]string{wn.Name}, r.Cells()...))
					objs = append(objs, r)
				}
			}
		}
	}
	switch output {
	case "json":
		enc := json.NewEncoder(textsafe.Raw(w))
		enc.SetIndent("", "    ")
		if objs == nil {
			objs = []any{}
		}
		return enc.Encode(map[string]any{"kind": kind, "items": objs})
	case "", "wide":
	default:
		return usageError("%s: output format %q is not supported; use json or the default table", kind, output)
	}
	if len(rows) == 0 {
		fmt.Fprintf(w, "No %s found.\n", kind)
		return nil
	}
	if node != "" {
		// One node: the NODE column says nothing.
		header = header[1:]
		for i := range rows {
			rows[i] = rows[i][1:]
		}
	}
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// windowsNodes compiles the Windows dataplane of the node named, or of
// every Windows node when name is "": a node's HNS state holds a load
// balancer per Service port and an endpoint per remote backend of the
// whole cluster, so one node asked for costs one node, not all of them.
func windowsNodes(c *model.Cluster, name string) (map[string]*windows.Node, error) {
	if name == "" {
		return windows.Compile(c)
	}
	x, err := windows.NewCompiler(c)
	if err != nil {
		return nil, err
	}
	out := map[string]*windows.Node{}
	for _, n := range c.Nodes {
		if n.Name != name {
			continue
		}
		wn, err := x.Node(n)
		if err != nil {
			return nil, err
		}
		if wn != nil {
			out[name] = wn
		}
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
