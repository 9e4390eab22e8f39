// Package operator models what the Tigera operator renders from an
// Installation: the IP pools, the calico-system workloads, the default
// FelixConfiguration and the TigeraStatus objects, with the operator's own
// degraded messages.
//
// The reference is tigera/operator release-v1.44 (the operator of Calico
// v3.33); the files used are identical on master 40788b9b for everything
// quoted here:
//   - pkg/controller/installation/core_controller.go (TigeraStatus
//     "calico": defaulting, validation, waiting for pools, Typha scaling,
//     FelixConfiguration defaults)
//   - pkg/controller/installation/validation.go (validateCustomResource)
//   - pkg/controller/installation/windows_controller.go ("calico-windows")
//   - pkg/controller/ippool/{pool_controller,defaults,kubeadm,validation}.go
//     ("ippools")
//   - pkg/controller/apiserver/apiserver_controller.go ("apiserver"),
//     pkg/controller/tiers/tiers_controller.go ("tiers")
//   - pkg/controller/status/status.go (how conditions are written)
//   - pkg/render/{node,windows,csi,typha,namespaces}.go,
//     pkg/render/kubecontrollers, pkg/render/webhooks,
//     pkg/render/common/meta (tolerations), pkg/common/autoscale.go.
//
// calico-node and calico-node-windows follow node.go nodeDaemonset and
// windows.go windowsDaemonset field by field for: labels, selector, node
// selector, tolerations, host network, priority class, service account,
// grace period, init containers (flexvol-driver, ebpf-bootstrap,
// cni-plugins, install-cni; uninstall-calico, install-cni), their commands,
// env (cluster type, backend, health port, MTUs, address autodetection,
// CALICO_MANAGE_CNI, the services endpoint, the CNI config references),
// probes, preStop hooks and the host-path volumes named below. Not
// modelled: the Typha TLS env and the tigera-ca-bundle and node-certs
// volumes and mounts, the policysync, var-log-calico, bpffs,
// sys-kernel-security and bird-templates volumes on Linux, resource
// requests, pod annotations (config hashes), the node affinity of
// provider-specific installs, image pull secrets, DNS policy and
// Installation overrides (calicoNodeDaemonSet and friends).
//
// Render describes the settled state the operator converges to from a
// fresh install: a controller that never got past a check has written only
// its Degraded condition and none of its objects.
package operator

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	opapi "github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
)

// TigeraStatus names.
const (
	StatusAPIServer     = "apiserver"
	StatusCalico        = "calico"
	StatusCalicoWindows = "calico-windows"
	StatusIPPools       = "ippools"
	StatusTiers         = "tiers"
)

// Inputs is what the operator reads.
type Inputs struct {
	// Installation "default"; nil means no Installation, and nothing is
	// rendered.
	Installation *opapi.Installation
	// IPAMConfiguration "default"; nil when absent (strictAffinity false).
	IPAMConfiguration *calico.IPAMConfiguration
	// ServicesEndpoint is the tigera-operator/kubernetes-services-endpoint
	// ConfigMap, nil when absent.
	ServicesEndpoint *corev1.ConfigMap
	// APIService is the default/kubernetes Service, whose address kubelet
	// gives the operator's own pod as KUBERNETES_SERVICE_HOST and _PORT;
	// nil when unknown.
	APIService *corev1.Service
	// FelixConfiguration "default" as it exists before the operator
	// defaults it; may be nil.
	FelixConfiguration *calico.FelixConfiguration
	Nodes              []*corev1.Node
	// Kubeadm is the kube-system/kubeadm-config ConfigMap's networking; nil
	// when that ConfigMap does not exist.
	Kubeadm *Kubeadm
	// KubeDNS is the kube-system/kube-dns Service; nil when it does not
	// exist (the Windows controller then degrades).
	KubeDNS *corev1.Service
	// APIServer "default"; nil when absent.
	APIServer *opapi.APIServer
	// ExistingIPPools are IP pools already in the cluster before the
	// operator's IP pool controller runs (usually none on a fresh install).
	ExistingIPPools []*calico.IPPool
	// V1CRDs is true for clusters that run on crd.projectcalico.org/v1 (the
	// aggregated Calico API server); false for native projectcalico.org/v3
	// CRDs, which new v3.33 installs use (pkg/apis/version.go useV3CRDs).
	V1CRDs bool
	// Now stamps lastTransitionTime.
	Now metav1.Time
}

