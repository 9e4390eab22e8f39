package hybrid

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// HostStateKind is the kind of HostState.
const HostStateKind = "HostState"

// HostState is what runs on one node's host where it departs from a healthy
// join: a stopped service, a clock that drifted, a kubelet stuck after the
// vSwitch came up. No Kubernetes object records these, so a what-if names
// them with this kind; metadata.name is the node's name. A node without a
// HostState runs every service its join starts, with the control plane's
// time.
type HostState struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              HostStateSpec `json:"spec"`
}

// HostStateSpec lists the departures from a healthy host.
type HostStateSpec struct {
	// Services whose state differs from what the join leaves (containerd,
	// kubelet; on Windows also hns and vmcompute).
	Services []ServiceState `json:"services,omitempty"`
	// ClockOffset is how far the host's clock runs from the control
	// plane's, as a Go duration ("2h", "-26h").
	ClockOffset string `json:"clockOffset,omitempty"`
	// KubeletStuck is a kubelet that stopped making progress after the
	// Windows vSwitch was created and must be restarted.
	KubeletStuck bool `json:"kubeletStuck,omitempty"`
}

// ServiceState is one service's state as Get-Service or systemctl show it.
type ServiceState struct {
	// Name as the service manager knows it: containerd, kubelet, hns, vmcompute.
	Name string `json:"name"`
	// Status is Running or Stopped (Get-Service's words; systemctl's
	// active/inactive are printed from them).
	Status string `json:"status"`
	// StartType is Automatic, Manual or Disabled; empty keeps the join's.
	StartType string `json:"startType,omitempty"`
}

// Service statuses.
const (
	ServiceRunning = "Running"
	ServiceStopped = "Stopped"
)

// Start types, as Get-Service prints them (systemd's enabled is Automatic,
// disabled is Disabled).
const (
	StartAutomatic = "Automatic"
	StartManual    = "Manual"
	StartDisabled  = "Disabled"
)

// Services a joined host runs, by the service manager's name.
const (
	ServiceContainerd = "containerd"
	ServiceKubelet    = "kubelet"
	ServiceHNS        = "hns"
	ServiceVMCompute  = "vmcompute"
)

// HostServices are the services a joined host of os runs: the container
// runtime and the kubelet everywhere, and on Windows the Host Network
// Service and the Host Compute Service (vmcompute) that containerd's
// runhcs shim and the CNI call.
func HostServices(os string) []string {
	if os == "windows" {
		return []string{ServiceContainerd, ServiceKubelet, ServiceHNS, ServiceVMCompute}
	}
	return []string{ServiceContainerd, ServiceKubelet}
}
