package calicorules

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/kubeadm"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	calicooperator "github.com/kubectl-hybrid/kubectl-hybrid/internal/calico/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check/rule"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Calico for Windows: the Installation, IP pools, IPAM, Felix and the
// operator's own status.
func CalicoRules() []rule.Rule {
	return []rule.Rule{
		ruleEncapsulation, ruleBGPWithVXLAN, ruleStrictAffinity, ruleWindowsDataplane,
		ruleServiceCIDRsMissing, ruleServiceCIDRsMismatch, ruleServicesEndpointMissing, ruleServicesEndpointInvalid,
		ruleVXLANVNI, ruleVXLANPort, ruleIPv6, ruleLinuxOnlyFeatures, ruleTigeraStatus, ruleTypha,
		ruleCalicoNodeWindows, ruleWindowsVersion,
	}
}

func samePrefix(a, b string) bool {
	pa, err1 := netip.ParsePrefix(strings.TrimSpace(a))
	pb, err2 := netip.ParsePrefix(strings.TrimSpace(b))
	return err1 == nil && err2 == nil && pa.Masked() == pb.Masked()
}

var ruleEncapsulation = rule.Rule{
	ID: "HYB001", Name: "pool-encapsulation", Severity: rule.Error, Blocker: true,
	Title:    "IP pool encapsulation is not VXLAN or None",
	Examines: []string{"Installation.operator.tigera.io", "IPPool.projectcalico.org"},
	Needs:    []rule.Need{{rule.KindInstallation, rule.KindIPPool}},
	Description: `Calico for Windows supports VXLAN without cross-subnet, or no encapsulation with BGP; it
has no IPIP at all. With windowsDataplane: HNS the operator refuses any other IPv4 pool
encapsulation of its first IPv4 pool ("IPv4 IPPool encapsulation VXLANCrossSubnet is not
supported by Calico for Windows"; later pools are not checked, yet Windows nodes cannot reach
their pods either); with VXLANCrossSubnet, Services of Linux pods in the Windows node's own subnet are
unreachable from Windows pods (projectcalico/calico#6322). The pool is shared by all nodes, so
the change is cluster-wide: VXLAN Always, made in the Installation, which owns the pool.`,
	Remediation: `kubectl patch installation default --type=json -p '[{"op":"replace","path":"/spec/calicoNetwork/ipPools/0/encapsulation","value":"VXLAN"}]'`,
	References:  []rule.Reference{rule.RefCalicoWindows, rule.RefMigration, rule.CalicoLimitations, rule.OperatorValidation, rule.CalicoIssue6322, rule.CalicoVXLAN},
	Check: func(x *rule.Context) []rule.Finding {
		var out []rule.Finding
		if inst := x.Cluster.Installation; inst != nil {
			first := true // the operator validates only the first IPv4 pool
			for i, p := range rule.CalicoNetwork(inst).IPPools {
				if rule.IsIPv6(p.CIDR) {
					continue
				}
				isFirst := first
				first = false
				enc := rule.PoolEncapsulation(inst, p)
				if enc == operator.EncapVXLAN || enc == operator.EncapNone {
					continue
				}
				// tigera/operator pkg/controller/installation/validation.go
				// checks render.GetIPv4Pool's pool only.
				refusal := fmt.Sprintf("the operator refuses %s once windowsDataplane is HNS", enc)
				if !isFirst {
					refusal = "the operator accepts it (it checks only the first IPv4 pool), but Windows nodes cannot reach the pods it holds"
				}
				out = append(out, rule.Finding{
					Object: rule.InstKey(inst), Field: fmt.Sprintf("spec.calicoNetwork.ipPools[%d].encapsulation", i),
					Message: fmt.Sprintf("IP pool %s (%s) uses encapsulation %s; Calico for Windows supports only VXLAN (no cross-subnet) or None with BGP, and %s",
						p.Name, p.CIDR, enc, refusal),
					Remediation: fmt.Sprintf(`kubectl patch installation %s --type=json -p '[{"op":"replace","path":"/spec/calicoNetwork/ipPools/%d/encapsulation","value":"VXLAN"}]'`, inst.Name, i),
				})
			}
		}
		for _, p := range rule.UnmanagedPools(x) {
			if rule.IsIPv6(p.Spec.CIDR) || p.Spec.Disabled {
				continue
			}
			ipip, vx := calicooperator.EffectiveModes(p)
			switch {
			case ipip != calico.ModeNever:
				out = append(out, rule.Finding{Object: rule.PoolKey(p), Field: "spec.ipipMode",
					Message:     fmt.Sprintf("IP pool %s (%s) has ipipMode %s; Windows has no IPIP", p.Name, p.Spec.CIDR, ipip),
					Remediation: fmt.Sprintf(`kubectl patch ippool %s --type=merge -p '{"spec":{"ipipMode":"Never","vxlanMode":"Always"}}'`, p.Name)})
			case vx == calico.ModeCrossSubnet:
				out = append(out, rule.Finding{Object: rule.PoolKey(p), Field: "spec.vxlanMode",
					Message:     fmt.Sprintf("IP pool %s (%s) has vxlanMode CrossSubnet; Calico for Windows supports only VXLAN Always", p.Name, p.Spec.CIDR),
					Remediation: fmt.Sprintf(`kubectl patch ippool %s --type=merge -p '{"spec":{"vxlanMode":"Always"}}'`, p.Name)})
			}
		}
		return out
	},
}

