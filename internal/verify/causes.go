package verify

// Cause is one likely reason for a discrepancy and the command that
// confirms or rules it out.
type Cause struct {
	Cause   string `json:"cause"`
	Confirm string `json:"confirm"`
}

// causeRule is troubleshooting knowledge as data: for an item kind (and a
// change, "" for any; and a producer, "" for any) the causes to check, in
// the order worth checking them.
type causeRule struct {
	kind     string
	change   Change
	producer string
	causes   []Cause
}

var (
	calicoNodeNotReady = Cause{"calico-node on this node is not running or not ready, so Felix has not programmed the dataplane", "kubectl -n calico-system get pods -l k8s-app=calico-node -o wide --field-selector spec.nodeName=NODE"}
	felixLog           = Cause{"Felix failed to program this item; its log names the error", "kubectl -n calico-system logs -l k8s-app=calico-node -c calico-node --tail=200 --field-selector spec.nodeName=NODE"}
	remoteVTEP         = Cause{"the remote node's calico-node is not ready or has not published its tunnel address and MAC (projectcalico.org/IPv4VXLANTunnelAddr, projectcalico.org/VXLANTunnelMACAddr)", "kubectl get nodes -o custom-columns=NAME:.metadata.name,ADDR:.metadata.annotations.projectcalico\\.org/IPv4VXLANTunnelAddr,MAC:.metadata.annotations.projectcalico\\.org/VXLANTunnelMACAddr"}
	blockAffinity      = Cause{"the IPAM block is affine to a different node than the twin computed (a block borrowed or released)", "kubectl get blockaffinities.crd.projectcalico.org -o custom-columns=NODE:.spec.node,CIDR:.spec.cidr"}
	staleNode          = Cause{"the item belongs to a node that was removed or re-created; Calico has not cleaned up after it", "kubectl get nodes -o wide; calicoctl get nodes"}
	kubeProxyDown      = Cause{"kube-proxy on this node is not running or cannot reach the API server, so its rules are stale", "kubectl -n kube-system get pods -l k8s-app=kube-proxy -o wide --field-selector spec.nodeName=NODE"}
	kubeProxyLog       = Cause{"kube-proxy failed to sync its rules; its log names the error", "kubectl -n kube-system logs -l k8s-app=kube-proxy --tail=200"}
	endpointsDiffer    = Cause{"the Service's endpoints differ from the twin's input (a pod not ready, scaled, or a newer input)", "kubectl get endpointslices -A -o wide"}
	inputStale         = Cause{"the twin's input is older than the cluster: re-read it (kubectl-hybrid dump) and verify again", "kubectl-hybrid dump > cluster.yaml"}
	hostConfig         = Cause{"the host's own network configuration (netplan, NetworkManager, DHCP) differs from the node addresses the twin was given", "ip -br addr; ip route show proto static"}
	windowsCalico      = Cause{"calico-node-windows (Felix for Windows) on this node is not running, so HNS was not programmed", "kubectl -n calico-system get pods -l k8s-app=calico-node-windows -o wide --field-selector spec.nodeName=NODE"}
	windowsFelixLog    = Cause{"Felix for Windows failed to program HNS; its log names the error", "kubectl -n calico-system logs -l k8s-app=calico-node-windows -c felix --tail=200 --field-selector spec.nodeName=NODE"}
	staleHNSNetwork    = Cause{"an HNS network left over from an earlier install (another subnet, another name): drain the node and remove it", "Get-HnsNetwork | Select-Object Name, Type, @{n='Subnet';e={$_.Subnets.AddressPrefix}}"}
	kubeProxyWinDown   = Cause{"kube-proxy-windows is not running on this node, so no load balancers or remote endpoints are programmed", "kubectl -n kube-system get pods -l k8s-app=kube-proxy-windows -o wide --field-selector spec.nodeName=NODE"}
	kubeProxyWinNet    = Cause{"kube-proxy-windows watches an HNS network by another name (KUBE_NETWORK must match the Calico network name)", "kubectl -n kube-system get ds kube-proxy-windows -o jsonpath='{.spec.template.spec.containers[0].env}'"}
	kubeletCNI         = Cause{"the pod's sandbox was created or deleted without the CNI plugin finishing (kubelet retries it)", "kubectl get pods -A -o wide --field-selector spec.nodeName=NODE; kubectl get events -A --field-selector reason=FailedCreatePodSandBox"}
	netPolicy          = Cause{"the NetworkPolicies or Calico policies in the cluster differ from the twin's input", "kubectl get networkpolicies -A; calicoctl get globalnetworkpolicies"}
	adapterDown        = Cause{"the adapter is down or was renamed (HNS moves the host address onto vEthernet when it creates the first network)", "Get-NetAdapter | Format-Table Name, Status, MacAddress"}
)

