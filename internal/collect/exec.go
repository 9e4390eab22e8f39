package collect

import (
	"bytes"
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
)

// RemoteExec runs commands through pods/exec as kubectl exec does: the
// WebSocket protocol first, SPDY when the server cannot upgrade to it
// (kubectl pkg/cmd/exec/exec.go DefaultRemoteExecutor).
type RemoteExec struct {
	Config *rest.Config
	Client kubernetes.Interface
}

// Exec runs argv in the container and returns its output.
func (r *RemoteExec) Exec(ctx context.Context, ns, pod, container string, argv []string) (string, string, error) {
	req := r.Client.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: argv, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	spdy, err := remotecommand.NewSPDYExecutor(r.Config, "POST", req.URL())
	if err != nil {
		return "", "", err
	}
	ws, err := remotecommand.NewWebSocketExecutor(r.Config, "GET", req.URL().String())
	if err != nil {
		return "", "", err
	}
	ex, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		return "", "", err
	}
	var out, errOut bytes.Buffer
	if err := ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &out, Stderr: &errOut}); err != nil {
		return out.String(), errOut.String(), fmt.Errorf("exec in %s/%s: %w", ns, pod, err)
	}
	return out.String(), errOut.String(), nil
}