var ruleBGPWithVXLAN = rule.Rule{
	ID: "HYB002", Name: "bgp-with-vxlan", Severity: rule.Error, Blocker: true,
	Title:    "BGP is enabled together with VXLAN",
	Examines: []string{"Installation.operator.tigera.io", "IPPool.projectcalico.org"},
	Needs:    rule.NeedInstallation,
	Description: `Calico for Windows with VXLAN requires BGP to be disabled. calicoNetwork.bgp is a setting of
the whole cluster and the encapsulation belongs to the pool all nodes share, so a cluster cannot
keep BIRD for its Linux nodes and VXLAN for Windows ones: with BGP on, the operator renders
calico-node-windows with the windows-bgp backend (confd driving RRAS) instead of VXLAN. On
Linux, Felix already programs the routes to VXLAN blocks; BIRD is not needed for them.`,
	Remediation: `kubectl patch installation default --type=merge -p '{"spec":{"calicoNetwork":{"bgp":"Disabled"}}}'`,
	References:  []rule.Reference{rule.RefCalicoWindows, rule.RefMigration, rule.CalicoRequirements, rule.CalicoLimitations},
	Check: func(x *rule.Context) []rule.Finding {
		inst := x.Cluster.Installation
		if inst == nil {
			return nil
		}
		on, explicit := rule.BgpState(inst)
		pools := rule.VXLANPools(x)
		if !on || len(pools) == 0 {
			return nil
		}
		state := "Enabled"
		if !explicit {
			state = "not set (the operator defaults it to Enabled)"
		}
		return []rule.Finding{{
			Object: rule.InstKey(inst), Field: "spec.calicoNetwork.bgp",
			Message: fmt.Sprintf("bgp is %s while IP pool %s uses VXLAN; Calico for Windows with VXLAN needs BGP disabled in the whole cluster",
				state, strings.Join(pools, ", ")),
			Remediation: fmt.Sprintf(`kubectl patch installation %s --type=merge -p '{"spec":{"calicoNetwork":{"bgp":"Disabled"}}}'`, inst.Name),
		}}
	},
}

var ruleStrictAffinity = rule.Rule{
	ID: "HYB003", Name: "strict-affinity", Severity: rule.Error, Blocker: true,
	Title:    "IPAM strictAffinity is false",
	Examines: []string{"IPAMConfiguration.projectcalico.org", "Installation.operator.tigera.io", "IPPool.projectcalico.org"},
	Needs:    []rule.Need{rule.NeedCalico},
	Description: `A Windows node holds exactly one block and takes the whole block as local to its HNS network:
an address another node borrowed from it is unreachable. Calico IPAM on Windows therefore
refuses to assign addresses while strictAffinity is false ("global strict affinity should not be
false for Windows node"), and the operator's calico-windows status degrades ("Invalid
StrictAffinity, it must be set to 'true' when using Calico IPAM on Windows"). Set it before the
first Windows node joins; it only stops future borrowing.`,
	Remediation: `kubectl patch ipamconfigurations default --type merge -p '{"spec":{"strictAffinity":true}}'`,
	References:  []rule.Reference{rule.RefStrictAffinity, rule.RefMigration, rule.RefCalicoOperator, rule.CalicoIPAMConfig, rule.OperatorWindows, rule.CalicoIssue4404},
	Check: func(x *rule.Context) []rule.Finding {
		c := x.Cluster
		if !rule.UsesCalico(x) || (c.Installation != nil && !rule.CalicoIPAM(c.Installation)) {
			return nil
		}
		if c.IPAMConfig != nil && c.IPAMConfig.Spec.StrictAffinity {
			return nil
		}
		name := "default"
		state := "false"
		if c.IPAMConfig != nil {
			name = c.IPAMConfig.Name
		} else {
			state = "not set (Calico creates IPAMConfiguration default with strictAffinity false)"
		}
		return []rule.Finding{{
			Object: model.Key{Group: calico.Group, Kind: "IPAMConfiguration", Name: name}, Field: "spec.strictAffinity",
			Message: fmt.Sprintf("strictAffinity is %s; Calico IPAM on Windows refuses to assign addresses until it is true, and Linux nodes may borrow addresses from a Windows node's block", state),
		}}
	},
}

var ruleWindowsDataplane = rule.Rule{
	ID: "HYB004", Name: "windows-dataplane", Severity: rule.Error, Blocker: true,
	Title:    "Installation has no Windows dataplane",
	Examines: []string{"Installation.operator.tigera.io"},
	Needs:    rule.NeedInstallation,
	Description: `Until calicoNetwork.windowsDataplane is HNS the operator does not serve Windows nodes: it
renders no calico-node-windows DaemonSet, so a Windows node never gets a CNI configuration and
stays NotReady ("cni plugin not initialized"). The field changes nothing on Linux nodes.`,
	Remediation: `kubectl patch installation default --type=merge -p '{"spec":{"calicoNetwork":{"windowsDataplane":"HNS"}}}'`,
	References:  []rule.Reference{rule.RefOperatorInstall, rule.RefMigration, rule.RefWindowsTroubleshoot, rule.CalicoOperator, rule.CalicoInstallAPI},
	Check: func(x *rule.Context) []rule.Finding {
		inst := x.Cluster.Installation
		if inst == nil {
			return nil
		}
		cn := rule.CalicoNetwork(inst)
		if cn.WindowsDataplane != nil && *cn.WindowsDataplane == calicooperator.WindowsHNS {
			return nil
		}
		state := "not set"
		if cn.WindowsDataplane != nil {
			state = *cn.WindowsDataplane
			if state == calicooperator.WindowsDisabled {
				state = "Disabled (also the operator's default when the field is absent)"
			}
		}
		return []rule.Finding{{
			Object: rule.InstKey(inst), Field: "spec.calicoNetwork.windowsDataplane",
			Message:     fmt.Sprintf("windowsDataplane is %s; the operator renders no calico-node-windows DaemonSet and Windows nodes stay NotReady", state),
			Remediation: fmt.Sprintf(`kubectl patch installation %s --type=merge -p '{"spec":{"calicoNetwork":{"windowsDataplane":"HNS"}}}'`, inst.Name),
		}}
	},
}