// Output is what the operator writes.
type Output struct {
	// Installation is the Installation as stored after the operator's
	// defaulting (unchanged when the core controller rejected it).
	Installation       *opapi.Installation
	Namespaces         []*corev1.Namespace
	IPPools            []*calico.IPPool
	DaemonSets         []*appsv1.DaemonSet
	Deployments        []*appsv1.Deployment
	Services           []*corev1.Service
	ConfigMaps         []*corev1.ConfigMap
	FelixConfiguration *calico.FelixConfiguration
	TigeraStatuses     []*opapi.TigeraStatus
	// Notes explain modelling decisions and inconsistencies worth a look.
	Notes []string
}

// Condition reasons (api/v1/tigerastatus_types.go).
const (
	ReasonAllObjectsAvailable = "AllObjectsAvailable"
	ReasonResourceNotReady    = "ResourceNotReady"
	ReasonInvalidConfig       = "InvalidConfigurationError"
	ReasonResourceNotFound    = "ResourceNotFound"
	ReasonResourceReadError   = "ResourceReadError"
	ReasonResourceScaling     = "ResourceScalingError"
	ReasonResourceUpdateError = "ResourceUpdateError"
	ReasonUnknown             = "Unknown"

	allObjectsAvailable = "All objects available"
)

// degraded is an explicit SetDegraded: the message is "<msg>: <err>" when
// there is an error, else just msg (status.go SetDegraded).
type degraded struct{ reason, msg string }

func degrade(reason, msg string, err error) *degraded {
	if err != nil {
		msg = msg + ": " + err.Error()
	}
	return &degraded{reason, msg}
}

