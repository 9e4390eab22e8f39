package engine

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/wellknown"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/names"
)

// Images of kubeadm's addons. The CoreDNS tag is the one kubeadm pins for
// its release (kubeadm app/constants CoreDNSVersion); the twin does not track
// it per release, so it is shown only as part of the Deployment.
const coreDNSImage = "registry.k8s.io/coredns/coredns:v1.12.1"

func ptr[T any](v T) *T { return &v }

// coreDNS renders kubeadm's CoreDNS addon: a Deployment of 2 replicas with a
// preferred anti-affinity over kube-dns pods, and the kube-dns Service on the
// tenth address of the service subnet (kubeadm app/phases/addons/dns/manifests.go,
// app/constants GetDNSIP).
func coreDNS(dnsIP, domain string) (*appsv1.Deployment, *corev1.Service, *corev1.ConfigMap) {
	labels := map[string]string{"k8s-app": "kube-dns"}
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "coredns", Namespace: "kube-system", Labels: map[string]string{"k8s-app": "kube-dns"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr(int32(2)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					PriorityClassName:  "system-cluster-critical",
					ServiceAccountName: "coredns",
					Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
						PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
							Weight: 100,
							PodAffinityTerm: corev1.PodAffinityTerm{
								LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
									Key: "k8s-app", Operator: metav1.LabelSelectorOpIn, Values: []string{"kube-dns"},
								}}},
								TopologyKey: corev1.LabelHostname,
							},
						}},
					}},
					Tolerations: []corev1.Toleration{
						{Key: "CriticalAddonsOnly", Operator: corev1.TolerationOpExists},
						{Key: wellknown.TaintControlPlane, Effect: corev1.TaintEffectNoSchedule},
					},
					NodeSelector: map[string]string{corev1.LabelOSStable: "linux"},
					Containers: []corev1.Container{{
						Name:  "coredns",
						Image: coreDNSImage,
						Args:  []string{"-conf", "/etc/coredns/Corefile"},
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("70Mi")},
							Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("170Mi")},
						},
						Ports: []corev1.ContainerPort{
							{Name: "dns", ContainerPort: 53, Protocol: corev1.ProtocolUDP},
							{Name: "dns-tcp", ContainerPort: 53, Protocol: corev1.ProtocolTCP},
							{Name: "metrics", ContainerPort: 9153, Protocol: corev1.ProtocolTCP},
						},
					}},
					DNSPolicy: corev1.DNSDefault,
				},
			},
		},
	}
	svc := &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: "kube-dns", Namespace: "kube-system", Labels: map[string]string{
			"k8s-app": "kube-dns", "kubernetes.io/cluster-service": "true", "kubernetes.io/name": "CoreDNS",
		}},
		Spec: corev1.ServiceSpec{
			ClusterIP: dnsIP,
			Selector:  labels,
			Ports: []corev1.ServicePort{
				{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromInt32(53)},
				{Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(53)},
				{Name: "metrics", Port: 9153, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(9153)},
			},
		},
	}
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "coredns", Namespace: "kube-system"},
		Data:       map[string]string{"Corefile": strings.ReplaceAll(corefile, "cluster.local", domain)},
	}
	return d, svc, cm
}

// corefile is kubeadm's default (kubeadm app/phases/addons/dns/manifests.go),
// written for cluster.local and rendered with networking.dnsDomain.
const corefile = `.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    forward . /etc/resolv.conf {
       max_concurrent 1000
    }
    cache 30 {
       disable success cluster.local
       disable denial cluster.local
    }
    loop
    reload
    loadbalance
}
`

// kubeProxy renders kubeadm's kube-proxy addon DaemonSet: Linux only, host
// network, tolerating every taint (kubeadm app/phases/addons/proxy/manifests.go).
func kubeProxy(version string) *appsv1.DaemonSet {
	labels := map[string]string{"k8s-app": "kube-proxy"}
	return &appsv1.DaemonSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
		ObjectMeta: metav1.ObjectMeta{Name: "kube-proxy", Namespace: "kube-system", Labels: labels},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					PriorityClassName:  "system-node-critical",
					ServiceAccountName: "kube-proxy",
					HostNetwork:        true,
					NodeSelector:       map[string]string{corev1.LabelOSStable: "linux"},
					Tolerations:        []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
					Containers: []corev1.Container{{
						Name:            "kube-proxy",
						Image:           "registry.k8s.io/kube-proxy:" + version,
						Command:         []string{"/usr/local/bin/kube-proxy", "--config=/var/lib/kube-proxy/config.conf", "--hostname-override=$(NODE_NAME)"},
						SecurityContext: &corev1.SecurityContext{Privileged: ptr(true)},
					}},
				},
			},
		},
	}
}

// staticPods are the control plane's mirror pods: kubeadm writes their
// manifests to /etc/kubernetes/manifests and the kubelet mirrors them as
// <component>-<node> (kubeadm app/phases/controlplane, app/phases/etcd).
func staticPods(node, version string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, comp := range []struct{ name, image string }{
		{"etcd", "registry.k8s.io/etcd:3.6.5-0"},
		{"kube-apiserver", "registry.k8s.io/kube-apiserver:" + version},
		{"kube-controller-manager", "registry.k8s.io/kube-controller-manager:" + version},
		{"kube-scheduler", "registry.k8s.io/kube-scheduler:" + version},
	} {
		out = append(out, &corev1.Pod{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{
				Name: comp.name + "-" + node, Namespace: "kube-system",
				Labels:          map[string]string{"component": comp.name, "tier": "control-plane"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node, Controller: ptr(true)}},
			},
			Spec: corev1.PodSpec{
				NodeName: node, HostNetwork: true, PriorityClassName: "system-node-critical",
				Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}},
				Containers:  []corev1.Container{{Name: comp.name, Image: comp.image}},
			},
			// Mirror pods are reported by the kubelet once the static pod runs.
			Status: corev1.PodStatus{Phase: corev1.PodRunning},
		})
	}
	return out
}

// kubeletServingCSR is the CSR a kubelet with serverTLSBootstrap: true files
// for its serving certificate; it stays Pending until someone approves it
// (kubeadm does not, seed 000 "Linux-воркеры"). The name's suffix is random
// in a real cluster; here it is derived from the node name.
func kubeletServingCSR(node string, ts metav1.Time) *certv1.CertificateSigningRequest {
	return &certv1.CertificateSigningRequest{
		TypeMeta:   metav1.TypeMeta{APIVersion: "certificates.k8s.io/v1", Kind: "CertificateSigningRequest"},
		ObjectMeta: metav1.ObjectMeta{Name: "csr-" + suffix("csr/"+node), CreationTimestamp: ts},
		Spec: certv1.CertificateSigningRequestSpec{
			SignerName: certv1.KubeletServingSignerName,
			Username:   "system:node:" + node,
			Groups:     []string{"system:nodes", "system:authenticated"},
			Usages:     []certv1.KeyUsage{certv1.UsageDigitalSignature, certv1.UsageServerAuth},
		},
	}
}

// suffix is the deterministic stand-in for a generated name's random
// suffix (package names).
func suffix(seed string) string { return names.Suffix(seed) }
