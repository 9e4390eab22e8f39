package plan

import (
	"fmt"
	"net/netip"
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Compute plans the join of the requested nodes. A cluster that cannot take
// them gives a refused bundle with its blocking findings; a complete bundle
// carries the proof on the twin.
func Compute(in Input, req Request) (*Bundle, error) {
	if err := ValidateRequest(req); err != nil {
		return nil, err
	}
	c := in.Cluster
	nodes := withBuilds(c, req.Nodes)
	r := &Reader{c: c}
	v := Inputs{}
	v.Endpoint = r.Endpoint(req.APIServer)
	v.Version = r.version()
	v.ServiceCIDR = r.ServiceCIDR()
	if cc := c.Kubeadm.Cluster; cc != nil && cc.Networking.PodSubnet != "" {
		v.PodCIDR = r.record("podCIDR", cc.Networking.PodSubnet, "ClusterConfiguration networking.podSubnet", "")
	}
	v.VNI, v.Port = r.vxlan()
	v.CAHash = r.caHash()
	v.NodeCIDR = r.nodeNetwork()
	v.ControlPlanes = controlPlanes(c)
	v.Containerd = r.containerd()
	v.Crictl = crictl(v.Version)
	v.Domain = r.domain()
	v.NTPServer = r.ntpServer()
	v.APIHost, v.APIHostAddress = r.apiHost(v.Endpoint)
	r.record("bootstrapToken", TokenPlaceholder, "not in the input (a secret, made for this join)",
		"kubeadm token create --ttl 1h --description 'join Windows nodes'")

	b := &Bundle{Inputs: v}
	blocking, err := blockers(c, nodes, v.Version)
	if err != nil {
		return nil, err
	}
	if len(blocking) > 0 {
		b.Refused, b.Findings, b.Values = true, blocking, r.values
		b.Nodes, b.Steps = []NodePlan{}, []Step{}
		return b, nil
	}
	if p, _ := pool(c, nodes[0]); p != nil {
		v.PoolName, v.PoolCIDR, v.BlockSize = p.Name, p.Spec.CIDR, blockSize(p)
		r.record("ipPool", p.Name+" "+p.Spec.CIDR, "IPPool "+p.Name, "")
		r.record("blockSize", fmt.Sprint(v.BlockSize), "IPPool "+p.Name+" blockSize", "")
	}
	b.Inputs = v
	if err := b.renderCluster(c, in.Snapshot, nodes); err != nil {
		return nil, err
	}
	for _, n := range nodes {
		np, err := renderNode(v, n, runtimeClassFor(c, n.WindowsBuild))
		if err != nil {
			return nil, err
		}
		b.Nodes = append(b.Nodes, np)
	}
	b.Values = r.values
	proof, err := prove(in, b, nodes)
	if err != nil {
		return nil, err
	}
	b.Proof = proof
	for i := range b.Nodes {
		if p := proof.node(b.Nodes[i].Name); p != nil {
			b.Nodes[i].Block, b.Nodes[i].TunnelAddress, b.Nodes[i].VTEPMAC = p.Block, p.TunnelAddress, p.VTEPMAC
			b.Nodes[i].Ready, b.Nodes[i].MaxPods = p.Ready, p.AllocatablePods
		}
	}
	b.Steps = b.runbook(nodes)
	b.Findings = append([]Finding{}, addressWarnings(v, nodes)...)
	for i := range b.Steps {
		// JSON readers get lists, never null.
		if b.Steps[i].Commands == nil {
			b.Steps[i].Commands = []string{}
		}
		if b.Steps[i].Verify == nil {
			b.Steps[i].Verify = []Check{}
		}
	}
	return b, nil
}

// withBuilds fills each node's Windows build: the one asked for, else the
// build the cluster's Windows nodes run, else Windows Server 2025's.
func withBuilds(c *model.Cluster, in []NodeRequest) []NodeRequest {
	def := "10.0.26100"
	for _, n := range c.Nodes {
		if b := n.Labels[corev1.LabelWindowsBuild]; b != "" {
			def = b
			break
		}
	}
	out := append([]NodeRequest(nil), in...)
	for i := range out {
		if out[i].WindowsBuild == "" {
			out[i].WindowsBuild = def
		}
	}
	return out
}

// runtimeClassFor is the cluster's RuntimeClass for a build (its node
// selector names the build), else the name the plan creates.
func runtimeClassFor(c *model.Cluster, build string) string {
	for _, rc := range c.RuntimeClasses {
		if rc.Scheduling != nil && rc.Scheduling.NodeSelector[corev1.LabelWindowsBuild] == build && rc.Handler == runtimeClassH {
			return rc.Name
		}
	}
	return "windows-" + windowsBuilds[build]
}

func hasRuntimeClass(c *model.Cluster, name string) bool {
	for _, rc := range c.RuntimeClasses {
		if rc.Name == name {
			return true
		}
	}
	return false
}

// renderCluster adds the cluster-side manifests the cluster lacks.
func (b *Bundle) renderCluster(c *model.Cluster, snap *model.Snapshot, nodes []NodeRequest) error {
	v := b.Inputs
	add := func(name string, o obj) error {
		body, err := ToYAML(o)
		if err != nil {
			return err
		}
		b.Cluster = append(b.Cluster, File{Path: name, Where: Workstation, Object: true, Body: body})
		return nil
	}
	if inst, _, err := installationChange(c, snap, v.ServiceCIDR); err != nil {
		return err
	} else if inst != nil {
		if err := add("installation-default.yaml", inst); err != nil {
			return err
		}
	}
	if !model.Holds(c.ConfigMaps, "tigera-operator", "kubernetes-services-endpoint") {
		if cm, ok := ServicesEndpoint(v.Endpoint); ok {
			if err := add("kubernetes-services-endpoint.yaml", cm); err != nil {
				return err
			}
		}
	}
	if !model.Holds(c.DaemonSets, "kube-system", "kube-proxy-windows") {
		if err := add("kube-proxy-windows.yaml", kubeProxyWindows(v.Version)); err != nil {
			return err
		}
	}
	seen := map[string]bool{}
	for _, n := range nodes {
		name := runtimeClassFor(c, n.WindowsBuild)
		if seen[name] || hasRuntimeClass(c, name) {
			continue
		}
		seen[name] = true
		if err := add("runtimeclass-"+name+".yaml", runtimeClass(name, n.WindowsBuild)); err != nil {
			return err
		}
	}
	b.Patches = linuxDaemonSets(c)
	return nil
}

// linuxDaemonSets are the DaemonSets check finds reaching Windows nodes or
// lacking an OS selector (HYB045, HYB046): they need kubernetes.io/os: linux.
func linuxDaemonSets(c *model.Cluster) []DSPatch {
	rep, err := check.Run(c, check.Options{ExpectWindows: true, Only: []string{"HYB045", "HYB046"}})
	if err != nil {
		return nil
	}
	seen := map[model.Key]bool{}
	var out []DSPatch
	for _, f := range rep.Findings {
		if f.Object.Kind != "DaemonSet" || seen[f.Object] {
			continue
		}
		seen[f.Object] = true
		out = append(out, DSPatch{Namespace: f.Object.Namespace, Name: f.Object.Name, Reason: f.Message})
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Namespace+"/"+out[i].Name < out[j].Namespace+"/"+out[j].Name
	})
	return out
}

