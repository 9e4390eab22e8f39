package diff

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// whatIf writes a what-if document to a file of its own.
func whatIf(t *testing.T, doc string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "what-if.yaml")
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

const natOutgoingDisabled = `apiVersion: operator.tigera.io/v1
kind: Installation
metadata:
  name: default
spec:
  serviceCIDRs: [10.96.0.0/12]
  calicoNetwork:
    bgp: Disabled
    linuxDataplane: Nftables
    windowsDataplane: HNS
    ipPools:
      - {name: default-ipv4-ippool, cidr: 172.21.0.0/16, blockSize: 26, encapsulation: VXLAN, natOutgoing: Disabled, nodeSelector: all()}
`

const vniChanged = `apiVersion: projectcalico.org/v3
kind: FelixConfiguration
metadata:
  name: default
spec:
  vxlanVNI: 4097
`

func TestChangesWindowsAppliesOnlyToNewEndpointsAreReportedWithTheProcedure(t *testing.T) {
	for _, tc := range []struct {
		name      string
		doc       string
		field     string
		procedure string // a step the procedure must hold
		notStep   string // a step it must not hold
	}{
		{"a natOutgoing change on the lab applies to new pods only and names the pods' re-creation",
			natOutgoingDisabled, "spec.calicoNetwork.ipPools[name=default-ipv4-ippool].natOutgoing", "kubectl drain", "Remove-HnsNetwork"},
		{"a VNI change on the lab needs the Calico HNS network deleted and re-created",
			vniChanged, "spec.vxlanVNI", "Remove-HnsNetwork", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Compare(build(t, true), build(t, true, whatIf(t, tc.doc)), Options{NoReach: true, NoDataplane: true})
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(r.Deferred, func(d Deferred) bool { return d.Field == tc.field })
			if i < 0 {
				t.Fatalf("deferred changes %+v, want %s", r.Deferred, tc.field)
			}
			d := r.Deferred[i]
			if !slices.Equal(d.Nodes, []string{"k8s-lab-win-1"}) {
				t.Errorf("nodes %v, want the lab's Windows node", d.Nodes)
			}
			proc := strings.Join(d.Procedure, "\n")
			if !strings.Contains(proc, tc.procedure) || (tc.notStep != "" && strings.Contains(proc, tc.notStep)) {
				t.Errorf("procedure:\n%s\nwant %q and not %q", proc, tc.procedure, tc.notStep)
			}
			var b strings.Builder
			if err := r.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), "Not applied to existing Windows endpoints or HNS networks") {
				t.Errorf("the text does not say the change is not applied to existing endpoints:\n%s", b.String())
			}
		})
	}
}

func TestAChangeOnAClusterWithoutWindowsNodesIsNotDeferred(t *testing.T) {
	objs := []ObjectChange{{Object: ObjectRef{Group: "projectcalico.org", Kind: "IPPool", Name: "p"}, Change: Changed,
		Fields: []FieldChange{{Path: "spec.natOutgoing", Before: "true", After: "false"}}}}
	if d := deferredChanges(objs, build(t, false)); d != nil {
		t.Errorf("deferred %+v on a cluster without nodes", d)
	}
}

func TestAnIPPoolsNATOutgoingChangeIsDeferredOnWindowsNodes(t *testing.T) {
	objs := []ObjectChange{{Object: ObjectRef{Group: "projectcalico.org", Kind: "IPPool", Name: "p"}, Change: Changed,
		Fields: []FieldChange{{Path: "spec.natOutgoing", Before: "true", After: "false"}, {Path: "spec.blockSize", Before: "26", After: "27"}}}}
	d := deferredChanges(objs, build(t, true))
	if len(d) != 1 || d[0].Field != "spec.natOutgoing" || !strings.Contains(d[0].Applies, "keep their OutBoundNAT") {
		t.Errorf("deferred %+v, want only natOutgoing, saying existing endpoints keep OutBoundNAT", d)
	}
}

func TestAnUnsetVNIAndTheDefaultVNIAreTheSameSetting(t *testing.T) {
	for _, tc := range []struct {
		name          string
		before, after string
		deferred      bool
	}{
		{"4096 to unset is no change", "4096", "", false},
		{"unset to 4096 is no change", "", "4096", false},
		{"unset to 4097 is a change", "", "4097", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := []ObjectChange{{Object: ObjectRef{Group: "projectcalico.org", Kind: "FelixConfiguration", Name: "default"}, Change: Changed,
				Fields: []FieldChange{{Path: "spec.vxlanVNI", Before: tc.before, After: tc.after}}}}
			if got := len(deferredChanges(objs, build(t, true))) == 1; got != tc.deferred {
				t.Errorf("deferred %t, want %t", got, tc.deferred)
			}
		})
	}
}

func TestAfterANATOutgoingChangeExistingWindowsEndpointsKeepTheirOutBoundNAT(t *testing.T) {
	r, err := Compare(build(t, true), build(t, true, whatIf(t, natOutgoingDisabled)), Options{NoReach: true})
	if err != nil {
		t.Fatal(err)
	}
	linux := false
	for _, n := range r.Nodes {
		if n.OS != "windows" {
			linux = linux || !n.Felix.Empty()
			continue
		}
		for _, l := range append(append(n.Endpoints.Removed, n.Endpoints.Added...), append(n.VFP.Removed, n.VFP.Added...)...) {
			if strings.Contains(l, "OutBoundNAT") || strings.Contains(l, "OUTBOUNDNAT") {
				t.Errorf("node %s: an existing endpoint's outbound NAT changed: %s", n.Node, l)
			}
		}
	}
	if !linux {
		t.Errorf("no Linux node's Felix rules changed: the natOutgoing change did not reach the twin")
	}
}

func TestAfterANATOutgoingChangeANewWindowsPodGetsTheNewSetting(t *testing.T) {
	pod := whatIf(t, "apiVersion: v1\nkind: Pod\nmetadata: {name: new-win-pod, namespace: win-demo}\nspec:\n  nodeName: k8s-lab-win-1\n  containers: [{name: c, image: mcr.microsoft.com/windows/nanoserver:ltsc2022}]\nstatus: {phase: Running, podIP: 172.21.41.9}\n")
	for _, tc := range []struct {
		name       string
		natDoc     string
		exceptions bool
	}{
		{"with natOutgoing on, the new pod's endpoint has OutBoundNAT with exceptions", "", true},
		{"with natOutgoing off, the new pod's endpoint has none", natOutgoingDisabled, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := []string{pod}
			if tc.natDoc != "" {
				files = []string{whatIf(t, tc.natDoc), pod}
			}
			r, err := Compare(build(t, true), build(t, true, files...), Options{NoReach: true})
			if err != nil {
				t.Fatal(err)
			}
			got := false
			for _, n := range r.Nodes {
				for _, l := range n.Endpoints.Added {
					got = got || strings.HasPrefix(l, "endpoint 172.21.41.9 pod win-demo/new-win-pod: OutBoundNAT exceptions")
				}
			}
			if got != tc.exceptions {
				t.Errorf("the new pod's endpoint has OutBoundNAT exceptions: %t, want %t", got, tc.exceptions)
			}
		})
	}
}
