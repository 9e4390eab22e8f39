package operator

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	opapi "github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
)

// renderLab renders the lab with strictAffinity set and a Windows node,
// after edit.
func renderLab(t *testing.T, edit func(*Inputs)) Output {
	t.Helper()
	in := labInputs(t)
	in.IPAMConfiguration = ipamConfig(true)
	in.Nodes = labNodes(true)
	if edit != nil {
		edit(&in)
	}
	return Render(in)
}

func container(t *testing.T, out Output, ds, name string) corev1.Container {
	t.Helper()
	d := daemonSetNamed(out, ds)
	if d == nil {
		t.Fatalf("no DaemonSet %s", ds)
	}
	for _, c := range append(append([]corev1.Container(nil), d.Spec.Template.Spec.InitContainers...), d.Spec.Template.Spec.Containers...) {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("DaemonSet %s has no container %s", ds, name)
	return corev1.Container{}
}

// env returns the container's plain values; a missing name is "<unset>".
func env(c corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
				return "configMap:" + e.ValueFrom.ConfigMapKeyRef.Name + "/" + e.ValueFrom.ConfigMapKeyRef.Key
			}
			return e.Value
		}
	}
	return "<unset>"
}

func execCmd(p *corev1.Probe) string {
	if p == nil || p.Exec == nil {
		return "<none>"
	}
	return strings.Join(p.Exec.Command, " ")
}

// Follows pkg/render/node.go nodeProbes and nodeLifecycle, and
// pkg/render/windows.go windowsLivenessReadinessProbes and
// windowsLifecycle.
func TestCalicoNodeProbes(t *testing.T) {
	bgp := func(in *Inputs) {
		in.Installation.Spec.CalicoNetwork.BGP = strp(BGPEnabled)
		in.Installation.Spec.CalicoNetwork.WindowsDataplane = nil
	}
	cases := []struct {
		name      string
		edit      func(*Inputs)
		readiness string
	}{
		{"without BGP calico-node is ready when Felix is", nil, "/usr/bin/calico component node health --felix-ready"},
		{"with BGP calico-node is ready when BIRD and Felix are", bgp, "/usr/bin/calico component node health --bird-ready --felix-ready"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := container(t, renderLab(t, c.edit), NodeDaemonSet, "calico-node")
			if got := execCmd(n.ReadinessProbe); got != c.readiness || n.ReadinessProbe.PeriodSeconds != 10 || n.ReadinessProbe.TimeoutSeconds != 5 {
				t.Errorf("readiness %q %+v", got, n.ReadinessProbe)
			}
			if got := execCmd(n.StartupProbe); got != c.readiness || n.StartupProbe.PeriodSeconds != 2 || n.StartupProbe.FailureThreshold != 150 {
				t.Errorf("startup %q %+v", got, n.StartupProbe)
			}
			lp := n.LivenessProbe
			if lp == nil || lp.HTTPGet == nil || lp.HTTPGet.Host != "localhost" || lp.HTTPGet.Path != "/liveness" || lp.HTTPGet.Port.IntValue() != 9099 || lp.TimeoutSeconds != 10 {
				t.Errorf("liveness %+v", lp)
			}
			if n.Lifecycle == nil || n.Lifecycle.PreStop == nil || strings.Join(n.Lifecycle.PreStop.Exec.Command, " ") != "/usr/bin/calico component node shutdown" {
				t.Errorf("preStop %+v", n.Lifecycle)
			}
		})
	}
	t.Run("a healthPort in the FelixConfiguration moves the liveness probe and FELIX_HEALTHPORT", func(t *testing.T) {
		port := 9199
		out := renderLab(t, func(in *Inputs) {
			in.FelixConfiguration = &calico.FelixConfiguration{Spec: calico.FelixConfigurationSpec{HealthPort: &port}}
		})
		n := container(t, out, NodeDaemonSet, "calico-node")
		if n.LivenessProbe.HTTPGet.Port.IntValue() != 9199 || env(n, "FELIX_HEALTHPORT") != "9199" {
			t.Errorf("liveness %+v FELIX_HEALTHPORT %s", n.LivenessProbe.HTTPGet, env(n, "FELIX_HEALTHPORT"))
		}
	})
	t.Run("the Windows felix container has exec probes and a preStop hook; node has none", func(t *testing.T) {
		out := renderLab(t, nil)
		f := container(t, out, WindowsNodeDaemonSet, "felix")
		exe := "$env:CONTAINER_SANDBOX_MOUNT_POINT/CalicoWindows/calico.exe"
		if got := execCmd(f.LivenessProbe); got != exe+" component node health --felix-live" || f.LivenessProbe.InitialDelaySeconds != 10 || f.LivenessProbe.FailureThreshold != 6 {
			t.Errorf("liveness %q %+v", got, f.LivenessProbe)
		}
		if got := execCmd(f.ReadinessProbe); got != exe+" component node health --felix-ready" {
			t.Errorf("readiness %q", got)
		}
		if f.Lifecycle == nil || strings.Join(f.Lifecycle.PreStop.Exec.Command, " ") != exe+" component node shutdown" {
			t.Errorf("preStop %+v", f.Lifecycle)
		}
		if n := container(t, out, WindowsNodeDaemonSet, "node"); n.LivenessProbe != nil || n.ReadinessProbe != nil {
			t.Errorf("node container has probes")
		}
	})
}

