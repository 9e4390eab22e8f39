// Package calicorules holds the check rules about Calico for Windows: the
// operator's Installation, the IP pools and IPAM, Felix, the services
// endpoint, the operator's status and the CNI in use.
package calicorules
