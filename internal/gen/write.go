package gen

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// header names the generator and its options in the YAML stream.
func (p *plan) header() string {
	o := p.o
	mode := "--cluster-kind"
	if o.PlainNodes {
		mode = "--plain-nodes"
	}
	ips := ""
	if o.ObservedIPs {
		ips = " --observed-ips"
	}
	return fmt.Sprintf("# kubectl-hybrid gen --nodes %d --windows-nodes %d --namespaces %d --pods %d --services %d --policies %d --seed %d %s%s\n"+
		"# A generated hybrid cluster: pod network %s (Calico VXLAN, /%d blocks), services %s, nodes on %s.\n",
		o.Nodes, o.WindowsNodes, o.Namespaces, o.Pods, o.Services, o.Policies, o.Seed, mode, ips,
		p.pool, blockSize, serviceCIDR, nodeNet)
}

// maxNodePorts keeps NodePort Services well inside 30000-32767.
const maxNodePorts = 2000

// write streams every document in dependency order: hosts, kubeadm,
// Calico, then namespace by namespace its workloads (each Deployment with
// its Services, pods and EndpointSlices) and its NetworkPolicies.
func (p *plan) write(out Outputs) (Summary, error) {
	o := p.o
	sum := Summary{
		Nodes: len(p.hosts), LinuxNodes: len(p.hosts) - len(p.windows), WindowsNodes: len(p.windows),
		Namespaces: len(p.namespaces), NodeCIDR: nodeNet.String(), PodCIDR: p.pool.String(), ServiceCIDR: serviceCIDR,
	}
	e := newEncoder(out.Main, o.Format, p.header())
	put := func(obj any) { e.put(obj) }

	if o.PlainNodes {
		for i := range p.hosts {
			put(p.node(&p.hosts[i]))
		}
	} else {
		put(p.clusterKind())
	}
	for _, d := range p.kubeadmDocs() {
		put(d)
	}
	cred := p.credentials()
	for _, i := range p.windows {
		put(p.join(&p.hosts[i], cred))
	}
	for _, d := range p.calicoDocs() {
		put(d)
	}

	nodePorts := 0
	var refs []podRef
	for ni := range p.namespaces {
		ns := &p.namespaces[ni]
		put(p.namespaceObj(ns))
		if ni == 0 && p.split.agent {
			ds := p.agent()
			put(ds)
			sum.DaemonSets++
			if o.ObservedIPs {
				seen := map[string]bool{}
				for k := 0; k < p.split.agentPods(); k++ {
					name := agentName + "-" + p.suffix()
					for seen[name] {
						name = agentName + "-" + p.suffix()
					}
					seen[name] = true
					put(stub(ns.name, name, "DaemonSet", agentName, &p.hosts[p.podHost[k]]))
				}
			}
			sum.Pods += p.split.agentPods()
		}
		for ai := ns.first; ai < ns.last; ai++ {
			a := &p.apps[ai]
			put(p.deployment(a))
			sum.Deployments++
			sum.Pods += a.replicas
			if a.windows {
				sum.WindowsPods += a.replicas
			}
			var svcs []*corev1.Service
			for k := 0; k < a.services; k++ {
				nodePort := k == 0 && nodePorts < maxNodePorts && p.rng.IntN(40) == 0
				if nodePort {
					nodePorts++
				}
				svc := p.service(a, k, nodePort)
				put(svc)
				svcs = append(svcs, svc)
				sum.Services++
			}
			if !o.ObservedIPs {
				continue
			}
			rs := a.name + "-" + p.templateHash()
			refs = refs[:0]
			for r := 0; r < a.replicas; r++ {
				h := &p.hosts[p.podHost[a.firstPod+r]]
				name := rs + "-" + p.suffix()
				for taken(refs, name) {
					name = rs + "-" + p.suffix()
				}
				pod := stub(ns.name, name, "ReplicaSet", rs, h)
				put(pod)
				refs = append(refs, podRef{name: name, ip: pod.Status.PodIP, node: h.name})
			}
			for _, svc := range svcs {
				put(p.endpointSlice(svc, refs))
				sum.EndpointSlices++
			}
		}
		before := e.docs
		p.policies(ns, put)
		sum.NetworkPolicies += e.docs - before
	}
	if err := e.close(); err != nil {
		return Summary{}, err
	}
	sum.Documents = e.docs
	if out.KubeletPatch != nil && len(p.windows) > 0 {
		pe := newEncoder(out.KubeletPatch, o.Format,
			"# C:\\k\\patches\\kubeletconfiguration.yaml on every Windows host (kubeadm join --config C:\\k\\join.yaml):\n"+
				"# one /26 block per Windows node leaves 60 usable addresses, so the kubelet runs at most 60 pods.\n")
		pe.single = true
		pe.put(&kubeletConfig{APIVersion: "kubelet.config.k8s.io/v1beta1", Kind: "KubeletConfiguration", MaxPods: WindowsMaxPods})
		if err := pe.close(); err != nil {
			return Summary{}, err
		}
		sum.Documents += pe.docs
	}
	return sum, nil
}

func taken(refs []podRef, name string) bool {
	for _, r := range refs {
		if r.name == name {
			return true
		}
	}
	return false
}
