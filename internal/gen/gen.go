// Package gen generates large, valid hybrid Linux/Windows clusters for the
// twin: a control plane, Linux and Windows Server 2025 workers, kubeadm
// configuration, Calico through the Tigera operator (VXLAN, BGP off, HNS on
// Windows, strictAffinity), Deployments and a DaemonSet with their pods,
// Services, EndpointSlices and NetworkPolicies — as many as asked, up to and
// beyond Kubernetes' documented limits (5,000 nodes, 150,000 pods, 10,000
// Services).
//
// Output is streamed: documents are written as they are generated, and what
// is kept in memory is a compact plan (a few integers per node, app and pod),
// so 150,000 pods need tens of megabytes, not gigabytes.
//
// Output is deterministic: the same Options give the same bytes. Randomness
// comes from math/rand/v2's PCG seeded with Options.Seed; nothing reads the
// clock.
package gen

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
)

// Format is the output format.
type Format string

// Output formats: a YAML stream, or a v1 List in JSON.
const (
	FormatYAML Format = "yaml"
	FormatJSON Format = "json"
)

// Limits and per-node sizing.
const (
	// MaxNodes keeps the node network (192.168.0.0/16) and one /24 pod CIDR
	// per node inside the largest pod subnet the generator uses (/9).
	MaxNodes = 32768
	// MaxServices keeps Services well inside 10.96.0.0/12.
	MaxServices = 500_000
	// LinuxWorkloadPodsPerNode is the most workload pods a Linux worker is
	// given: the kubelet's 110 less room for calico-node, kube-proxy,
	// csi-node-driver and the odd system pod (Typha, CoreDNS).
	LinuxWorkloadPodsPerNode = 100
	// WindowsWorkloadPodsPerNode is the most workload pods a Windows worker
	// is given: maxPods 60 (the kubelet patch, and the 60 usable addresses
	// of the node's single /26 block) less calico-node-windows and
	// kube-proxy-windows, which count against maxPods on the host network.
	WindowsWorkloadPodsPerNode = 58
	// WindowsMaxPods is the Windows workers' kubelet maxPods.
	WindowsMaxPods = 60
	// LinuxMaxPods is the kubelet default.
	LinuxMaxPods = 110
)

// Options say what cluster to generate.
type Options struct {
	// Nodes is the number of nodes, the control plane included.
	Nodes int
	// WindowsNodes of Nodes are Windows Server 2025 workers; the rest after
	// the control plane are Linux workers.
	WindowsNodes int
	// Namespaces for the workloads (kube-system and the operator's come on
	// top).
	Namespaces int
	// Pods is the number of workload pods: those of the generated
	// Deployments and DaemonSet. System pods (kube-system, calico-system,
	// calico-apiserver) are the twin's and come on top.
	Pods int
	// Services with selectors, in the workload namespaces.
	Services int
	// Policies is the number of NetworkPolicies.
	Policies int
	// Seed makes the output reproducible.
	Seed uint64
	// Format is yaml (default) or json.
	Format Format
	// ObservedIPs emits the workload pods as stubs with their node and
	// address (and EndpointSlices), the way the lab records observed pods;
	// otherwise pods are left to the twin's controllers, scheduler and IPAM.
	ObservedIPs bool
	// PlainNodes emits Node objects as kubectl prints them instead of the
	// Cluster kind's hosts.
	PlainNodes bool
	// BeforeMigration gives a Linux-only cluster the Calico settings a
	// migration to Windows starts from (kubectl hybrid plan migrate):
	// VXLANCrossSubnet, BGP on, strictAffinity off, no Windows dataplane,
	// no serviceCIDRs and no kubernetes-services-endpoint ConfigMap.
	BeforeMigration bool
}

// MainFile is the name of the file WriteDir writes every document but the
// kubelet patch to: cluster.yaml or cluster.json.
func MainFile(f Format) string { return "cluster." + string(f.orDefault()) }

