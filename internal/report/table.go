package report

import (
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/calico/ipam"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/textsafe"
)

// WindowsReservedHandle is the IPAM handle Calico for Windows holds the
// addresses HNS keeps for itself under (network, gateway, Calico_ep, last).
const WindowsReservedHandle = "windows-reserved-ipam-handle"

// Column definitions, as kubectl's server-side printers declare them
// (kubernetes pkg/printers/internalversion/printers.go) or as the CRD's
// additionalPrinterColumns declare them. Priority 1 columns show with -o wide.
var (
	nameColumn = metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name"}
	ageColumn  = metav1.TableColumnDefinition{Name: "Age", Type: "string"}

	podColumns = []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Ready", Type: "string"},
		{Name: "Status", Type: "string"},
		{Name: "Restarts", Type: "string"},
		ageColumn,
		{Name: "IP", Type: "string", Priority: 1},
		{Name: "Node", Type: "string", Priority: 1},
		{Name: "Nominated Node", Type: "string", Priority: 1},
		{Name: "Readiness Gates", Type: "string", Priority: 1},
	}
	nodeColumns = []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Status", Type: "string"},
		{Name: "Roles", Type: "string"},
		ageColumn,
		{Name: "Version", Type: "string"},
		{Name: "Internal-IP", Type: "string", Priority: 1},
		{Name: "External-IP", Type: "string", Priority: 1},
		{Name: "OS-Image", Type: "string", Priority: 1},
		{Name: "Kernel-Version", Type: "string", Priority: 1},
		{Name: "Container-Runtime", Type: "string", Priority: 1},
	}
	namespaceColumns = []metav1.TableColumnDefinition{nameColumn, {Name: "Status", Type: "string"}, ageColumn}
	serviceColumns   = []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Type", Type: "string"},
		{Name: "Cluster-IP", Type: "string"},
		{Name: "External-IP", Type: "string"},
		{Name: "Port(s)", Type: "string"},
		ageColumn,
		{Name: "Selector", Type: "string", Priority: 1},
	}
	configMapColumns      = []metav1.TableColumnDefinition{nameColumn, {Name: "Data", Type: "string"}, ageColumn}
	serviceAccountColumns = []metav1.TableColumnDefinition{nameColumn, {Name: "Secrets", Type: "string"}, ageColumn}
	endpointSliceColumns  = []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "AddressType", Type: "string"},
		{Name: "Ports", Type: "string"},
		{Name: "Endpoints", Type: "string"},
		ageColumn,
	}
	templateColumns = []metav1.TableColumnDefinition{
		{Name: "Containers", Type: "string", Priority: 1},
		{Name: "Images", Type: "string", Priority: 1},
		{Name: "Selector", Type: "string", Priority: 1},
	}
	daemonSetColumns = append([]metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Desired", Type: "integer"},
		{Name: "Current", Type: "integer"},
		{Name: "Ready", Type: "integer"},
		{Name: "Up-to-date", Type: "integer"},
		{Name: "Available", Type: "integer"},
		{Name: "Node Selector", Type: "string"},
		ageColumn,
	}, templateColumns...)
	deploymentColumns = append([]metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Ready", Type: "string"},
		{Name: "Up-to-date", Type: "string"},
		{Name: "Available", Type: "string"},
		ageColumn,
	}, templateColumns...)
	replicaSetColumns = append([]metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Desired", Type: "integer"},
		{Name: "Current", Type: "integer"},
		{Name: "Ready", Type: "integer"},
		ageColumn,
	}, templateColumns...)
	statefulSetColumns = []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Ready", Type: "string"},
		ageColumn,
		{Name: "Containers", Type: "string", Priority: 1},
		{Name: "Images", Type: "string", Priority: 1},
	}
	networkPolicyColumns = []metav1.TableColumnDefinition{nameColumn, {Name: "Pod-Selector", Type: "string"}, ageColumn}
	runtimeClassColumns  = []metav1.TableColumnDefinition{nameColumn, {Name: "Handler", Type: "string"}, ageColumn}
	csrColumns           = []metav1.TableColumnDefinition{
		nameColumn,
		ageColumn,
		{Name: "SignerName", Type: "string"},
		{Name: "Requestor", Type: "string"},
		{Name: "RequestedDuration", Type: "string"},
		{Name: "Condition", Type: "string"},
	}

	// projectcalico.org/v3 native CRDs (Calico 3.32+ additionalPrinterColumns);
	// the Priority 1 columns are the twin's own additions.
	ipPoolColumns = []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "CIDR", Type: "string"},
		{Name: "VXLAN", Type: "string"},
		{Name: "IPIP", Type: "string"},
		{Name: "NAT", Type: "boolean"},
		{Name: "Allocatable", Type: "string"},
		{Name: "Age", Type: "date"},
		{Name: "BlockSize", Type: "integer", Priority: 1},
		{Name: "Selector", Type: "string", Priority: 1},
	}
	// The twin's own IPAMBlock columns (the CRD's are CIDR, Affinity, ClaimTime).
	ipamBlockColumns = []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "CIDR", Type: "string"},
		{Name: "Node", Type: "string"},
		{Name: "Allocated", Type: "integer"},
		{Name: "Free", Type: "integer"},
		{Name: "Reserved", Type: "integer"},
	}
	blockAffinityColumns = []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "CIDR", Type: "string"},
		{Name: "Node", Type: "string"},
		{Name: "Type", Type: "string"},
		{Name: "State", Type: "string", Priority: 1},
	}
	ipamConfigColumns = []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "StrictAffinity", Type: "boolean"},
		{Name: "MaxBlocksPerHost", Type: "integer"},
		{Name: "AutoAllocateBlocks", Type: "boolean"},
	}
	// operator.tigera.io/v1 CRDs (tigera/operator api/v1 printcolumn markers;
	// Message has priority 0 since operator v1.42).
	tigeraStatusColumns = []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Available", Type: "string"},
		{Name: "Progressing", Type: "string"},
		{Name: "Degraded", Type: "string"},
		{Name: "Since", Type: "date"},
		{Name: "Message", Type: "string"},
	}
	// Installation's CRD declares no columns: the API server prints Name and
	// Age (kubectl shows AGE).
	installationColumns = []metav1.TableColumnDefinition{nameColumn, {Name: "Age", Type: "date"}}
)

