// Package plan computes what joining Windows nodes to a cluster takes: the
// cluster-side manifests (only the changes the cluster needs), the files
// each Windows host needs, an ordered runbook, and the proof: the plan
// applied to the twin as a what-if, with what the joined nodes will show.
// Every value is read from the cluster the input describes; a value the
// input does not hold is a named placeholder with the command that fills
// it. Plan is pure: a built cluster and its snapshot in, a bundle out.
package plan

import (
	"fmt"
	"net/netip"
	"regexp"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Windows Server builds a plan can join, with the release year that names
// their RuntimeClass and the image tag family (Kubernetes' Windows support
// matrix: https://kubernetes.io/docs/concepts/windows/intro/#windows-os-version-support).
var windowsBuilds = map[string]string{
	"10.0.20348": "2022",
	"10.0.26100": "2025",
}

// buildRE is a Windows build as node.kubernetes.io/windows-build spells it.
var buildRE = regexp.MustCompile(`^10\.0\.[0-9]+$`)

// NodeRequest is one Windows node to join.
type NodeRequest struct {
	Name    string `json:"name"`
	Address string `json:"address"`
	// WindowsBuild is major.minor.build (10.0.26100); empty takes the build
	// of the cluster's Windows nodes, else Windows Server 2025's.
	WindowsBuild string `json:"windowsBuild,omitempty"`
	// CPU and Memory are the host's capacity (e.g. "4", "8Gi"), which only
	// the host knows; without them the twin's scheduler sees none.
	CPU    string `json:"cpu,omitempty"`
	Memory string `json:"memory,omitempty"`
}

// Request is what the user asks for.
type Request struct {
	Nodes []NodeRequest
	// APIServer is the kubeconfig's server URL when the input is a live
	// cluster: the endpoint of last resort.
	APIServer string
}

// ValidateRequest checks the nodes' names and addresses; its errors are
// bad usage, not findings.
func ValidateRequest(r Request) error {
	if len(r.Nodes) == 0 {
		return fmt.Errorf("no node given: plan join-windows NODE --ip ADDRESS")
	}
	seen := map[string]bool{}
	addrs := map[netip.Addr]bool{}
	for _, n := range r.Nodes {
		if errs := validation.IsDNS1123Subdomain(n.Name); len(errs) > 0 {
			return fmt.Errorf("node name %q: %s", n.Name, errs[0])
		}
		if seen[n.Name] {
			return fmt.Errorf("node %s is given twice", n.Name)
		}
		seen[n.Name] = true
		a, err := netip.ParseAddr(n.Address)
		if err != nil || !a.Is4() {
			return fmt.Errorf("node %s: --ip %q is not an IPv4 address", n.Name, n.Address)
		}
		if addrs[a] {
			return fmt.Errorf("node %s: address %s is given twice", n.Name, a)
		}
		addrs[a] = true
		if n.WindowsBuild != "" && !buildRE.MatchString(n.WindowsBuild) {
			return fmt.Errorf("node %s: --windows-build %q is not a Windows build (10.0.26100, 10.0.20348)", n.Name, n.WindowsBuild)
		}
	}
	return nil
}

// Where a step runs or a file goes.
const (
	ControlPlane = "control plane"
	WindowsHost  = "Windows host"
	Workstation  = "workstation"
)

// Bundle is the plan: refused (blocking Findings, nothing else) or
// complete.
type Bundle struct {
	Refused bool       `json:"refused"`
	Nodes   []NodePlan `json:"nodes"`
	// Cluster are the manifests to apply, by name under cluster/.
	Cluster []File `json:"clusterFiles,omitempty"`
	// Patches are Linux DaemonSets that need the Linux node selector.
	Patches  []DSPatch `json:"daemonSetPatches,omitempty"`
	Steps    []Step    `json:"steps"`
	Findings []Finding `json:"findings"`
	// Values are the values read from the cluster, and placeholders.
	Values []Value `json:"values"`
	Proof  *Proof  `json:"proof,omitempty"`
	Inputs Inputs  `json:"-"`
}

// NodePlan is one node: what it is given and what the twin predicts.
type NodePlan struct {
	Name          string `json:"name"`
	Address       string `json:"address"`
	WindowsBuild  string `json:"windowsBuild"`
	RuntimeClass  string `json:"runtimeClass"`
	Block         string `json:"block"`
	TunnelAddress string `json:"tunnelAddress"`
	VTEPMAC       string `json:"vtepMAC"`
	MaxPods       int    `json:"maxPods"`
	Ready         bool   `json:"ready"`
	// Files go onto the host, by Windows path.
	Files []File `json:"files"`
}

// File is one rendered file.
type File struct {
	// Path is where it goes: a Windows path on a host, or the name under
	// cluster/ for a manifest to apply.
	Path string `json:"path"`
	// Where is the machine: ControlPlane, WindowsHost or Workstation.
	Where string `json:"where"`
	// Object: the file is a Kubernetes, kubeadm or kubelet object (part of
	// -o yaml's stream).
	Object bool   `json:"object"`
	Body   string `json:"body"`
}

// DSPatch is a Linux DaemonSet that needs the Linux node selector.
type DSPatch struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Reason    string `json:"reason"`
}

// Step is one runbook step.
type Step struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Where    string   `json:"where"`
	Commands []string `json:"commands"`
	// Expect is the output the twin predicts for the commands (simulated).
	Expect []string `json:"expect,omitempty"`
	Verify []Check  `json:"verify"`
	// Idempotent says what re-running the step does.
	Idempotent string `json:"idempotent"`
	Why        string `json:"why,omitempty"`
}

// Check is one verification command with the answer the twin gives.
type Check struct {
	Command string `json:"command"`
	Expect  string `json:"expect"`
}

// Finding is a reason the plan is refused, or a note on it.
type Finding struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
	Blocking bool   `json:"blocking"`
	Object   string `json:"object,omitempty"`
	Message  string `json:"message"`
	// WayOut says what to do; "plan migrate" when the cluster must be
	// migrated first.
	WayOut string `json:"wayOut,omitempty"`
}

// Value is one value the plan uses and where it came from.
type Value struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Source string `json:"source"`
	// Fill is the command that gives a placeholder's value.
	Fill string `json:"fill,omitempty"`
}

// Inputs are the values read from the cluster.
type Inputs struct {
	Endpoint       string
	Version        string
	ServiceCIDR    string
	PodCIDR        string
	PoolName       string
	PoolCIDR       string
	BlockSize      int
	VNI            int
	Port           int
	CAHash         string
	NodeCIDR       string
	ControlPlanes  []string
	Containerd     string
	Crictl         string
	Domain         string
	NTPServer      string
	APIHost        string
	APIHostAddress string
}

// Placeholders: values no input holds, filled at the step that needs them.
const (
	TokenPlaceholder  = "<BOOTSTRAP_TOKEN>"
	CAHashPlaceholder = "sha256:<CA_CERT_HASH>"
)

// Input is the cluster to plan for: the built twin and the snapshot it was
// built from (the what-if layers the plan's objects on the snapshot).
type Input struct {
	Cluster  *model.Cluster
	Snapshot *model.Snapshot
}