func serviceCIDRsPatch(inst *operator.Installation, subnets []string) string {
	if len(subnets) == 0 {
		subnets = []string{"10.96.0.0/12"}
	}
	return fmt.Sprintf(`kubectl patch installation %s --type=merge -p '{"spec":{"serviceCIDRs":["%s"]}}'`, inst.Name, strings.Join(subnets, `","`))
}

var ruleServiceCIDRsMissing = rule.Rule{
	ID: "HYB005", Name: "service-cidrs-missing", Severity: rule.Error, Blocker: true,
	Title:    "Installation has no serviceCIDRs",
	Examines: []string{"Installation.operator.tigera.io", "ClusterConfiguration.kubeadm.k8s.io"},
	Needs:    rule.NeedInstallation,
	Description: `Calico for Windows cannot learn the service network from the API, yet the Windows CNI plugin
needs it: it is an exception of the OutBoundNAT policy on every pod endpoint, so that traffic to
Services leaves with the pod's address. With Calico CNI and windowsDataplane set the operator
refuses the Installation without it ("installation spec.ServiceCIDRs must be provided when using
Calico CNI on Windows").`,
	Remediation: `kubectl patch installation default --type=merge -p '{"spec":{"serviceCIDRs":["10.96.0.0/12"]}}'`,
	References:  []rule.Reference{rule.RefOperatorInstall, rule.RefMigration, rule.RefCalicoOperator, rule.OperatorValidation, rule.CalicoInstallAPI},
	Check: func(x *rule.Context) []rule.Finding {
		inst := x.Cluster.Installation
		if inst == nil || !rule.CalicoCNI(inst) || len(inst.Spec.ServiceCIDRs) > 0 {
			return nil
		}
		subnets := rule.ServiceSubnets(x.Cluster)
		msg := "spec.serviceCIDRs is empty; the Windows CNI plugin builds its OutBoundNAT exceptions from it and the operator refuses a Windows-enabled Installation without it"
		if len(subnets) > 0 {
			msg += fmt.Sprintf(" (kubeadm's serviceSubnet is %s)", strings.Join(subnets, ","))
		}
		return []rule.Finding{{Object: rule.InstKey(inst), Field: "spec.serviceCIDRs", Message: msg, Remediation: serviceCIDRsPatch(inst, subnets)}}
	},
}

var ruleServiceCIDRsMismatch = rule.Rule{
	ID: "HYB006", Name: "service-cidrs-mismatch", Severity: rule.Error, Blocker: true,
	Title:    "Installation serviceCIDRs differ from kubeadm's serviceSubnet",
	Examines: []string{"Installation.operator.tigera.io", "ClusterConfiguration.kubeadm.k8s.io", "InitConfiguration.kubeadm.k8s.io"},
	Needs:    []rule.Need{{rule.KindInstallation}, {rule.KindKubeadmCC, rule.KindKubeadmInit}},
	Description: `The Windows CNI plugin excludes spec.serviceCIDRs from OutBoundNAT. If they do not cover the
service network kube-apiserver allocates from (kubeadm's networking.serviceSubnet), traffic from
Windows pods to Services is source-NATed to the node's address, and policies that select the
client pod no longer match it.`,
	Remediation: `kubectl patch installation default --type=merge -p '{"spec":{"serviceCIDRs":["<kubeadm networking.serviceSubnet>"]}}'`,
	References:  []rule.Reference{rule.RefOperatorInstall, rule.RefCalicoOperator, rule.CalicoInstallAPI},
	Check: func(x *rule.Context) []rule.Finding {
		inst := x.Cluster.Installation
		subnets := rule.ServiceSubnets(x.Cluster)
		if inst == nil || len(inst.Spec.ServiceCIDRs) == 0 || len(subnets) == 0 {
			return nil
		}
		var missing []string
		for _, s := range subnets {
			found := false
			for _, have := range inst.Spec.ServiceCIDRs {
				if samePrefix(s, have) {
					found = true
				}
			}
			if !found {
				missing = append(missing, s)
			}
		}
		if len(missing) == 0 {
			return nil
		}
		return []rule.Finding{{
			Object: rule.InstKey(inst), Field: "spec.serviceCIDRs",
			Message: fmt.Sprintf("serviceCIDRs %s do not include kubeadm's serviceSubnet %s; Windows pods' traffic to Services would be source-NATed",
				strings.Join(inst.Spec.ServiceCIDRs, ","), strings.Join(missing, ",")),
			Remediation: serviceCIDRsPatch(inst, subnets),
		}}
	},
}

func servicesEndpointKey() model.Key {
	return model.Key{Kind: "ConfigMap", Namespace: calicooperator.OperatorNamespace, Name: calicooperator.ServicesEndpointConfigMap}
}

func servicesEndpointManifest(c *model.Cluster) string {
	host, port := rule.APIEndpoint(c)
	if host == "" {
		host = "<API server name or address>"
	}
	return fmt.Sprintf(`kubectl apply -f - <<'EOF'
kind: ConfigMap
apiVersion: v1
metadata:
  name: kubernetes-services-endpoint
  namespace: tigera-operator
data:
  KUBERNETES_SERVICE_HOST: %s
  KUBERNETES_SERVICE_PORT: "%s"
EOF`, host, port)
}

