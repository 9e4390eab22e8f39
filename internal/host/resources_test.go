package host

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
)

func capacity(cpu, mem string) corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(cpu),
		corev1.ResourceMemory: resource.MustParse(mem),
		corev1.ResourcePods:   resource.MustParse("60"),
	}
}

func TestAllocatableIsCapacityLessEachReservation(t *testing.T) {
	yes := true
	tests := []struct {
		name     string
		os       string
		kc       kubeletv1beta1.KubeletConfiguration
		cpu, mem string // allocatable
	}{
		{
			name: "a Windows node without reservations keeps 500Mi for the default eviction threshold",
			os:   "windows", cpu: "4", mem: "7692Mi",
		},
		{
			name: "a Linux node without reservations keeps 100Mi for the default eviction threshold",
			os:   "linux", cpu: "4", mem: "8092Mi",
		},
		{
			name: "systemReserved cpu comes off the cpu",
			os:   "windows", kc: kubeletv1beta1.KubeletConfiguration{SystemReserved: map[string]string{"cpu": "500m"}},
			cpu: "3500m", mem: "7692Mi",
		},
		{
			name: "systemReserved memory comes off the memory with the eviction threshold",
			os:   "windows", kc: kubeletv1beta1.KubeletConfiguration{SystemReserved: map[string]string{"memory": "1Gi"}},
			cpu: "4", mem: "6668Mi",
		},
		{
			name: "kubeReserved adds to systemReserved",
			os:   "windows", kc: kubeletv1beta1.KubeletConfiguration{
				SystemReserved: map[string]string{"cpu": "500m", "memory": "1Gi"},
				KubeReserved:   map[string]string{"cpu": "250m", "memory": "512Mi"},
			},
			cpu: "3250m", mem: "6156Mi",
		},
		{
			name: "an explicit evictionHard replaces the default threshold",
			os:   "windows", kc: kubeletv1beta1.KubeletConfiguration{EvictionHard: map[string]string{"memory.available": "1Gi"}},
			cpu: "4", mem: "7Gi",
		},
		{
			name: "an evictionHard percentage is of the capacity",
			os:   "windows", kc: kubeletv1beta1.KubeletConfiguration{EvictionHard: map[string]string{"memory.available": "25%"}},
			cpu: "4", mem: "6Gi",
		},
		{
			name: "an evictionHard without memory.available keeps no memory back",
			os:   "windows", kc: kubeletv1beta1.KubeletConfiguration{EvictionHard: map[string]string{"nodefs.available": "5%"}},
			cpu: "4", mem: "8Gi",
		},
		{
			name: "mergeDefaultEvictionSettings fills the memory default back in",
			os:   "windows", kc: kubeletv1beta1.KubeletConfiguration{EvictionHard: map[string]string{"nodefs.available": "5%"}, MergeDefaultEvictionSettings: &yes},
			cpu: "4", mem: "7692Mi",
		},
		{
			name: "a reservation larger than the capacity leaves zero, not less",
			os:   "windows", kc: kubeletv1beta1.KubeletConfiguration{KubeReserved: map[string]string{"cpu": "6"}},
			cpu: "0", mem: "7692Mi",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kc := tt.kc
			kc.EvictionHard = EvictionHard(tt.os, &kc)
			r, err := NodeResources(tt.os, capacity("4", "8Gi"), &kc)
			if err != nil {
				t.Fatal(err)
			}
			cpu, mem := r.Allocatable[corev1.ResourceCPU], r.Allocatable[corev1.ResourceMemory]
			if cpu.Cmp(resource.MustParse(tt.cpu)) != 0 || mem.Cmp(resource.MustParse(tt.mem)) != 0 {
				t.Errorf("allocatable cpu %s memory %s, want %s and %s", cpu.String(), mem.String(), tt.cpu, tt.mem)
			}
			if pods := r.Allocatable[corev1.ResourcePods]; pods.Value() != 60 {
				t.Errorf("allocatable pods %s, want 60 (nothing reserves pods)", pods.String())
			}
		})
	}
}

func TestBadReservationsAreRefused(t *testing.T) {
	tests := []struct {
		name string
		kc   kubeletv1beta1.KubeletConfiguration
		want string
	}{
		{"a negative reservation is refused", kubeletv1beta1.KubeletConfiguration{SystemReserved: map[string]string{"memory": "-1Gi"}}, "cannot be negative"},
		{"a reservation of an unknown resource is refused", kubeletv1beta1.KubeletConfiguration{KubeReserved: map[string]string{"gpu": "1"}}, `cannot reserve "gpu"`},
		{"a quantity that does not parse is refused", kubeletv1beta1.KubeletConfiguration{KubeReserved: map[string]string{"cpu": "lots"}}, "kubeReserved.cpu"},
		{"an eviction percentage above 100 is refused", kubeletv1beta1.KubeletConfiguration{EvictionHard: map[string]string{"memory.available": "150%"}}, "between 0% and 100%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NodeResources("windows", capacity("4", "8Gi"), &tt.kc)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}
