package engine_test

import (
	"reflect"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

func TestWithoutStrictAffinityCalicoWindowsIsDegraded(t *testing.T) {
	c := buildLab(t, whatIfNoStrictAffinity)
	if c.IPAMConfig == nil || c.IPAMConfig.Spec.StrictAffinity {
		t.Fatalf("IPAMConfiguration %+v, want the what-if's strictAffinity false", c.IPAMConfig)
	}
	if o := c.Origins[model.Key{Group: "projectcalico.org", Kind: "IPAMConfiguration", Name: "default"}]; o.File != whatIfNoStrictAffinity {
		t.Errorf("IPAMConfiguration comes from %q, want the what-if file", o.File)
	}
	s := findTigeraStatus(t, c, "calico-windows")
	const want = "Invalid StrictAffinity, it must be set to 'true' when using Calico IPAM on Windows: StrictAffinity is false, it must be set to 'true' in the default IPAMConfiguration when using Calico IPAM on Windows"
	got := map[string]string{}
	msg := ""
	for _, cond := range s.Status.Conditions {
		got[cond.Type] = cond.Status
		if cond.Type == "Degraded" {
			msg = cond.Message
		}
	}
	// kubectl get tigerastatus shows AVAILABLE and PROGRESSING empty and
	// DEGRADED True (seed 000): only the Degraded condition is set.
	if !reflect.DeepEqual(got, map[string]string{"Degraded": "True"}) {
		t.Errorf("conditions %v, want only Degraded True", got)
	}
	if msg != want {
		t.Errorf("Degraded message\n%q\nwant\n%q", msg, want)
	}
	// The other components are unaffected.
	for _, name := range []string{"calico", "apiserver", "ippools", "tiers"} {
		for _, cond := range findTigeraStatus(t, c, name).Status.Conditions {
			if cond.Type == "Available" && cond.Status != "True" {
				t.Errorf("%s Available = %s", name, cond.Status)
			}
		}
	}
}

func TestWithoutStrictAffinityTheWindowsNodeGetsNoBlock(t *testing.T) {
	c := buildLab(t, whatIfNoStrictAffinity)
	got := blocksByNode(c)
	if b, ok := got["k8s-lab-win-1"]; ok {
		t.Errorf("k8s-lab-win-1 claimed %v; Calico IPAM on Windows refuses to work without strictAffinity", b)
	}
	// The Linux nodes claim the same blocks as before.
	for node, want := range map[string]string{"k8s-lab-master-1": "172.21.70.192/26", "k8s-lab-node-1": "172.21.211.0/26", "k8s-lab-node-2": "172.21.172.0/26"} {
		if !reflect.DeepEqual(got[node], []string{want}) {
			t.Errorf("%s blocks %v, want [%s]", node, got[node], want)
		}
	}
}
