// Package workloadrules holds the check rules about what runs on the
// nodes: workloads and their images, RuntimeClasses and scheduling onto
// Windows nodes, DaemonSets (kube-proxy on Windows among them), Services
// and DNS names as Windows pods see them, and policies as HNS applies them.
package workloadrules
