package reach

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// synthetic is a cluster on top of the lab: the lab's Cluster kind with
// linux extra Linux workers and windows extra Windows Server 2025 workers,
// and apps namespaces each with a Linux Deployment of linuxReplicas pods
// behind a Service, every fourth namespace also a Windows Deployment of
// windowsReplicas pods, and NetworkPolicies: every namespace isolates its
// web pods for ingress and lets in its team's namespaces and win-demo on
// the named port; every third namespace also limits egress.
func synthetic(linux, windows, apps, linuxReplicas, windowsReplicas int) string {
	var b strings.Builder
	b.WriteString(`apiVersion: hybrid.kubectl-hybrid.io/v1alpha1
kind: Cluster
metadata:
  name: lab
spec:
  network:
    cidr: 192.168.0.0/16
    gateway: 192.168.10.1
    firewall:
      - name: kubelet
        hosts: [k8s-lab-win-1]
        protocol: TCP
        ports: [10250]
        from: [192.168.0.0/16]
        action: Allow
  hosts:
`)
	host := func(name, addr, os string, extra string) {
		img, kern, nic := "Ubuntu 26.04.1 LTS", "7.0.0-42-generic", "{name: ens18, mtu: 1500}"
		if os == "windows" {
			img, kern, nic = "Windows Server 2025 Datacenter", "10.0.26100.33438", "{name: Ethernet, mtu: 1500}"
		}
		fmt.Fprintf(&b, `    - name: %s
      address: %s
      os: %s
      osImage: %s
      kernelVersion: %s
      containerRuntime: containerd://2.2.2
      kubeletVersion: v1.37.2
      nic: %s
      cpu: "64"
      memory: 256Gi
%s`, name, addr, os, img, kern, nic, extra)
	}
	host("k8s-lab-master-1", "192.168.10.23", "linux", "      join: init\n")
	host("k8s-lab-node-1", "192.168.10.24", "linux", "")
	host("k8s-lab-node-2", "192.168.10.26", "linux", "")
	host("k8s-lab-win-1", "192.168.10.25", "windows", "      join: k8s-lab-win-1\n      patches: [kubeletconfiguration]\n      observed:\n        vxlanTunnelMAC: \"00:15:5d:eb:90:ae\"\n        drPortName: 1803C339-EAB3-4933-8F1F-62E7D36C6E21\n")
	for i := 0; i < linux; i++ {
		host(fmt.Sprintf("lx-%03d", i), fmt.Sprintf("192.168.%d.%d", 20+i/200, 10+i%200), "linux", "")
	}
	for i := 0; i < windows; i++ {
		host(fmt.Sprintf("win-%03d", i), fmt.Sprintf("192.168.%d.%d", 40+i/200, 10+i%200), "windows",
			fmt.Sprintf("      patches: [kubeletconfiguration]\n      observed:\n        vxlanTunnelMAC: \"00:15:5d:ee:%02x:%02x\"\n        drPortName: 2803C339-EAB3-4933-8F1F-%012X\n", i/256, i%256, i))
	}
	for i := 0; i < apps; i++ {
		fmt.Fprintf(&b, `---
apiVersion: v1
kind: Namespace
metadata: {name: app-%[1]d, labels: {team: t%[2]d}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: app-%[1]d}
spec:
  replicas: %[3]d
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      os: {name: linux}
      nodeSelector: {kubernetes.io/os: linux}
      containers:
        - name: web
          image: registry.example/web:1
          ports: [{name: http, containerPort: 8080}]
          resources: {requests: {cpu: 10m, memory: 16Mi}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: app-%[1]d}
spec:
  clusterIP: 10.110.%[4]d.%[5]d
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: http}]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: from-team, namespace: app-%[1]d}
spec:
  podSelector: {matchLabels: {app: web}}
  ingress:
    - from: [{namespaceSelector: {matchLabels: {team: t%[2]d}}}, {namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: win-demo}}}]
      ports: [{port: http}]
`, i, i%4, linuxReplicas, i/200, 10+i%200)
		if i%3 == 0 {
			fmt.Fprintf(&b, `---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: egress-team, namespace: app-%[1]d}
spec:
  podSelector: {}
  policyTypes: [Egress]
  egress:
    - to: [{namespaceSelector: {matchLabels: {team: t%[2]d}}}]
    - to: [{namespaceSelector: {}, podSelector: {matchLabels: {k8s-app: kube-dns}}}]
      ports: [{port: 53, protocol: UDP}, {port: 53, protocol: TCP}]
`, i, i%4)
		}
		if i%4 == 0 && windowsReplicas > 0 {
			fmt.Fprintf(&b, `---
apiVersion: apps/v1
kind: Deployment
metadata: {name: iis, namespace: app-%[1]d}
spec:
  replicas: %[2]d
  selector: {matchLabels: {app: iis}}
  template:
    metadata: {labels: {app: iis}}
    spec:
      os: {name: windows}
      runtimeClassName: windows-2025
      containers:
        - name: iis
          image: mcr.microsoft.com/dotnet/samples:aspnetapp-nanoserver-ltsc2025
          ports: [{name: http, containerPort: 8080}]
          resources: {requests: {cpu: 10m, memory: 16Mi}}
`, i, windowsReplicas)
		}
	}
	return b.String()
}

var synthOnce struct {
	sync.Once
	e   *trace.Engine
	err error
}

// synthEngine is the 10,000-pod synthetic cluster: the lab with 110 more
// Linux and 12 more Windows workers, 200 namespaces of 45 Linux pods
// behind a Service with policies, and 50 Windows Deployments of 12.
func synthEngine(tb testing.TB) *trace.Engine {
	tb.Helper()
	synthOnce.Do(func() { synthOnce.e, synthOnce.err = buildEngine(synthetic(110, 12, 200, 45, 12)) })
	if synthOnce.err != nil {
		tb.Fatal(synthOnce.err)
	}
	return synthOnce.e
}

// widePool gives the lab's pod network room for 150,000 pods: a /12 pool
// (the lab's /16 holds 65,536 addresses).
const widePool = `apiVersion: operator.tigera.io/v1
kind: Installation
metadata:
  name: default
spec:
  serviceCIDRs:
    - 10.96.0.0/12
  calicoNetwork:
    bgp: Disabled
    linuxDataplane: Nftables
    windowsDataplane: HNS
    ipPools:
      - name: default-ipv4-ippool
        cidr: 172.16.0.0/12
        blockSize: 26
        encapsulation: VXLAN
        natOutgoing: Enabled
        nodeSelector: all()
---
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: v1.37.2
controlPlaneEndpoint: k8s-lab-api.example.com:6443
networking:
  podSubnet: 172.16.0.0/12
  serviceSubnet: 10.96.0.0/12
  dnsDomain: cluster.local
`