var ruleServicesEndpointMissing = rule.Rule{
	ID: "HYB007", Name: "services-endpoint-missing", Severity: rule.Error, Blocker: true,
	Title:    "ConfigMap kubernetes-services-endpoint is missing or incomplete",
	Examines: []string{"ConfigMap", "Installation.operator.tigera.io"},
	Needs:    rule.NeedInstallation,
	Description: `On a Windows node calico-node-windows runs in the host network and starts before kube-proxy
has programmed any Service; a Windows host cannot reach ClusterIPs anyway. The operator therefore
hands Calico the API server's real address from tigera-operator/kubernetes-services-endpoint
(KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT). Without it the calico-windows status
degrades ("Error reading services endpoint configmap") and Calico on Windows fails with "dial tcp
10.96.0.1:443: i/o timeout". Creating it restarts calico-node on Linux nodes with the direct
address too.`,
	Remediation: `kubectl apply -f kubernetes-services-endpoint.yaml (namespace tigera-operator, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT of the API server)`,
	References:  []rule.Reference{rule.RefServicesEndpoint, rule.RefOperatorInstall, rule.RefMigration, rule.RefWindowsTroubleshoot, rule.CalicoOperator, rule.OperatorWindows},
	Check: func(x *rule.Context) []rule.Finding {
		c := x.Cluster
		if c.Installation == nil {
			return nil
		}
		cm := x.Idx().ConfigMaps[rule.NSName{NS: calicooperator.OperatorNamespace, Name: calicooperator.ServicesEndpointConfigMap}]
		if cm == nil {
			src := rule.InstKey(c.Installation)
			return []rule.Finding{{
				Object: servicesEndpointKey(), Source: &src,
				Message:     "ConfigMap tigera-operator/kubernetes-services-endpoint does not exist; calico-node-windows cannot reach the API server and the operator's calico-windows status degrades",
				Remediation: servicesEndpointManifest(c),
			}}
		}
		var out []rule.Finding
		host, port := rule.APIEndpoint(c)
		for _, k := range []struct{ key, value string }{{"KUBERNETES_SERVICE_HOST", host}, {"KUBERNETES_SERVICE_PORT", port}} {
			if strings.TrimSpace(cm.Data[k.key]) != "" {
				continue
			}
			v := k.value
			if v == "" {
				v = "<API server name or address>"
			}
			out = append(out, rule.Finding{
				Object: servicesEndpointKey(), Field: "data." + k.key,
				Message:     fmt.Sprintf("ConfigMap tigera-operator/kubernetes-services-endpoint has no %s; the operator needs host and port for the Windows DaemonSet", k.key),
				Remediation: fmt.Sprintf(`kubectl -n tigera-operator patch configmap kubernetes-services-endpoint --type merge -p '{"data":{"%s":"%s"}}'`, k.key, v),
			})
		}
		return out
	},
}

var ruleServicesEndpointInvalid = rule.Rule{
	ID: "HYB008", Name: "services-endpoint-invalid", Severity: rule.Error, Blocker: true,
	Title:    "kubernetes-services-endpoint does not point at the API server directly",
	Examines: []string{"ConfigMap", "ClusterConfiguration.kubeadm.k8s.io", "InitConfiguration.kubeadm.k8s.io", "Cluster.hybrid.kubectl-hybrid.io", "Installation.operator.tigera.io"},
	Needs:    rule.NeedInstallation,
	Description: `The ConfigMap exists to bypass Services: a ClusterIP (or the kubernetes.default name) as
KUBERNETES_SERVICE_HOST brings back exactly the dependency it removes, and a port other than the
API server's fails to connect. The host must be the API server's name or address as nodes reach
it (kubeadm's controlPlaneEndpoint), resolvable on the node network.`,
	Remediation: `kubectl -n tigera-operator patch configmap kubernetes-services-endpoint --type merge -p '{"data":{"KUBERNETES_SERVICE_HOST":"<controlPlaneEndpoint host>","KUBERNETES_SERVICE_PORT":"6443"}}'`,
	References:  []rule.Reference{rule.RefServicesEndpoint, rule.CalicoOperator},
	Check: func(x *rule.Context) []rule.Finding {
		c := x.Cluster
		cm := x.Idx().ConfigMaps[rule.NSName{NS: calicooperator.OperatorNamespace, Name: calicooperator.ServicesEndpointConfigMap}]
		if c.Installation == nil || cm == nil {
			return nil
		}
		host, port := strings.TrimSpace(cm.Data["KUBERNETES_SERVICE_HOST"]), strings.TrimSpace(cm.Data["KUBERNETES_SERVICE_PORT"])
		apiHost, apiPort := rule.APIEndpoint(c)
		fix := func(k, v string) string {
			return fmt.Sprintf(`kubectl -n tigera-operator patch configmap kubernetes-services-endpoint --type merge -p '{"data":{"%s":"%s"}}'`, k, v)
		}
		if apiHost == "" {
			apiHost = "<API server name or address>"
		}
		var out []rule.Finding
		if host != "" {
			if a, err := netip.ParseAddr(host); err == nil {
				for _, s := range rule.ServiceSubnets(c) {
					if p, err := netip.ParsePrefix(s); err == nil && p.Contains(a) {
						out = append(out, rule.Finding{Object: servicesEndpointKey(), Field: "data.KUBERNETES_SERVICE_HOST",
							Message:     fmt.Sprintf("KUBERNETES_SERVICE_HOST %s is a ClusterIP in the service network %s; a Windows host cannot reach it and Calico starts before kube-proxy", host, s),
							Remediation: fix("KUBERNETES_SERVICE_HOST", apiHost)})
					}
				}
			} else if host == "kubernetes" || strings.HasPrefix(host, "kubernetes.default") {
				out = append(out, rule.Finding{Object: servicesEndpointKey(), Field: "data.KUBERNETES_SERVICE_HOST",
					Message:     fmt.Sprintf("KUBERNETES_SERVICE_HOST %s is the kubernetes Service's name; Calico on Windows needs the API server's own name", host),
					Remediation: fix("KUBERNETES_SERVICE_HOST", apiHost)})
			} else if !resolvable(x, host) {
				out = append(out, rule.Finding{Object: servicesEndpointKey(), Field: "data.KUBERNETES_SERVICE_HOST", Severity: rule.Warning,
					Message:     fmt.Sprintf("KUBERNETES_SERVICE_HOST %s is not in the node network's DNS records of the Cluster kind nor a host's name", host),
					Remediation: fix("KUBERNETES_SERVICE_HOST", apiHost)})
			}
		}
		if port != "" && (c.Kubeadm.Cluster != nil || c.Kubeadm.Init != nil) && port != apiPort {
			out = append(out, rule.Finding{Object: servicesEndpointKey(), Field: "data.KUBERNETES_SERVICE_PORT",
				Message:     fmt.Sprintf("KUBERNETES_SERVICE_PORT %s is not the API server's port %s", port, apiPort),
				Remediation: fix("KUBERNETES_SERVICE_PORT", apiPort)})
		}
		return out
	},
}

