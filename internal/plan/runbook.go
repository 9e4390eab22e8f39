package plan

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// runbook orders the steps: the cluster first (so that calico-node-windows
// and kube-proxy-windows wait for the node), then each host, the token, the
// join, the serving certificate and the checks. Every expected answer is
// the predicted twin's (simulated).
func (b *Bundle) runbook(nodes []NodeRequest) []Step {
	v := b.Inputs
	var steps []Step
	if len(b.Cluster) > 0 || len(b.Patches) > 0 {
		steps = append(steps, b.clusterStep())
	}
	for i, n := range nodes {
		np := b.Nodes[i]
		pred := b.Proof.node(n.Name)
		steps = append(steps, Step{ID: n.Name + "/files", Title: "Copy " + n.Name + "'s files to the host", Where: Workstation,
			Commands:   []string{fmt.Sprintf("scp -r %s/C/k/plan %s/C/k/patches <admin>@%s:C:/k/", n.Name, n.Name, n.Address)},
			Expect:     []string{`C:\k\plan holds the step scripts and C:\k\patches the kubelet patch; join.yaml is copied at the join step, once its token is filled in`},
			Verify:     []Check{{Command: `Get-ChildItem -Path C:\k\plan -Name`, Expect: strings.Join(scriptNames(v, n), ", ")}},
			Idempotent: "copying the same files again changes nothing",
			Why:        "any copy works (scp with the OpenSSH server, a share, the console); the scripts run from an administrator PowerShell"})
		for _, s := range scripts(v, n) {
			st := Step{ID: n.Name + "/" + s.id, Title: s.title, Where: WindowsHost + " " + n.Name,
				Commands: []string{`& ` + s.path}, Idempotent: s.idempotent, Verify: hostChecks(v, n, s.id)}
			if s.id == "join" {
				// kubeadm join's own messages (cmd/kubeadm/app/cmd/join.go,
				// phases/join/kubelet.go) for a join with patches.
				st.Expect = []string{
					`[patches] Found the following patch files: [kubeletconfiguration.yaml]`,
					"This node has joined the cluster:",
				}
				st.Why = fmt.Sprintf("copy join.yaml to "+joinPath+" and kubeletconfiguration.yaml to "+patchPath+" first, with "+TokenPlaceholder+" filled in; the taint os=windows:NoSchedule is there from registration; maxPods %d is the /%d block's %d addresses less the 4 the Windows IPAM reserves",
					np.MaxPods, v.BlockSize, 1<<(32-v.BlockSize))
			}
			if s.id == "join" {
				steps = append(steps, tokenStep(v, n))
			}
			steps = append(steps, st)
		}
		steps = append(steps, csrStep(n), verifyStep(v, np, pred))
	}
	return steps
}

func (b *Bundle) clusterStep() Step {
	st := Step{ID: "cluster", Title: "Prepare the cluster for Windows nodes", Where: Workstation,
		Idempotent: "kubectl apply and kubectl patch with the same content change nothing"}
	for _, f := range b.Cluster {
		st.Commands = append(st.Commands, "kubectl apply -f cluster/"+f.Path)
	}
	for _, p := range b.Patches {
		st.Commands = append(st.Commands, fmt.Sprintf(`kubectl -n %s patch daemonset %s --type merge -p '{"spec":{"template":{"spec":{"nodeSelector":{"kubernetes.io/os":"linux"}}}}}'`, p.Namespace, p.Name))
	}
	c := b.Proof.Cluster
	var ds []string
	for _, d := range c.DaemonSets {
		ds = append(ds, fmt.Sprintf("%s %s %v", d.Namespace, d.Name, d.Spec.Template.Spec.NodeSelector))
	}
	st.Verify = append(st.Verify, Check{
		Command: "kubectl get ds -A -o custom-columns='NAMESPACE:.metadata.namespace,NAME:.metadata.name,NODE-SELECTOR:.spec.template.spec.nodeSelector' --no-headers",
		Expect:  strings.Join(ds, "; ")})
	for _, rc := range c.RuntimeClasses {
		if rc.Scheduling != nil && rc.Scheduling.NodeSelector[corev1.LabelWindowsBuild] != "" {
			st.Verify = append(st.Verify, Check{Command: "kubectl get runtimeclass " + rc.Name + " -o jsonpath='{.handler}'", Expect: rc.Handler})
		}
	}
	if c.Installation != nil && c.Installation.Spec.CalicoNetwork != nil && c.Installation.Spec.CalicoNetwork.WindowsDataplane != nil {
		st.Verify = append(st.Verify, Check{Command: "kubectl get installation default -o jsonpath='{.spec.calicoNetwork.windowsDataplane} {.spec.serviceCIDRs}'",
			Expect: *c.Installation.Spec.CalicoNetwork.WindowsDataplane + " " + jsonList(c.Installation.Spec.ServiceCIDRs)})
	}
	return st
}

func jsonList(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return `["` + strings.Join(s, `","`) + `"]`
}

