package plan

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	kubeletapis "k8s.io/kubelet/pkg/apis"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/wellknown"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/calico/selector"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Felix's VXLAN defaults (felix/config/config_params.go VXLANVNI, VXLANPort),
// which Calico for Windows requires as they are.
const (
	defaultVNI  = 4096
	defaultPort = 4789
	// Calico's default IPv4 block size (libcalico-go IPPool defaulting).
	defaultBlockSize = 26
)

// Reader reads the values a plan uses from the twin and records where
// each came from.
type Reader struct {
	c      *model.Cluster
	values []Value
}

// NewReader reads c.
func NewReader(c *model.Cluster) *Reader { return &Reader{c: c} }

// Values are the values read so far, in the order they were read.
func (r *Reader) Values() []Value { return r.values }

func (r *Reader) record(name, value, source, fill string) string {
	r.values = append(r.values, Value{Name: name, Value: value, Source: source, Fill: fill})
	return value
}

// Endpoint is the API endpoint a joining node discovers the cluster at:
// kubeadm's controlPlaneEndpoint, else cluster-info's server (what
// `kubeadm join` itself reads), else the kubeconfig's server.
func (r *Reader) Endpoint(apiServer string) string {
	if cc := r.c.Kubeadm.Cluster; cc != nil && cc.ControlPlaneEndpoint != "" {
		return r.record("apiServerEndpoint", cc.ControlPlaneEndpoint, "ClusterConfiguration controlPlaneEndpoint", "")
	}
	if server, _ := clusterInfo(r.c); server != "" {
		if hp := hostPort(server); hp != "" {
			return r.record("apiServerEndpoint", hp, "ConfigMap kube-public/cluster-info", "")
		}
	}
	if hp := hostPort(apiServer); hp != "" {
		return r.record("apiServerEndpoint", hp, "kubeconfig server", "")
	}
	// The direct API address Calico's agents use (tigera-operator's
	// kubernetes-services-endpoint ConfigMap).
	for _, cm := range r.c.ConfigMaps {
		host, port := cm.Data["KUBERNETES_SERVICE_HOST"], cm.Data["KUBERNETES_SERVICE_PORT"]
		if cm.Namespace == "tigera-operator" && cm.Name == "kubernetes-services-endpoint" && host != "" && port != "" {
			return r.record("apiServerEndpoint", net.JoinHostPort(host, port), "ConfigMap tigera-operator/kubernetes-services-endpoint", "")
		}
	}
	if in := r.c.Kubeadm.Init; in != nil && in.LocalAPIEndpoint.AdvertiseAddress != "" {
		port := in.LocalAPIEndpoint.BindPort
		if port == 0 {
			port = 6443
		}
		hp := net.JoinHostPort(in.LocalAPIEndpoint.AdvertiseAddress, strconv.Itoa(int(port)))
		return r.record("apiServerEndpoint", hp, "InitConfiguration localAPIEndpoint", "")
	}
	return r.record("apiServerEndpoint", "<API_SERVER_ENDPOINT>", "not in the input",
		"kubeadm token create --print-join-command (its first argument)")
}

func hostPort(server string) string {
	u, err := url.Parse(server)
	if err != nil || u.Host == "" {
		return ""
	}
	if u.Port() == "" {
		return net.JoinHostPort(u.Hostname(), "443")
	}
	return u.Host
}

// clusterInfo reads kube-public/cluster-info's kubeconfig: the server and
// the CA certificate that `kubeadm join` trusts by its hash.
func clusterInfo(c *model.Cluster) (server string, ca []byte) {
	for _, cm := range c.ConfigMaps {
		if cm.Namespace != "kube-public" || cm.Name != "cluster-info" {
			continue
		}
		cfg, err := clientcmd.Load([]byte(cm.Data["kubeconfig"]))
		if err != nil {
			return "", nil
		}
		for _, cl := range cfg.Clusters {
			return cl.Server, cl.CertificateAuthorityData
		}
	}
	return "", nil
}

