package trace

import (
	"strings"
	"testing"
)

// nodePortAspnetapp makes win-demo/aspnetapp a NodePort Service.
const nodePortAspnetapp = `apiVersion: v1
kind: Service
metadata: {name: aspnetapp, namespace: win-demo}
spec:
  type: NodePort
  clusterIP: 10.102.98.171
  selector: {app.kubernetes.io/name: aspnetapp}
  ports: [{name: http, port: 80, targetPort: http, nodePort: 30080}]
`

const etpLocalAspnetapp = `apiVersion: v1
kind: Service
metadata: {name: aspnetapp, namespace: win-demo}
spec:
  type: NodePort
  externalTrafficPolicy: Local
  clusterIP: 10.102.98.171
  selector: {app.kubernetes.io/name: aspnetapp}
  ports: [{name: http, port: 80, targetPort: http, nodePort: 30081}]
`

// windowsHostNetworkPod is an ordinary (not HostProcess) Windows pod with
// hostNetwork.
const windowsHostNetworkPod = `apiVersion: v1
kind: Pod
metadata: {name: winhost, namespace: default}
spec:
  nodeName: k8s-lab-win-1
  hostNetwork: true
  os: {name: windows}
  tolerations: [{key: os, value: windows, effect: NoSchedule}]
  containers:
    - name: c
      image: mcr.microsoft.com/windows/nanoserver:ltsc2025
`

// manyBackends is a Service with 65 Linux backends, which every Windows
// node's load balancer references.
func manyBackends() string {
	return `apiVersion: v1
kind: Namespace
metadata: {name: big}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: big, namespace: big}
spec:
  replicas: 65
  selector: {matchLabels: {app: big}}
  template:
    metadata: {labels: {app: big}}
    spec:
      os: {name: linux}
      containers:
        - name: big
          image: registry.example/big:1
          ports: [{containerPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: big, namespace: big}
spec:
  clusterIP: 10.100.0.65
  selector: {app: big}
  ports: [{port: 80, targetPort: 8080}]
`
}

