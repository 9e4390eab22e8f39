// Package podlogs derives what `kubectl logs` would print for the pods of
// the cluster's network agents — calico-node, calico-node-windows,
// kube-proxy and kube-proxy-windows — from the twin's state. It is
// simulated: only lines whose text follows from what the twin knows are
// given, and every answer says what it leaves out.
package podlogs

import (
	"fmt"
	"net"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine/controllers"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Host answers what a Windows node's HNS holds.
type Host interface {
	// Networks are the names of the node's HNS networks.
	Networks(node string) ([]string, error)
}

// Result is a container's log lines and what about them is simulated.
type Result struct {
	Lines []string
	Notes []string
}

// Error is kubectl's answer when there is no log to give (the API server's
// BadRequest for a container that has not started).
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// Container resolves the container of p to read, as kubectl logs does: the
// named one, or the only one, or the kubectl.kubernetes.io/default-container.
func Container(p *corev1.Pod, name string) (string, error) {
	var names []string
	for _, c := range append(append([]corev1.Container(nil), p.Spec.InitContainers...), p.Spec.Containers...) {
		names = append(names, c.Name)
	}
	switch {
	case name != "":
		if !slices.Contains(names, name) {
			return "", &Error{fmt.Sprintf("container %s is not valid for pod %s", name, p.Name)}
		}
		return name, nil
	case len(p.Spec.Containers) == 1:
		return p.Spec.Containers[0].Name, nil
	}
	if d := p.Annotations["kubectl.kubernetes.io/default-container"]; d != "" {
		return d, nil
	}
	if len(p.Spec.Containers) == 0 {
		return "", &Error{fmt.Sprintf("pod %s has no containers", p.Name)}
	}
	// kubectl picks the first container and says so on stderr.
	return p.Spec.Containers[0].Name, nil
}

// Logs is what kubectl logs prints for container of p.
func Logs(c *model.Cluster, h Host, p *corev1.Pod, container string) (Result, error) {
	if w := waiting(p, container); w != "" {
		// The API server refuses logs of a container that never started
		// (pkg/registry/core/pod/strategy.go LogLocation).
		return Result{}, &Error{fmt.Sprintf("Error from server (BadRequest): container %q in pod %q is waiting to start: %s", container, p.Name, w)}
	}
	kind, owner := controllers.ControllerOf(p)
	if kind != "DaemonSet" {
		return Result{}, &Error{fmt.Sprintf("the twin models the logs of calico-node, calico-node-windows, kube-proxy and kube-proxy-windows pods only; %s/%s is not one", p.Namespace, p.Name)}
	}
	switch {
	case owner == "kube-proxy-windows":
		return kubeProxyWindows(h, p)
	case owner == "kube-proxy":
		return Result{Notes: []string{"simulated: kube-proxy's own log lines (klog, with times and source lines) are not modelled"}}, nil
	case (owner == "calico-node" || owner == "calico-node-windows") && (container == "calico-node" || container == "node"):
		return calicoNode(c, p, owner == "calico-node-windows"), nil
	case owner == "calico-node" || owner == "calico-node-windows":
		return Result{Notes: []string{fmt.Sprintf("simulated: the %s container's log lines are not modelled", container)}}, nil
	}
	return Result{}, &Error{fmt.Sprintf("the twin models the logs of calico-node, calico-node-windows, kube-proxy and kube-proxy-windows pods only; %s/%s is not one", p.Namespace, p.Name)}
}

// waiting is the container's waiting reason when it has not started.
func waiting(p *corev1.Pod, container string) string {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == container && cs.State.Waiting != nil && cs.State.Running == nil && cs.State.Terminated == nil {
			return cs.State.Waiting.Reason
		}
	}
	return ""
}

// hnsModuleWarning is what Windows PowerShell writes when a script imports
// the hns module, whose command names use unapproved verbs (Import-Module
// without -DisableNameChecking).
var hnsModuleWarning = []string{
	"WARNING: The names of some imported commands from the module 'hns' include unapproved verbs that might make them less",
	"discoverable. To find the commands with unapproved verbs, run the Import-Module command again with the Verbose",
	"parameter. For a list of approved verbs, type Get-Verb.",
}

// kubeProxyNetwork is the network name the hostprocess kube-proxy's
// start.ps1 waits for (kubernetes-sigs/sig-windows-tools
// hostprocess/calico/kube-proxy): Calico's single HNS network.
const kubeProxyNetwork = "Calico"

// kubeProxyWindows is start.ps1 of the sig-windows-tools hostprocess image:
// it imports the hns module, waits until HNS holds the Calico network
// (polling Get-HnsNetwork every second, printing nothing more while it
// waits), then starts kube-proxy with the network's name in KUBE_NETWORK.
func kubeProxyWindows(h Host, p *corev1.Pod) (Result, error) {
	nets, err := h.Networks(p.Spec.NodeName)
	if err != nil {
		return Result{}, err
	}
	match := regexp.MustCompile("^" + regexp.QuoteMeta(kubeProxyNetwork) + "$")
	if env := envOf(p, "KUBE_NETWORK"); env != "" {
		if re, err := regexp.Compile(env); err == nil {
			match = re
		}
	}
	lines := append(append([]string(nil), hnsModuleWarning...),
		"Running kub-proxy service.",
		"Waiting for HNS network "+kubeProxyNetwork+" to be created...")
	r := Result{Notes: []string{"simulated: the lines of the image's start.ps1 the twin derives from the node's HNS networks"}}
	for _, n := range nets {
		if match.MatchString(n) {
			lines = append(lines, "HNS network "+kubeProxyNetwork+" found.")
			r.Notes = append(r.Notes, "simulated: kube-proxy's own log lines that follow (klog) are not modelled")
			r.Lines = lines
			return r, nil
		}
	}
	r.Notes = append(r.Notes, fmt.Sprintf("%s holds no HNS network matching KUBE_NETWORK: the script keeps waiting and kube-proxy never starts", p.Spec.NodeName))
	r.Lines = lines
	return r, nil
}