func tokenStep(v Inputs, n NodeRequest) Step {
	st := Step{ID: n.Name + "/token", Title: "Make a bootstrap token for " + n.Name, Where: ControlPlane,
		Commands:   []string{fmt.Sprintf("sudo kubeadm token create --ttl 1h --description 'join %s'", n.Name)},
		Expect:     []string{"a token of the form [a-z0-9]{6}.[a-z0-9]{16}: it replaces " + TokenPlaceholder + " in join.yaml"},
		Idempotent: "each run makes another token; unused ones expire after 1h",
		Verify:     []Check{{Command: "sudo kubeadm token list", Expect: "the token, with TTL under 1h and USAGES authentication,signing"}}}
	if strings.HasPrefix(v.CAHash, "sha256:<") {
		st.Commands = append(st.Commands, "sudo kubeadm token create --print-join-command")
		st.Expect = append(st.Expect, "its --discovery-token-ca-cert-hash value replaces "+CAHashPlaceholder)
	}
	return st
}

func csrStep(n NodeRequest) Step {
	return Step{ID: n.Name + "/csr", Title: "Approve " + n.Name + "'s kubelet serving certificate", Where: Workstation,
		Commands: []string{
			"kubectl get csr --field-selector spec.signerName=kubernetes.io/kubelet-serving",
			"kubectl certificate approve <the Pending CSR of system:node:" + n.Name + ">",
		},
		Expect:     []string{"one Pending CSR, requestor system:node:" + n.Name + ", SANs DNS:" + n.Name + ", IP Address:" + n.Address},
		Idempotent: "approving an approved CSR changes nothing",
		Verify:     []Check{{Command: "kubectl get csr --field-selector spec.signerName=kubernetes.io/kubelet-serving | grep " + n.Name, Expect: "Approved,Issued"}},
		Why:        "serverTLSBootstrap: the kubelet asks for its serving certificate and waits for approval"}
}

func verifyStep(v Inputs, np NodePlan, p *NodeProof) Step {
	st := Step{ID: np.Name + "/verify", Title: "Verify " + np.Name, Where: Workstation, Idempotent: "reads only"}
	if p == nil {
		return st
	}
	ready := "False"
	if p.Ready {
		ready = "True"
	}
	st.Verify = []Check{
		{Command: "kubectl get node " + np.Name + " -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}'", Expect: ready},
		{Command: "kubectl get node " + np.Name + " -o jsonpath='{.status.allocatable.pods}'", Expect: fmt.Sprint(p.AllocatablePods)},
		{Command: "kubectl get node " + np.Name + " -o jsonpath='{.metadata.annotations.projectcalico\\.org/IPv4VXLANTunnelAddr}'", Expect: p.TunnelAddress},
		{Command: "kubectl get blockaffinities -o custom-columns=NODE:.spec.node,CIDR:.spec.cidr | grep " + np.Name, Expect: np.Name + "   " + p.Block},
		{Command: "kubectl get node " + np.Name + " -o jsonpath='{.metadata.annotations.projectcalico\\.org/VXLANTunnelMACAddr}'", Expect: p.VTEPMAC},
		{Command: "kubectl get pods -A -o wide --field-selector spec.nodeName=" + np.Name, Expect: strings.Join(p.Pods, "; ")},
		{Command: "kubectl hybrid check --expect-windows", Expect: "no error finding"},
	}
	st.Commands = []string{"kubectl get node " + np.Name + " -o wide"}
	return st
}

// hostChecks are the checks on the host after each script, with the
// answers the twin gives.
func hostChecks(v Inputs, n NodeRequest, id string) []Check {
	sources := strings.Join(firewallSources(v), ", ")
	switch id {
	case "host-name":
		cs := []Check{{Command: "$env:COMPUTERNAME", Expect: strings.ToUpper(n.Name)}}
		if v.APIHost != "" && v.APIHostAddress != "" {
			cs = append(cs, Check{Command: "(Resolve-DnsName " + v.APIHost + " -Type A).IPAddress", Expect: v.APIHostAddress})
		}
		return cs
	case "time":
		return []Check{{Command: "w32tm /query /status | Select-String 'Source'", Expect: "Source: " + v.NTPServer + ",0x8"}}
	case "containers":
		return []Check{{Command: "(Get-WindowsFeature -Name Containers).Installed", Expect: "True (restart once when Install-WindowsFeature says Restart Needed: Yes)"}}
	case "firewall":
		return []Check{{Command: "Get-NetFirewallRule -Name kube-proxy-health | Get-NetFirewallAddressFilter | Select-Object -ExpandProperty RemoteAddress", Expect: sources}}
	case "containerd":
		return []Check{{Command: "crictl version | Select-String Runtime", Expect: "RuntimeVersion:  v" + v.Containerd}}
	case "kubelet":
		return []Check{
			{Command: "Get-Service kubelet | Format-Table Status, Name, StartType", Expect: "Stopped kubelet Automatic (kubeadm join starts it)"},
			{Command: "Get-NetFirewallRule -Name kubelet | Get-NetFirewallAddressFilter | Select-Object -ExpandProperty RemoteAddress", Expect: sources},
		}
	case "join":
		return []Check{{Command: "Get-Service kubelet | Select-Object -ExpandProperty Status", Expect: "Running"}}
	}
	return nil
}

func scriptNames(v Inputs, n NodeRequest) []string {
	var out []string
	for _, s := range scripts(v, n) {
		out = append(out, s.path[strings.LastIndexByte(s.path, '\\')+1:])
	}
	return out
}