// Follows pkg/controller/k8sapi/k8s-endpoint.go (the operator's own
// environment), utils.go PopulateK8sServiceEndPoint and
// windows_controller.go Reconcile.
func TestServicesEndpointFallback(t *testing.T) {
	t.Run("without the ConfigMap calico-node gets the kubernetes Service address and calico-node-windows is not rendered", func(t *testing.T) {
		out := renderLab(t, func(in *Inputs) { in.ServicesEndpoint = nil })
		n := container(t, out, NodeDaemonSet, "calico-node")
		if env(n, "KUBERNETES_SERVICE_HOST") != "10.96.0.1" || env(n, "KUBERNETES_SERVICE_PORT") != "443" {
			t.Errorf("host %s port %s", env(n, "KUBERNETES_SERVICE_HOST"), env(n, "KUBERNETES_SERVICE_PORT"))
		}
		if daemonSetNamed(out, WindowsNodeDaemonSet) != nil {
			t.Error("calico-node-windows rendered")
		}
	})
	t.Run("with the ConfigMap both DaemonSets get its address", func(t *testing.T) {
		out := renderLab(t, nil)
		for _, c := range []corev1.Container{container(t, out, NodeDaemonSet, "calico-node"), container(t, out, WindowsNodeDaemonSet, "felix")} {
			if env(c, "KUBERNETES_SERVICE_HOST") != "k8s-lab-api.example.com" || env(c, "KUBERNETES_SERVICE_PORT") != "6443" {
				t.Errorf("%s: host %s port %s", c.Name, env(c, "KUBERNETES_SERVICE_HOST"), env(c, "KUBERNETES_SERVICE_PORT"))
			}
		}
	})
}

