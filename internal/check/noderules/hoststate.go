package noderules

import (
	"fmt"
	"sort"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/rule"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// HostRules judge the hosts' own state where a what-if's HostState gives
// it: the services a node needs, its clock, a stuck kubelet.
func HostRules() []rule.Rule { return []rule.Rule{ruleHostDeparture} }

var refKubeletRestart = rule.Reference{Title: "Calico for Windows: install using the operator (restart the kubelet after install)", URL: "https://docs.tigera.io/calico/latest/getting-started/kubernetes/windows-calico/operator"}

var ruleHostDeparture = rule.Rule{
	ID: "HYB080", Name: "host-departure", Severity: rule.Error,
	Title:    "A node's host keeps it from working",
	Examines: []string{"HostState.hybrid.kubectl-hybrid.io", "Node"},
	Description: `What runs on the host decides what the node reports. With containerd stopped the kubelet
reports "container runtime is down" and the node is NotReady; with the kubelet stopped, stuck
(on Windows, when the vSwitch moves the host's address to vEthernet the kubelet can keep its
dead connection to the API server), or with a clock outside the API server certificate's
validity (every request fails with x509 "certificate has expired or is not yet valid"),
nothing posts the node's status and it turns Unknown. The node lifecycle controller then
marks the node's pods not Ready, so they leave their Services' endpoints.`,
	Remediation: `Windows: Start-Service containerd | kubelet, Restart-Service kubelet, or w32tm /resync; Linux: systemctl start containerd | kubelet, or chronyc makestep`,
	References:  []rule.Reference{rule.RefWindowsTroubleshoot, refKubeletRestart, rule.K8sNodeStatus},
	Check: func(x *rule.Context) []rule.Finding {
		var names []string
		for name := range x.Cluster.HostStates {
			names = append(names, name)
		}
		sort.Strings(names)
		var out []rule.Finding
		for _, name := range names {
			st := x.Cluster.HostStates[name]
			n := x.Node(name)
			if n == nil {
				continue
			}
			windows := n.Labels["kubernetes.io/os"] == hybrid.OSWindows
			k := model.Key{Group: hybrid.Group, Kind: hybrid.HostStateKind, Name: name}
			add := func(field, msg, fix string) {
				out = append(out, rule.Finding{Object: k, Field: field, Message: msg, Remediation: fix})
			}
			for i, s := range st.Spec.Services {
				if s.Status != hybrid.ServiceStopped {
					continue
				}
				field := fmt.Sprintf("spec.services[%d]", i)
				switch s.Name {
				case hybrid.ServiceContainerd:
					fix := "sudo systemctl start containerd; sudo crictl info; journalctl -u containerd -n 30"
					if windows {
						fix = "Start-Service containerd; crictl info; Get-WinEvent -FilterHashtable @{LogName='System'; ProviderName='Service Control Manager'} -MaxEvents 20 (why it stopped)"
					}
					add(field, fmt.Sprintf("containerd is stopped on %s: its kubelet reports \"container runtime is down\", the node is NotReady and its pods are marked not Ready", name), fix)
				case hybrid.ServiceKubelet:
					fix := "sudo systemctl start kubelet; journalctl -u kubelet -n 30"
					if windows {
						fix = `Start-Service kubelet; Get-Content C:\var\log\kubelet\kubelet.err.log -Tail 30`
					}
					add(field, fmt.Sprintf("the kubelet is stopped on %s: nothing posts its status, the node turns Unknown (\"Kubelet stopped posting node status.\") and its pods are marked not Ready", name), fix)
				}
			}
			if st.Spec.KubeletStuck {
				add("spec.kubeletStuck", fmt.Sprintf("the kubelet on %s is stuck after the vSwitch was created (the host's address moved to vEthernet and its connection to the API server died): the node turns Unknown (\"Kubelet stopped posting node status.\") and its pods are marked not Ready", name),
					"Restart-Service kubelet")
			}
			if msg := x.Cluster.KubeletRequestError(name); msg != "" {
				fix := "timedatectl; sudo chronyc makestep"
				if windows {
					fix = "w32tm /query /status; Restart-Service w32time; w32tm /resync"
				}
				add("spec.clockOffset", fmt.Sprintf("the clock of %s is %s off the control plane's, outside the API server certificate's validity; its kubelet's requests fail: %s", name, st.Spec.ClockOffset, msg), fix)
			}
		}
		return out
	},
}
