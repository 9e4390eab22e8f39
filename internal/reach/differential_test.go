package reach

import (
	"math/rand/v2"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/felix"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/policy"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach/classes"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// Calico policies added to generated clusters: a tier whose policy passes
// one namespace's traffic and denies the rest of what it selects, and a
// default-tier GlobalNetworkPolicy denying one namespace's pods outside a
// network (notNets) before allowing.
const genCalicoExtra = `apiVersion: projectcalico.org/v3
kind: GlobalNetworkPolicy
metadata: {name: security.pass-ns-1}
spec:
  tier: security
  order: 5
  selector: projectcalico.org/namespace == '%NS1%'
  types: [Ingress]
  ingress:
    - action: Pass
      source:
        namespaceSelector: projectcalico.org/name in {'%NS1%', '%NS2%'}
    - action: Deny
      protocol: UDP
---
apiVersion: projectcalico.org/v3
kind: GlobalNetworkPolicy
metadata: {name: deny-ns-2-outside}
spec:
  order: 100
  selector: projectcalico.org/namespace == '%NS2%'
  types: [Ingress, Egress]
  ingress:
    - action: Deny
      source:
        notNets: [%NET%]
        serviceAccounts: {names: [default]}
    - action: Allow
  egress:
    - action: Allow
      destination:
        notPorts: [9999]
    - action: Deny
`

// genEngineWith is genEngine's cluster with extra documents in its
// directory (%NSn% is the n-th generated namespace, %NET% a /16 of the
// pod network).
func genEngineWith(tb testing.TB, pods int, extra string) *trace.Engine {
	tb.Helper()
	dir := genDir(tb, pods, 2)
	snap, err := load.Load(load.Options{Filenames: []string{dir}})
	if err != nil {
		tb.Fatal(err)
	}
	c, err := engine.Build(snap)
	if err != nil {
		tb.Fatal(err)
	}
	var nss []string
	for _, ns := range c.Namespaces {
		if len(nss) < 2 && ns.Name != "default" && !strings.HasPrefix(ns.Name, "kube-") && !strings.HasPrefix(ns.Name, "calico") && !strings.HasPrefix(ns.Name, "tigera") {
			nss = append(nss, ns.Name)
		}
	}
	if len(nss) < 2 {
		tb.Fatalf("generated namespaces %v", nss)
	}
	net := "172.16.0.0/16"
	for _, p := range c.Pods {
		if a, err := netip.ParseAddr(p.Status.PodIP); err == nil && !p.Spec.HostNetwork && a.Is4() {
			net = netip.PrefixFrom(a, 16).Masked().String()
			break
		}
	}
	y := strings.NewReplacer("%NS1%", nss[0], "%NS2%", nss[1], "%NET%", net).Replace(extra)
	if err := os.WriteFile(filepath.Join(dir, "zz-calico.yaml"), []byte(y), 0o644); err != nil {
		tb.Fatal(err)
	}
	snap, err = load.Load(load.Options{Filenames: []string{dir}})
	if err != nil {
		tb.Fatal(err)
	}
	if c, err = engine.Build(snap); err != nil {
		tb.Fatal(err)
	}
	e, err := trace.New(c)
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

// TestTraceReachAndTheRenderedStateAgreeOnGeneratedClusters samples pod
// pairs of generated clusters (Kubernetes and Calico policies, Linux and
// Windows nodes) and holds three answers to each other: reach's cell,
// trace's walk, and the policy verdicts read straight from the rendered
// state: the Linux node's printed table ip calico (linux.Node.EvalCalico)
// and the Windows endpoint's HNS ACLs (trace.Engine.EndpointACL). Every
// policy hop of the trace must say what the rendered state says, a cell
// must say what the trace says, and a pair the rendered state denies at
// either end is never delivered.
func TestTraceReachAndTheRenderedStateAgreeOnGeneratedClusters(t *testing.T) {
	if testing.Short() {
		t.Skip("builds generated clusters")
	}
	for _, tc := range []struct {
		name   string
		e      func(testing.TB) *trace.Engine
		calico int // at least this many pairs with a Calico policy at an end
	}{
		{"the generator's policies", func(tb testing.TB) *trace.Engine { return genEngine(tb, 900) }, 0},
		{"with tiers, Pass, Deny, notNets, notPorts and service accounts", func(tb testing.TB) *trace.Engine { return genEngineWith(tb, 900, genCalicoExtra) }, 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := tc.e(t)
			m, err := Compute(e, Options{AllNamespaces: true})
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(5, 6))
			checked, denied, calico := 0, 0, 0
			for tries := 0; checked < 400 && tries < 20000; tries++ {
				i, j := r.IntN(len(m.Sources)), r.IntN(len(m.Destinations))
				s, d := m.Sources[i], m.Destinations[j]
				if s.class == nil || d.class == nil || d.Kind == "service" || m.At(i, j).Verdict == NotApplicable {
					continue
				}
				a := s.class.Members[r.IntN(len(s.class.Members))]
				b := d.class.Members[r.IntN(len(d.class.Members))]
				if a.Pod == b.Pod {
					continue
				}
				src, err := e.ParseSource("pod/"+a.Pod.Namespace+"/"+a.Pod.Name, "")
				if err != nil {
					t.Fatal(err)
				}
				dst, err := e.ParseTarget(b.IP.String(), "")
				if err != nil {
					t.Fatal(err)
				}
				res := e.Trace(src, dst, d.Proto, d.Port)
				cell := m.At(i, j)
				if cell.Verdict != Partial && (cell.Verdict == Allowed) != res.Delivered {
					t.Errorf("%s/%s → %s %s: cell %s (%s), trace %s: %s", a.Pod.Namespace, a.Pod.Name, b.IP, flow(d.Proto, d.Port), cell.Verdict, m.Reasons[cell.Reason].Text, res.Outcome, res.Reason)
				}
				f := felix.Flow{Proto: d.Proto.Upper(), DstPort: int32(d.Port)}
				egress := renderedVerdict(t, e, a.Pod.Spec.NodeName, a, policy.Egress, b.IP, f, d)
				ingress := renderedVerdict(t, e, b.Pod.Spec.NodeName, b, policy.Ingress, a.IP, f, d)
				if (!egress || !ingress) && res.Delivered {
					t.Errorf("%s/%s → %s %s: the rendered state denies (egress %t, ingress %t) but the trace delivers", a.Pod.Namespace, a.Pod.Name, b.IP, flow(d.Proto, d.Port), egress, ingress)
				}
				if !egress || !ingress {
					denied++
				}
				if s.class.CalicoOut || d.class.CalicoIn {
					calico++
				}
				for _, h := range res.Hops {
					if h.Depth != 0 || h.Leg != res.Hops[0].Leg {
						continue
					}
					var want bool
					switch {
					case strings.Contains(h.Component, "filter-cali-fw-"), strings.Contains(h.Component, "ACL_ENDPOINT_GROUP_IPV4_OUT"):
						want = egress
					case strings.Contains(h.Component, "filter-cali-tw-"), strings.Contains(h.Component, "ACL_ENDPOINT_GROUP_IPV4_IN"):
						want = ingress
					default:
						continue
					}
					if (h.Verdict != trace.Drop) != want {
						t.Errorf("%s/%s → %s %s: trace's %s says %s (%s), the rendered state %t", a.Pod.Namespace, a.Pod.Name, b.IP, flow(d.Proto, d.Port), h.Component, h.Verdict, h.Reason, want)
					}
				}
				checked++
			}
			if checked < 300 || denied == 0 || calico < tc.calico {
				t.Fatalf("checked %d pairs, %d denied by the rendered state, %d with a Calico policy: too few to compare", checked, denied, calico)
			}
			t.Logf("%d pairs agree (%d denied by policy, %d with a Calico policy at an end), %d classes", checked, denied, calico, m.Stats.Classes)
		})
	}
}

// renderedVerdict reads one end's policy verdict from the rendered state
// of the pod's node.
func renderedVerdict(t *testing.T, e *trace.Engine, node string, mb classes.Member, dir policy.Direction, peer netip.Addr, f felix.Flow, d Destination) bool {
	t.Helper()
	if lx := e.LinuxNode(node); lx != nil {
		f.Peer = peer
		v, err := lx.EvalCalico(mb.Pod, linux.Direction(dir), f)
		if err != nil {
			t.Fatal(err)
		}
		return v.Allowed
	}
	v, ok := e.EndpointACL(mb.Pod, dir, peer, d.Proto, d.Port)
	if !ok {
		t.Fatalf("no Windows endpoint for %s/%s", mb.Pod.Namespace, mb.Pod.Name)
	}
	return v.Allowed
}