// Follows pkg/render/windows.go cniEnvVars, windowsCNIConfigMap,
// createCalicoPluginConfig and windowsEnvVars.
func TestWindowsRendering(t *testing.T) {
	out := renderLab(t, func(in *Inputs) { in.Installation.Spec.ServiceCIDRs = []string{"10.96.0.0/12", "fd00:96::/108"} })
	cni := container(t, out, WindowsNodeDaemonSet, "install-cni")
	felix := container(t, out, WindowsNodeDaemonSet, "felix")
	envCases := []struct {
		name      string
		c         corev1.Container
		key, want string
	}{
		{"install-cni writes to the host's CNI config directory", cni, "CNI_NET_DIR", "/etc/cni/net.d"},
		{"install-cni reads the network config from cni-config-windows", cni, "CNI_NETWORK_CONFIG", "configMap:cni-config-windows/config"},
		{"install-cni is told the service CIDRs", cni, "KUBERNETES_SERVICE_CIDRS", "10.96.0.0/12,fd00:96::/108"},
		{"felix manages the CNI credentials with Calico CNI", felix, "CALICO_MANAGE_CNI", "true"},
		{"felix autodetects the IPv4 address first-found", felix, "IP_AUTODETECTION_METHOD", "first-found"},
		{"felix has no IPv6 address without an IPv6 pool", felix, "IP6", "none"},
		{"felix has IPv6 support off without an IPv6 pool", felix, "FELIX_IPV6SUPPORT", "false"},
		{"felix has no VXLAN MTU without an Installation MTU", felix, "FELIX_VXLANMTU", "<unset>"},
	}
	for _, c := range envCases {
		t.Run(c.name, func(t *testing.T) {
			if got := env(c.c, c.key); got != c.want {
				t.Errorf("%s=%s, want %s", c.key, got, c.want)
			}
		})
	}
	t.Run("a c: drive prefix is dropped from CNI_NET_DIR", func(t *testing.T) {
		o := renderLab(t, func(in *Inputs) {
			in.Installation.Spec.WindowsNodes = &opapi.WindowsNodeSpec{CNIConfigDir: `c:/k/cni/config`}
		})
		if got := env(container(t, o, WindowsNodeDaemonSet, "install-cni"), "CNI_NET_DIR"); got != "/k/cni/config" {
			t.Errorf("CNI_NET_DIR=%s", got)
		}
	})
	t.Run("cni-config-windows uses a single network and excepts the service CIDRs from OutBoundNAT", func(t *testing.T) {
		cm := configMapNamed(out, WindowsCNIConfigMap)
		if cm == nil || cm.Namespace != CalicoNamespace {
			t.Fatalf("ConfigMaps %v", out.ConfigMaps)
		}
		var conf struct {
			CNIVersion string `json:"cniVersion"`
			Plugins    []struct {
				SingleNetwork bool   `json:"windows_use_single_network"`
				Mode          string `json:"mode"`
				VNI           int    `json:"vxlan_vni"`
				MTU           int    `json:"mtu"`
				Kubernetes    struct {
					Kubeconfig string `json:"kubeconfig"`
					APIRoot    string `json:"k8s_api_root"`
				} `json:"kubernetes"`
				DNS struct {
					Nameservers []string `json:"Nameservers"`
				} `json:"DNS"`
				Policies []struct {
					Value struct {
						Type          string   `json:"Type"`
						ExceptionList []string `json:"ExceptionList"`
						Destination   string   `json:"DestinationPrefix"`
					} `json:"Value"`
				} `json:"policies"`
			} `json:"plugins"`
		}
		if err := json.Unmarshal([]byte(cm.Data["config"]), &conf); err != nil {
			t.Fatal(err)
		}
		p := conf.Plugins[0]
		if conf.CNIVersion != "1.0.0" || !p.SingleNetwork || p.Mode != "vxlan" || p.VNI != 4096 || p.MTU != 0 {
			t.Errorf("%+v", conf)
		}
		if p.Kubernetes.Kubeconfig != "c:/etc/cni/net.d/calico-kubeconfig" || p.Kubernetes.APIRoot != "https://k8s-lab-api.example.com:6443" {
			t.Errorf("kubernetes %+v", p.Kubernetes)
		}
		if !slices.Equal(p.DNS.Nameservers, []string{"10.96.0.10"}) {
			t.Errorf("DNS %v", p.DNS)
		}
		if len(p.Policies) != 3 || p.Policies[0].Value.Type != "OutBoundNAT" || !slices.Equal(p.Policies[0].Value.ExceptionList, []string{"10.96.0.0/12", "fd00:96::/108"}) ||
			p.Policies[1].Value.Type != "SDNROUTE" || p.Policies[1].Value.Destination != "10.96.0.0/12" {
			t.Errorf("policies %+v", p.Policies)
		}
	})
	t.Run("the Installation MTU reaches cni-config-windows", func(t *testing.T) {
		o := renderLab(t, func(in *Inputs) { in.Installation.Spec.CalicoNetwork.MTU = int32pp(1400) })
		for _, name := range []string{WindowsCNIConfigMap, LinuxCNIConfigMap} {
			if c := configMapNamed(o, name).Data["config"]; !strings.Contains(c, `"mtu":1400`) {
				t.Errorf("%s: %s", name, c)
			}
		}
	})
}

