// Package templatehash computes the pod-template-hash the Deployment
// controller puts in its ReplicaSets' names and labels: FNV-32a over
// dump.ForHash of the pod template (pkg/controller/controller_utils.go
// ComputeHash), printed by a per-type dumper that gives spew's bytes
// without spew's cost.
package templatehash
