package migrate

import (
	"encoding/json"
	"fmt"
	"net"
	"slices"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plan"
)

// obj is a rendered object, as the plan package renders its files.
type obj = map[string]any

// deriveSteps orders the changes the way Calico's Windows requirements
// want them made on a running cluster: strictAffinity first (it only stops
// future borrowing), the pools' encapsulation through the Installation
// (the operator owns its pools and reverts a direct IPPool edit,
// pkg/controller/ippool/pool_controller.go), BGP off (calico-node rolls
// with the vxlan backend), then what Windows nodes need from the operator.
// Each step's file holds the whole objects as they stand after it, so the
// files stack.
func deriveSteps(c *model.Cluster, snap *model.Snapshot, in *operator.Installation, w want, endpoint string) ([]Step, error) {
	var steps []Step
	cur, err := copyInstallation(in)
	if err != nil {
		return nil, err
	}
	add := func(st Step, o obj) error {
		body, err := plan.ToYAML(o)
		if err != nil {
			return err
		}
		st.Body = body
		steps = append(steps, st)
		return nil
	}
	installation := func() obj {
		return obj{"apiVersion": "operator.tigera.io/v1", "kind": "Installation",
			"metadata": obj{"name": cur.Name}, "spec": asMap(cur.Spec)}
	}

	curStrict := c.IPAMConfig != nil && c.IPAMConfig.Spec.StrictAffinity
	if w.strict != curStrict {
		ipam := &calico.IPAMConfiguration{}
		if given := inputIPAM(snap); given != nil {
			ipam.Spec = given.Spec
		}
		ipam.Spec.StrictAffinity = w.strict
		st := Step{ID: StepStrictAffinity, Title: fmt.Sprintf("Set IPAM strictAffinity to %t", w.strict),
			Commands: []string{strictCommand(snap, w.strict)}, rollback: []string{strictCommand(snap, curStrict)},
			Why: "strictAffinity only stops future borrowing: addresses already borrowed stay where they are (see the preflight); Calico requires it before the first Windows node joins (https://docs.tigera.io/calico/latest/getting-started/kubernetes/windows-calico/requirements)"}
		if err := add(st, obj{"apiVersion": "projectcalico.org/v3", "kind": "IPAMConfiguration",
			"metadata": obj{"name": "default"}, "spec": asMap(ipam.Spec)}); err != nil {
			return nil, err
		}
	}

	eff := effectivePools(c, in)
	var ops, undo []string
	explicit := len(pools(in)) > 0
	for i, p := range eff {
		if w.encap[i] == "" || w.encap[i] == p.Encapsulation {
			continue
		}
		ops = append(ops, fmt.Sprintf(`{"op":"replace","path":"/spec/calicoNetwork/ipPools/%d/encapsulation","value":%q}`, i, w.encap[i]))
		undo = append(undo, fmt.Sprintf(`{"op":"replace","path":"/spec/calicoNetwork/ipPools/%d/encapsulation","value":%q}`, i, p.Encapsulation))
	}
	if len(ops) > 0 {
		if cur.Spec.CalicoNetwork == nil {
			cur.Spec.CalicoNetwork = &operator.CalicoNetworkSpec{}
		}
		if !explicit {
			// The operator's default pool, written out so it can change.
			cur.Spec.CalicoNetwork.IPPools = append([]operator.IPPool(nil), eff...)
		}
		for i := range cur.Spec.CalicoNetwork.IPPools {
			if w.encap[i] != "" {
				cur.Spec.CalicoNetwork.IPPools[i].Encapsulation = w.encap[i]
			}
		}
		st := Step{ID: StepEncapsulation, Title: "Change the IP pools' encapsulation through the Installation",
			Why: "the operator renders the IPPool from the Installation and writes its version back over a direct IPPool edit (pool_controller.go); Felix then replaces its routes to the other nodes' blocks (felix/calc/vxlan_resolver.go, felix/dataplane/linux/vxlan_mgr.go)"}
		if explicit {
			st.Commands = []string{"kubectl patch installation default --type=json -p '[" + join(ops) + "]'"}
			st.rollback = []string{"kubectl patch installation default --type=json -p '[" + join(undo) + "]'"}
		} else {
			ps, _ := json.Marshal(cur.Spec.CalicoNetwork.IPPools)
			st.Commands = []string{fmt.Sprintf(`kubectl patch installation default --type=merge -p '{"spec":{"calicoNetwork":{"ipPools":%s}}}'`, ps)}
			st.rollback = []string{`kubectl patch installation default --type=json -p '[{"op":"remove","path":"/spec/calicoNetwork/ipPools"}]'`}
		}
		if err := add(st, installation()); err != nil {
			return nil, err
		}
	}

	if was := effectiveBGP(c, in); w.bgp != was {
		if cur.Spec.CalicoNetwork == nil {
			cur.Spec.CalicoNetwork = &operator.CalicoNetworkSpec{}
		}
		cur.Spec.CalicoNetwork.BGP = &w.bgp
		st := Step{ID: StepBGP, Title: "Turn BGP " + map[string]string{"Disabled": "off", "Enabled": "on"}[w.bgp] + " through the Installation",
			Commands: []string{fmt.Sprintf(`kubectl patch installation default --type=merge -p '{"spec":{"calicoNetwork":{"bgp":%q}}}'`, w.bgp)},
			rollback: []string{fmt.Sprintf(`kubectl patch installation default --type=merge -p '{"spec":{"calicoNetwork":{"bgp":%q}}}'`, was)},
			Why:      "the operator re-renders calico-node: CALICO_NETWORKING_BACKEND and the readiness probe follow bgp (tigera/operator pkg/render/node.go nodeProbes); BIRD and confd stop, Felix keeps programming the routes"}
		if err := add(st, installation()); err != nil {
			return nil, err
		}
	}

	if w.windows {
		// The ConfigMap before the Windows dataplane: the operator degrades
		// calico-windows while windowsDataplane is HNS without it
		// (k8s-endpoint.go), and calico-node rolls once for it either way.
		if !hasServicesEndpoint(c) {
			cm, ok := plan.ServicesEndpoint(endpoint)
			if ok {
				host, port, _ := net.SplitHostPort(endpoint)
				st := Step{ID: StepServicesEndpoint, Title: "Create the kubernetes-services-endpoint ConfigMap",
					Commands: []string{fmt.Sprintf("kubectl -n tigera-operator create configmap kubernetes-services-endpoint --from-literal=KUBERNETES_SERVICE_HOST=%s --from-literal=KUBERNETES_SERVICE_PORT=%s", host, port)},
					rollback: []string{"kubectl -n tigera-operator delete configmap kubernetes-services-endpoint"},
					Why:      "calico-node-windows starts before kube-proxy programs the kubernetes Service, so the operator gives Calico's agents the API server's own address (tigera/operator pkg/controller/k8sapi/k8s-endpoint.go); calico-node rolls to take it"}
				if err := add(st, cm); err != nil {
					return nil, err
				}
			}
		}
		var patch, undoPatch []string
		cn := cur.Spec.CalicoNetwork
		if cn == nil {
			cn = &operator.CalicoNetworkSpec{}
			cur.Spec.CalicoNetwork = cn
		}
		if cn.WindowsDataplane == nil || *cn.WindowsDataplane != "HNS" {
			old := "null"
			if cn.WindowsDataplane != nil {
				old = fmt.Sprintf("%q", *cn.WindowsDataplane)
			}
			hns := "HNS"
			cn.WindowsDataplane = &hns
			patch = append(patch, `"calicoNetwork":{"windowsDataplane":"HNS"}`)
			undoPatch = append(undoPatch, `"calicoNetwork":{"windowsDataplane":`+old+`}`)
		}
		if svc := w.serviceCIDR; svc != "" && svc[0] != '<' && !slices.Contains(cur.Spec.ServiceCIDRs, svc) {
			old, _ := json.Marshal(cur.Spec.ServiceCIDRs)
			if len(cur.Spec.ServiceCIDRs) == 0 {
				old = []byte("null")
			}
			cur.Spec.ServiceCIDRs = append(cur.Spec.ServiceCIDRs, svc)
			now, _ := json.Marshal(cur.Spec.ServiceCIDRs)
			patch = append(patch, `"serviceCIDRs":`+string(now))
			undoPatch = append(undoPatch, `"serviceCIDRs":`+string(old))
		}
		if len(patch) > 0 {
			st := Step{ID: StepWindowsDataplane, Title: "Enable the Windows dataplane (HNS) and the service network in the Installation",
				Commands: []string{`kubectl patch installation default --type=merge -p '{"spec":{` + join(patch) + `}}'`},
				rollback: []string{`kubectl patch installation default --type=merge -p '{"spec":{` + join(undoPatch) + `}}'`},
				Why:      "windowsDataplane: HNS makes the operator render calico-node-windows; the Windows CNI plugin takes its OutBoundNAT exceptions from serviceCIDRs, which it cannot read from the API (https://docs.tigera.io/calico/latest/getting-started/kubernetes/windows-calico/operator)"}
			if err := add(st, installation()); err != nil {
				return nil, err
			}
		}
	}
	return steps, nil
}