func int32pp(v int32) *int32 { return &v }

func configMapNamed(out Output, name string) *corev1.ConfigMap {
	for _, c := range out.ConfigMaps {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Follows pkg/render/node.go nodeCNIConfigMap, createCalicoPluginConfig,
// getCalicoIPAM and cniEnvvars.
func TestLinuxCNIConfig(t *testing.T) {
	out := renderLab(t, nil)
	cm := configMapNamed(out, LinuxCNIConfigMap)
	if cm == nil {
		t.Fatal("no cni-config")
	}
	var conf struct {
		Name    string           `json:"name"`
		Plugins []map[string]any `json:"plugins"`
	}
	if err := json.Unmarshal([]byte(cm.Data["config"]), &conf); err != nil {
		t.Fatal(err)
	}
	if conf.Name != "k8s-pod-network" || len(conf.Plugins) != 2 || conf.Plugins[1]["type"] != "portmap" {
		t.Fatalf("%+v", conf)
	}
	ipam, _ := conf.Plugins[0]["ipam"].(map[string]any)
	if ipam["type"] != "calico-ipam" || ipam["assign_ipv4"] != "true" || ipam["assign_ipv6"] != "false" {
		t.Errorf("ipam %v", ipam)
	}
	if conf.Plugins[0]["calico_api_group"] != "projectcalico.org/v3" {
		t.Errorf("calico_api_group %v", conf.Plugins[0]["calico_api_group"])
	}
	cni := container(t, out, NodeDaemonSet, "install-cni")
	if got := env(cni, "CNI_NETWORK_CONFIG"); got != "configMap:cni-config/config" {
		t.Errorf("CNI_NETWORK_CONFIG=%s", got)
	}
	if got := env(cni, "KUBERNETES_NODE_NAME"); got != "<unset>" {
		t.Errorf("KUBERNETES_NODE_NAME=%s", got)
	}
}

// Follows pkg/render/node.go nodeEnvVars and windows.go windowsEnvVars
// (getMTU).
func TestMTUEnv(t *testing.T) {
	cases := []struct {
		name                   string
		bgp                    bool
		linuxIPIP, windowsIPIP string
	}{
		{"an MTU without BGP sets the VXLAN and WireGuard MTUs on both OSes", false, "<unset>", "<unset>"},
		{"an MTU with BGP also sets the IPIP MTU on Linux", true, "1400", "<unset>"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := renderLab(t, func(in *Inputs) {
				in.Installation.Spec.CalicoNetwork.MTU = int32pp(1400)
				if c.bgp {
					in.Installation.Spec.CalicoNetwork.BGP = strp(BGPEnabled)
					in.Installation.Spec.CalicoNetwork.WindowsDataplane = nil
				}
			})
			n := container(t, out, NodeDaemonSet, "calico-node")
			for _, k := range []string{"FELIX_VXLANMTU", "FELIX_WIREGUARDMTU"} {
				if env(n, k) != "1400" {
					t.Errorf("linux %s=%s", k, env(n, k))
				}
			}
			if env(n, "FELIX_IPINIPMTU") != c.linuxIPIP {
				t.Errorf("linux FELIX_IPINIPMTU=%s", env(n, "FELIX_IPINIPMTU"))
			}
			if c.bgp {
				return // Windows is off with BGP in this case
			}
			f := container(t, out, WindowsNodeDaemonSet, "felix")
			for _, k := range []string{"FELIX_VXLANMTU", "FELIX_WIREGUARDMTU"} {
				if env(f, k) != "1400" {
					t.Errorf("windows %s=%s", k, env(f, k))
				}
			}
			if env(f, "FELIX_IPINIPMTU") != c.windowsIPIP {
				t.Errorf("windows FELIX_IPINIPMTU=%s", env(f, "FELIX_IPINIPMTU"))
			}
		})
	}
}

// Follows pkg/render/node.go getAutodetectionMethod and
// core_controller.go fillDefaults.
func TestAddressAutodetection(t *testing.T) {
	cases := []struct {
		name     string
		v4       map[string]any
		ip, want string
	}{
		{"an interface regex is rendered as interface=", map[string]any{"interface": "eth.*"}, "autodetect", "interface=eth.*"},
		{"can-reach is rendered as such", map[string]any{"canReach": "10.0.0.1"}, "autodetect", "can-reach=10.0.0.1"},
		{"the node's InternalIP is kubernetes-internal-ip", map[string]any{"kubernetes": "NodeInternalIP"}, "autodetect", "kubernetes-internal-ip"},
		{"cidrs are joined", map[string]any{"cidrs": []any{"10.0.0.0/8", "192.168.0.0/16"}}, "autodetect", "cidr=10.0.0.0/8,192.168.0.0/16"},
		{"unset defaults to first-found with an IPv4 pool", nil, "autodetect", "first-found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := renderLab(t, func(in *Inputs) { in.Installation.Spec.CalicoNetwork.NodeAddressAutodetectionV4 = c.v4 })
			for _, ct := range []corev1.Container{container(t, out, NodeDaemonSet, "calico-node"), container(t, out, WindowsNodeDaemonSet, "felix")} {
				if env(ct, "IP") != c.ip || env(ct, "IP_AUTODETECTION_METHOD") != c.want {
					t.Errorf("%s: IP=%s IP_AUTODETECTION_METHOD=%s", ct.Name, env(ct, "IP"), env(ct, "IP_AUTODETECTION_METHOD"))
				}
			}
		})
	}
	t.Run("the defaulted method is written back into the Installation", func(t *testing.T) {
		out := renderLab(t, nil)
		if got := out.Installation.Spec.CalicoNetwork.NodeAddressAutodetectionV4; got["firstFound"] != true {
			t.Errorf("%v", got)
		}
	})
}

