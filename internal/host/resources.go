package host

import (
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
)

// The kubelet's default hard eviction thresholds
// (pkg/kubelet/eviction/defaults_linux.go, defaults_windows.go): Windows
// keeps 500Mi of memory for its own processes where Linux keeps 100Mi,
// and has no image filesystem signal (its CRI stats publish none).
var (
	defaultEvictionHardLinux = map[string]string{
		"memory.available":  "100Mi",
		"nodefs.available":  "10%",
		"nodefs.inodesFree": "5%",
		"imagefs.available": "15%",
	}
	defaultEvictionHardWindows = map[string]string{
		"memory.available": "500Mi",
		"nodefs.available": "10%",
	}
)

// EvictionHard is the kubelet's effective evictionHard: the configured
// map, or the OS default when none is given; with
// mergeDefaultEvictionSettings the defaults fill the signals the map
// leaves out, else a given map stands alone (its missing signals are off)
// (pkg/kubelet/apis/config/v1beta1/defaults.go, KubeletConfiguration
// mergeDefaultEvictionSettings).
func EvictionHard(os string, kc *kubeletv1beta1.KubeletConfiguration) map[string]string {
	def := defaultEvictionHardLinux
	if os == hybrid.OSWindows {
		def = defaultEvictionHardWindows
	}
	if kc.EvictionHard == nil {
		return maps.Clone(def)
	}
	out := maps.Clone(kc.EvictionHard)
	if kc.MergeDefaultEvictionSettings != nil && *kc.MergeDefaultEvictionSettings {
		for k, v := range def {
			if _, ok := out[k]; !ok {
				out[k] = v
			}
		}
	}
	return out
}

// Resources is a node's capacity, what the kubelet holds back from it and
// what is left for pods.
type Resources struct {
	Capacity       corev1.ResourceList
	SystemReserved corev1.ResourceList
	KubeReserved   corev1.ResourceList
	// Eviction is the hard eviction reservation: memory.available (and
	// nodefs.available, for ephemeral-storage) as quantities.
	Eviction    corev1.ResourceList
	Allocatable corev1.ResourceList
}

// NodeResources computes allocatable from capacity as the kubelet does:
// for every resource in capacity, capacity − systemReserved −
// kubeReserved − the hard eviction threshold, never below zero
// (pkg/kubelet/cm/container_manager_windows.go and
// node_container_manager_linux.go GetNodeAllocatableReservation,
// hardEvictionReservation; pkg/kubelet/nodestatus/setters.go MachineInfo).
// kc's EvictionHard must be the effective one (EvictionHard). The
// arithmetic is the same on both OSes; on Windows nothing enforces it (no
// cgroups: enforceNodeAllocatable is empty), it only lowers what the
// scheduler may place.
func NodeResources(os string, capacity corev1.ResourceList, kc *kubeletv1beta1.KubeletConfiguration) (Resources, error) {
	r := Resources{Capacity: capacity.DeepCopy()}
	var err error
	if r.SystemReserved, err = reservation("systemReserved", kc.SystemReserved); err != nil {
		return Resources{}, err
	}
	if r.KubeReserved, err = reservation("kubeReserved", kc.KubeReserved); err != nil {
		return Resources{}, err
	}
	evictionHard := kc.EvictionHard
	if evictionHard == nil {
		evictionHard = EvictionHard(os, kc)
	}
	if r.Eviction, err = evictionReservation(evictionHard, capacity); err != nil {
		return Resources{}, err
	}
	r.Allocatable = corev1.ResourceList{}
	for name, c := range capacity {
		v := c.DeepCopy()
		for _, res := range []corev1.ResourceList{r.SystemReserved, r.KubeReserved, r.Eviction} {
			if q, ok := res[name]; ok {
				v.Sub(q)
			}
		}
		if v.Sign() < 0 {
			v.Set(0)
		}
		r.Allocatable[name] = v
	}
	return r, nil
}

// reservation reads systemReserved or kubeReserved: cpu, memory,
// ephemeral-storage and pid quantities, none negative (the kubelet's
// ParseResourceList).
func reservation(field string, m map[string]string) (corev1.ResourceList, error) {
	out := corev1.ResourceList{}
	for _, k := range sortedKeys(m) {
		switch corev1.ResourceName(k) {
		case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage, "pid":
		default:
			return nil, fmt.Errorf("%s: cannot reserve %q (only cpu, memory, ephemeral-storage and pid)", field, k)
		}
		q, err := resource.ParseQuantity(m[k])
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %q: %w", field, k, m[k], err)
		}
		if q.Sign() < 0 {
			return nil, fmt.Errorf("%s.%s: resource quantity for %q cannot be negative: %s", field, k, k, m[k])
		}
		out[corev1.ResourceName(k)] = q
	}
	return out, nil
}

// evictionReservation turns the memory.available and nodefs.available
// thresholds into quantities of memory and ephemeral-storage; a
// percentage is of the capacity (pkg/kubelet/eviction/api
// GetThresholdQuantity). "0%" and "100%" switch a signal off
// (pkg/kubelet/eviction/helpers.go parseThresholdStatement).
func evictionReservation(thresholds map[string]string, capacity corev1.ResourceList) (corev1.ResourceList, error) {
	out := corev1.ResourceList{}
	for _, signal := range sortedKeys(thresholds) {
		var res corev1.ResourceName
		switch signal {
		case "memory.available":
			res = corev1.ResourceMemory
		case "nodefs.available":
			res = corev1.ResourceEphemeralStorage
		default:
			continue
		}
		val := thresholds[signal]
		if pct, ok := strings.CutSuffix(val, "%"); ok {
			if val == "0%" || val == "100%" {
				continue
			}
			p, err := strconv.ParseFloat(pct, 32)
			if err != nil {
				return nil, fmt.Errorf("evictionHard.%s: %q is not a percentage", signal, val)
			}
			if p < 0 || p > 100 {
				return nil, fmt.Errorf("evictionHard.%s: eviction percentage threshold must be between 0%% and 100%%: %s", signal, val)
			}
			c, ok := capacity[res]
			if !ok {
				continue
			}
			out[res] = *resource.NewQuantity(int64(float64(c.Value())*float64(float32(p/100))), resource.BinarySI)
			continue
		}
		q, err := resource.ParseQuantity(val)
		if err != nil {
			return nil, fmt.Errorf("evictionHard.%s: %q: %w", signal, val, err)
		}
		if q.Sign() <= 0 {
			return nil, fmt.Errorf("evictionHard.%s: eviction threshold must be positive: %s", signal, val)
		}
		out[res] = q
	}
	return out, nil
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