// resolvable: the name is in the Cluster kind's DNS records or is a host's
// name or FQDN; true when the Cluster kind lists no DNS records at all.
func resolvable(x *rule.Context, name string) bool {
	c := x.Cluster
	if len(c.Network.DNS) == 0 {
		return true
	}
	name = strings.TrimSuffix(strings.ToLower(name), ".")
	for _, r := range c.Network.DNS {
		if strings.ToLower(r.Name) == name {
			return true
		}
	}
	for _, h := range c.Hosts {
		if strings.ToLower(h.Name) == name || strings.ToLower(h.FQDN) == name || h.Address == name {
			return true
		}
	}
	return false
}

// felixDefault is FelixConfiguration "default", observed or rendered.
func felixDefault(x *rule.Context) *calico.FelixConfiguration {
	for _, f := range x.Cluster.FelixConfigs {
		if f.Name == "default" {
			return f
		}
	}
	return nil
}

func felixKey() model.Key {
	return model.Key{Group: calico.Group, Kind: "FelixConfiguration", Name: "default"}
}

var ruleVXLANVNI = rule.Rule{
	ID: "HYB009", Name: "vxlan-vni", Severity: rule.Error, Blocker: true,
	Title:    "VXLAN VNI is below 4096",
	Examines: []string{"FelixConfiguration.projectcalico.org"},
	Description: `Windows overlay networks take the VXLAN network identifier as the subnet's VSID, and Calico's
Windows CNI refuses smaller ones ("Windows does not support VXLANVNI < 4096"). The default is
4096. Changing the VNI later needs each Windows node drained and its Calico HNS network deleted.`,
	Remediation: `kubectl patch felixconfiguration default --type=merge -p '{"spec":{"vxlanVNI":4096}}'`,
	References:  []rule.Reference{rule.RefCalicoWindows, rule.RefMigration, rule.CalicoFelixConfig, rule.CalicoLimitations},
	Check: func(x *rule.Context) []rule.Finding {
		fc := felixDefault(x)
		if fc == nil || fc.Spec.VXLANVNI == nil || *fc.Spec.VXLANVNI >= 4096 {
			return nil
		}
		return []rule.Finding{{Object: felixKey(), Field: "spec.vxlanVNI",
			Message: fmt.Sprintf("vxlanVNI is %d; Windows accepts only 4096 or more", *fc.Spec.VXLANVNI)}}
	},
}

var ruleVXLANPort = rule.Rule{
	ID: "HYB010", Name: "vxlan-port", Severity: rule.Error, Blocker: true,
	Title:    "VXLAN port is not 4789",
	Examines: []string{"FelixConfiguration.projectcalico.org"},
	Description: `UDP 4789 is the only VXLAN port Windows supports. Felix on Linux would send to another port,
where the Windows VFP never decapsulates.`,
	Remediation: `kubectl patch felixconfiguration default --type=merge -p '{"spec":{"vxlanPort":4789}}'`,
	References:  []rule.Reference{rule.RefCalicoWindows, rule.CalicoRequirements, rule.CalicoFelixConfig},
	Check: func(x *rule.Context) []rule.Finding {
		fc := felixDefault(x)
		if fc == nil || fc.Spec.VXLANPort == nil || *fc.Spec.VXLANPort == 4789 {
			return nil
		}
		return []rule.Finding{{Object: felixKey(), Field: "spec.vxlanPort",
			Message: fmt.Sprintf("vxlanPort is %d; Windows supports only UDP 4789", *fc.Spec.VXLANPort)}}
	},
}

