// Package kubeconfigrules holds the check rule about kubeconfig files:
// entries that collide when the files are merged.
package kubeconfigrules
