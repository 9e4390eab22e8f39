package engine_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// The operator chooses between the aggregated Calico API server
// (crd.projectcalico.org/v1 CRDs) and calico-webhooks (projectcalico.org/v3
// CRDs) from what the cluster serves, not from how a dump spells a group.
func TestTheCalicoCRDModeComesFromEvidenceNotFromAnObjectsGroup(t *testing.T) {
	tests := []struct {
		name         string
		extra        string
		wantWebhooks bool
		// wantNote: the twin says it does not render the aggregated server.
		wantNote bool
	}{
		{"the lab alone runs calico-webhooks", "", true, false},
		{"a crd.projectcalico.org object beside the lab is only a spelling", `apiVersion: crd.projectcalico.org/v1
kind: IPAMConfig
metadata:
  name: default
spec:
  strictAffinity: true
  autoAllocateBlocks: true
`, true, false},
		{"a CustomResourceDefinition of the crd.projectcalico.org group shows v1 CRDs", `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ippools.crd.projectcalico.org
spec:
  group: crd.projectcalico.org
  names: {kind: IPPool, plural: ippools}
  scope: Cluster
`, false, true},
		{"the aggregated server's APIService shows v1 CRDs", `apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v3.projectcalico.org
spec:
  group: projectcalico.org
  version: v3
`, false, true},
		{"the calico-apiserver Deployment shows v1 CRDs", `apiVersion: apps/v1
kind: Deployment
metadata:
  name: calico-apiserver
  namespace: calico-apiserver
spec:
  replicas: 0
  selector: {matchLabels: {k8s-app: calico-apiserver}}
  template:
    metadata: {labels: {k8s-app: calico-apiserver}}
    spec:
      containers: [{name: calico-apiserver, image: quay.io/calico/apiserver:v3.33.0}]
`, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var files []string
			if tt.extra != "" {
				f := filepath.Join(t.TempDir(), "extra.yaml")
				if err := os.WriteFile(f, []byte(tt.extra), 0o600); err != nil {
					t.Fatal(err)
				}
				files = append(files, f)
			}
			c := buildLab(t, files...)
			has := slices.ContainsFunc(c.Deployments, func(d *appsv1.Deployment) bool {
				return d.Namespace == "calico-system" && d.Name == "calico-webhooks"
			})
			if has != tt.wantWebhooks {
				t.Errorf("calico-webhooks rendered: %v, want %v", has, tt.wantWebhooks)
			}
			noted := slices.ContainsFunc(c.Notes, func(n model.Note) bool {
				return n.Severity == model.Assumption && strings.Contains(n.Message, "aggregated Calico API server")
			})
			if noted != tt.wantNote {
				t.Errorf("note on the aggregated API server: %v, want %v (%v)", noted, tt.wantNote, c.Notes)
			}
			if ts := findTigeraStatus(t, c, "apiserver"); ts.Status.Conditions[0].Type != "Available" || ts.Status.Conditions[0].Status != "True" {
				t.Errorf("apiserver TigeraStatus %+v, want Available", ts.Status.Conditions)
			}
		})
	}
}

// A live read takes a Calico kind from crd.projectcalico.org only when the
// server does not serve projectcalico.org/v3: the operator's v1 mode. The
// same object from a file is only a spelling.
func TestALiveReadFromTheV1GroupShowsV1CRDs(t *testing.T) {
	s := snapshot(t, true)
	v1 := `apiVersion: crd.projectcalico.org/v1
kind: IPAMConfig
metadata:
  name: default
spec:
  strictAffinity: true
`
	f := filepath.Join(t.TempDir(), "ipamconfig.yaml")
	if err := os.WriteFile(f, []byte(v1), 0o600); err != nil {
		t.Fatal(err)
	}
	extra := snapshot(t, false, f).Objects[0]
	for _, tt := range []struct {
		name, origin string
		wantWebhooks bool
	}{
		{"read from a file", f, true},
		{"read from a live cluster", "live:ipamconfig.crd.projectcalico.org/default", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := *extra
			o.Origin.File = tt.origin
			snap := &model.Snapshot{Warnings: s.Warnings}
			for _, x := range s.Objects {
				if x.Key != o.Key {
					snap.Objects = append(snap.Objects, x)
				}
			}
			snap.Objects = append(snap.Objects, &o)
			c := build(t, snap)
			has := slices.ContainsFunc(c.Deployments, func(d *appsv1.Deployment) bool { return d.Name == "calico-webhooks" })
			if has != tt.wantWebhooks {
				t.Errorf("calico-webhooks rendered: %v, want %v", has, tt.wantWebhooks)
			}
		})
	}
}