// Table builds the table kubectl prints for objects of kind k, with every
// column's cells filled (the printer hides Priority 1 columns unless -o wide).
// objs are typed pointers as Select returns them; now is the moment AGE and
// the other durations are measured from.
func Table(k Kind, objs []any, now time.Time) (*metav1.Table, error) {
	t := &metav1.Table{ColumnDefinitions: columnsFor(k)}
	if t.ColumnDefinitions == nil {
		return nil, fmt.Errorf("no table columns for %s", k.Resource)
	}
	var allocatable map[string]string
	if k.GroupKind() == KindIPPool.GroupKind() {
		allocatable = poolAllocatable(objs)
	}
	for _, o := range objs {
		cells, err := rowCells(k, o, now, allocatable)
		if err != nil {
			return nil, err
		}
		for i, c := range cells {
			if s, ok := c.(string); ok {
				cells[i] = textsafe.Escape(s) // before the columns are aligned
			}
		}
		t.Rows = append(t.Rows, metav1.TableRow{Cells: cells, Object: runtime.RawExtension{Object: rowObject(k, o)}})
	}
	return t, nil
}

func columnsFor(k Kind) []metav1.TableColumnDefinition {
	if k.columns != nil {
		return append([]metav1.TableColumnDefinition(nil), k.columns...)
	}
	var cols []metav1.TableColumnDefinition
	switch k.GroupKind() {
	case KindPod.GroupKind():
		cols = podColumns
	case KindNode.GroupKind():
		cols = nodeColumns
	case KindNamespace.GroupKind():
		cols = namespaceColumns
	case KindService.GroupKind():
		cols = serviceColumns
	case KindConfigMap.GroupKind():
		cols = configMapColumns
	case KindServiceAccount.GroupKind():
		cols = serviceAccountColumns
	case KindEndpointSlice.GroupKind():
		cols = endpointSliceColumns
	case KindDaemonSet.GroupKind():
		cols = daemonSetColumns
	case KindDeployment.GroupKind():
		cols = deploymentColumns
	case KindReplicaSet.GroupKind():
		cols = replicaSetColumns
	case KindStatefulSet.GroupKind():
		cols = statefulSetColumns
	case KindNetworkPolicy.GroupKind():
		cols = networkPolicyColumns
	case KindRuntimeClass.GroupKind():
		cols = runtimeClassColumns
	case KindCertificateSigningRequest.GroupKind():
		cols = csrColumns
	case KindIPPool.GroupKind():
		cols = ipPoolColumns
	case KindIPAMBlock.GroupKind():
		cols = ipamBlockColumns
	case KindBlockAffinity.GroupKind():
		cols = blockAffinityColumns
	case KindIPAMConfiguration.GroupKind():
		cols = ipamConfigColumns
	case KindFelixConfiguration.GroupKind():
		// The CRD has no printer columns: kubectl shows NAME and AGE.
		cols = []metav1.TableColumnDefinition{nameColumn, ageColumn}
	case KindTigeraStatus.GroupKind():
		cols = tigeraStatusColumns
	case KindInstallation.GroupKind():
		cols = installationColumns
	default:
		return nil
	}
	// The printer rewrites cells in place (kind prefixes, namespace column);
	// give each table its own column slice too.
	return append([]metav1.TableColumnDefinition(nil), cols...)
}

