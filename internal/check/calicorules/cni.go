package calicorules

import (
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"

	calicooperator "github.com/kubectl-hybrid/kubectl-hybrid/internal/calico/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/rule"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// The CNI plugin and IPAM: what the twin models, and pod addresses the
// pools no longer cover.
func CNIRules() []rule.Rule { return []rule.Rule{ruleCNINotModelled, rulePodAddressOutsidePools} }

var ruleCNINotModelled = rule.Rule{
	ID: "HYB073", Name: "cni-not-modelled", Severity: rule.Warning,
	Title:    "The CNI plugin is not Calico's: the twin does not model its dataplane",
	Examines: []string{"Installation.operator.tigera.io"},
	Needs:    rule.NeedInstallation,
	Description: `With spec.cni.type AmazonVPC, AzureVNET or GKE, Calico enforces policy only: the provider's CNI
gives pods their addresses and carries their traffic. The operator renders calico-node with the
"none" networking backend, no Calico CNI configuration on Linux and no IP pools unless the
Installation lists some (tigera/operator pkg/render/node.go, pkg/controller/installation/
core_controller.go). The twin models the operator's side of this, but not the provider's
dataplane: pods without an observed address get none (they show ContainerCreating), and the
routes, HNS objects, trace and reach follow Calico VXLAN, which does not carry pod traffic here.
Read those answers as not modelled.`,
	Remediation: "None in the cluster: judge pod addressing and traffic with the provider's own tools",
	References:  []rule.Reference{rule.CalicoInstallAPI, rule.CalicoOperator},
	Check: func(x *rule.Context) []rule.Finding {
		inst := x.Cluster.Installation
		cni := calicooperator.NonCalicoCNI(inst)
		if cni == "" {
			return nil
		}
		return []rule.Finding{{Object: rule.InstKey(inst), Field: "spec.cni.type",
			Message: fmt.Sprintf("CNI %s: pod addresses and pod traffic belong to the provider's plugin, which the twin does not model: "+
				"pods without an observed address show none, and routes, HNS objects, trace and reach assume Calico VXLAN", cni)}}
	},
}

var rulePodAddressOutsidePools = rule.Rule{
	ID: "HYB074", Name: "pod-address-outside-pools", Severity: rule.Error,
	Title:    "A pod holds an address no IP pool covers",
	Examines: []string{"Installation.operator.tigera.io", "IPPool.projectcalico.org", "Pod"},
	Needs:    []rule.Need{{rule.KindInstallation, rule.KindIPPool}},
	Description: `Removing the pool a pod's address came from does not take the address away: Calico IPAM
releases it only when the CNI plugin deletes the pod's network (libcalico-go lib/ipam), so the pod
keeps running with it. But Felix programs VXLAN routes only for blocks inside a VXLAN pool
(felix/calc/vxlan_resolver.go), so other nodes lose their route to it, and natOutgoing no longer
applies. (Disabling a pool is the safe way: a disabled pool still routes its blocks and only stops
new allocations.) With no enabled pool left, a new pod fails its CNI ADD with "no configured Calico
pools for node <node>" (libcalico-go lib/ipam/ipam.go) and stays ContainerCreating.`,
	Remediation: "Create (or re-enable) a pool covering the address, or recreate the pod so that it takes an address from the pools that remain",
	References:  []rule.Reference{rule.CalicoIPPool},
	Check: func(x *rule.Context) []rule.Finding {
		inst := x.Cluster.Installation
		if inst != nil && calicooperator.NonCalicoCNI(inst) != "" {
			return nil // the provider's IPAM gives the addresses (HYB073)
		}
		// A disabled pool still routes the blocks it holds (it only stops
		// new allocations), so any pool covers an address; new pods fail
		// only when no pool is enabled.
		var pools []netip.Prefix
		enabled := 0
		for _, p := range x.Cluster.IPPools {
			if pfx, err := netip.ParsePrefix(p.Spec.CIDR); err == nil {
				pools = append(pools, pfx.Masked())
				if !p.Spec.Disabled {
					enabled++
				}
			}
		}
		var out []rule.Finding
		for _, p := range x.Cluster.Pods {
			if p.Spec.HostNetwork || p.Status.PodIP == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				continue
			}
			addr, err := netip.ParseAddr(p.Status.PodIP)
			if err != nil || covered(pools, addr) {
				continue
			}
			newPods := ""
			if enabled == 0 {
				newPods = fmt.Sprintf("; the cluster has no enabled IP pool, so new pods on %s fail with \"no configured Calico pools for node %s\"", p.Spec.NodeName, p.Spec.NodeName)
			}
			out = append(out, rule.Finding{Object: model.Key{Kind: "Pod", Namespace: p.Namespace, Name: p.Name}, Field: "status.podIP",
				Message: fmt.Sprintf("pod %s/%s keeps %s, which no IP pool covers: Felix programs no route to it on other nodes%s",
					p.Namespace, p.Name, addr, newPods),
				Remediation: fmt.Sprintf("kubectl -n %s delete pod %s (after a pool covers the pod network again)", p.Namespace, p.Name)})
		}
		return out
	},
}

func covered(pools []netip.Prefix, a netip.Addr) bool {
	for _, p := range pools {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