// PatchFile is the name of the Windows hosts' kubelet patch file. It must be
// a file of its own: kubeadm (and the loader) know a patch by its file name.
func PatchFile(f Format) string { return "kubeletconfiguration." + string(f.orDefault()) }

func (f Format) orDefault() Format {
	if f == "" {
		return FormatYAML
	}
	return f
}

// ErrPatchNeedsFile is returned when the Cluster kind's Windows hosts need
// the kubelet patch file but only one stream was given.
var ErrPatchNeedsFile = errors.New("the Windows hosts' kubelet patch (maxPods 60) is known by its file name, kubeletconfiguration.yaml, and cannot share a stream with the other documents; write a directory (--output-dir) or use --plain-nodes")

// Summary counts what was generated.
type Summary struct {
	Nodes, LinuxNodes, WindowsNodes int
	Namespaces                      int
	Deployments, DaemonSets         int
	Pods, WindowsPods               int
	Services, EndpointSlices        int
	NetworkPolicies                 int
	Documents                       int
	NodeCIDR, PodCIDR, ServiceCIDR  string
	// Files written by WriteDir, in order.
	Files []string
}

// Validate checks the options, including that the pods fit the nodes.
func (o Options) Validate() error {
	switch {
	case o.Nodes < 1 || o.Nodes > MaxNodes:
		return fmt.Errorf("--nodes must be between 1 and %d, got %d", MaxNodes, o.Nodes)
	case o.WindowsNodes < 0 || o.WindowsNodes > o.Nodes-1:
		return fmt.Errorf("--windows-nodes must be between 0 and %d (--nodes less the Linux control plane), got %d", o.Nodes-1, o.WindowsNodes)
	case o.Namespaces < 0 || o.Pods < 0 || o.Services < 0 || o.Policies < 0:
		return errors.New("--namespaces, --pods, --services and --policies must not be negative")
	case o.Services > MaxServices:
		return fmt.Errorf("--services must be at most %d, got %d", MaxServices, o.Services)
	case o.Format != "" && o.Format != FormatYAML && o.Format != FormatJSON:
		return fmt.Errorf("unknown output format %q: use yaml or json", o.Format)
	case o.Namespaces == 0 && (o.Pods > 0 || o.Services > 0 || o.Policies > 0):
		return errors.New("--namespaces must be at least 1 for pods, services or policies")
	case o.BeforeMigration && o.WindowsNodes > 0:
		return fmt.Errorf("--before-migration describes a cluster no Windows node has joined yet: --windows-nodes must be 0, got %d", o.WindowsNodes)
	}
	s, err := o.split()
	if err != nil {
		return err
	}
	if o.Services > 0 && s.deploymentPods() == 0 {
		return errors.New("--services needs Deployment pods to select: raise --pods")
	}
	return nil
}

// podSplit is how the workload pods divide between the Linux DaemonSet and
// the Linux and Windows Deployments.
type podSplit struct {
	linuxWorkers, windowsWorkers int
	agent                        bool // the node-agent DaemonSet, one pod per Linux worker
	linuxPods, windowsPods       int  // Deployment pods
}

func (s podSplit) agentPods() int {
	if s.agent {
		return s.linuxWorkers
	}
	return 0
}

func (s podSplit) deploymentPods() int { return s.linuxPods + s.windowsPods }