// causeRules: the first rule that matches an item's kind, change and
// producer gives the causes. Each rule names the upstream code that makes
// the item.
var causeRules = []causeRule{
	// Host routes are not Kubernetes': the node's own configuration.
	{kind: "route", producer: prodHost, causes: []Cause{hostConfig, inputStale}},
	// felix/dataplane/linux/vxlan_mgr.go: a route per remote block via the
	// remote VTEP; felix/dataplane/linux/endpoint_mgr.go: a route per local
	// workload; felix/dataplane/linux/route_table.go writes them.
	{kind: "route", change: Missing, causes: []Cause{calicoNodeNotReady, remoteVTEP, blockAffinity, kubeletCNI, felixLog}},
	{kind: "route", change: Extra, causes: []Cause{staleNode, blockAffinity, kubeletCNI, inputStale}},
	{kind: "route", causes: []Cause{blockAffinity, remoteVTEP, felixLog}},
	// felix/dataplane/linux/vxlan_mgr.go creates vxlan.calico from
	// FelixConfiguration (vxlanVNI, vxlanPort, vxlanMTU) and the node's
	// VXLANTunnelMACAddr.
	{kind: "vxlan device", causes: []Cause{
		{"FelixConfiguration sets other VXLAN parameters (vxlanVNI, vxlanPort, vxlanMTU) than the twin's input", "kubectl get felixconfigurations.crd.projectcalico.org default -o yaml"},
		{"the node's published VTEP MAC (projectcalico.org/VXLANTunnelMACAddr) differs from the device's, so peers tunnel to the wrong MAC", "kubectl get node NODE -o jsonpath='{.metadata.annotations}'"},
		calicoNodeNotReady,
	}},
	// Neighbour and FDB entries: one per remote VTEP (vxlan_mgr.go).
	{kind: "neighbour", causes: []Cause{remoteVTEP, calicoNodeNotReady, staleNode, felixLog}},
	{kind: "fdb entry", causes: []Cause{remoteVTEP, calicoNodeNotReady, staleNode, felixLog}},
	// kube-proxy nftables mode: pkg/proxy/nftables/proxier.go.
	{kind: "nft element", producer: prodKubeProxy, causes: []Cause{endpointsDiffer, kubeProxyDown, kubeProxyLog, inputStale}},
	{kind: "nft rule", producer: prodKubeProxy, causes: []Cause{endpointsDiffer, kubeProxyDown, kubeProxyLog}},
	{kind: "nft chain", producer: prodKubeProxy, causes: []Cause{endpointsDiffer, kubeProxyDown, kubeProxyLog}},
	{kind: "nft set", producer: prodKubeProxy, causes: []Cause{kubeProxyDown, kubeProxyLog}},
	{kind: "nft map", producer: prodKubeProxy, causes: []Cause{kubeProxyDown, kubeProxyLog}},
	{kind: "nft table", producer: prodKubeProxy, causes: []Cause{
		{"kube-proxy runs in another mode (iptables or ipvs) than nftables", "kubectl -n kube-system get configmap kube-proxy -o jsonpath='{.data.config\\.conf}' | grep mode"},
		kubeProxyDown,
	}},
	{kind: "nft", producer: prodFelix, causes: []Cause{netPolicy, calicoNodeNotReady, felixLog}},
	// HNS networks: calico-node-windows creates them
	// (cni-plugin/pkg/dataplane/windows, felix/dataplane/windows/vxlan_mgr.go).
	{kind: "hns network", change: Extra, causes: []Cause{staleHNSNetwork, windowsCalico}},
	{kind: "hns network", causes: []Cause{staleHNSNetwork, blockAffinity, windowsCalico}},
	{kind: "hns network policy", causes: []Cause{remoteVTEP, windowsCalico, windowsFelixLog, staleNode}},
	{kind: "hns endpoint", producer: prodKubeProxyWin, causes: []Cause{endpointsDiffer, kubeProxyWinDown, kubeProxyWinNet}},
	{kind: "hns endpoint", causes: []Cause{kubeletCNI, windowsCalico, windowsFelixLog}},
	{kind: "hns endpoint policy", causes: []Cause{netPolicy, windowsCalico, windowsFelixLog}},
	{kind: "hns namespace", causes: []Cause{kubeletCNI}},
	// pkg/proxy/winkernel/proxier.go: a load balancer per service port.
	{kind: "hns load balancer", causes: []Cause{kubeProxyWinDown, kubeProxyWinNet, endpointsDiffer}},
	{kind: "net adapter", causes: []Cause{adapterDown, staleHNSNetwork, windowsCalico}},
	{kind: "ip configuration", causes: []Cause{adapterDown, hostConfig}},
}

// CausesFor gives the likely causes of a discrepancy, most likely first.
func CausesFor(kind string, ch Change, producer string) []Cause {
	for _, r := range causeRules {
		if r.kind != kind && !(r.kind == "nft" && len(kind) > 4 && kind[:4] == "nft ") {
			continue
		}
		if (r.change == "" || r.change == ch) && (r.producer == "" || r.producer == producer) {
			return r.causes
		}
	}
	return []Cause{inputStale}
}
