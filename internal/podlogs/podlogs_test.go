package podlogs

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

type hosts map[string][]string

func (h hosts) Networks(node string) ([]string, error) { return h[node], nil }

func dsPod(ns, name, owner, node string, env ...corev1.EnvVar) *corev1.Pod {
	yes := true
	start := metav1.NewTime(time.Date(2026, 11, 6, 20, 16, 48, 0, time.UTC))
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			OwnerReferences: []metav1.OwnerReference{{Kind: "DaemonSet", Name: owner, Controller: &yes}}},
		Spec:   corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "node", Env: env}, {Name: "felix"}}},
		Status: corev1.PodStatus{StartTime: &start},
	}
}

func cluster() *model.Cluster {
	return &model.Cluster{Services: []*corev1.Service{{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kubernetes"},
		Spec:       corev1.ServiceSpec{ClusterIP: "10.96.0.1"},
	}}}
}

func TestKubeProxyWindowsWaitsUntilTheCalicoNetworkExists(t *testing.T) {
	p := dsPod("kube-system", "kube-proxy-windows-x", "kube-proxy-windows", "win", corev1.EnvVar{Name: "KUBE_NETWORK", Value: "Calico.*"})
	cases := []struct {
		name     string
		networks []string
		last     string
	}{
		{"with the Calico network", []string{"External", "Calico"}, "HNS network Calico found."},
		{"with the External network only", []string{"External"}, "Waiting for HNS network Calico to be created..."},
		{"with no network", nil, "Waiting for HNS network Calico to be created..."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Logs(cluster(), hosts{"win": tc.networks}, p, "node")
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Lines[len(r.Lines)-1]; got != tc.last {
				t.Errorf("last line %q, want %q", got, tc.last)
			}
			if !strings.HasPrefix(r.Lines[0], "WARNING: The names of some imported commands from the module 'hns'") {
				t.Errorf("first line %q, want the hns module's warning", r.Lines[0])
			}
			if len(r.Notes) == 0 || !strings.HasPrefix(r.Notes[0], "simulated:") {
				t.Errorf("notes %q, want the simulated mark first", r.Notes)
			}
		})
	}
}

func TestCalicoNodeWindowsWithoutTheAPIServerAddressTimesOutOnTheServiceIP(t *testing.T) {
	cases := []struct {
		name string
		pod  *corev1.Pod
		last string
	}{
		{"without KUBERNETES_SERVICE_HOST on Windows", dsPod("calico-system", "calico-node-windows-x", "calico-node-windows", "win"),
			`2026-11-06 20:16:48.000 [INFO] startup/startup.go: Hit error connecting to datastore - retry error=Get "https://10.96.0.1:443/api/v1/nodes/foo": dial tcp 10.96.0.1:443: i/o timeout`},
		{"with KUBERNETES_SERVICE_HOST on Windows", dsPod("calico-system", "calico-node-windows-x", "calico-node-windows", "win",
			corev1.EnvVar{Name: "KUBERNETES_SERVICE_HOST", Value: "api.example.com"}),
			"2026-11-06 20:16:48.000 [INFO] startup/startup.go: Datastore connection verified"},
		{"without KUBERNETES_SERVICE_HOST on Linux", dsPod("calico-system", "calico-node-x", "calico-node", "lin"),
			"2026-11-06 20:16:48.000 [INFO] startup/startup.go: Datastore connection verified"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Logs(cluster(), hosts{}, tc.pod, "node")
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Lines[len(r.Lines)-1]; got != tc.last {
				t.Errorf("last line\n%q, want\n%q", got, tc.last)
			}
			if want := "2026-11-06 20:16:48.000 [INFO] startup/startup.go: Determined node name: " + tc.pod.Spec.NodeName; r.Lines[2] != want {
				t.Errorf("third line %q, want %q", r.Lines[2], want)
			}
		})
	}
}