// caCertHash is kubeadm's discovery hash: SHA-256 of the CA certificate's
// SubjectPublicKeyInfo (kubeadm app/util/pubkeypin/pubkeypin.go Hash).
func caCertHash(pemData []byte) (string, error) {
	block, _ := pem.Decode(pemData)
	if block == nil {
		return "", fmt.Errorf("no PEM certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return "", fmt.Errorf("CA certificate: %w", err)
	}
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

func (r *Reader) caHash() string {
	if _, ca := clusterInfo(r.c); len(ca) > 0 {
		if h, err := caCertHash(ca); err == nil {
			return r.record("caCertHash", h, "ConfigMap kube-public/cluster-info (CA public key)", "")
		}
	}
	return r.record("caCertHash", CAHashPlaceholder, "not in the input (kube-public/cluster-info holds the CA)",
		"kubeadm token create --print-join-command (its --discovery-token-ca-cert-hash)")
}

// version is the cluster's Kubernetes version: kubeadm's, else the
// control plane's kubelet.
func (r *Reader) version() string {
	if cc := r.c.Kubeadm.Cluster; cc != nil && cc.KubernetesVersion != "" {
		return r.record("kubernetesVersion", cc.KubernetesVersion, "ClusterConfiguration kubernetesVersion", "")
	}
	for _, n := range r.c.Nodes {
		if _, cp := n.Labels[wellknown.LabelControlPlane]; cp && n.Status.NodeInfo.KubeletVersion != "" {
			return r.record("kubernetesVersion", n.Status.NodeInfo.KubeletVersion, "Node "+n.Name+" kubeletVersion", "")
		}
	}
	return r.record("kubernetesVersion", "<KUBERNETES_VERSION>", "not in the input", "kubectl version")
}

// ServiceCIDR is the cluster's (first) service network.
func (r *Reader) ServiceCIDR() string {
	if cc := r.c.Kubeadm.Cluster; cc != nil && cc.Networking.ServiceSubnet != "" {
		return r.record("serviceCIDR", strings.Split(cc.Networking.ServiceSubnet, ",")[0], "ClusterConfiguration networking.serviceSubnet", "")
	}
	if in := r.c.Installation; in != nil && len(in.Spec.ServiceCIDRs) > 0 {
		return r.record("serviceCIDR", in.Spec.ServiceCIDRs[0], "Installation spec.serviceCIDRs", "")
	}
	return r.record("serviceCIDR", "<SERVICE_CIDR>", "not in the input",
		"kubectl -n kube-system get cm kubeadm-config -o jsonpath='{.data.ClusterConfiguration}' | grep serviceSubnet")
}

// windowsLabels are the labels the new node registers with, which Calico
// pool node selectors see (the kubelet's own labels).
func windowsLabels(n NodeRequest) map[string]string {
	return map[string]string{
		corev1.LabelOSStable: hybrid.OSWindows, corev1.LabelArchStable: "amd64", corev1.LabelHostname: n.Name, corev1.LabelWindowsBuild: n.WindowsBuild,
		kubeletapis.LabelOS: hybrid.OSWindows, kubeletapis.LabelArch: "amd64",
	}
}

// pool is the enabled IPv4 pool whose node selector takes the node, as
// Calico IPAM picks pools for a host (libcalico-go ipam determinePools).
func pool(c *model.Cluster, n NodeRequest) (p *calico.IPPool, v6Only bool) {
	var v6 bool
	for _, ip := range c.IPPools {
		if ip.Spec.Disabled {
			continue
		}
		pfx, err := netip.ParsePrefix(ip.Spec.CIDR)
		if err != nil {
			continue
		}
		if sel, err := selector.Parse(ip.Spec.NodeSelector); err != nil || !sel.Evaluate(windowsLabels(n)) {
			continue
		}
		if !pfx.Addr().Is4() {
			v6 = true
			continue
		}
		return ip, false
	}
	return nil, v6
}

func blockSize(p *calico.IPPool) int {
	if p.Spec.BlockSize != 0 {
		return p.Spec.BlockSize
	}
	return defaultBlockSize
}

// vxlan is Felix's VNI and port: the default FelixConfiguration's, else
// Felix's defaults.
func (r *Reader) vxlan() (vni, port int) {
	vni, port = defaultVNI, defaultPort
	vs, ps := "Felix default", "Felix default"
	for _, f := range r.c.FelixConfigs {
		if f.Name != "default" {
			continue
		}
		if f.Spec.VXLANVNI != nil {
			vni, vs = *f.Spec.VXLANVNI, "FelixConfiguration default"
		}
		if f.Spec.VXLANPort != nil {
			port, ps = *f.Spec.VXLANPort, "FelixConfiguration default"
		}
	}
	r.record("vxlanVNI", strconv.Itoa(vni), vs, "")
	r.record("vxlanPort", strconv.Itoa(port), ps, "")
	return vni, port
}

// nodeNetwork is the node network's CIDR as the twin knows it (stated,
// from the Cluster kind, recorded by Calico on the Nodes, or inferred from
// their addresses, which the source says), else the prefix Calico recorded
// on one Node (projectcalico.org/IPv4Address).
func (r *Reader) nodeNetwork() string {
	if r.c.Network.CIDR != "" {
		from := r.c.NetworkFrom
		if from == "" {
			from = engine.NetworkFromCluster
		}
		return r.record("nodeNetwork", r.c.Network.CIDR, from, "")
	}
	for _, n := range r.c.Nodes {
		if pfx, err := netip.ParsePrefix(n.Annotations[calico.AnnotationIPv4Address]); err == nil {
			return r.record("nodeNetwork", pfx.Masked().String(), "Node "+n.Name+" projectcalico.org/IPv4Address", "")
		}
	}
	return r.record("nodeNetwork", "<NODE_NETWORK_CIDR>", "not in the input",
		"kubectl get nodes -o jsonpath='{.items[*].metadata.annotations.projectcalico\\.org/IPv4Address}'")
}

// controlPlanes are the control-plane nodes' addresses.
func controlPlanes(c *model.Cluster) []string {
	var out []string
	for _, n := range c.Nodes {
		if _, cp := n.Labels[wellknown.LabelControlPlane]; !cp {
			continue
		}
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				out = append(out, a.Address)
			}
		}
	}
	return out
}

