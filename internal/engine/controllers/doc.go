// Package controllers derives what Kubernetes' controllers and allocators
// make of the declared objects: the pods of Deployments (through their
// ReplicaSets), ReplicaSets, StatefulSets and DaemonSets
// (pkg/controller/{deployment,replicaset,statefulset,daemon}), the
// EndpointSlices of Services (pkg/controller/endpointslice), the default
// kubernetes Service, and ClusterIP allocation from the service subnet
// (pkg/registry/core/service/ipallocator). The engine calls it while
// building a cluster; its functions are pure.
package controllers