// Follows core_controller.go setDefaultsOnFelixConfiguration,
// setBPFEnabledOnFelixConfiguration and
// setClusterRoutingOnFelixConfiguration, and node.go
// bpfBootstrapInitContainer.
func TestFelixConfigurationAndBPF(t *testing.T) {
	t.Run("the BPF dataplane turns bpfEnabled on and makes ebpf-bootstrap strict", func(t *testing.T) {
		out := renderLab(t, func(in *Inputs) {
			in.Installation.Spec.CalicoNetwork.LinuxDataplane = strp(DataplaneBPF)
			in.Installation.Spec.CalicoNetwork.WindowsDataplane = nil
		})
		fc := out.FelixConfiguration
		if fc.Spec.BPFEnabled == nil || !*fc.Spec.BPFEnabled || *fc.Spec.NFTablesMode != "Disabled" {
			t.Errorf("%+v", fc.Spec)
		}
		if got := strings.Join(container(t, out, NodeDaemonSet, "ebpf-bootstrap").Command, " "); got != "/usr/bin/calico component node init" {
			t.Errorf("ebpf-bootstrap %s", got)
		}
	})
	t.Run("other dataplanes keep ebpf-bootstrap best-effort and leave bpfEnabled unset", func(t *testing.T) {
		out := renderLab(t, nil)
		if out.FelixConfiguration.Spec.BPFEnabled != nil || *out.FelixConfiguration.Spec.NFTablesMode != "Auto" {
			t.Errorf("%+v", out.FelixConfiguration.Spec)
		}
		if got := strings.Join(container(t, out, NodeDaemonSet, "ebpf-bootstrap").Command, " "); !strings.HasSuffix(got, "--best-effort") {
			t.Errorf("ebpf-bootstrap %s", got)
		}
	})
	modes := []struct{ mode, want string }{{RoutingFelix, "Enabled"}, {RoutingFelixIPIPOnly, "EnabledIPIPOnly"}, {RoutingBIRD, "Disabled"}}
	for _, m := range modes {
		t.Run("clusterRoutingMode "+m.mode+" sets programClusterRoutes "+m.want, func(t *testing.T) {
			out := renderLab(t, func(in *Inputs) { in.Installation.Spec.CalicoNetwork.ClusterRoutingMode = strp(m.mode) })
			if p := out.FelixConfiguration.Spec.ProgramClusterRoutes; p == nil || *p != m.want {
				t.Errorf("%v", p)
			}
		})
	}
	t.Run("an unset clusterRoutingMode writes no programClusterRoutes", func(t *testing.T) {
		if p := renderLab(t, nil).FelixConfiguration.Spec.ProgramClusterRoutes; p != nil {
			t.Errorf("%s", *p)
		}
	})
}