func join(parts []string) string {
	out := ""
	for i, p := range parts {
		if i > 0 {
			out += ","
		}
		out += p
	}
	return out
}

// strictCommand patches the IPAMConfiguration through the Calico API
// server, or has calicoctl create it when the input holds none.
func strictCommand(snap *model.Snapshot, v bool) string {
	if inputIPAM(snap) == nil {
		return fmt.Sprintf("calicoctl ipam configure --strictaffinity=%t", v)
	}
	return fmt.Sprintf(`kubectl patch ipamconfigurations default --type merge -p '{"spec":{"strictAffinity":%t}}'`, v)
}

func hasServicesEndpoint(c *model.Cluster) bool {
	for _, cm := range c.ConfigMaps {
		if cm.Namespace == "tigera-operator" && cm.Name == "kubernetes-services-endpoint" &&
			cm.Data["KUBERNETES_SERVICE_HOST"] != "" && cm.Data["KUBERNETES_SERVICE_PORT"] != "" {
			return true
		}
	}
	return false
}

func copyInstallation(in *operator.Installation) (*operator.Installation, error) {
	raw, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("installation: %w", err)
	}
	out := &operator.Installation{}
	if err := json.Unmarshal(raw, out); err != nil {
		return nil, fmt.Errorf("installation: %w", err)
	}
	if out.Name == "" {
		out.Name = "default"
	}
	return out, nil
}
