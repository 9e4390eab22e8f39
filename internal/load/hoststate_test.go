package load

import (
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
)

func TestAHostStateLayeredOnTheLabIsRead(t *testing.T) {
	snap, err := Load(Options{Lab: true, Filenames: []string{"testdata/hoststate/good.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	var got *hybrid.HostState
	for _, o := range snap.Objects {
		if h, ok := o.Typed.(*hybrid.HostState); ok {
			got = h
		}
	}
	if got == nil {
		t.Fatal("no HostState in the snapshot")
	}
	if got.Name != "k8s-lab-win-1" || got.Spec.ClockOffset != "2h" || !got.Spec.KubeletStuck ||
		len(got.Spec.Services) != 1 || got.Spec.Services[0].Status != hybrid.ServiceStopped {
		t.Errorf("HostState read as %+v", got)
	}
}

func TestBadHostStates(t *testing.T) {
	tests := []struct {
		name string
		file string
		want string
	}{
		{
			name: "an unknown service names the service and the ones there are",
			file: "unknown-service.yaml",
			want: `testdata/hoststate/unknown-service.yaml:9 (document 1): HostState k8s-lab-win-1: spec.services[1].name: unknown service "dockerd": use one of containerd, kubelet, hns, vmcompute`,
		},
		{
			name: "a status Get-Service does not print is refused",
			file: "bad-status.yaml",
			want: `testdata/hoststate/bad-status.yaml:8 (document 1): HostState k8s-lab-win-1: spec.services[0].status: "Paused" is not a service status: use Running or Stopped`,
		},
		{
			name: "a start type Get-Service does not print is refused",
			file: "bad-start-type.yaml",
			want: `testdata/hoststate/bad-start-type.yaml:9 (document 1): HostState k8s-lab-win-1: spec.services[0].startType: "Boot" is not a start type: use Automatic, Manual or Disabled`,
		},
		{
			name: "a service given twice is refused",
			file: "twice.yaml",
			want: `testdata/hoststate/twice.yaml:9 (document 1): HostState k8s-lab-win-1: spec.services[1].name: service kubelet is given twice (also spec.services[0])`,
		},
		{
			name: "a clock offset that is not a duration is refused",
			file: "bad-duration.yaml",
			want: `testdata/hoststate/bad-duration.yaml:6 (document 1): HostState k8s-lab-win-1: spec.clockOffset: "2 hours" is not a duration (a Go duration such as "2h" or "-26h30m")`,
		},
		{
			name: "a host state for a node the cluster does not have is refused",
			file: "no-such-node.yaml",
			want: `testdata/hoststate/no-such-node.yaml:1 (document 1): HostState k8s-lab-win-9: node k8s-lab-win-9 not found: a HostState's metadata.name must be a host of the Cluster kind or a Node's name`,
		},
		{
			name: "a Windows service on a Linux node is refused",
			file: "linux-hns.yaml",
			want: `testdata/hoststate/linux-hns.yaml:1 (document 1): HostState k8s-lab-node-1: spec.services[0].name: a Linux node runs no hns service (only containerd, kubelet)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(Options{Lab: true, Filenames: []string{"testdata/hoststate/" + tt.file}})
			if err == nil {
				t.Fatal("Load succeeded")
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error\n got: %s\nwant: %s", got, tt.want)
			}
			if !IsBadInput(err) {
				t.Errorf("IsBadInput(%v) = false", err)
			}
		})
	}
}
