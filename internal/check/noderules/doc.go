// Package noderules holds the check rules about nodes: kubeadm's joins and
// kubelet settings on Windows nodes, taints, IPAM block sizes, container
// runtimes, the host firewalls between nodes, and the Windows nodes' view
// of their peers.
package noderules