// calicoNode is the start of calico-node's startup (node/pkg/lifecycle/
// startup/startup.go Run, waitForConnection): the node name, then the
// datastore check, which a Windows host without the API server's address
// fails: without KUBERNETES_SERVICE_HOST from the kubernetes-services-endpoint
// ConfigMap the client dials the kubernetes Service's ClusterIP, which a
// Windows host cannot reach (the HNS load balancers serve pods' ports,
// not the host's).
func calicoNode(c *model.Cluster, p *corev1.Pod, windows bool) Result {
	at := p.CreationTimestamp.Time
	if p.Status.StartTime != nil {
		at = p.Status.StartTime.Time
	}
	line := func(level, file, msg string) string {
		return fmt.Sprintf("%s [%s] %s: %s", at.UTC().Format("2006-01-02 15:04:05.000"), level, file, msg)
	}
	r := Result{Notes: []string{"simulated: calico-node's startup messages the twin derives; times are the pod's start, and logrus's process ID and source line numbers are left out"}}
	r.Lines = []string{
		line("INFO", "startup/startup.go", "Early log level set to info"),
		line("INFO", "startup/startup.go", "Using NODENAME environment for node name"),
		line("INFO", "startup/startup.go", "Determined node name: "+p.Spec.NodeName),
		line("INFO", "startup/startup.go", "Checking datastore connection"),
	}
	if host := envOf(p, "KUBERNETES_SERVICE_HOST"); host == "" && windows {
		ip := kubernetesServiceIP(c)
		err := fmt.Sprintf("Get \"https://%s:443/api/v1/nodes/foo\": dial tcp %s:443: i/o timeout", ip, ip)
		for i := 0; i < 2; i++ {
			r.Lines = append(r.Lines, line("INFO", "startup/startup.go", "Hit error connecting to datastore - retry error="+err))
		}
		r.Notes = append(r.Notes, "calico-node retries every second and never gets further: give the API server's address in the kubernetes-services-endpoint ConfigMap (tigera-operator namespace)")
		return r
	}
	r.Lines = append(r.Lines, line("INFO", "startup/startup.go", "Datastore connection verified"))
	r.Notes = append(r.Notes, "simulated: the rest of the startup and Felix's lines are not modelled")
	return r
}

// envOf is the literal value of a variable in the pod's first container
// that sets it, "" when none does (values from references are not read).
func envOf(p *corev1.Pod, name string) string {
	for _, c := range p.Spec.Containers {
		for _, e := range c.Env {
			if e.Name == name {
				return strings.TrimSpace(e.Value)
			}
		}
	}
	return ""
}

// kubernetesServiceIP is default/kubernetes's ClusterIP.
func kubernetesServiceIP(c *model.Cluster) string {
	for _, s := range c.Services {
		if s.Namespace == "default" && s.Name == "kubernetes" {
			return s.Spec.ClusterIP
		}
	}
	return "<none>"
}

// ServingCertError is the API server's answer to kubectl logs when it
// proxies to the kubelet of a pod's node and the kubelet has no serving
// certificate (see servingCertMissing); nil when it has one.
func ServingCertError(c *model.Cluster, p *corev1.Pod, container string) error {
	hostport, missing := servingCertMissing(c, p.Spec.NodeName)
	if !missing {
		return nil
	}
	return &Error{fmt.Sprintf("Error from server: Get \"https://%s/containerLogs/%s/%s/%s\": remote error: tls: internal error",
		hostport, p.Namespace, p.Name, container)}
}

// ExecServingCertError is the same answer to kubectl exec: the API server
// fails to dial the kubelet for the stream (its "error dialing backend").
func ExecServingCertError(c *model.Cluster, p *corev1.Pod) error {
	if _, missing := servingCertMissing(c, p.Spec.NodeName); !missing {
		return nil
	}
	return &Error{"Error from server: error dialing backend: remote error: tls: internal error"}
}

// servingCertMissing says whether the node's kubelet has no serving
// certificate, and the address the API server dials: with
// serverTLSBootstrap the kubelet serves TLS only once its kubelet-serving
// CSR is approved and signed (k8s.io/client-go/util/certificate's manager
// has no certificate until then), and its TLS handshake fails with an
// internal_error alert. A kubelet that does not bootstrap one serves a
// self-signed certificate.
func servingCertMissing(c *model.Cluster, node string) (hostport string, missing bool) {
	kc := c.Kubeadm.NodeKubelet[node]
	if node == "" || kc == nil || !kc.ServerTLSBootstrap {
		return "", false
	}
	for _, r := range c.CSRs {
		if r.Spec.SignerName != "kubernetes.io/kubelet-serving" || r.Spec.Username != "system:node:"+node {
			continue
		}
		approved, denied := false, false
		for _, cond := range r.Status.Conditions {
			switch {
			case cond.Type == "Approved" && cond.Status == corev1.ConditionTrue:
				approved = true
			case cond.Type == "Denied" && cond.Status == corev1.ConditionTrue:
				denied = true
			}
		}
		if approved && !denied {
			return "", false
		}
	}
	addr := ""
	for _, n := range c.Nodes {
		if n.Name != node {
			continue
		}
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				addr = a.Address
				break
			}
		}
	}
	port := int32(10250) // the kubelet's default port
	if kc.Port != 0 {
		port = kc.Port
	}
	return net.JoinHostPort(addr, fmt.Sprint(port)), true
}
