package trace

import (
	"strings"
	"testing"
)

// The misconfigurations a trace exists to diagnose end with a verdict or
// an input error, never a crash.

const emptyServicesEndpoint = `kind: ConfigMap
apiVersion: v1
metadata: {name: kubernetes-services-endpoint, namespace: tigera-operator}
data: {}
`

const podOnAMissingNode = `apiVersion: v1
kind: Pod
metadata: {name: lost, namespace: demo, labels: {app: lost}}
spec:
  nodeName: no-such-node
  containers: [{name: c, image: busybox:1.37}]
status: {phase: Running, podIP: 172.21.172.60}
`

func TestAWindowsPodWithoutAnHNSEndpointIsDroppedAtItsVNICWithTheNodesReason(t *testing.T) {
	e := buildWith(t, emptyServicesEndpoint)
	for _, dst := range []string{"svc/demo/hello", "node/k8s-lab-node-1", "172.21.172.4"} {
		t.Run(dst, func(t *testing.T) {
			r := traceOf(t, e, "deploy/aspnetapp", dst, "win-demo", TCP, 80)
			if r.Outcome != Dropped || r.AtNode != "k8s-lab-win-1" || !strings.HasSuffix(r.AtComp, " vNIC") {
				t.Fatalf("outcome %q at %s %s: %s", r.Outcome, r.AtNode, r.AtComp, r.Reason)
			}
			// No calico-node-windows ran there: HNS holds no network at all.
			want := "has no HNS endpoint on k8s-lab-win-1: the node's network is not ready (NetworkPluginNotReady: cni plugin not initialized)"
			if !strings.Contains(r.Reason, want) {
				t.Errorf("reason %q does not say %q", r.Reason, want)
			}
		})
	}
}

func TestATraceFromAPodBoundToAMissingNodeIsAnInputError(t *testing.T) {
	e := buildWith(t, podOnAMissingNode)
	_, err := e.ParseSource("pod/lost", "demo")
	if !IsInputError(err) || !strings.Contains(err.Error(), `bound to node "no-such-node", which does not exist`) {
		t.Errorf("err = %v", err)
	}
	t.Run("its address answers nothing", func(t *testing.T) {
		r := traceOf(t, e, "deploy/aspnetapp", "172.21.172.60", "win-demo", TCP, 80)
		if r.Delivered {
			t.Errorf("delivered to a pod that runs nowhere: %+v", r.DeliveredTo)
		}
	})
}