// rowObject is what the row carries for the printer's NAMESPACE and label
// columns: the object itself when it is a runtime.Object, else its metadata.
func rowObject(k Kind, o any) runtime.Object {
	if r, ok := o.(*Row); ok {
		return r.Unstructured
	}
	if ro, ok := o.(runtime.Object); ok {
		return ro
	}
	m := metaOf(o)
	if m == nil {
		return nil
	}
	p := &metav1.PartialObjectMetadata{}
	p.SetGroupVersionKind(k.GroupVersionKind())
	p.Namespace, p.Name, p.Labels = m.GetNamespace(), m.GetName(), m.GetLabels()
	return p
}

func rowCells(k Kind, o any, now time.Time, allocatable map[string]string) ([]any, error) {
	switch t := o.(type) {
	case *Row:
		return append([]any(nil), t.Cells...), nil
	case *corev1.Pod:
		return podCells(t, now), nil
	case *corev1.Node:
		return nodeCells(t, now), nil
	case *corev1.Namespace:
		return []any{t.Name, namespacePhase(t), age(now, t.CreationTimestamp)}, nil
	case *corev1.Service:
		return serviceCells(t, now), nil
	case *corev1.ConfigMap:
		return []any{t.Name, int64(len(t.Data) + len(t.BinaryData)), age(now, t.CreationTimestamp)}, nil
	case *corev1.ServiceAccount:
		return []any{t.Name, int64(len(t.Secrets)), age(now, t.CreationTimestamp)}, nil
	case *discoveryv1.EndpointSlice:
		return []any{t.Name, string(t.AddressType), discoveryPorts(t.Ports), discoveryEndpoints(t.Endpoints), age(now, t.CreationTimestamp)}, nil
	case *appsv1.DaemonSet:
		names, images := containerCells(t.Spec.Template.Spec.Containers)
		return []any{t.Name, int64(t.Status.DesiredNumberScheduled), int64(t.Status.CurrentNumberScheduled),
			int64(t.Status.NumberReady), int64(t.Status.UpdatedNumberScheduled), int64(t.Status.NumberAvailable),
			labels.FormatLabels(t.Spec.Template.Spec.NodeSelector), age(now, t.CreationTimestamp),
			names, images, metav1.FormatLabelSelector(t.Spec.Selector)}, nil
	case *appsv1.Deployment:
		names, images := containerCells(t.Spec.Template.Spec.Containers)
		sel := "<invalid>"
		if s, err := metav1.LabelSelectorAsSelector(t.Spec.Selector); err == nil {
			sel = s.String()
		}
		return []any{t.Name, fmt.Sprintf("%d/%d", t.Status.ReadyReplicas, replicas(t.Spec.Replicas)),
			int64(t.Status.UpdatedReplicas), int64(t.Status.AvailableReplicas), age(now, t.CreationTimestamp),
			names, images, sel}, nil
	case *appsv1.ReplicaSet:
		names, images := containerCells(t.Spec.Template.Spec.Containers)
		return []any{t.Name, int64(replicas(t.Spec.Replicas)), int64(t.Status.Replicas), int64(t.Status.ReadyReplicas),
			age(now, t.CreationTimestamp), names, images, metav1.FormatLabelSelector(t.Spec.Selector)}, nil
	case *appsv1.StatefulSet:
		names, images := containerCells(t.Spec.Template.Spec.Containers)
		return []any{t.Name, fmt.Sprintf("%d/%d", t.Status.ReadyReplicas, replicas(t.Spec.Replicas)),
			age(now, t.CreationTimestamp), names, images}, nil
	case *networkingv1.NetworkPolicy:
		return []any{t.Name, metav1.FormatLabelSelector(&t.Spec.PodSelector), age(now, t.CreationTimestamp)}, nil
	case *nodev1.RuntimeClass:
		return []any{t.Name, t.Handler, age(now, t.CreationTimestamp)}, nil
	case *certv1.CertificateSigningRequest:
		return csrCells(t, now), nil
	case *calico.IPPool:
		return ipPoolCells(t, now, allocatable), nil
	case *calico.IPAMBlock:
		return ipamBlockCells(t), nil
	case *calico.BlockAffinity:
		return []any{t.Name, t.Spec.CIDR, t.Spec.Node, stringCell(t.Spec.Type), t.Spec.State}, nil
	case *calico.FelixConfiguration:
		return []any{t.Name, age(now, t.CreationTimestamp)}, nil
	case *calico.IPAMConfiguration:
		var maxBlocks, auto any
		if t.Spec.MaxBlocksPerHost != 0 {
			maxBlocks = int64(t.Spec.MaxBlocksPerHost)
		}
		if t.Spec.AutoAllocateBlocks != nil {
			auto = *t.Spec.AutoAllocateBlocks
		}
		return []any{t.Name, t.Spec.StrictAffinity, maxBlocks, auto}, nil
	case *operator.TigeraStatus:
		return tigeraStatusCells(t, now), nil
	case *operator.Installation:
		return []any{t.Name, crdAge(now, t.CreationTimestamp)}, nil
	}
	return nil, fmt.Errorf("cannot print %T as %s", o, k.Resource)
}

