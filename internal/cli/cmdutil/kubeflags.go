package cmdutil

import (
	"os"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/tools/clientcmd"
)

// NewKubeFlags are kubectl's connection flags (--kubeconfig, --context,
// --cluster, --user, --server, --token, --request-timeout, …). -n stays the
// commands' own: everything is read cluster-wide, and get's -n only filters
// what it prints (kubeNamespace gives the context's namespace as its
// default).
func NewKubeFlags() *genericclioptions.ConfigFlags {
	f := genericclioptions.NewConfigFlags(true)
	f.Namespace = nil
	return f
}

// NoCluster reports whether nothing names a cluster: no kubeconfig with a
// cluster in it, no --server, and not inside a pod. (kubectl would then try
// http://localhost:8080; the tool asks for input instead.)
func NoCluster(kube *genericclioptions.ConfigFlags) bool {
	if kube.APIServer != nil && *kube.APIServer != "" {
		return false
	}
	if os.Getenv("KUBERNETES_SERVICE_HOST") != "" && os.Getenv("KUBERNETES_SERVICE_PORT") != "" {
		return false
	}
	raw, err := kube.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return clientcmd.IsEmptyConfig(err)
	}
	return len(raw.Clusters) == 0
}