var ruleIPv6 = rule.Rule{
	ID: "HYB011", Name: "ipv6-dual-stack", Severity: rule.Error, Blocker: true,
	Title:    "IPv6 or dual stack with Windows nodes",
	Examines: []string{"Installation.operator.tigera.io", "IPPool.projectcalico.org", "ClusterConfiguration.kubeadm.k8s.io"},
	Needs:    []rule.Need{{rule.KindInstallation, rule.KindIPPool, rule.KindKubeadmCC}},
	Description: `Calico for Windows supports IPv4 only, and kube-proxy refuses dual stack on overlay networks
("Winoverlay does not support dual-stack"). A cluster that will have Windows nodes must be
single-stack IPv4: no IPv6 pool, and IPv4-only pod and service subnets in kubeadm (which cannot
change after kubeadm init).`,
	Remediation: `Remove the IPv6 pool from the Installation (kubectl patch installation default --type=json -p '[{"op":"remove","path":"/spec/calicoNetwork/ipPools/<index>"}]'); kubeadm subnets need a new IPv4-only cluster`,
	References:  []rule.Reference{rule.RefCalicoWindows, rule.RefWindowsLimits, rule.CalicoLimitations, rule.WinkernelProxier},
	Check: func(x *rule.Context) []rule.Finding {
		c := x.Cluster
		var out []rule.Finding
		if inst := c.Installation; inst != nil {
			for i, p := range rule.CalicoNetwork(inst).IPPools {
				if rule.IsIPv6(p.CIDR) {
					out = append(out, rule.Finding{Object: rule.InstKey(inst), Field: fmt.Sprintf("spec.calicoNetwork.ipPools[%d].cidr", i),
						Message:     fmt.Sprintf("IP pool %s is IPv6 (%s); Calico for Windows supports IPv4 only", p.Name, p.CIDR),
						Remediation: fmt.Sprintf(`kubectl patch installation %s --type=json -p '[{"op":"remove","path":"/spec/calicoNetwork/ipPools/%d"}]'`, inst.Name, i)})
				}
			}
		}
		for _, p := range rule.UnmanagedPools(x) {
			if rule.IsIPv6(p.Spec.CIDR) && !p.Spec.Disabled {
				out = append(out, rule.Finding{Object: rule.PoolKey(p), Field: "spec.cidr",
					Message:     fmt.Sprintf("IP pool %s is IPv6 (%s); Calico for Windows supports IPv4 only", p.Name, p.Spec.CIDR),
					Remediation: fmt.Sprintf(`kubectl patch ippool %s --type=merge -p '{"spec":{"disabled":true}}'`, p.Name)})
			}
		}
		if cc := c.Kubeadm.Cluster; cc != nil {
			key := model.Key{Group: kubeadm.Group, Kind: "ClusterConfiguration", Name: cc.Name}
			for _, f := range []struct{ field, value string }{{"networking.podSubnet", cc.Networking.PodSubnet}, {"networking.serviceSubnet", cc.Networking.ServiceSubnet}} {
				if rule.IsIPv6(f.value) {
					out = append(out, rule.Finding{Object: key, Field: f.field,
						Message:     fmt.Sprintf("%s is %s (IPv6 or dual stack); Windows nodes need an IPv4-only cluster", f.field, f.value),
						Remediation: "Build the cluster for Windows nodes IPv4-only: kubeadm subnets cannot change after kubeadm init"})
				}
			}
		}
		return out
	},
}

var ruleLinuxOnlyFeatures = rule.Rule{
	ID: "HYB012", Name: "linux-only-dataplane-features", Severity: rule.Warning,
	Title:    "WireGuard or eBPF enabled in a cluster with Windows nodes",
	Examines: []string{"FelixConfiguration.projectcalico.org", "Installation.operator.tigera.io"},
	Needs:    []rule.Need{{rule.KindFelixConfig, rule.KindInstallation}},
	Description: `WireGuard encryption and the eBPF dataplane are Linux kernel features; Calico for Windows lists
both as not supported. Windows nodes do not take part: traffic to and from Windows pods is not
encrypted, and what the eBPF dataplane replaces on Linux (kube-proxy, iptables/nftables) still
has to exist for Windows nodes.`,
	Remediation: `kubectl patch felixconfiguration default --type=merge -p '{"spec":{"wireguardEnabled":false}}' (and linuxDataplane Nftables or Iptables in the Installation)`,
	References:  []rule.Reference{rule.RefCalicoWindows, rule.CalicoLimitations},
	Check: func(x *rule.Context) []rule.Finding {
		if !x.WindowsPlanned() {
			return nil
		}
		var out []rule.Finding
		if fc := felixDefault(x); fc != nil {
			if fc.Spec.WireguardEnabled != nil && *fc.Spec.WireguardEnabled {
				out = append(out, rule.Finding{Object: felixKey(), Field: "spec.wireguardEnabled",
					Message:     "wireguardEnabled is true; Windows nodes do not support WireGuard, so their traffic is not encrypted",
					Remediation: `kubectl patch felixconfiguration default --type=merge -p '{"spec":{"wireguardEnabled":false}}'`})
			}
			if fc.Spec.BPFEnabled != nil && *fc.Spec.BPFEnabled {
				out = append(out, rule.Finding{Object: felixKey(), Field: "spec.bpfEnabled",
					Message:     "bpfEnabled is true; the eBPF dataplane is Linux-only and Windows nodes still need kube-proxy",
					Remediation: `kubectl patch installation default --type=merge -p '{"spec":{"calicoNetwork":{"linuxDataplane":"Nftables"}}}'`})
			}
		}
		if inst := x.Cluster.Installation; inst != nil {
			if dp := rule.CalicoNetwork(inst).LinuxDataplane; dp != nil && *dp == calicooperator.DataplaneBPF {
				out = append(out, rule.Finding{Object: rule.InstKey(inst), Field: "spec.calicoNetwork.linuxDataplane",
					Message:     "linuxDataplane is BPF; the eBPF dataplane is Linux-only and Windows nodes still need kube-proxy",
					Remediation: fmt.Sprintf(`kubectl patch installation %s --type=merge -p '{"spec":{"calicoNetwork":{"linuxDataplane":"Nftables"}}}'`, inst.Name)})
			}
		}
		return out
	},
}

