package scheduler

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestImageFitsNode(t *testing.T) {
	win2025 := labNode("k8s-lab-win-1", "windows", "4", "8Gi", 60)
	win2022 := labNode("win-2022", "windows", "4", "8Gi", 60)
	win2022.Labels[corev1.LabelWindowsBuild] = "10.0.20348"
	unlabelled := labNode("win-bare", "windows", "4", "8Gi", 60)
	delete(unlabelled.Labels, corev1.LabelWindowsBuild)
	linux := labNode("k8s-lab-node-1", "linux", "2", "8Gi", 110)
	cases := []struct {
		name   string
		image  string
		node   *corev1.Node
		ok     bool
		reason string
	}{
		{"the seed's aspnetapp ltsc2025 image runs on Windows Server 2025", "mcr.microsoft.com/dotnet/samples:aspnetapp-nanoserver-ltsc2025", win2025, true, ""},
		{"an ltsc2025 image on Windows Server 2022 fails to start", "mcr.microsoft.com/windows/nanoserver:ltsc2025", win2022, false, MsgOSMismatch},
		{"an ltsc2022 servercore image on Windows Server 2025 fails to start", "mcr.microsoft.com/windows/servercore:ltsc2022", win2025, false, MsgOSMismatch},
		{"a 1809 image needs build 17763", "mcr.microsoft.com/windows/nanoserver:1809", win2025, false, MsgOSMismatch},
		{"the build comes from the kernel version when the label is missing", "mcr.microsoft.com/windows/nanoserver:ltsc2025", unlabelled, true, ""},
		{"a Windows image on a Linux node fails to pull", "mcr.microsoft.com/windows/nanoserver:ltsc2025", linux, false,
			`Failed to pull image "mcr.microsoft.com/windows/nanoserver:ltsc2025": rpc error: code = NotFound desc = failed to pull and unpack image ` +
				`"mcr.microsoft.com/windows/nanoserver:ltsc2025": no match for platform in manifest: not found`},
		{"a Docker Hub Linux image on the Windows node fails to pull under its containerd name", "busybox", win2025, false,
			`Failed to pull image "busybox": rpc error: code = NotFound desc = failed to pull and unpack image ` +
				`"docker.io/library/busybox:latest": no match for platform in manifest: not found`},
		{"an alpine tag is taken as Linux", "ghcr.io/example/tool:3.2-alpine", linux, true, ""},
		{"a Linux image on a Linux node is fine", "registry.k8s.io/coredns/coredns:v1.13.1", linux, true, ""},
		{"an image the table does not know is allowed and flagged", "ghcr.io/example/hello:1.2", win2025, true, MsgUnknownImageOS},
		{"a Windows image without a build tag is allowed and flagged", "mcr.microsoft.com/windows/nanoserver@sha256:abcd", win2025, true, "image names no Windows build"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ok, reason := ImageFitsNode(tc.image, tc.node)
			if ok != tc.ok || reason != tc.reason {
				t.Errorf("got (%v, %q), want (%v, %q)", ok, reason, tc.ok, tc.reason)
			}
		})
	}
}

func TestNormalizeImage(t *testing.T) {
	cases := map[string]string{
		"busybox":                         "docker.io/library/busybox:latest",
		"calico/node:v3.33.0":             "docker.io/calico/node:v3.33.0",
		"localhost:5000/app":              "localhost:5000/app:latest",
		"ghcr.io/example/hello:1.2":       "ghcr.io/example/hello:1.2",
		"registry.k8s.io/pause@sha256:ab": "registry.k8s.io/pause@sha256:ab",
	}
	for in, want := range cases {
		if got := normalizeImage(in); got != want {
			t.Errorf("normalizeImage(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAWindowsNodeWithoutAKernelVersionHasNoBuild(t *testing.T) {
	n := &corev1.Node{}
	n.Labels = map[string]string{"kubernetes.io/os": "windows"}
	if got := nodeWindowsBuild(n); got != "" {
		t.Fatalf("build %q, want none", got)
	}
	if ok, reason := ImageFitsNode("mcr.microsoft.com/windows/nanoserver:ltsc2025", n); !ok && reason == "" {
		t.Fatalf("a refusal needs a reason")
	}
}
