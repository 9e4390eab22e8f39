package engine_test

import (
	"errors"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/kubeadm"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

func TestMissingJoinConfigurationNamesTheFileAndTheField(t *testing.T) {
	const file = "testdata/bad-join.yaml"
	_, err := engine.Build(snapshot(t, false, file))
	var e *engine.Error
	if !errors.As(err, &e) {
		t.Fatalf("Build error %v (%T), want *engine.Error", err, err)
	}
	if e.Origin.File != file {
		t.Errorf("origin %+v, want the file %s", e.Origin, file)
	}
	const want = file + `:2 (document 1): Cluster broken: spec.hosts[1].join: no JoinConfiguration named "win-x" (by metadata.name or nodeRegistration.name)`
	if err.Error() != want {
		t.Errorf("error\n%s\nwant\n%s", err, want)
	}
}

// clusterSnapshot is a Snapshot built by hand: a Cluster kind with the hosts,
// an InitConfiguration for "cp", from cluster.yaml.
func clusterSnapshot(hosts ...hybrid.Host) *model.Snapshot {
	origin := model.Origin{File: "cluster.yaml", Doc: 1, Line: 1}
	cl := &hybrid.Cluster{Spec: hybrid.ClusterSpec{Network: hybrid.Network{CIDR: "10.0.0.0/24"}, Hosts: hosts}}
	cl.Name = "by-hand"
	init := &kubeadm.InitConfiguration{}
	init.NodeRegistration.Name = "cp"
	return &model.Snapshot{Objects: []*model.Object{
		{
			GVK:    schema.GroupVersionKind{Group: hybrid.Group, Version: hybrid.Version, Kind: "Cluster"},
			Key:    model.Key{Group: hybrid.Group, Kind: "Cluster", Name: "by-hand"},
			Typed:  cl,
			Origin: origin,
		},
		{
			GVK:    schema.GroupVersionKind{Group: "kubeadm.k8s.io", Version: "v1beta4", Kind: "InitConfiguration"},
			Key:    model.Key{Group: "kubeadm.k8s.io", Kind: "InitConfiguration"},
			Typed:  init,
			Origin: model.Origin{File: "kubeadm.yaml", Doc: 1, Line: 1},
		},
	}}
}

func TestBadClusterHostsAreEngineErrors(t *testing.T) {
	cp := hybrid.Host{Name: "cp", Address: "10.0.0.10", OS: "linux", Join: "init"}
	tests := []struct {
		name  string
		hosts []hybrid.Host
		want  string
	}{
		{
			name:  "an address that does not parse names the host's field",
			hosts: []hybrid.Host{cp, {Name: "w1", Address: "10.0.0.300", OS: "linux"}},
			want:  `cluster.yaml:1 (document 1): Cluster by-hand: spec.hosts[1].address: "10.0.0.300" is not an IP address`,
		},
		{
			name:  "a host name given twice",
			hosts: []hybrid.Host{cp, {Name: "cp", Address: "10.0.0.11", OS: "linux"}},
			want:  `cluster.yaml:1 (document 1): Cluster by-hand: spec.hosts[1].name: duplicate host "cp"`,
		},
		{
			name:  "an operating system the twin does not know",
			hosts: []hybrid.Host{cp, {Name: "mac", Address: "10.0.0.12", OS: "darwin"}},
			want:  `cluster.yaml:1 (document 1): Cluster by-hand: spec.hosts[1].os: Unsupported value: "darwin": supported values: "linux", "windows"`,
		},
		{
			name:  "a kubelet patch nobody gave",
			hosts: []hybrid.Host{cp, {Name: "w1", Address: "10.0.0.13", OS: "windows", Patches: []string{"kubeletconfiguration"}}},
			want:  `cluster.yaml:1 (document 1): Cluster by-hand: spec.hosts[1].patches[0]: no kubelet patch file named "kubeletconfiguration"`,
		},
		{
			name:  "a join naming a JoinConfiguration nobody gave",
			hosts: []hybrid.Host{cp, {Name: "w1", Address: "10.0.0.14", OS: "linux", Join: "w1"}},
			want:  `cluster.yaml:1 (document 1): Cluster by-hand: spec.hosts[1].join: no JoinConfiguration named "w1" (by metadata.name or nodeRegistration.name)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := engine.Build(clusterSnapshot(tt.hosts...))
			if err == nil {
				t.Fatalf("Build succeeded with %d nodes, want an error", len(c.Nodes))
			}
			var e *engine.Error
			if !errors.As(err, &e) || e.Origin.File != "cluster.yaml" {
				t.Errorf("error %T %+v, want *engine.Error at cluster.yaml", err, err)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n%s\nwant\n%s", err, tt.want)
			}
		})
	}
}

func TestAHandBuiltSnapshotBuilds(t *testing.T) {
	// The same constructor with good hosts builds, so the cases above fail
	// for the reason they name.
	c := build(t, clusterSnapshot(
		hybrid.Host{Name: "cp", Address: "10.0.0.10", OS: "linux", Join: "init"},
		hybrid.Host{Name: "w1", Address: "10.0.0.11", OS: "windows", KernelVersion: "10.0.26100.1"},
	))
	if len(c.Nodes) != 2 {
		t.Fatalf("nodes %v", names(c.Nodes))
	}
	if got := findNode(t, c, "w1").Labels["node.kubernetes.io/windows-build"]; got != "10.0.26100" {
		t.Errorf("w1 windows-build %q", got)
	}
	// Without an Installation no CNI runs: the nodes stay NotReady, with
	// the node lifecycle controller's not-ready taints after kubeadm's.
	cp := findNode(t, c, "cp")
	var taints []string
	for _, tn := range cp.Spec.Taints {
		taints = append(taints, tn.Key+":"+string(tn.Effect))
	}
	want := []string{"node-role.kubernetes.io/control-plane:NoSchedule", "node.kubernetes.io/not-ready:NoSchedule", "node.kubernetes.io/not-ready:NoExecute"}
	if !reflect.DeepEqual(taints, want) {
		t.Errorf("cp taints %v, want %v", taints, want)
	}
	if len(cp.Status.Conditions) != 1 || cp.Status.Conditions[0].Status != corev1.ConditionFalse || cp.Status.Conditions[0].Reason != "KubeletNotReady" {
		t.Errorf("cp conditions %+v, want Ready False KubeletNotReady", cp.Status.Conditions)
	}
}