func TestAContainerThatHasNotStartedHasNoLogs(t *testing.T) {
	p := dsPod("kube-system", "kube-proxy-windows-x", "kube-proxy-windows", "win")
	p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "node", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}
	_, err := Logs(cluster(), hosts{}, p, "node")
	var le *Error
	if !errors.As(err, &le) || le.Msg != `Error from server (BadRequest): container "node" in pod "kube-proxy-windows-x" is waiting to start: ContainerCreating` {
		t.Errorf("error %v, want the API server's BadRequest", err)
	}
}

func TestAPodOfAnotherWorkloadIsNotModelled(t *testing.T) {
	p := dsPod("demo", "hello-x", "hello", "lin")
	p.OwnerReferences[0].Kind = "ReplicaSet"
	var le *Error
	if _, err := Logs(cluster(), hosts{}, p, "node"); !errors.As(err, &le) {
		t.Errorf("error %v, want a not-modelled answer", err)
	}
}

func TestTheContainerIsTheNamedOneTheOnlyOneOrTheFirst(t *testing.T) {
	p := dsPod("calico-system", "calico-node-windows-x", "calico-node-windows", "win")
	p.Spec.InitContainers = []corev1.Container{{Name: "install-cni"}}
	cases := []struct {
		name, ask, want, err string
	}{
		{"a named container", "felix", "felix", ""},
		{"an init container", "install-cni", "install-cni", ""},
		{"no name with two containers", "", "node", ""},
		{"a name the pod lacks", "bird", "", "container bird is not valid for pod calico-node-windows-x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Container(p, tc.ask)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Errorf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestLogsAndExecFailWithTheTLSErrorWhileTheServingCSRIsPending(t *testing.T) {
	approved := []certv1.CertificateSigningRequestCondition{{Type: certv1.CertificateApproved, Status: corev1.ConditionTrue}}
	denied := append(approved, certv1.CertificateSigningRequestCondition{Type: certv1.CertificateDenied, Status: corev1.ConditionTrue})
	cases := []struct {
		name      string
		bootstrap bool
		conds     [][]certv1.CertificateSigningRequestCondition
		fails     bool
	}{
		{"a pending CSR", true, [][]certv1.CertificateSigningRequestCondition{nil}, true},
		{"no CSR", true, nil, true},
		{"an approved CSR", true, [][]certv1.CertificateSigningRequestCondition{approved}, false},
		{"a pending and an approved CSR", true, [][]certv1.CertificateSigningRequestCondition{nil, approved}, false},
		{"a denied CSR", true, [][]certv1.CertificateSigningRequestCondition{denied}, true},
		{"no serving certificate bootstrap", false, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := cluster()
			c.Kubeadm.NodeKubelet = map[string]*kubeletv1beta1.KubeletConfiguration{"win": {ServerTLSBootstrap: tc.bootstrap}}
			c.Nodes = []*corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "win"},
				Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.168.10.25"}}}}}
			for _, conds := range tc.conds {
				c.CSRs = append(c.CSRs, &certv1.CertificateSigningRequest{
					Spec:   certv1.CertificateSigningRequestSpec{SignerName: certv1.KubeletServingSignerName, Username: "system:node:win"},
					Status: certv1.CertificateSigningRequestStatus{Conditions: conds},
				})
			}
			p := dsPod("kube-system", "kube-proxy-windows-x", "kube-proxy-windows", "win")
			logsErr, execErr := ServingCertError(c, p, "node"), ExecServingCertError(c, p)
			if !tc.fails {
				if logsErr != nil || execErr != nil {
					t.Errorf("errors %v, %v; want none", logsErr, execErr)
				}
				return
			}
			want := []string{
				`Error from server: Get "https://192.168.10.25:10250/containerLogs/kube-system/kube-proxy-windows-x/node": remote error: tls: internal error`,
				"Error from server: error dialing backend: remote error: tls: internal error",
			}
			if got := []string{errText(logsErr), errText(execErr)}; !reflect.DeepEqual(got, want) {
				t.Errorf("errors\n%q, want\n%q", got, want)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
