package diff

import (
	"encoding/json"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
)

// An Installation change reaches the Linux routes only through bgp and
// Felix's Linux rules only through linuxDataplane; every change reaches the Windows nodes.
func TestAnInstallationChangeRecompilesOnlyTheDataplanePartsThatReadTheField(t *testing.T) {
	base := build(t, true)
	for _, tc := range []struct {
		name   string
		change func(*operator.Installation)
		want   parts
	}{
		{"windowsDataplane reaches only the Windows nodes", func(in *operator.Installation) {
			v := "Disabled"
			in.Spec.CalicoNetwork.WindowsDataplane = &v
		}, parts{windows: true}},
		{"serviceCIDRs reach only the Windows nodes", func(in *operator.Installation) {
			in.Spec.ServiceCIDRs = append(in.Spec.ServiceCIDRs, "10.200.0.0/16")
		}, parts{windows: true}},
		{"bgp reaches the Linux routes and the Windows nodes", func(in *operator.Installation) {
			v := "Enabled"
			if b := in.Spec.CalicoNetwork.BGP; b != nil && *b == "Enabled" {
				v = "Disabled"
			}
			in.Spec.CalicoNetwork.BGP = &v
		}, parts{routing: true, windows: true}},
		{"linuxDataplane reaches Felix's Linux rules and the Windows nodes", func(in *operator.Installation) {
			v := "Iptables"
			in.Spec.CalicoNetwork.LinuxDataplane = &v
		}, parts{policy: true, windows: true}},
		{"no change reaches nothing", func(*operator.Installation) {}, parts{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := json.Marshal(base.Installation)
			if err != nil {
				t.Fatal(err)
			}
			in := &operator.Installation{}
			if err := json.Unmarshal(raw, in); err != nil {
				t.Fatal(err)
			}
			tc.change(in)
			after := *base
			after.Installation = in
			if got := changedParts(newDigest(base), newDigest(&after)); got != tc.want {
				t.Errorf("changed parts %+v, want %+v", got, tc.want)
			}
		})
	}
}