var ruleTigeraStatus = rule.Rule{
	ID: "HYB013", Name: "tigerastatus-degraded", Severity: rule.Error,
	Title:    "The Tigera operator reports a component Degraded",
	Examines: []string{"TigeraStatus.operator.tigera.io", "Installation.operator.tigera.io"},
	Needs:    []rule.Need{{rule.KindTigeraStatus}},
	Description: `The operator writes why it stopped into the component's TigeraStatus: an Installation it
refuses, a missing ConfigMap, strictAffinity, Typha that cannot scale. While a component is
Degraded its objects are not (re)rendered; calico-windows Degraded means no calico-node-windows.`,
	Remediation: `kubectl get tigerastatus; fix what the Degraded condition's message names`,
	References:  []rule.Reference{rule.RefCalicoOperator, rule.RefWindowsTroubleshoot, rule.OperatorWindows, rule.OperatorValidation},
	Check: func(x *rule.Context) []rule.Finding {
		var out []rule.Finding
		for _, ts := range x.Cluster.TigeraStatuses {
			for _, cond := range ts.Status.Conditions {
				if cond.Type != "Degraded" || cond.Status != "True" {
					continue
				}
				out = append(out, rule.Finding{
					Object: model.Key{Group: operator.Group, Kind: "TigeraStatus", Name: ts.Name}, Field: "status.conditions[Degraded]",
					Message:     fmt.Sprintf("%s is Degraded (%s): %s", ts.Name, cond.Reason, cond.Message),
					Remediation: fmt.Sprintf(`kubectl get tigerastatus %s -o jsonpath='{.status.conditions[?(@.type=="Degraded")].message}'; fix what it names`, ts.Name),
				})
			}
		}
		return out
	},
}

var ruleTypha = rule.Rule{
	ID: "HYB014", Name: "typha-linux-nodes", Severity: rule.Error,
	Title:    "Too few Linux nodes for the Typha replicas the operator wants",
	Examines: []string{"Node", "Deployment.apps", "Installation.operator.tigera.io"},
	Needs:    rule.NeedInstallation,
	Description: `The operator scales Typha by the number of schedulable nodes, Windows nodes included (their
Felix connects to Typha too), but Typha runs only on Linux nodes, one replica per node. When
there are fewer schedulable Linux nodes than replicas, the autoscaler fails ("not enough linux
nodes to schedule typha pods on") and the calico status degrades. Calico for Windows needs at
least one Linux worker; two keep Typha available while one is drained.`,
	Remediation: `Join more Linux workers (or uncordon them): kubeadm join ... on a Linux host`,
	References:  []rule.Reference{rule.RefServingCerts, rule.RefOperatorInstall, rule.OperatorAutoscale, rule.CalicoLimitations},
	Check: func(x *rule.Context) []rule.Finding {
		if x.Cluster.Installation == nil {
			return nil
		}
		if _, err := calicooperator.TyphaReplicas(x.Cluster.Nodes); err != nil {
			src := rule.InstKey(x.Cluster.Installation)
			return []rule.Finding{{
				Object: model.Key{Group: "apps", Kind: "Deployment", Namespace: "calico-system", Name: calicooperator.TyphaDeployment}, Field: "spec.replicas", Source: &src,
				Message: fmt.Sprintf("the Typha autoscaler fails: %v (Typha runs only on Linux nodes; Windows nodes count towards the replicas)", err),
			}}
		}
		return nil
	},
}

func podOwnedBy(p *corev1.Pod, kind, name string) bool {
	k, n := rule.ControllerOf(p)
	return k == kind && n == name
}