// containerd is the runtime version the cluster's nodes run (Windows
// nodes' first), for Install-Containerd.ps1 -ContainerDVersion.
func (r *Reader) containerd() string {
	pick := func(os string) (string, string) {
		for _, n := range r.c.Nodes {
			v, ok := strings.CutPrefix(n.Status.NodeInfo.ContainerRuntimeVersion, "containerd://")
			if ok && n.Labels[corev1.LabelOSStable] == os {
				return strings.TrimPrefix(v, "v"), "Node " + n.Name + " containerRuntimeVersion"
			}
		}
		return "", ""
	}
	for _, os := range []string{hybrid.OSWindows, hybrid.OSLinux} {
		if v, src := pick(os); v != "" {
			return r.record("containerdVersion", v, src, "")
		}
	}
	return r.record("containerdVersion", "<CONTAINERD_VERSION>", "not in the input",
		"kubectl get nodes -o jsonpath='{.items[*].status.nodeInfo.containerRuntimeVersion}'")
}

// crictl follows the cluster's minor release (cri-tools releases one per
// Kubernetes minor: https://github.com/kubernetes-sigs/cri-tools#compatibility-matrix-cri-tools--kubernetes).
func crictl(version string) string {
	v := strings.TrimPrefix(version, "v")
	parts := strings.Split(v, ".")
	if len(parts) < 2 {
		return "<CRICTL_VERSION>"
	}
	return parts[0] + "." + parts[1] + ".0"
}

// domain is the DNS suffix the cluster's hosts share (their FQDNs).
func (r *Reader) domain() string {
	for _, h := range r.c.Hosts {
		if _, d, ok := strings.Cut(h.FQDN, "."); ok && d != "" {
			return r.record("dnsSuffix", d, "host "+h.Name+" fqdn", "")
		}
	}
	return ""
}

// ntpServer is the node network gateway's DNS name, the time source the
// Linux hosts use when it is named in the node network's DNS.
func (r *Reader) ntpServer() string {
	if name, _, ok := TimeServer(r.c); ok {
		return r.record("timeServer", name, "Cluster spec.network: the gateway's DNS name", "")
	}
	return r.record("timeServer", "<NTP_SERVER>", "not in the input", "w32tm /query /source (on a host that keeps time)")
}

// TimeServer is the NTP peer the node preparation configures (the node
// network gateway's DNS name) and its address; ok is false when the
// node network's DNS does not name the gateway.
func TimeServer(c *model.Cluster) (name, addr string, ok bool) {
	gw := c.Network.Gateway
	for _, d := range c.Network.DNS {
		if gw != "" && d.Address == gw {
			return d.Name, d.Address, true
		}
	}
	return "", "", false
}

// apiHost is the endpoint's host name and the address the node network's
// DNS gives it, for the host's name-resolution check.
func (r *Reader) apiHost(endpoint string) (string, string) {
	host, _, err := net.SplitHostPort(endpoint)
	if err != nil {
		return "", ""
	}
	for _, d := range r.c.Network.DNS {
		if d.Name == host {
			return host, d.Address
		}
	}
	return host, ""
}