// split sizes the workloads: Windows gets the Windows workers' share of the
// Deployment pods, within 58 per Windows worker; Linux workers take at most
// 100 workload pods each.
func (o Options) split() (podSplit, error) {
	s := podSplit{linuxWorkers: o.Nodes - 1 - o.WindowsNodes, windowsWorkers: o.WindowsNodes}
	capL := LinuxWorkloadPodsPerNode * s.linuxWorkers
	capW := WindowsWorkloadPodsPerNode * s.windowsWorkers
	if o.Pods > capL+capW {
		return s, fmt.Errorf("--pods %d do not fit %d Linux and %d Windows workers: at most %d workload pods per Linux worker and %d per Windows worker (%d in all); add nodes",
			o.Pods, s.linuxWorkers, s.windowsWorkers, LinuxWorkloadPodsPerNode, WindowsWorkloadPodsPerNode, capL+capW)
	}
	// A node agent on every Linux worker once pods are plentiful.
	s.agent = s.linuxWorkers > 0 && o.Pods >= 10*s.linuxWorkers
	rest := o.Pods - s.agentPods()
	workers := s.linuxWorkers + s.windowsWorkers
	if workers > 0 {
		s.windowsPods = (rest*s.windowsWorkers + workers/2) / workers
	}
	s.windowsPods = min(s.windowsPods, capW)
	s.linuxPods = rest - s.windowsPods
	if over := s.linuxPods - (capL - s.agentPods()); over > 0 {
		s.linuxPods -= over
		s.windowsPods += over
	}
	return s, nil
}

// Outputs are where documents go.
type Outputs struct {
	// Main receives every document but the kubelet patch.
	Main io.Writer
	// KubeletPatch receives the Windows hosts' kubelet patch
	// (kubeletconfiguration.yaml); nil omits it, which is only allowed with
	// PlainNodes or without Windows nodes.
	KubeletPatch io.Writer
}

// Generate writes the cluster. Writes are not buffered here; pass buffered
// writers.
func Generate(o Options, out Outputs) (Summary, error) {
	if o.Format == "" {
		o.Format = FormatYAML
	}
	if err := o.Validate(); err != nil {
		return Summary{}, err
	}
	if out.Main == nil {
		return Summary{}, errors.New("gen: no output")
	}
	if !o.PlainNodes && o.WindowsNodes > 0 && out.KubeletPatch == nil {
		return Summary{}, ErrPatchNeedsFile
	}
	p, err := newPlan(o)
	if err != nil {
		return Summary{}, err
	}
	return p.write(out)
}

// WriteDir writes the cluster into dir (created if needed) as
// cluster.yaml and, with Windows nodes, kubeletconfiguration.yaml
// (or .json), the layout `-f DIR` reads.
func WriteDir(dir string, o Options) (Summary, error) {
	if o.Format == "" {
		o.Format = FormatYAML
	}
	if err := o.Validate(); err != nil {
		return Summary{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Summary{}, err
	}
	// Files of an earlier run in the other format (or an earlier patch)
	// would be read back with the new ones.
	for _, f := range []Format{FormatYAML, FormatJSON} {
		for _, name := range []string{MainFile(f), PatchFile(f)} {
			if f == o.Format && (name == MainFile(f) || o.WindowsNodes > 0) {
				continue
			}
			if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return Summary{}, err
			}
		}
	}
	var files []string
	var closers []func() error
	open := func(name string) (*bufio.Writer, error) {
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		if err != nil {
			return nil, err
		}
		w := bufio.NewWriterSize(f, 256<<10)
		files = append(files, path)
		closers = append(closers, func() error {
			if err := w.Flush(); err != nil {
				f.Close()
				return err
			}
			return f.Close()
		})
		return w, nil
	}
	closeAll := func() error {
		var first error
		for _, c := range closers {
			if err := c(); err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	mainW, err := open(MainFile(o.Format))
	if err != nil {
		return Summary{}, err
	}
	out := Outputs{Main: mainW}
	if o.WindowsNodes > 0 {
		if out.KubeletPatch, err = open(PatchFile(o.Format)); err != nil {
			_ = closeAll()
			return Summary{}, err
		}
	}
	sum, err := Generate(o, out)
	if cerr := closeAll(); err == nil {
		err = cerr
	}
	if err != nil {
		return Summary{}, err
	}
	sum.Files = files
	return sum, nil
}

// log2ceil is the number of bits needed for n values.
func log2ceil(n int) int {
	if n <= 1 {
		return 0
	}
	return bits.Len(uint(n - 1))
}
