package load

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load/rawdoc"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// checkHostState finds the first field of a HostState that cannot be what
// it says: a service no host runs, a status or start type the service
// manager does not print, a clock offset that is not a Go duration.
func checkHostState(h *hybrid.HostState) *rawdoc.Problem {
	known := hybrid.HostServices("windows")
	seen := map[string]int{}
	for i, s := range h.Spec.Services {
		at := func(field string) rawdoc.FieldPath {
			return rawdoc.ParsePath("spec.services").With(rawdoc.IndexElem(i), rawdoc.KeyElem(field))
		}
		switch {
		case !slices.Contains(known, s.Name):
			return &rawdoc.Problem{Path: at("name"), Msg: fmt.Sprintf("unknown service %s: use one of %s", strconv.Quote(rawdoc.Clip(s.Name)), strings.Join(known, ", "))}
		case seen[s.Name] > 0:
			return &rawdoc.Problem{Path: at("name"), Msg: fmt.Sprintf("service %s is given twice (also spec.services[%d])", s.Name, seen[s.Name]-1)}
		case s.Status != hybrid.ServiceRunning && s.Status != hybrid.ServiceStopped:
			return &rawdoc.Problem{Path: at("status"), Msg: fmt.Sprintf("%s is not a service status: use %s or %s", strconv.Quote(rawdoc.Clip(s.Status)), hybrid.ServiceRunning, hybrid.ServiceStopped)}
		}
		switch s.StartType {
		case "", hybrid.StartAutomatic, hybrid.StartManual, hybrid.StartDisabled:
		default:
			return &rawdoc.Problem{Path: at("startType"), Msg: fmt.Sprintf("%s is not a start type: use %s, %s or %s", strconv.Quote(rawdoc.Clip(s.StartType)), hybrid.StartAutomatic, hybrid.StartManual, hybrid.StartDisabled)}
		}
		seen[s.Name] = i + 1
	}
	if off := h.Spec.ClockOffset; off != "" {
		if _, err := time.ParseDuration(off); err != nil {
			return &rawdoc.Problem{Path: rawdoc.ParsePath("spec.clockOffset"), Msg: strconv.Quote(rawdoc.Clip(off)) + ` is not a duration (a Go duration such as "2h" or "-26h30m")`}
		}
	}
	return nil
}

// checkHostStates checks each HostState against the hosts the snapshot
// gives (the Cluster kind's, then the Nodes'): its node must be one of
// them, and a Linux host runs neither hns nor vmcompute.
func checkHostStates(snap *model.Snapshot) error {
	var states []*model.Object
	hostOS := map[string]string{}
	for _, o := range snap.Objects {
		switch t := o.Typed.(type) {
		case *hybrid.HostState:
			states = append(states, o)
		case *hybrid.Cluster:
			for _, h := range t.Spec.Hosts {
				hostOS[h.Name] = h.OS
			}
		}
	}
	if len(states) == 0 {
		return nil
	}
	for _, o := range snap.Objects {
		if n, ok := o.Typed.(*corev1.Node); ok {
			if _, known := hostOS[n.Name]; !known {
				hostOS[n.Name] = n.Labels[corev1.LabelOSStable]
			}
		}
	}
	for _, o := range states {
		h := o.Typed.(*hybrid.HostState)
		os, ok := hostOS[h.Name]
		if !ok {
			return markerError(o, "node %s not found: a HostState's metadata.name must be a host of the Cluster kind or a Node's name", printable(h.Name))
		}
		if os == "windows" || os == "" {
			continue // a Node without kubernetes.io/os: no OS to check against
		}
		for i, s := range h.Spec.Services {
			if !slices.Contains(hybrid.HostServices(os), s.Name) {
				return markerError(o, "spec.services[%d].name: a Linux node runs no %s service (only %s)", i, s.Name, strings.Join(hybrid.HostServices(os), ", "))
			}
		}
	}
	return nil
}
