package dns

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Source is where a lookup runs: a pod (an existing one, or one a command
// like `kubectl run` would create) or a node.
type Source struct {
	// Namespace and Pod name the pod; both empty for a node.
	Namespace string
	Pod       string
	// Node is where the pod runs, or the node itself.
	Node string
	// Image of the container the command runs in; it decides the tools
	// (busybox nslookup, Nano Server without nslookup) and the libc.
	Image       string
	HostNetwork bool
	// DNSPolicy as in the pod spec; empty means ClusterFirst, the API
	// server's default.
	DNSPolicy corev1.DNSPolicy
	DNSConfig *corev1.PodDNSConfig
	// OS overrides the node's kubernetes.io/os label when set.
	OS string
	// NSLookup overrides which nslookup the image has, when the caller
	// knows better than the image name: "busybox", "nslookup.exe" or
	// "none" (cmd.exe's not-recognized error). Empty decides by the image.
	NSLookup string
}

// PodSource is the source for an existing pod, running its first container.
func PodSource(p *corev1.Pod) Source {
	s := Source{
		Namespace: p.Namespace, Pod: p.Name, Node: p.Spec.NodeName,
		HostNetwork: p.Spec.HostNetwork, DNSPolicy: p.Spec.DNSPolicy, DNSConfig: p.Spec.DNSConfig,
	}
	if len(p.Spec.Containers) > 0 {
		s.Image = p.Spec.Containers[0].Image
	}
	if s.Node == "" && p.Spec.OS != nil {
		s.OS = string(p.Spec.OS.Name)
	}
	return s
}

// FindPod is the source for the pod namespace/name of the cluster.
func FindPod(c *model.Cluster, namespace, name string) (Source, bool) {
	for _, p := range c.Pods {
		if p.Namespace == namespace && p.Name == name {
			return PodSource(p), true
		}
	}
	return Source{}, false
}

// NodeSource is the source for a lookup on the node itself.
func NodeSource(node string) Source { return Source{Node: node} }

// IsNode reports whether the source is a node rather than a pod.
func (s Source) IsNode() bool { return s.Pod == "" && s.Namespace == "" }

func (s Source) String() string {
	if s.IsNode() {
		return "node " + s.Node
	}
	name := s.Pod
	if name == "" {
		name = "(new pod)"
	}
	return "pod " + s.Namespace + "/" + name
}

// osOf is the source's OS: the override, else the node's kubernetes.io/os
// label, else the Cluster kind's host entry.
func osOf(c *model.Cluster, s Source) string {
	if s.OS != "" {
		return s.OS
	}
	for _, n := range c.Nodes {
		if n.Name == s.Node {
			if os := n.Labels[corev1.LabelOSStable]; os != "" {
				return os
			}
		}
	}
	if h := hostOf(c, s.Node); h != nil {
		return h.OS
	}
	return ""
}

func hostOf(c *model.Cluster, node string) *hybrid.Host {
	for i := range c.Hosts {
		if c.Hosts[i].Name == node {
			return &c.Hosts[i]
		}
	}
	return nil
}

// Config is the resolver configuration a source gets: on Linux the
// resolv.conf the runtime writes from the kubelet's DNS config, on Windows
// the HNS endpoint's DNS settings (or the host's DNS client settings).
type Config struct {
	OS          string
	Nameservers []string
	Searches    []string
	Options     []string
	// Ndots is the options' ndots (resolv.conf default 1); Windows ignores it.
	Ndots int
	// Origin says where the settings come from.
	Origin string
	Notes  []string
}

// ResolvConf renders the file as containerd writes it for a Linux pod
// (search, nameserver, options lines).
func (c Config) ResolvConf() string {
	var b strings.Builder
	if len(c.Searches) > 0 {
		fmt.Fprintf(&b, "search %s\n", strings.Join(c.Searches, " "))
	}
	for _, n := range c.Nameservers {
		fmt.Fprintf(&b, "nameserver %s\n", n)
	}
	if len(c.Options) > 0 {
		fmt.Fprintf(&b, "options %s\n", strings.Join(c.Options, " "))
	}
	return b.String()
}

// Kubelet limits (pkg/apis/core/validation: MaxDNSNameservers 3,
// MaxDNSSearchPaths 32 with ExpandedDNSConfig, GA).
const (
	maxNameservers = 3
	maxSearches    = 32
)

// ConfigFor is the resolver configuration of a source, following the
// kubelet (pkg/kubelet/network/dns/dns.go GetPodDNS, getPodDNSType) and, on
// Windows, Calico's CNI plugin, which copies the kubelet's DNS config into
// the HNS endpoint (cni-plugin dataplane/windows: Dns.Search, Dns.ServerList).
func ConfigFor(c *model.Cluster, src Source) (Config, error) {
	os := osOf(c, src)
	cfg := Config{OS: os, Ndots: 1}
	if os != hybrid.OSLinux && os != hybrid.OSWindows {
		return cfg, fmt.Errorf("not modeled: the OS of %s is unknown", src)
	}
	if src.IsNode() {
		return hostConfig(c, src.Node, os), nil
	}
	policy := src.DNSPolicy
	if policy == "" {
		policy = corev1.DNSClusterFirst
	}
	if src.HostNetwork && os == hybrid.OSWindows {
		// Only HostProcess pods share the host's network on Windows; they use
		// the host's DNS client.
		h := hostConfig(c, src.Node, os)
		h.Origin = "HostProcess pod: the host's DNS client settings"
		return h, nil
	}
	if src.HostNetwork && policy == corev1.DNSClusterFirst {
		policy = corev1.DNSDefault // getPodDNSType: ClusterFirst on the host network falls back
		cfg.Notes = append(cfg.Notes, "dnsPolicy ClusterFirst with hostNetwork falls back to Default")
	}
	resolver, resolverSet := kubeletResolverConfig(c, src.Node)
	if !resolverSet {
		if os == hybrid.OSWindows {
			// sig-windows-tools StartKubelet.ps1 passes --resolv-conf="" (seed 000).
			resolver = ""
		} else {
			resolver = "/run/systemd/resolve/resolv.conf"
		}
	}
	switch policy {
	case corev1.DNSNone:
		cfg.Origin = "dnsPolicy None: the pod's dnsConfig only"
	case corev1.DNSClusterFirst, corev1.DNSClusterFirstWithHostNet:
		dnsIPs, domain := clusterDNS(c, src.Node)
		if len(dnsIPs) == 0 {
			return cfg, fmt.Errorf("not modeled: the kubelet of %s has no clusterDNS (no kube-dns Service)", src.Node)
		}
		hostSearch := hostSearches(c, src.Node, os, resolver)
		cfg.Nameservers = dnsIPs
		cfg.Searches = omitDuplicates(append([]string{src.Namespace + ".svc." + domain, "svc." + domain, domain}, hostSearch...))
		cfg.Options = []string{"ndots:5"}
		cfg.Origin = "kubelet, dnsPolicy " + string(policy)
	case corev1.DNSDefault:
		if resolver == "" {
			// GetPodDNS: with --resolv-conf="" the kubelet points the pod at
			// the node itself, which in effect disables lookups.
			cfg.Nameservers = []string{"127.0.0.1"}
			cfg.Searches = []string{"."}
			cfg.Origin = `kubelet, dnsPolicy Default with --resolv-conf=""`
		} else {
			h := hostConfig(c, src.Node, os)
			cfg.Nameservers, cfg.Searches, cfg.Options = h.Nameservers, h.Searches, h.Options
			cfg.Origin = "kubelet, dnsPolicy Default: the node's " + resolver
			cfg.Notes = append(cfg.Notes, h.Notes...)
		}
	default:
		return cfg, fmt.Errorf("invalid dnsPolicy %q", policy)
	}
	if d := src.DNSConfig; d != nil {
		cfg.Nameservers = omitDuplicates(append(cfg.Nameservers, d.Nameservers...))
		cfg.Searches = omitDuplicates(append(cfg.Searches, d.Searches...))
		cfg.Options = mergeOptions(cfg.Options, d.Options)
	}
	if len(cfg.Nameservers) > maxNameservers {
		cfg.Notes = append(cfg.Notes, fmt.Sprintf("only the first %d nameservers are kept", maxNameservers))
		cfg.Nameservers = cfg.Nameservers[:maxNameservers]
	}
	if len(cfg.Searches) > maxSearches {
		cfg.Searches = cfg.Searches[:maxSearches]
	}
	cfg.Ndots = ndots(cfg.Options)
	if os == hybrid.OSWindows {
		cfg.Origin += "; HNS endpoint DNS (Calico CNI: Search, ServerList)"
		cfg.Notes = append(cfg.Notes, "the Windows DNS client ignores options such as ndots")
	}
	return cfg, nil
}

// hostConfig is a node's own resolver: the node network's DNS server, and on
// Windows the primary DNS suffix, the domain part of the host's FQDN (seed
// 000 sets NV Domain example.com).
func hostConfig(c *model.Cluster, node, os string) Config {
	cfg := Config{OS: os, Ndots: 1}
	if ip := c.Network.Gateway; ip != "" {
		cfg.Nameservers = []string{ip}
	}
	if os == hybrid.OSWindows {
		cfg.Origin = "Windows DNS client: the adapter's DNS server and primary DNS suffix"
		if h := hostOf(c, node); h != nil {
			if i := strings.Index(h.FQDN, "."); i > 0 {
				cfg.Searches = []string{strings.ToLower(h.FQDN[i+1:])}
			}
		}
		return cfg
	}
	cfg.Origin = "the node's resolv.conf (systemd-resolved upstream)"
	cfg.Notes = append(cfg.Notes, "the Cluster kind records no search domains of the Linux hosts; none assumed")
	return cfg
}

// hostSearches are the node's search domains the kubelet appends for
// ClusterFirst pods: none on Windows unless --resolv-conf=Host, none known
// on Linux.
func hostSearches(c *model.Cluster, node, os, resolver string) []string {
	if os == hybrid.OSWindows && resolver == "Host" {
		return hostConfig(c, node, os).Searches
	}
	return nil
}

func kubeletResolverConfig(c *model.Cluster, node string) (string, bool) {
	if kc := c.Kubeadm.NodeKubelet[node]; kc != nil && kc.ResolverConfig != nil {
		return *kc.ResolverConfig, true
	}
	if kc := c.Kubeadm.Kubelet; kc != nil && kc.ResolverConfig != nil {
		return *kc.ResolverConfig, true
	}
	return "", false
}

// clusterDNS is the kubelet's clusterDNS and clusterDomain: from its
// configuration when set, else what kubeadm writes there (the kube-dns
// ClusterIP, networking.dnsDomain).
func clusterDNS(c *model.Cluster, node string) ([]string, string) {
	domain := clusterDomain(c)
	var ips []string
	for _, kc := range []*kubeletv1beta1.KubeletConfiguration{c.Kubeadm.Kubelet, c.Kubeadm.NodeKubelet[node]} {
		if kc == nil {
			continue
		}
		if len(kc.ClusterDNS) > 0 {
			ips = kc.ClusterDNS
		}
		if kc.ClusterDomain != "" {
			domain, _ = normalize(kc.ClusterDomain)
		}
	}
	if len(ips) == 0 {
		for _, svc := range c.Services {
			if svc.Namespace == "kube-system" && svc.Name == "kube-dns" && svc.Spec.ClusterIP != "" {
				ips = []string{svc.Spec.ClusterIP}
			}
		}
	}
	return ips, domain
}

func omitDuplicates(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// mergeOptions: dnsConfig options replace same-named ones (dns.go
// mergeDNSOptions). The kubelet builds the list from a map, so its order is
// random; the twin sorts it.
func mergeOptions(existing []string, add []corev1.PodDNSConfigOption) []string {
	m := map[string]string{}
	for _, o := range existing {
		k, v, _ := strings.Cut(o, ":")
		m[k] = v
	}
	for _, o := range add {
		v := ""
		if o.Value != nil {
			v = *o.Value
		}
		m[o.Name] = v
	}
	var out []string
	for k, v := range m {
		if v != "" {
			k += ":" + v
		}
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func ndots(options []string) int {
	n := 1
	for _, o := range options {
		if v, ok := strings.CutPrefix(o, "ndots:"); ok {
			if i, err := strconv.Atoi(v); err == nil && i >= 0 {
				n = min(i, 15) // glibc and musl cap ndots at 15
			}
		}
	}
	return n
}
