package workloadrules

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/rule"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// kube-proxy as it starts and as it chooses the Services it serves.
func KubeProxyRules() []rule.Rule {
	return []rule.Rule{ruleKubeProxyNetworkName, ruleServiceProxyName}
}

var (
	winkernelNetworkName = rule.Reference{Title: "kubernetes/kubernetes pkg/proxy/winkernel (getNetworkName: --network-name, else KUBE_NETWORK, else kube-proxy exits)", URL: "https://github.com/kubernetes/kubernetes/tree/master/pkg/proxy/winkernel"}
	kubeProxyServer      = rule.Reference{Title: "kubernetes/kubernetes cmd/kube-proxy/app/server.go (the informers' label selector leaves out service.kubernetes.io/service-proxy-name)", URL: "https://github.com/kubernetes/kubernetes/blob/master/cmd/kube-proxy/app/server.go"}
)

// kubeNetwork is what names kube-proxy's HNS network in a kube-proxy
// DaemonSet for Windows: start.ps1 (which sets KUBE_NETWORK), the
// --network-name flag or the KUBE_NETWORK variable; empty when nothing
// does. path is the container whose command line runs kube-proxy.
func kubeNetwork(p winProxy) (string, string) {
	named := ""
	rule.EachContainer(p.w.Spec, func(c *corev1.Container, path string) {
		if path != p.path {
			return
		}
		for _, a := range append(append([]string{}, c.Command...), c.Args...) {
			if v, ok := strings.CutPrefix(a, "--network-name="); ok && v != "" {
				named = "--network-name"
			}
		}
		for _, e := range c.Env {
			if e.Name == "KUBE_NETWORK" && (e.Value != "" || e.ValueFrom != nil) {
				named = "KUBE_NETWORK"
			}
		}
	})
	if p.script {
		named = "start.ps1"
	}
	return named, p.path
}

var ruleKubeProxyNetworkName = rule.Rule{
	ID: "HYB043", Name: "kube-proxy-windows-no-network-name", Severity: rule.Error,
	Title:    "kube-proxy on Windows knows no HNS network name and exits at start",
	Examines: []string{"DaemonSet.apps", "KubeProxyConfiguration.kubeproxy.config.k8s.io"},
	Description: `winkernel kube-proxy programs the HNS network it is told to: the --network-name flag (or
winkernel.networkName in its configuration file), else the KUBE_NETWORK environment variable.
With neither it exits at start with "Environment variable KUBE_NETWORK and network-flag not
initialized" and restarts in a loop, so the node gets no Service load balancers at all.
sig-windows-tools' start.ps1 sets KUBE_NETWORK=Calico; a DaemonSet that starts kube-proxy.exe
directly must name the network itself.`,
	Remediation: `Add the environment variable KUBE_NETWORK=Calico (or --network-name=Calico) to the kube-proxy container, or run kube-proxy through sig-windows-tools' start.ps1`,
	References:  []rule.Reference{winkernelNetworkName, rule.SigWindowsKubeProxy, rule.RefWinkernel},
	Check: func(x *rule.Context) []rule.Finding {
		if kp := x.Cluster.Kubeadm.KubeProxy; kp != nil && kp.Winkernel.NetworkName != "" {
			// The configuration names it (the twin reads kubeadm's
			// KubeProxyConfiguration as the file kube-proxy loads).
			return nil
		}
		var out []rule.Finding
		for _, p := range windowsKubeProxies(x) {
			named, path := kubeNetwork(p)
			if named != "" {
				continue
			}
			out = append(out, rule.Finding{Object: p.w.Key, Field: p.w.Path(path + ".env"),
				Message:     fmt.Sprintf("%s starts kube-proxy on Windows with neither --network-name nor KUBE_NETWORK: kube-proxy exits at start (\"Environment variable KUBE_NETWORK and network-flag not initialized\") and programs no Service on the node", rule.ObjectString(p.w.Key)),
				Remediation: fmt.Sprintf("kubectl -n %s set env daemonset/%s KUBE_NETWORK=Calico", p.w.Key.Namespace, p.w.Key.Name)})
		}
		return out
	},
}

var ruleServiceProxyName = rule.Rule{
	ID: "HYB044", Name: "service-for-another-proxy", Severity: rule.Warning,
	Title:    "Service is labelled for another service proxy, which kube-proxy never serves",
	Examines: []string{"Service"},
	Description: `kube-proxy lists and watches only Services without the label
service.kubernetes.io/service-proxy-name: a Service carrying it is left to the proxy it names,
on Linux and Windows nodes alike. Its ClusterIP answers nowhere that proxy does not run; no
alternative service proxy runs on Windows nodes, so Windows pods reach nothing through it.`,
	Remediation: `Remove the label service.kubernetes.io/service-proxy-name if kube-proxy is to serve the Service, or run the proxy it names on every node that needs the Service`,
	References:  []rule.Reference{kubeProxyServer, rule.K8sLabels},
	Check: func(x *rule.Context) []rule.Finding {
		var out []rule.Finding
		for _, s := range x.Cluster.Services {
			proxy, other := model.ServiceProxyName(s)
			if !other || !balanced(s) {
				continue
			}
			out = append(out, rule.Finding{Object: svcKey(s), Field: "metadata.labels",
				Message:     fmt.Sprintf("Service %s/%s is labelled %s=%s: no kube-proxy, Linux or Windows, programs its ClusterIP", s.Namespace, s.Name, model.LabelServiceProxyName, proxy),
				Remediation: fmt.Sprintf("kubectl -n %s label service %s %s-", s.Namespace, s.Name, model.LabelServiceProxyName)})
		}
		return out
	},
}