var ruleCalicoNodeWindows = rule.Rule{
	ID: "HYB015", Name: "calico-node-windows-missing", Severity: rule.Error,
	Title:    "No calico-node-windows pod on a Windows node",
	Examines: []string{"Node", "DaemonSet.apps", "TigeraStatus.operator.tigera.io", "Installation.operator.tigera.io"},
	Needs:    rule.NeedInstallation,
	Description: `calico-node-windows (HostProcess containers felix and node, init containers uninstall-calico
and install-cni) creates the Calico HNS network and writes the CNI configuration. Without its pod
a Windows node stays NotReady ("cni plugin not initialized"), kube-proxy-windows waits for the
Calico network forever, and nothing else starts there.`,
	Remediation: `Set windowsDataplane: HNS in the Installation and clear what kubectl get tigerastatus calico-windows reports`,
	References:  []rule.Reference{rule.RefWindowsVersions, rule.RefWindowsTroubleshoot, rule.CalicoOperator},
	Check: func(x *rule.Context) []rule.Finding {
		c := x.Cluster
		if c.Installation == nil {
			return nil
		}
		ds := x.Idx().DaemonSets[rule.NSName{NS: "calico-system", Name: calicooperator.WindowsNodeDaemonSet}]
		why := "DaemonSet calico-system/calico-node-windows does not select it"
		fix := "kubectl -n calico-system get ds calico-node-windows -o yaml; check its nodeSelector and tolerations against the node"
		if ds == nil {
			why = "the operator renders no DaemonSet calico-system/calico-node-windows"
			fix = fmt.Sprintf(`kubectl patch installation %s --type=merge -p '{"spec":{"calicoNetwork":{"windowsDataplane":"HNS"}}}'`, c.Installation.Name)
			if cn := rule.CalicoNetwork(c.Installation); cn.WindowsDataplane != nil && *cn.WindowsDataplane == calicooperator.WindowsHNS {
				fix = "kubectl get tigerastatus calico-windows; fix what its Degraded message names"
				for _, ts := range c.TigeraStatuses {
					if ts.Name != calicooperator.StatusCalicoWindows {
						continue
					}
					for _, cond := range ts.Status.Conditions {
						if cond.Type == "Degraded" && cond.Status == "True" {
							why += ": calico-windows is Degraded: " + cond.Message
						}
					}
				}
			} else {
				why += " (windowsDataplane is not HNS)"
			}
		}
		var out []rule.Finding
		for _, n := range x.WindowsNodes() {
			found := false
			for _, p := range x.Idx().PodsByNode[n.Name] {
				if p.Namespace == "calico-system" && podOwnedBy(p, "DaemonSet", calicooperator.WindowsNodeDaemonSet) {
					found = true
					break
				}
			}
			if !found {
				out = append(out, rule.Finding{Object: model.Key{Kind: "Node", Name: n.Name},
					Message:     fmt.Sprintf("no calico-node-windows pod runs on %s: %s; the node stays NotReady", n.Name, why),
					Remediation: fix})
			}
		}
		return out
	},
}

// calicoWindowsBuilds is Calico for Windows' requirements page: Windows
// Server 1809 (build 17763.1432 or later) and 2022 (20348.169 or later).
var calicoWindowsBuilds = map[string]int{"10.0.17763": 1432, "10.0.20348": 169}

// seedVerifiedBuild: Windows Server 2025 is not on Calico's list, but seed
// 000 runs Calico v3.33.0 on 10.0.26100.33438; the rule accepts that pair
// (Calico v3.33 or later) and states the caveat in its description.
const (
	seedVerifiedBuild  = "10.0.26100"
	seedVerifiedCalico = "v3.33"
)

// calicoAtLeast compares "v3.33.0" style versions on major.minor.
func calicoAtLeast(have, want string) bool {
	parse := func(v string) (int, int, bool) {
		parts := strings.Split(strings.TrimPrefix(v, "v"), ".")
		if len(parts) < 2 {
			return 0, 0, false
		}
		a, err1 := strconv.Atoi(parts[0])
		b, err2 := strconv.Atoi(parts[1])
		return a, b, err1 == nil && err2 == nil
	}
	ha, hb, ok1 := parse(have)
	wa, wb, ok2 := parse(want)
	if !ok1 || !ok2 {
		return false
	}
	return ha > wa || (ha == wa && hb >= wb)
}

var ruleWindowsVersion = rule.Rule{
	ID: "HYB016", Name: "windows-version-unsupported", Severity: rule.Warning,
	Title:    "Windows Server build outside Calico for Windows' supported list",
	Examines: []string{"Node", "Installation.operator.tigera.io", "IPAMConfiguration.projectcalico.org", "IPPool.projectcalico.org"},
	Needs:    []rule.Need{rule.NeedCalico, {rule.KindNode}},
	Description: `Calico for Windows' requirements list Windows Server 1809/2019 (build 17763.1432 or later) and
2022 (20348.169 or later); VXLAN needs 17763 or later. Windows Server 2025 (26100) is not on the
list although Kubernetes supports it: it runs with Calico 3.33.0 in practice, but Calico does not
formally confirm the pair, so check the release notes before every Calico upgrade, or keep
Windows nodes on Windows Server 2022 until 2025 is listed. The rule accepts 26100 with Calico
3.33 or later (a pair seen working) and flags every other build, and 17763/20348 below the
listed update revisions.`,
	Remediation: `Install the listed cumulative update (sconfig, "Install updates"), or run Windows nodes on Windows Server 2022 (10.0.20348)`,
	References:  []rule.Reference{rule.RefWindowsVersions, rule.RefCalicoWindows, rule.CalicoRequirements},
	Check: func(x *rule.Context) []rule.Finding {
		c := x.Cluster
		if !rule.UsesCalico(x) {
			return nil
		}
		calicoVersion := calicooperator.CalicoVersion
		if c.Installation != nil && c.Installation.Status.CalicoVersion != "" {
			calicoVersion = c.Installation.Status.CalicoVersion
		}
		var out []rule.Finding
		for _, n := range x.WindowsNodes() {
			build, rev := rule.WindowsVersion(n)
			minRev, listed := calicoWindowsBuilds[build]
			var msg string
			switch {
			case build == "":
				continue
			case listed && rev >= 0 && rev < minRev:
				msg = fmt.Sprintf("%s runs Windows %s.%d, older than the %s.%d Calico for Windows requires", n.Name, build, rev, build, minRev)
			case listed:
				continue
			case build == seedVerifiedBuild && calicoAtLeast(calicoVersion, seedVerifiedCalico):
				continue
			default:
				msg = fmt.Sprintf("%s runs Windows build %s, which Calico for Windows (%s) does not list (1809/2019: 10.0.17763.1432 or later; 2022: 10.0.20348.169 or later)", n.Name, build, calicoVersion)
			}
			out = append(out, rule.Finding{Object: model.Key{Kind: "Node", Name: n.Name}, Field: "status.nodeInfo.kernelVersion", Message: msg})
		}
		return out
	},
}