// Follows pkg/controller/ippool/pool_controller.go Reconcile and
// libcalico-go lib/clientv3/ippool.go (blockSize cannot be modified).
func TestOwnedPoolsAreReconciled(t *testing.T) {
	owned := func(edit func(*calico.IPPool)) []*calico.IPPool {
		p := toIPPool(opapi.IPPool{Name: "default-ipv4-ippool", CIDR: "172.21.0.0/16", Encapsulation: opapi.EncapVXLAN,
			NATOutgoing: NATOutgoingEnabled, NodeSelector: NodeSelectorAll, BlockSize: int32pp(26),
			AllowedUses: []string{"Workload", "Tunnel"}, AssignmentMode: "Automatic"})
		edit(p)
		return []*calico.IPPool{p}
	}
	cases := []struct {
		name       string
		edit       func(*Inputs)
		ippools    string
		vxlan      string
		blockSize  int
		wantReport string
	}{
		{
			name: "a direct edit of an operator-owned pool is reverted to the Installation",
			edit: func(in *Inputs) {
				in.ExistingIPPools = owned(func(p *calico.IPPool) { p.Spec.VXLANMode = calico.ModeNever })
			},
			ippools:   available,
			vxlan:     calico.ModeAlways,
			blockSize: 26, wantReport: "writes the Installation's version back",
		},
		{
			name: "a pool edited the same way but not owned by the operator is left alone",
			edit: func(in *Inputs) {
				in.ExistingIPPools = owned(func(p *calico.IPPool) { p.Spec.VXLANMode = calico.ModeNever; p.Labels = nil })
			},
			ippools:    available,
			vxlan:      "<none>",
			wantReport: "not owned by the operator",
		},
		{
			name: "a blockSize change through the Calico API server is refused and degrades ippools",
			edit: func(in *Inputs) {
				in.V1CRDs = true
				in.ExistingIPPools = owned(func(p *calico.IPPool) { p.Spec.BlockSize = 24 })
			},
			ippools:   degradedOnly("Error creating / updating IPPools: error with field IPPool.Spec.BlockSize = '26' (IPPool BlockSize cannot be modified)"),
			vxlan:     calico.ModeAlways,
			blockSize: 24,
		},
		{
			name:      "a blockSize change with native v3 CRDs is written",
			edit:      func(in *Inputs) { in.ExistingIPPools = owned(func(p *calico.IPPool) { p.Spec.BlockSize = 24 }) },
			ippools:   available,
			vxlan:     calico.ModeAlways,
			blockSize: 26, wantReport: "writes the Installation's version back",
		},
		{
			name: "an owned pool equal to the Installation but for defaulted fields is not rewritten",
			edit: func(in *Inputs) {
				in.ExistingIPPools = owned(func(p *calico.IPPool) { p.Spec.AssignmentMode = ""; p.Spec.AllowedUses = nil })
			},
			ippools:   available,
			vxlan:     calico.ModeAlways,
			blockSize: 26,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := renderLab(t, c.edit)
			if got := summary(statusOf(out, StatusIPPools)); got != c.ippools {
				t.Errorf("ippools %q, want %q", got, c.ippools)
			}
			vxlan, bs := "<none>", 0
			for _, p := range out.IPPools {
				if p.Spec.CIDR == "172.21.0.0/16" {
					vxlan, bs = p.Spec.VXLANMode, p.Spec.BlockSize
				}
			}
			if vxlan != c.vxlan || bs != c.blockSize {
				t.Errorf("written pool vxlanMode %s blockSize %d, want %s %d", vxlan, bs, c.vxlan, c.blockSize)
			}
			notes := strings.Join(out.Notes, "\n")
			if (c.wantReport == "") != !strings.Contains(notes, "IP pool") || (c.wantReport != "" && !strings.Contains(notes, c.wantReport)) {
				t.Errorf("notes %q, want one with %q", notes, c.wantReport)
			}
		})
	}
}