// renderNode makes the node's files.
func renderNode(v Inputs, n NodeRequest, rc string) (NodePlan, error) {
	np := NodePlan{Name: n.Name, Address: n.Address, WindowsBuild: n.WindowsBuild, RuntimeClass: rc,
		MaxPods: maxPods(v.BlockSize)}
	join, err := ToYAML(joinConfiguration(v, n))
	if err != nil {
		return np, err
	}
	patch, err := ToYAML(kubeletPatch(v.BlockSize))
	if err != nil {
		return np, err
	}
	np.Files = append(np.Files,
		File{Path: joinPath, Where: WindowsHost, Object: true, Body: join},
		File{Path: patchPath, Where: WindowsHost, Object: true, Body: patch})
	for _, s := range scripts(v, n) {
		np.Files = append(np.Files, File{Path: s.path, Where: WindowsHost, Body: s.body})
	}
	return np, nil
}

// firewallSources are the addresses the node's kubelet and kube-proxy
// health ports take traffic from: the node network, and control-plane
// nodes outside it.
func firewallSources(v Inputs) []string {
	out := []string{v.NodeCIDR}
	pfx, err := netip.ParsePrefix(v.NodeCIDR)
	for _, a := range v.ControlPlanes {
		addr, aerr := netip.ParseAddr(a)
		if aerr == nil && (err != nil || !pfx.Contains(addr)) {
			out = append(out, a)
		}
	}
	return out
}

// addressWarnings: a node outside the node network needs a route between
// the networks for VXLAN (UDP 4789) and the kubelet API, and falls outside
// the firewall sources the plan writes.
func addressWarnings(v Inputs, nodes []NodeRequest) []Finding {
	pfx, err := netip.ParsePrefix(v.NodeCIDR)
	if err != nil {
		return nil
	}
	var out []Finding
	for _, n := range nodes {
		if a, err := netip.ParseAddr(n.Address); err == nil && !pfx.Contains(a) {
			out = append(out, Finding{ID: "PLAN006", Severity: "warning", Object: "Node " + n.Name,
				Message: fmt.Sprintf("node %s: address %s is outside the node network %s: the other nodes reach it only through a router (VXLAN UDP %d, kubelet TCP 10250), and its firewall rules admit the node network only", n.Name, n.Address, v.NodeCIDR, v.Port),
				WayOut:  "give the host an address in " + v.NodeCIDR + ", or add the route and widen the firewall sources"})
		}
	}
	return out
}