// Seed 001, "Ограничения сети Windows-узлов": every limitation is an
// outcome with its reason.
func TestWindowsLimitationsAreOutcomesWithTheirReason(t *testing.T) {
	for _, tc := range []struct {
		name      string
		extra     []string
		tweak     func(e *Engine)
		src, dst  string
		ns        string
		proto     Proto
		port      int
		delivered bool
		reason    string // substring of the reason (or of a warning when delivered)
	}{
		{name: "a Windows host cannot reach ClusterIPs",
			src: "node/k8s-lab-win-1", dst: "10.102.98.171", proto: TCP, port: 80, reason: "a Windows host cannot reach ClusterIPs"},
		{name: "a Windows host reaches a pod by its address",
			src: "node/k8s-lab-win-1", dst: "172.21.172.4", proto: TCP, port: 8080, delivered: true},
		{name: "a NodePort is not reachable from the Windows node itself",
			extra: []string{nodePortAspnetapp}, src: "node/k8s-lab-win-1", dst: "node/k8s-lab-win-1", proto: TCP, port: 30080,
			reason: "not reachable from the Windows node itself"},
		{name: "the Windows node's NodePort is reachable from another node",
			extra: []string{nodePortAspnetapp}, src: "node/k8s-lab-node-1", dst: "node/k8s-lab-win-1", proto: TCP, port: 30080, delivered: true},
		{name: "a Linux node's NodePort is reachable from a Windows pod",
			extra: []string{nodePortAspnetapp}, src: "deploy/aspnetapp", ns: "win-demo", dst: "node/k8s-lab-node-1", proto: TCP, port: 30080, delivered: true},
		{name: "ICMP through OutBoundNAT is a warning on Windows Server 2025",
			src: "deploy/aspnetapp", ns: "win-demo", dst: "1.1.1.1", proto: ICMP, delivered: true, reason: "may not come back"},
		{name: "ICMP through OutBoundNAT does not come back on Windows Server 2022",
			tweak: func(e *Engine) { e.nodes["k8s-lab-win-1"].build = 20348 },
			src:   "deploy/aspnetapp", ns: "win-demo", dst: "1.1.1.1", proto: ICMP, reason: "the echo reply is not translated back"},
		{name: "TCP through OutBoundNAT works on Windows Server 2022",
			tweak: func(e *Engine) { e.nodes["k8s-lab-win-1"].build = 20348 },
			src:   "deploy/aspnetapp", ns: "win-demo", dst: "192.168.10.24", proto: TCP, port: 10250, delivered: true},
		{name: "externalTrafficPolicy Local on Windows needs DSR",
			extra: []string{etpLocalAspnetapp}, tweak: func(e *Engine) { e.nodes["k8s-lab-win-1"].w().DSR = false },
			src: "node/k8s-lab-node-1", dst: "node/k8s-lab-win-1", proto: TCP, port: 30081, reason: "works on Windows only with DSR"},
		{name: "externalTrafficPolicy Local with DSR reaches a local backend",
			extra: []string{etpLocalAspnetapp}, src: "node/k8s-lab-node-1", dst: "node/k8s-lab-win-1", proto: TCP, port: 30081, delivered: true},
		{name: "more than 64 backends behind one load balancer is a warning",
			extra: []string{manyBackends()}, src: "deploy/aspnetapp", ns: "win-demo", dst: "10.100.0.65", proto: TCP, port: 80,
			delivered: true, reason: "at most 64 destinations"},
		{name: "a dotted short name does not resolve in a Windows pod",
			src: "deploy/aspnetapp", ns: "win-demo", dst: "hello.demo", proto: TCP, port: 80, reason: "never appends the search suffixes"},
		{name: "the same dotted short name resolves in a Linux pod (ndots 5)",
			src: "pod/check", ns: "default", dst: "hello.demo", proto: TCP, port: 80, delivered: true},
		{name: "there is no IPv6",
			src: "deploy/aspnetapp", ns: "win-demo", dst: "fd00::1", proto: TCP, port: 80, reason: "no IPv6"},
		{name: "an ordinary Windows pod cannot use hostNetwork",
			extra: []string{windowsHostNetworkPod}, src: "pod/winhost", ns: "default", dst: "172.21.172.4", proto: TCP, port: 8080,
			reason: "ordinary Windows pods cannot use the node's network"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := lab(t)
			if len(tc.extra) > 0 || tc.tweak != nil {
				e = buildWith(t, tc.extra...)
			}
			if tc.tweak != nil {
				tc.tweak(e)
			}
			r := traceOf(t, e, tc.src, tc.dst, tc.ns, tc.proto, tc.port)
			if r.Delivered != tc.delivered {
				t.Fatalf("delivered=%v (%s: %s), want %v\n%s", r.Delivered, r.Outcome, r.Reason, tc.delivered, textOf(r))
			}
			if tc.reason == "" {
				return
			}
			where := r.Reason
			if tc.delivered {
				where = strings.Join(r.Warnings, "\n")
			}
			if !strings.Contains(where, tc.reason) {
				t.Errorf("%q lacks %q\n%s", where, tc.reason, textOf(r))
			}
			if !tc.delivered && r.Fix == "" {
				t.Errorf("no fix for %q", r.Reason)
			}
		})
	}
}

// The reason text is exactly the one the brief and seed 000 state.
func TestTheWindowsHostClusterIPReasonIsExact(t *testing.T) {
	r := traceOf(t, lab(t), "node/k8s-lab-win-1", "10.102.98.171", "", TCP, 80)
	if r.Reason != "a Windows host cannot reach ClusterIPs" {
		t.Errorf("reason %q", r.Reason)
	}
}

// NodePort on a Linux node: kube-proxy's DNAT and masquerade, and the reply
// undoing both.
func TestALinuxNodePortIsTranslatedAndTheReplyUntranslated(t *testing.T) {
	e := buildWith(t, nodePortAspnetapp)
	r := traceOf(t, e, "192.168.10.50", "node/k8s-lab-node-1", "", TCP, 30080)
	if !r.Delivered {
		t.Fatalf("%s\n%s", r.Reason, textOf(r))
	}
	if hopWith(r, "@service-nodeports") == nil || hopWith(r, "masquerading") == nil {
		t.Errorf("no NodePort DNAT or masquerade hop:\n%s", textOf(r))
	}
	last := r.Hops[len(r.Hops)-1]
	if last.Before.Src != "192.168.10.24" || last.Before.SrcPort != 30080 || last.Before.Dst != "192.168.10.50" {
		t.Errorf("the reply arrives as %s, want 192.168.10.24:30080 → 192.168.10.50", last.Before)
	}
}

// Outside the cluster, only node addresses are reachable.
func TestTheNodeNetworkDoesNotRoutePodAddresses(t *testing.T) {
	r := traceOf(t, lab(t), "192.168.10.50", "172.21.41.6", "", TCP, 8080)
	if r.Delivered || !strings.Contains(r.Reason, "does not route") {
		t.Errorf("%v %s", r.Delivered, r.Reason)
	}
}