// tigeraStatus writes the conditions a status manager leaves:
//   - available: Available, Progressing and Degraded, in that order of
//     creation, the last two False, all "All objects available";
//   - degraded before the controller ever finished a reconcile: only
//     Degraded True (kubectl shows empty AVAILABLE and PROGRESSING);
//   - degraded after it had (wasReady): Available and Progressing False
//     with reason Unknown, Degraded True.
func tigeraStatus(name string, d *degraded, wasReady bool, gen int64, now metav1.Time) *opapi.TigeraStatus {
	ts := &opapi.TigeraStatus{
		TypeMeta:   metav1.TypeMeta{APIVersion: opapi.Group + "/v1", Kind: "TigeraStatus"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
	}
	c := func(t, status, reason, msg string) opapi.TigeraStatusCondition {
		return opapi.TigeraStatusCondition{Type: t, Status: status, Reason: reason, Message: msg, LastTransitionTime: now, ObservedGeneration: gen}
	}
	switch {
	case d == nil:
		ts.Status.Conditions = []opapi.TigeraStatusCondition{
			c("Available", "True", ReasonAllObjectsAvailable, allObjectsAvailable),
			c("Progressing", "False", ReasonAllObjectsAvailable, allObjectsAvailable),
			c("Degraded", "False", ReasonAllObjectsAvailable, allObjectsAvailable),
		}
	case wasReady:
		ts.Status.Conditions = []opapi.TigeraStatusCondition{
			c("Available", "False", ReasonUnknown, ""),
			c("Progressing", "False", ReasonUnknown, ""),
			c("Degraded", "True", d.reason, d.msg),
		}
	default:
		ts.Status.Conditions = []opapi.TigeraStatusCondition{c("Degraded", "True", d.reason, d.msg)}
	}
	return ts
}

// endpoint is the address the operator hands Calico's components: the
// ConfigMap's when it exists, else the operator's own environment, which
// kubelet fills from the kubernetes Service (k8s-endpoint.go init,
// utils.go PopulateK8sServiceEndPoint). The Windows controller alone
// insists on the ConfigMap (windows_controller.go Reconcile).
func (in Inputs) endpoint() endpoint {
	if in.ServicesEndpoint == nil {
		if s := in.APIService; s != nil && s.Spec.ClusterIP != "" && s.Spec.ClusterIP != corev1.ClusterIPNone {
			for _, p := range s.Spec.Ports {
				if p.Name == "https" {
					return endpoint{host: s.Spec.ClusterIP, port: fmt.Sprint(p.Port)}
				}
			}
		}
		return endpoint{}
	}
	return endpoint{host: in.ServicesEndpoint.Data["KUBERNETES_SERVICE_HOST"], port: in.ServicesEndpoint.Data["KUBERNETES_SERVICE_PORT"]}
}

// Render runs the operator's controllers to their settled state.
func Render(in Inputs) Output {
	var out Output
	if in.Installation == nil {
		// Every status manager calls OnCRNotFound and removes its status.
		return out
	}
	ep := in.endpoint()
	raw := copyInstallation(in.Installation)
	inst := copyInstallation(in.Installation)
	spec := &inst.Spec
	gen := in.Installation.Generation

	// Core controller, first pass (core_controller.go Reconcile): defaults
	// are written back, and the finalizer the IP pool controller waits for
	// is added, only once validateCustomResource has passed. Pools still
	// lack their own defaults at this point.
	applyCoreDefaults(spec)
	defaultAutodetection(spec, in.ExistingIPPools)
	coreErr := validateInstallation(spec, ep)
	coreDefaulted := coreErr == nil
	if !coreDefaulted && statusEmpty(raw.Status) {
		// Never reconciled: nothing was written back. (An Installation
		// with a status was defaulted by an earlier reconcile, and those
		// defaults are still stored.)
		inst = raw
		spec = &inst.Spec
	}

	// IP pool controller (pool_controller.go).
	var ippools *degraded
	var activePools []*calico.IPPool
	for _, p := range in.ExistingIPPools {
		if !p.Spec.Disabled {
			activePools = append(activePools, p)
		}
	}
	// A stored status means an earlier reconcile succeeded, so the
	// finalizer the IP pool controller waits for is there.
	reconciledBefore := !statusEmpty(raw.Status)
	if !coreDefaulted && !reconciledBefore {
		ippools = degrade(ReasonResourceNotReady, "Waiting for Installation defaulting to occur", nil)
	} else if err := applyPoolDefaults(spec, in.Kubeadm, in.ExistingIPPools); err != nil {
		ippools = degrade(ReasonResourceReadError, "error filling IP pool defaults", err)
	} else if err := validatePools(spec); err != nil {
		ippools = degrade(ReasonInvalidConfig, "error validating IP pool configuration", err)
	} else {
		out.IPPools, out.Notes = managedPools(spec, in.ExistingIPPools, out.Notes)
		var err error
		out.IPPools, out.Notes, err = reconcileOwnedPools(out.IPPools, in.ExistingIPPools, in.V1CRDs, in.APIServer != nil, out.Notes)
		if err != nil {
			ippools = degrade(ReasonResourceUpdateError, "Error creating / updating IPPools", err)
		}
		for _, p := range out.IPPools {
			if !p.Spec.Disabled && !slices.ContainsFunc(activePools, func(a *calico.IPPool) bool { return normalizeCIDR(a.Spec.CIDR) == p.Spec.CIDR }) {
				activePools = append(activePools, p)
			}
		}
	}

	// Core controller, settled: with pools in the cluster, a later
	// reconcile defaults address autodetection (core_controller.go
	// fillDefaults).
	if coreDefaulted {
		defaultAutodetection(spec, activePools)
	}

	// Core controller, settled: re-validated with the pool defaults in.
	img := imagesFor(spec)
	var core *degraded
	coreReady := false
	typhaReplicas, typhaErr := TyphaReplicas(in.Nodes)
	switch {
	case !coreDefaulted:
		core = degrade(ReasonInvalidConfig, "Invalid Installation provided", coreErr)
		if reconciledBefore {
			out.Notes = append(out.Notes, "the Installation was reconciled before and is now rejected; objects rendered back then are not shown")
		}
	case validateInstallation(spec, ep) != nil:
		core = degrade(ReasonInvalidConfig, "Invalid Installation provided", validateInstallation(spec, ep))
	case len(activePools) == 0 && needsIPPools(spec):
		core = degrade(ReasonResourceNotFound, "waiting for enabled IP pools to be created", nil)
	default:
		if typhaErr != nil {
			// The autoscaler ticker re-degrades every 10s with this text; a
			// core reconcile in between writes "Failed to scale typha: ...".
			core = degrade(ReasonResourceScaling, "Failed to autoscale typha - "+typhaErr.Error(), nil)
			typhaReplicas = ExpectedTyphaScale(countLinux(in.Nodes))
			out.Notes = append(out.Notes, fmt.Sprintf(
				"Typha autoscaler fails (%v); the calico-system objects are shown as rendered while Linux nodes were enough, with %d Typha replicas", typhaErr, typhaReplicas))
		}
		coreReady = true
		// The FelixConfiguration is defaulted first: calico-node's health
		// port comes from it (core_controller.go Reconcile passes
		// FelixHealthPort: *felixConfiguration.Spec.HealthPort).
		out.FelixConfiguration = felixDefaults(spec, in.FelixConfiguration)
		out.Namespaces = append(out.Namespaces, calicoNamespace())
		out.DaemonSets = append(out.DaemonSets, calicoNodeDaemonSet(spec, ep, img, *out.FelixConfiguration.Spec.HealthPort), csiNodeDriverDaemonSet(img))
		out.Deployments = append(out.Deployments,
			kubeControllersDeployment(spec, ep, img),
			typhaDeployment(spec, ep, img, int32(typhaReplicas)))
		out.Services = append(out.Services, service(TyphaDeployment, typhaPort, intstr.FromString("calico-typha"), "calico-typha"))
		if cm, err := linuxCNIConfigMap(spec, ep, in.V1CRDs); err != nil {
			out.Notes = append(out.Notes, err.Error())
		} else if cm != nil {
			out.ConfigMaps = append(out.ConfigMaps, cm)
		}
	}
	coreSucceeded := coreReady && core == nil
	if out.FelixConfiguration == nil && in.FelixConfiguration != nil {
		fc := *in.FelixConfiguration
		out.FelixConfiguration = &fc
	}

	statuses := []*opapi.TigeraStatus{
		tigeraStatus(StatusCalico, core, (coreReady || reconciledBefore) && core != nil, gen, in.Now),
		tigeraStatus(StatusIPPools, ippools, false, gen, in.Now),
	}

	// Windows controller (windows_controller.go); silent unless Windows
	// is enabled.
	if windowsEnabled(spec) {
		d := windowsChecks(in, spec, coreDefaulted, coreSucceeded, ep, out.FelixConfiguration)
		if d == nil {
			vni := *out.FelixConfiguration.Spec.VXLANVNI
			dns := in.KubeDNS.Spec.ClusterIPs
			if len(dns) == 0 && in.KubeDNS.Spec.ClusterIP != "" {
				dns = []string{in.KubeDNS.Spec.ClusterIP}
			}
			out.DaemonSets = append(out.DaemonSets, calicoNodeWindowsDaemonSet(spec, ep, img, vni, dns))
			if cm, err := windowsCNIConfigMap(spec, ep, vni, dns); err != nil {
				out.Notes = append(out.Notes, err.Error())
			} else if cm != nil {
				out.ConfigMaps = append(out.ConfigMaps, cm)
			}
		}
		statuses = append(statuses, tigeraStatus(StatusCalicoWindows, d, false, 0, in.Now))
	}

	// API server controller (apiserver_controller.go).
	if in.APIServer != nil {
		var d *degraded
		if spec.Variant == "" {
			d = degrade(ReasonResourceNotReady, "Waiting for Installation Variant to be set", nil)
		} else if !in.V1CRDs {
			out.Deployments = append(out.Deployments, webhooksDeployment(spec, img))
			out.Services = append(out.Services, service(WebhooksDeployment, 443, intstr.FromInt32(6443), ""))
		} else {
			out.Notes = append(out.Notes, "the aggregated calico-apiserver (crd.projectcalico.org/v1 mode) is not rendered")
		}
		statuses = append(statuses, tigeraStatus(StatusAPIServer, d, false, in.APIServer.Generation, in.Now))
	}

	// Tiers controller (tiers_controller.go): needs the projectcalico.org/v3
	// API, always there with native v3 CRDs.
	var tiers *degraded
	if in.V1CRDs && in.APIServer == nil {
		tiers = degrade(ReasonResourceNotReady, "Waiting for Tigera API server to be ready", nil)
	}
	statuses = append(statuses, tigeraStatus(StatusTiers, tiers, false, 0, in.Now))

	if in.Kubeadm != nil && in.Kubeadm.ServiceSubnet != "" && windowsEnabled(spec) && len(spec.ServiceCIDRs) > 0 &&
		!slices.Contains(spec.ServiceCIDRs, in.Kubeadm.ServiceSubnet) {
		out.Notes = append(out.Notes, fmt.Sprintf(
			"Installation spec.serviceCIDRs %v does not include kubeadm's serviceSubnet %s; the Windows CNI builds its OutBoundNAT exceptions from serviceCIDRs",
			spec.ServiceCIDRs, in.Kubeadm.ServiceSubnet))
	}

	slices.SortFunc(statuses, func(a, b *opapi.TigeraStatus) int { return cmp.Compare(a.Name, b.Name) })
	out.TigeraStatuses = statuses
	slices.SortFunc(out.DaemonSets, func(a, b *appsv1.DaemonSet) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(out.Deployments, func(a, b *appsv1.Deployment) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(out.Services, func(a, b *corev1.Service) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(out.IPPools, func(a, b *calico.IPPool) int { return cmp.Compare(a.Name, b.Name) })
	if coreSucceeded && inst.Status.Variant == "" {
		inst.Status.Variant = spec.Variant
		inst.Status.CalicoVersion = CalicoVersion
		c := inst.Spec
		inst.Status.Computed = &c
	}
	out.Installation = inst
	return out
}

// needsIPPools is core_controller.go Reconcile's test before it waits for
// pools: the Installation lists pools, or Calico is the CNI plugin or the
// IPAM. With another provider's CNI and IPAM (AmazonVPC, AzureVNET, GKE's
// host-local) pods take their addresses elsewhere and no pool is needed.
func needsIPPools(s *opapi.InstallationSpec) bool {
	if s.CalicoNetwork != nil && len(s.CalicoNetwork.IPPools) != 0 {
		return true
	}
	return s.CNI != nil && (s.CNI.Type == PluginCalico || s.CNI.IPAM != nil && s.CNI.IPAM.Type == IPAMCalico)
}

// NonCalicoCNI names the CNI plugin when it is not Calico's (AmazonVPC,
// AzureVNET, GKE), after the operator's defaulting of an unset type from
// the provider; "" for Calico CNI or when there is no Installation.
func NonCalicoCNI(inst *opapi.Installation) string {
	if inst == nil {
		return ""
	}
	spec := copyInstallation(inst).Spec
	applyCoreDefaults(&spec)
	if spec.CNI.Type == PluginCalico {
		return ""
	}
	return spec.CNI.Type
}

func countLinux(nodes []*corev1.Node) int {
	n := 0
	for _, x := range nodes {
		if !x.Spec.Unschedulable && x.Labels[corev1.LabelOSStable] == "linux" {
			n++
		}
	}
	return n
}

// windowsChecks walks the Windows controller's Reconcile in its order and
// returns the first degradation, or nil when calico-node-windows renders.
func windowsChecks(in Inputs, spec *opapi.InstallationSpec, coreDefaulted, coreSucceeded bool, ep endpoint, fc *calico.FelixConfiguration) *degraded {
	if in.ServicesEndpoint == nil {
		return degrade(ReasonResourceReadError, "Error reading services endpoint configmap",
			fmt.Errorf("configmaps %q not found", ServicesEndpointConfigMap))
	}
	// The core controller writes the Installation status only after a
	// successful reconcile; until then the Windows controller waits.
	if !coreSucceeded && statusEmpty(in.Installation.Status) {
		return degrade(ReasonResourceNotReady, "InstallationStatus is empty", fmt.Errorf("InstallationStatus is empty"))
	}
	if err := validateInstallation(spec, ep); err != nil {
		return degrade(ReasonInvalidConfig, "Invalid Installation provided", err)
	}
	if spec.WindowsNodes == nil {
		return degrade(ReasonResourceNotReady, "Installation.Spec.WindowsNodes is nil", fmt.Errorf("Installation.Spec.WindowsNodes is nil"))
	}
	if spec.CNI != nil && spec.CNI.Type == PluginCalico && spec.CNI.IPAM != nil && spec.CNI.IPAM.Type == IPAMCalico {
		if in.IPAMConfiguration == nil || !in.IPAMConfiguration.Spec.StrictAffinity {
			return degrade(ReasonResourceReadError, "Invalid StrictAffinity, it must be set to 'true' when using Calico IPAM on Windows",
				fmt.Errorf("StrictAffinity is false, it must be set to 'true' in the default IPAMConfiguration when using Calico IPAM on Windows"))
		}
	}
	if in.KubeDNS == nil {
		return degrade(ReasonResourceNotFound, "kube-dns service not found", fmt.Errorf("services %q not found", "kube-dns"))
	}
	if fc == nil || fc.Spec.VXLANVNI == nil {
		return degrade(ReasonResourceReadError, "Error reading VXLANVNI from FelixConfiguration",
			fmt.Errorf("VXLANVNI not specified in FelixConfigurationSpec"))
	}
	return nil
}

func statusEmpty(s opapi.InstallationStatus) bool {
	return s.Variant == "" && s.MTU == 0 && s.Computed == nil && len(s.Conditions) == 0 && s.CalicoVersion == "" && s.ImageSet == ""
}

// managedPools returns the pools the IP pool controller creates or updates:
// those of the Installation, minus any whose CIDR belongs to an existing
// pool it does not own (pool_controller.go; that conflict degrades only for
// the moment of the reconcile, which then clears it).
func managedPools(spec *opapi.InstallationSpec, existing []*calico.IPPool, notes []string) ([]*calico.IPPool, []string) {
	var out []*calico.IPPool
	for _, p := range spec.CalicoNetwork.IPPools {
		want := toIPPool(p)
		conflict := false
		for _, e := range existing {
			if normalizeCIDR(e.Spec.CIDR) != want.Spec.CIDR || e.Labels[managedByLabel] == managedByValue {
				continue
			}
			if !reflect.DeepEqual(e.Spec, want.Spec) {
				conflict = true
			}
		}
		if conflict {
			notes = append(notes, fmt.Sprintf("IP pool %s: an existing pool with the same CIDR is not owned by the operator, which leaves it alone", want.Spec.CIDR))
			continue
		}
		out = append(out, want)
	}
	return out, notes
}

// reconcileOwnedPools is the update half of pool_controller.go Reconcile:
// a pool the operator owns (its managed-by label) that differs from the
// Installation is written back to the Installation's version, so a direct
// edit is reverted. Through the Calico API server (crd.projectcalico.org/v1
// mode) libcalico-go refuses a blockSize change (lib/clientv3/ippool.go),
// the operator leaves the pool as it is and degrades; with native
// projectcalico.org/v3 CRDs nothing refuses it in Calico v3.33, and blocks
// already allocated keep their old size.
func reconcileOwnedPools(desired, existing []*calico.IPPool, v1CRDs, apiServer bool, notes []string) ([]*calico.IPPool, []string, error) {
	var out []*calico.IPPool
	var firstErr error
	for _, want := range desired {
		var have *calico.IPPool
		for _, e := range existing {
			if normalizeCIDR(e.Spec.CIDR) == want.Spec.CIDR && e.Labels[managedByLabel] == managedByValue {
				have = e
			}
		}
		if have == nil || poolSpecEqual(have.Spec, want.Spec) {
			out = append(out, want)
			continue
		}
		if v1CRDs && !apiServer {
			// Updates need the v3 API; the pool stays as edited.
			notes = append(notes, fmt.Sprintf("IP pool %s differs from the Installation; the operator cannot update it while the Calico API server is unavailable", have.Name))
			out = append(out, have)
			continue
		}
		if v1CRDs && have.Spec.BlockSize != 0 && have.Spec.BlockSize != want.Spec.BlockSize {
			if firstErr == nil {
				firstErr = fmt.Errorf("error with field IPPool.Spec.BlockSize = '%d' (IPPool BlockSize cannot be modified)", want.Spec.BlockSize)
			}
			out = append(out, have)
			continue
		}
		notes = append(notes, fmt.Sprintf("IP pool %s is owned by the operator and differs from the Installation; the operator writes the Installation's version back (simulated reconcile)", have.Name))
		out = append(out, want)
	}
	return out, notes, firstErr
}

// poolSpecEqual compares what the operator writes, with the values Calico
// defaults an unset field to (an empty mode is Never, no block size is 26
// or 122, no assignment mode is Automatic, no allowed uses is Workload and
// Tunnel), so a pool read back from a cluster matches.
func poolSpecEqual(a, b calico.IPPoolSpec) bool {
	norm := func(s calico.IPPoolSpec) calico.IPPoolSpec {
		s.CIDR = normalizeCIDR(s.CIDR)
		p := calico.IPPool{Spec: s}
		s.IPIPMode, s.VXLANMode = EffectiveModes(&p)
		if s.BlockSize == 0 {
			s.BlockSize = 26
			if !isIPv4(s.CIDR) {
				s.BlockSize = 122
			}
		}
		if s.AssignmentMode == "" {
			s.AssignmentMode = "Automatic"
		}
		if len(s.AllowedUses) == 0 {
			s.AllowedUses = []string{"Workload", "Tunnel"}
		}
		return s
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

// felixDefaults is what the core controller patches into FelixConfiguration
// "default" (core_controller.go setDefaultsOnFelixConfiguration,
// setNftablesMode): healthPort 9099, vxlanVNI 4096 and vxlanPort 4789
// whenever unset (whatever the encapsulation; VNI 10000 on DockerEE), and
// nftablesMode Auto for the Nftables dataplane, Disabled otherwise.
func felixDefaults(spec *opapi.InstallationSpec, in *calico.FelixConfiguration) *calico.FelixConfiguration {
	fc := &calico.FelixConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: calico.Group + "/v3", Kind: "FelixConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
	}
	if in != nil {
		c := *in
		c.Spec = in.Spec // pointers are replaced, never written through
		fc = &c
		if fc.APIVersion == "" {
			fc.TypeMeta = metav1.TypeMeta{APIVersion: calico.Group + "/v3", Kind: "FelixConfiguration"}
		}
	}
	ip := func(v int) *int { return &v }
	if fc.Spec.HealthPort == nil {
		fc.Spec.HealthPort = ip(felixHealthPrt)
	}
	if fc.Spec.VXLANVNI == nil {
		if spec.KubernetesProvider == "DockerEnterprise" {
			fc.Spec.VXLANVNI = ip(10000)
		} else {
			fc.Spec.VXLANVNI = ip(4096)
		}
	}
	if fc.Spec.VXLANPort == nil {
		// DockerEnterprise with BPF moves the port off the host's own
		// VXLAN device.
		if spec.KubernetesProvider == "DockerEnterprise" && bpf(spec) {
			fc.Spec.VXLANPort = ip(8472)
		} else {
			fc.Spec.VXLANPort = ip(4789)
		}
	}
	// A fresh install with the BPF dataplane turns BPF on in Felix
	// (setBPFEnabledOnFelixConfiguration).
	if bpf(spec) {
		fc.Spec.BPFEnabled = boolp(true)
	}
	// setClusterRoutingOnFelixConfiguration: only an explicit
	// clusterRoutingMode is written.
	if cn := spec.CalicoNetwork; cn != nil && cn.ClusterRoutingMode != nil {
		v := "Disabled"
		switch *cn.ClusterRoutingMode {
		case RoutingFelix:
			v = "Enabled"
		case RoutingFelixIPIPOnly:
			v = "EnabledIPIPOnly"
		}
		fc.Spec.ProgramClusterRoutes = &v
	}
	if spec.CalicoNetwork != nil && spec.CalicoNetwork.LinuxDataplane != nil {
		mode := "Disabled"
		switch *spec.CalicoNetwork.LinuxDataplane {
		case DataplaneNftables:
			mode = "Auto"
		}
		fc.Spec.NFTablesMode = &mode
	}
	return fc
}