// age is kubectl's translateTimestampSince with now passed in.
func age(now time.Time, t metav1.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// crdAge is a CRD "date" column: the API server prints the duration since
// the timestamp, and an empty cell when the field is absent.
func crdAge(now time.Time, t metav1.Time) any {
	if t.IsZero() {
		return nil
	}
	return age(now, t)
}

// stringCell is a CRD string column: an absent (empty, omitempty) field
// prints as an empty cell.
func stringCell(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func replicas(r *int32) int32 {
	if r == nil {
		return 1 // the API server defaults replicas to 1
	}
	return *r
}

func containerCells(cs []corev1.Container) (names, images string) {
	var n, i []string
	for _, c := range cs {
		n = append(n, c.Name)
		i = append(i, c.Image)
	}
	return strings.Join(n, ","), strings.Join(i, ",")
}

func podIP(p *corev1.Pod) string {
	if len(p.Status.PodIPs) > 0 {
		return p.Status.PodIPs[0].IP
	}
	return p.Status.PodIP
}

func podCells(pod *corev1.Pod, now time.Time) []any {
	restarts := 0
	restartableInitRestarts := 0
	totalContainers := len(pod.Spec.Containers)
	readyContainers := 0
	var lastRestart, lastRestartableInitRestart metav1.Time

	reason := string(pod.Status.Phase)
	if pod.Status.Reason != "" {
		reason = pod.Status.Reason
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonSchedulingGated {
			reason = corev1.PodReasonSchedulingGated
		}
	}

	initContainers := map[string]*corev1.Container{}
	for i := range pod.Spec.InitContainers {
		initContainers[pod.Spec.InitContainers[i].Name] = &pod.Spec.InitContainers[i]
		if restartable(&pod.Spec.InitContainers[i]) {
			totalContainers++
		}
	}

	initializing := false
	for i, c := range pod.Status.InitContainerStatuses {
		restarts += int(c.RestartCount)
		if t := c.LastTerminationState.Terminated; t != nil && lastRestart.Before(&t.FinishedAt) {
			lastRestart = t.FinishedAt
		}
		if restartable(initContainers[c.Name]) {
			restartableInitRestarts += int(c.RestartCount)
			if t := c.LastTerminationState.Terminated; t != nil && lastRestartableInitRestart.Before(&t.FinishedAt) {
				lastRestartableInitRestart = t.FinishedAt
			}
		}
		switch {
		case c.State.Terminated != nil && c.State.Terminated.ExitCode == 0:
			continue
		case restartable(initContainers[c.Name]) && c.Started != nil && *c.Started:
			if c.Ready {
				readyContainers++
			}
			continue
		case c.State.Terminated != nil:
			switch {
			case c.State.Terminated.Reason != "":
				reason = "Init:" + c.State.Terminated.Reason
			case c.State.Terminated.Signal != 0:
				reason = fmt.Sprintf("Init:Signal:%d", c.State.Terminated.Signal)
			default:
				reason = fmt.Sprintf("Init:ExitCode:%d", c.State.Terminated.ExitCode)
			}
			initializing = true
		case c.State.Waiting != nil && c.State.Waiting.Reason != "" && c.State.Waiting.Reason != "PodInitializing":
			reason = "Init:" + c.State.Waiting.Reason
			initializing = true
		default:
			reason = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
			initializing = true
		}
		break
	}

	if !initializing || podInitialized(pod) {
		restarts = restartableInitRestarts
		lastRestart = lastRestartableInitRestart
		hasRunning := false
		for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
			c := pod.Status.ContainerStatuses[i]
			restarts += int(c.RestartCount)
			if t := c.LastTerminationState.Terminated; t != nil && lastRestart.Before(&t.FinishedAt) {
				lastRestart = t.FinishedAt
			}
			switch {
			case c.State.Waiting != nil && c.State.Waiting.Reason != "":
				reason = c.State.Waiting.Reason
			case c.State.Terminated != nil && c.State.Terminated.Reason != "":
				reason = c.State.Terminated.Reason
			case c.State.Terminated != nil && c.State.Terminated.Signal != 0:
				reason = fmt.Sprintf("Signal:%d", c.State.Terminated.Signal)
			case c.State.Terminated != nil:
				reason = fmt.Sprintf("ExitCode:%d", c.State.Terminated.ExitCode)
			case c.Ready && c.State.Running != nil:
				hasRunning = true
				readyContainers++
			}
		}
		if reason == "Completed" && hasRunning {
			if podReady(pod) {
				reason = "Running"
			} else {
				reason = "NotReady"
			}
		}
	}

	terminal := pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
	if pod.DeletionTimestamp != nil && pod.Status.Reason == "NodeLost" {
		reason = "Unknown"
	} else if pod.DeletionTimestamp != nil && !terminal {
		reason = "Terminating"
	}

	restartsStr := strconv.Itoa(restarts)
	if restarts != 0 && !lastRestart.IsZero() {
		restartsStr = fmt.Sprintf("%d (%s ago)", restarts, age(now, lastRestart))
	}

	ip := podIP(pod)
	if ip == "" {
		ip = "<none>"
	}
	node := pod.Spec.NodeName
	if node == "" {
		node = "<none>"
	}
	nominated := pod.Status.NominatedNodeName
	if nominated == "" {
		nominated = "<none>"
	}
	gates := "<none>"
	if len(pod.Spec.ReadinessGates) > 0 {
		n := 0
		for _, g := range pod.Spec.ReadinessGates {
			for _, c := range pod.Status.Conditions {
				if c.Type == g.ConditionType {
					if c.Status == corev1.ConditionTrue {
						n++
					}
					break
				}
			}
		}
		gates = fmt.Sprintf("%d/%d", n, len(pod.Spec.ReadinessGates))
	}
	return []any{pod.Name, fmt.Sprintf("%d/%d", readyContainers, totalContainers), reason, restartsStr,
		age(now, pod.CreationTimestamp), ip, node, nominated, gates}
}

func restartable(c *corev1.Container) bool {
	return c != nil && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

func podInitialized(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodInitialized && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func nodeCells(n *corev1.Node, now time.Time) []any {
	var status []string
	for _, c := range n.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		if c.Status == corev1.ConditionTrue {
			status = []string{string(c.Type)}
		} else {
			status = []string{"Not" + string(c.Type)}
		}
	}
	if len(status) == 0 {
		status = append(status, "Unknown")
	}
	if n.Spec.Unschedulable {
		status = append(status, "SchedulingDisabled")
	}
	roleSet := map[string]bool{}
	for k, v := range n.Labels {
		switch {
		case strings.HasPrefix(k, "node-role.kubernetes.io/"):
			if r := strings.TrimPrefix(k, "node-role.kubernetes.io/"); r != "" {
				roleSet[r] = true
			}
		case k == "kubernetes.io/role" && v != "":
			roleSet[v] = true
		}
	}
	var roles []string
	for r := range roleSet {
		roles = append(roles, r)
	}
	sort.Strings(roles)
	rolesStr := strings.Join(roles, ",")
	if rolesStr == "" {
		rolesStr = "<none>"
	}
	info := n.Status.NodeInfo
	osImage, kernel, runtime := info.OSImage, info.KernelVersion, info.ContainerRuntimeVersion
	if osImage == "" {
		osImage = "<unknown>"
	}
	if kernel == "" {
		kernel = "<unknown>"
	} else if info.Architecture != "" {
		// kubectl 1.37 appends the node's architecture.
		kernel += " (" + info.Architecture + ")"
	}
	if runtime == "" {
		runtime = "<unknown>"
	}
	return []any{n.Name, strings.Join(status, ","), rolesStr, age(now, n.CreationTimestamp), info.KubeletVersion,
		nodeAddress(n, corev1.NodeInternalIP), nodeAddress(n, corev1.NodeExternalIP), osImage, kernel, runtime}
}

func nodeAddress(n *corev1.Node, t corev1.NodeAddressType) string {
	for _, a := range n.Status.Addresses {
		if a.Type == t {
			return a.Address
		}
	}
	return "<none>"
}

// namespacePhase is the namespace's phase; the API server sets Active on
// create, so a twin namespace without a phase shows Active (Terminating once
// it has a deletionTimestamp).
func namespacePhase(ns *corev1.Namespace) string {
	if ns.Status.Phase != "" {
		return string(ns.Status.Phase)
	}
	if ns.DeletionTimestamp != nil {
		return string(corev1.NamespaceTerminating)
	}
	return string(corev1.NamespaceActive)
}

// serviceType applies the API server's default (ClusterIP) to an unset type.
func serviceType(s *corev1.Service) corev1.ServiceType {
	if s.Spec.Type == "" {
		return corev1.ServiceTypeClusterIP
	}
	return s.Spec.Type
}

func serviceCells(s *corev1.Service, now time.Time) []any {
	clusterIP := "<none>"
	switch {
	case len(s.Spec.ClusterIPs) > 0:
		clusterIP = s.Spec.ClusterIPs[0]
	case s.Spec.ClusterIP != "":
		clusterIP = s.Spec.ClusterIP
	}
	ports := make([]string, len(s.Spec.Ports))
	for i, p := range s.Spec.Ports {
		proto := p.Protocol
		if proto == "" {
			proto = corev1.ProtocolTCP // API default
		}
		if p.NodePort > 0 {
			ports[i] = fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, proto)
		} else {
			ports[i] = fmt.Sprintf("%d/%s", p.Port, proto)
		}
	}
	portStr := strings.Join(ports, ",")
	if portStr == "" {
		portStr = "<none>"
	}
	return []any{s.Name, string(serviceType(s)), clusterIP, serviceExternalIP(s), portStr,
		age(now, s.CreationTimestamp), labels.FormatLabels(s.Spec.Selector)}
}

func serviceExternalIP(s *corev1.Service) string {
	switch serviceType(s) {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort:
		if len(s.Spec.ExternalIPs) > 0 {
			return strings.Join(s.Spec.ExternalIPs, ",")
		}
		return "<none>"
	case corev1.ServiceTypeLoadBalancer:
		// The API server builds tables with Wide set, so the list is never
		// clipped to 16 bytes the way client-side printing once did.
		seen := map[string]bool{}
		var lb []string
		for _, in := range s.Status.LoadBalancer.Ingress {
			v := in.IP
			if v == "" {
				v = in.Hostname
			}
			if v != "" && !seen[v] {
				seen[v] = true
				lb = append(lb, v)
			}
		}
		sort.Strings(lb)
		all := append(lb, s.Spec.ExternalIPs...)
		if len(all) > 0 {
			return strings.Join(all, ",")
		}
		return "<pending>"
	case corev1.ServiceTypeExternalName:
		return s.Spec.ExternalName
	}
	return "<unknown>"
}

func discoveryPorts(ports []discoveryv1.EndpointPort) string {
	var list []string
	for _, p := range ports {
		n := "*"
		if p.Port != nil {
			n = strconv.Itoa(int(*p.Port))
		} else if p.Name != nil {
			n = *p.Name
		}
		list = append(list, n)
	}
	return listWithMore(list)
}

func discoveryEndpoints(eps []discoveryv1.Endpoint) string {
	var list []string
	for _, e := range eps {
		list = append(list, e.Addresses...)
	}
	return listWithMore(list)
}

// listWithMore is kubectl's "a,b,c + 2 more..." with <unset> for none.
func listWithMore(list []string) string {
	const max = 3
	if len(list) > max {
		return fmt.Sprintf("%s + %d more...", strings.Join(list[:max], ","), len(list)-max)
	}
	if len(list) == 0 {
		return "<unset>"
	}
	return strings.Join(list, ",")
}

func csrCells(c *certv1.CertificateSigningRequest, now time.Time) []any {
	var approved, denied, failed bool
	for _, cond := range c.Status.Conditions {
		switch cond.Type {
		case certv1.CertificateApproved:
			approved = true
		case certv1.CertificateDenied:
			denied = true
		case certv1.CertificateFailed:
			failed = true
		}
	}
	var status string
	switch {
	case denied:
		status = "Denied"
	case approved:
		status = "Approved"
	default:
		status = "Pending"
	}
	if failed {
		status += ",Failed"
	}
	if len(c.Status.Certificate) > 0 {
		status += ",Issued"
	}
	signer := c.Spec.SignerName
	if signer == "" {
		signer = "<none>"
	}
	requested := "<none>"
	if c.Spec.ExpirationSeconds != nil {
		requested = duration.HumanDuration(time.Duration(*c.Spec.ExpirationSeconds) * time.Second)
	}
	return []any{c.Name, age(now, c.CreationTimestamp), signer, c.Spec.Username, requested, status}
}

func ipPoolCells(p *calico.IPPool, now time.Time, allocatable map[string]string) []any {
	var nat, blockSize, sel any
	if p.Spec.NATOutgoing {
		nat = true
	}
	if p.Spec.BlockSize != 0 {
		blockSize = int64(p.Spec.BlockSize)
	}
	if p.Spec.NodeSelector != "" {
		sel = p.Spec.NodeSelector
	}
	return []any{p.Name, stringCell(p.Spec.CIDR), stringCell(p.Spec.VXLANMode), stringCell(p.Spec.IPIPMode), nat,
		stringCell(allocatable[p.Name]), crdAge(now, p.CreationTimestamp), blockSize, sel}
}

// poolAllocatable is each pool's Allocatable condition as
// calico-kube-controllers sets it (ipam.Allocatable), as kubectl prints it.
func poolAllocatable(objs []any) map[string]string {
	var pools []*calico.IPPool
	for _, o := range objs {
		if p, ok := o.(*calico.IPPool); ok {
			pools = append(pools, p)
		}
	}
	out := map[string]string{}
	for name, ok := range ipam.Allocatable(pools) {
		out[name] = "False"
		if ok {
			out[name] = "True"
		}
	}
	return out
}

func ipamBlockCells(b *calico.IPAMBlock) []any {
	node := "<none>"
	if b.Spec.Affinity != nil {
		node = strings.TrimPrefix(*b.Spec.Affinity, "host:")
	}
	allocated, reserved := IPAMBlockUsage(b)
	total := len(b.Spec.Allocations)
	if pr, err := netip.ParsePrefix(b.Spec.CIDR); err == nil {
		if bits := pr.Addr().BitLen() - pr.Bits(); bits < 31 && 1<<bits > total {
			total = 1 << bits
		}
	}
	return []any{b.Name, b.Spec.CIDR, node, int64(allocated), int64(total - allocated - reserved), int64(reserved)}
}

// IPAMBlockUsage counts a block's allocated ordinals, apart from those held
// by WindowsReservedHandle, which it counts as reserved.
func IPAMBlockUsage(b *calico.IPAMBlock) (allocated, reserved int) {
	for _, a := range b.Spec.Allocations {
		if a == nil {
			continue
		}
		if *a >= 0 && *a < len(b.Spec.Attributes) {
			if h := b.Spec.Attributes[*a].HandleID; h != nil && *h == WindowsReservedHandle {
				reserved++
				continue
			}
		}
		allocated++
	}
	return allocated, reserved
}

func tigeraStatusCells(s *operator.TigeraStatus, now time.Time) []any {
	cond := func(t string) *operator.TigeraStatusCondition {
		for i := range s.Status.Conditions {
			if s.Status.Conditions[i].Type == t {
				return &s.Status.Conditions[i]
			}
		}
		return nil
	}
	var available, progressing, degraded, since, message any
	if c := cond("Available"); c != nil {
		available = stringCell(c.Status)
		since = crdAge(now, c.LastTransitionTime)
	}
	if c := cond("Progressing"); c != nil {
		progressing = stringCell(c.Status)
	}
	if c := cond("Degraded"); c != nil {
		degraded = stringCell(c.Status)
		message = stringCell(c.Message)
	}
	return []any{s.Name, available, progressing, degraded, since, message}
}
