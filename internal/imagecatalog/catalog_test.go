package imagecatalog

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestTheTableSaysWhichToolsAnImageHas(t *testing.T) {
	for _, tc := range []struct {
		name  string
		image string
		os    string
		tool  string
		want  string
		known bool
	}{
		{"busybox has busybox's ping", "busybox:1.37", "linux", ToolPing, FlavorBusybox, true},
		{"busybox from Docker Hub's library is the same image", "docker.io/library/busybox:1.37", "linux", ToolWget, FlavorBusybox, true},
		{"busybox has no curl", "busybox:1.37", "linux", ToolCurl, FlavorNone, true},
		{"hello is assumed to be busybox-based", "ghcr.io/example/hello:1.2", "linux", ToolNSLookup, FlavorBusybox, true},
		{"the Nano Server sample has curl.exe", "mcr.microsoft.com/dotnet/samples:aspnetapp-nanoserver-ltsc2025", "windows", ToolCurl, FlavorWindows, true},
		{"the Nano Server sample has ping", "mcr.microsoft.com/dotnet/samples:aspnetapp-nanoserver-ltsc2025", "windows", ToolPing, FlavorWindows, true},
		{"the Nano Server sample has no nslookup", "mcr.microsoft.com/dotnet/samples:aspnetapp-nanoserver-ltsc2025", "windows", ToolNSLookup, FlavorNone, true},
		{"Server Core has nslookup.exe", "mcr.microsoft.com/windows/servercore:ltsc2025", "windows", ToolNSLookup, FlavorWindows, true},
		{"IIS on Server Core has curl.exe", "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2025", "windows", ToolCurl, FlavorWindows, true},
		{"the Linux aspnetapp is chiseled and has nothing", "mcr.microsoft.com/dotnet/samples:aspnetapp", "linux", ToolCurl, FlavorNone, true},
		{"CoreDNS is distroless", "registry.k8s.io/coredns/coredns:v1.12.1", "linux", ToolPing, FlavorNone, true},
		{"an image outside the table is not known", "nginx:1.29", "linux", ToolCurl, flavorUnknown, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Lookup(tc.image, tc.os).Tool(tc.tool)
			if got != tc.want || ok != tc.known {
				t.Errorf("Tool(%s) = %q, %v; want %q, %v", tc.tool, got, ok, tc.want, tc.known)
			}
		})
	}
}

func TestAMissingCommandFailsLikeTheImagesShell(t *testing.T) {
	for _, tc := range []struct {
		name, image, os, cmd, want string
		code                       int
	}{
		{"busybox's sh says not found and exits 127", "busybox:1.37", "linux", "curl", "sh: curl: not found\n", 127},
		{"cmd.exe says not recognized and exits 9009", "mcr.microsoft.com/windows/nanoserver:ltsc2025", "windows", "nslookup",
			"'nslookup' is not recognized as an internal or external command,\noperable program or batch file.\n", 9009},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, code := Lookup(tc.image, tc.os).NotFound(tc.cmd)
			if got != tc.want || code != tc.code {
				t.Errorf("%q %d", got, code)
			}
		})
	}
}

func pod(image string, ports ...corev1.ContainerPort) *corev1.Pod {
	return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image, Ports: ports}}}}
}

func TestServersAnswerWhatTheTableSays(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pod    *corev1.Pod
		os     string
		port   int32
		path   string
		status int
		body   string // substring
	}{
		{"hello answers /healthz with ok", pod("ghcr.io/example/hello:1.2"), "linux", 8080, "/healthz", 200, "ok"},
		{"hello answers /readyz with ok", pod("ghcr.io/example/hello:1.2"), "linux", 8080, "/readyz", 200, "ok"},
		{"hello answers other paths with 404", pod("ghcr.io/example/hello:1.2"), "linux", 8080, "/", 404, "404 page not found"},
		{"aspnetapp answers / with its welcome page", pod("mcr.microsoft.com/dotnet/samples:aspnetapp-nanoserver-ltsc2025"), "windows", 8080, "/", 200,
			"<title>Welcome to .NET - AspNetCoreRazorApp</title>"},
		{"an unknown image answers 200 on a declared port", pod("registry.example/app:1", corev1.ContainerPort{ContainerPort: 9000}), "linux", 9000, "/anything", 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, ok := Listen(tc.pod, tc.os, corev1.ProtocolTCP, tc.port)
			if !ok {
				t.Fatalf("nothing listens on %d", tc.port)
			}
			r := l.HTTP("GET", tc.path)
			if r.Status != tc.status || !strings.Contains(r.Body, tc.body) {
				t.Errorf("%d %q", r.Status, r.Body)
			}
		})
	}
}

func TestNothingListensWhereTheTableAndThePodSayNothing(t *testing.T) {
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		port int32
	}{
		{"busybox serves nothing even with a declared port", pod("busybox:1.37", corev1.ContainerPort{ContainerPort: 8080}), 8080},
		{"hello does not listen on 9999", pod("ghcr.io/example/hello:1.2"), 9999},
		{"an unknown image listens only on declared ports", pod("registry.example/app:1", corev1.ContainerPort{ContainerPort: 9000}), 9001},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, ok := Listen(tc.pod, "linux", corev1.ProtocolTCP, tc.port); ok {
				t.Error("listens")
			}
		})
	}
	if got := strings.Join(Ports(pod("registry.k8s.io/coredns/coredns:v1.12.1"), "linux"), ","); got != "53/TCP,53/UDP,8080/TCP,8181/TCP,9153/TCP" {
		t.Errorf("CoreDNS ports %s", got)
	}
}

func TestBusyboxPingNeedsRoot(t *testing.T) {
	yes, no := true, false
	uid := int64(1000)
	for _, tc := range []struct {
		name string
		psc  *corev1.PodSecurityContext
		csc  *corev1.SecurityContext
		ok   bool
	}{
		{"a default container runs as root and pings", nil, nil, true},
		{"runAsNonRoot cannot ping", &corev1.PodSecurityContext{RunAsNonRoot: &yes}, nil, false},
		{"runAsNonRoot false can ping", &corev1.PodSecurityContext{RunAsNonRoot: &no}, nil, true},
		{"a non-zero user cannot ping", nil, &corev1.SecurityContext{RunAsUser: &uid}, false},
		{"dropping ALL capabilities takes NET_RAW", nil, &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := pod("busybox:1.37")
			p.Spec.SecurityContext = tc.psc
			p.Spec.Containers[0].SecurityContext = tc.csc
			if ok, why := CanRawPing(p); ok != tc.ok {
				t.Errorf("%v (%s)", ok, why)
			}
		})
	}
}