// Follows pkg/components/references.go GetReference, node.go nodeVolumes
// and validation.go (the FlexVolumePath check).
func TestImagePathAndFlexVolumePath(t *testing.T) {
	images := []struct {
		name, registry, imagePath, prefix, want string
	}{
		{"the defaults are quay.io and calico", "", "", "", "quay.io/calico/node:v3.33.0"},
		{"UseDefault keeps the defaults", "UseDefault", "UseDefault", "UseDefault", "quay.io/calico/node:v3.33.0"},
		{"registry and imagePath are joined as paths", "registry.example.com/", "mirror/tigera", "", "registry.example.com/mirror/tigera/node:v3.33.0"},
		{"an imagePrefix goes before the image name", "registry.example.com", "", "x-", "registry.example.com/calico/x-node:v3.33.0"},
	}
	for _, c := range images {
		t.Run(c.name, func(t *testing.T) {
			out := renderLab(t, func(in *Inputs) {
				in.Installation.Spec.Registry, in.Installation.Spec.ImagePath, in.Installation.Spec.ImagePrefix = c.registry, c.imagePath, c.prefix
			})
			if got := container(t, out, NodeDaemonSet, "calico-node").Image; got != c.want {
				t.Errorf("image %s, want %s", got, c.want)
			}
		})
	}
	flex := []struct {
		name, path, calico, volume string
	}{
		{"the default flexVolumePath is joined verbatim", "", available, "/usr/libexec/kubernetes/kubelet-plugins/volume/exec/nodeagent~uds"},
		{"a path without a trailing slash is kept verbatim", "/opt/flex", available, "/opt/flexnodeagent~uds"},
		{"None drops the flexvol volume", "None", available, "<none>"},
		{"a relative path is refused", "flex/", degradedOnly("Invalid Installation provided: installation spec.FlexVolumePath 'flex/' is not an absolute path"), "<none>"},
	}
	for _, c := range flex {
		t.Run(c.name, func(t *testing.T) {
			out := renderLab(t, func(in *Inputs) { in.Installation.Spec.FlexVolumePath = c.path })
			if got := summary(statusOf(out, StatusCalico)); got != c.calico {
				t.Errorf("calico %q, want %q", got, c.calico)
			}
			vol := "<none>"
			if d := daemonSetNamed(out, NodeDaemonSet); d != nil {
				for _, v := range d.Spec.Template.Spec.Volumes {
					if v.Name == "flexvol-driver-host" {
						vol = v.HostPath.Path
					}
				}
			}
			if vol != c.volume {
				t.Errorf("flexvol volume %s, want %s", vol, c.volume)
			}
		})
	}
}
