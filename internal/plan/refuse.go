package plan

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/check"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// refusingRules are check's Windows readiness blockers a plan cannot fix by
// adding objects: they change how the running cluster's pods are networked
// (encapsulation, BGP, IPAM borrowing, the VXLAN identity) and need a
// migration first. The other blockers (windowsDataplane, serviceCIDRs, the
// kubernetes-services-endpoint ConfigMap) the plan fixes itself.
var refusingRules = map[string]string{
	"HYB001": "plan migrate",
	"HYB002": "plan migrate",
	"HYB003": "plan migrate",
	"HYB009": "plan migrate",
	"HYB010": "plan migrate",
	"HYB011": "",
	"HYB060": "",
}

// minMinor is the oldest Kubernetes minor a plan renders for: kubeadm's
// v1beta4 JoinConfiguration (with patches) is read from 1.31 on
// (https://kubernetes.io/docs/reference/config-api/kubeadm-config.v1beta4/).
const minMinor = 31

// blockers are the reasons the cluster cannot take the nodes.
func blockers(c *model.Cluster, nodes []NodeRequest, version string) ([]Finding, error) {
	rep, err := check.Run(c, check.Options{ExpectWindows: true})
	if err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	var out []Finding
	for _, f := range rep.Findings {
		way, ok := refusingRules[f.RuleID]
		if !ok || f.Severity != check.Error {
			continue
		}
		out = append(out, Finding{ID: f.RuleID, Severity: string(f.Severity), Blocking: true,
			Object: f.Object.String(), Message: f.Message, WayOut: wayOut(way, f.Remediation)})
	}
	out = append(out, versionBlockers(version)...)
	out = append(out, poolBlockers(c, nodes)...)
	out = append(out, nodeBlockers(c, nodes)...)
	return out, nil
}

func wayOut(way, remediation string) string {
	if way == "" {
		return remediation
	}
	return "migrate the cluster first (kubectl hybrid plan migrate): " + remediation
}

func versionBlockers(version string) []Finding {
	v := strings.TrimPrefix(version, "v")
	parts := strings.Split(v, ".")
	if len(parts) < 2 {
		return nil // a placeholder: nothing to judge
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil || (major == 1 && minor >= minMinor) || major > 1 {
		return nil
	}
	return []Finding{{ID: "PLAN001", Severity: "error", Blocking: true, Object: "ClusterConfiguration",
		Message: fmt.Sprintf("Kubernetes %s is older than v1.%d: kubeadm's v1beta4 JoinConfiguration with kubelet patches is not read", version, minMinor),
		WayOut:  "upgrade the cluster (kubeadm upgrade) before joining Windows nodes"}}
}

// poolBlockers: a node needs an IPv4 pool that selects it, and one free
// block in it (a Windows node holds exactly one block).
func poolBlockers(c *model.Cluster, nodes []NodeRequest) []Finding {
	var out []Finding
	need := map[string]int{}
	for _, n := range nodes {
		p, v6 := pool(c, n)
		switch {
		case p == nil && v6:
			out = append(out, Finding{ID: "PLAN002", Severity: "error", Blocking: true, Object: "Node " + n.Name,
				Message: fmt.Sprintf("node %s: only IPv6 pools select it; Calico for Windows is IPv4 only", n.Name),
				WayOut:  "add an IPv4 IPPool (VXLAN) that selects Windows nodes"})
		case p == nil:
			out = append(out, Finding{ID: "PLAN002", Severity: "error", Blocking: true, Object: "Node " + n.Name,
				Message: fmt.Sprintf("node %s: no enabled IPv4 IPPool selects it", n.Name),
				WayOut:  "add an IPv4 IPPool (VXLAN) that selects Windows nodes"})
		default:
			need[p.Name]++
		}
	}
	for _, p := range c.IPPools {
		if need[p.Name] == 0 {
			continue
		}
		free := freeBlocks(c, p.Spec.CIDR, blockSize(p))
		if free < need[p.Name] {
			out = append(out, Finding{ID: "PLAN003", Severity: "error", Blocking: true, Object: "IPPool " + p.Name,
				Message: fmt.Sprintf("IP pool %s (%s) has %d free /%d block(s) for %d Windows node(s); each takes a whole block", p.Name, p.Spec.CIDR, free, blockSize(p), need[p.Name]),
				WayOut:  "add an IPPool for the Windows nodes, or free blocks"})
		}
	}
	return out
}

// freeBlocks counts the pool's blocks no IPAMBlock claims.
func freeBlocks(c *model.Cluster, cidr string, size int) int {
	pfx, err := netip.ParsePrefix(cidr)
	if err != nil || size < pfx.Bits() || size-pfx.Bits() > 30 {
		return 0
	}
	total := 1 << (size - pfx.Bits())
	used := map[string]bool{}
	for _, b := range c.IPAMBlocks {
		if bp, err := netip.ParsePrefix(b.Spec.CIDR); err == nil && pfx.Contains(bp.Addr()) {
			used[bp.Masked().String()] = true
		}
	}
	return total - len(used)
}

// nodeBlockers: the Windows build and name clashes with the cluster.
func nodeBlockers(c *model.Cluster, nodes []NodeRequest) []Finding {
	var out []Finding
	for _, n := range nodes {
		if _, ok := windowsBuilds[n.WindowsBuild]; !ok {
			out = append(out, Finding{ID: "PLAN004", Severity: "error", Blocking: true, Object: "Node " + n.Name,
				Message: fmt.Sprintf("node %s: Windows build %s is not a supported Windows node OS (10.0.20348 Windows Server 2022, 10.0.26100 Windows Server 2025)", n.Name, n.WindowsBuild),
				WayOut:  "install Windows Server 2022 or 2025 on the host"})
		}
		for _, existing := range c.Nodes {
			if existing.Name == n.Name {
				out = append(out, Finding{ID: "PLAN005", Severity: "error", Blocking: true, Object: "Node " + n.Name,
					Message: fmt.Sprintf("node %s is already in the cluster", n.Name), WayOut: "choose another name, or kubectl delete node first"})
			}
			for _, a := range existing.Status.Addresses {
				if a.Address == n.Address && existing.Name != n.Name {
					out = append(out, Finding{ID: "PLAN005", Severity: "error", Blocking: true, Object: "Node " + n.Name,
						Message: fmt.Sprintf("address %s is node %s's", n.Address, existing.Name), WayOut: "give the host its own address"})
				}
			}
		}
	}
	return out
}
