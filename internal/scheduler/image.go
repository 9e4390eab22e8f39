package scheduler

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Messages of ImageFitsNode.
const (
	// MsgOSMismatch is HCS_E_IMAGE_MISMATCH (0xC0370101), the Windows text
	// hcsshim passes up through containerd into the pod's events when a
	// process-isolated container's image build differs from the host's
	// (hcsshim computecore error table; quoted in seed 000). The kubelet event
	// wraps it in containerd's "failed to create containerd task: ..." chain.
	MsgOSMismatch = "The container operating system does not match the host operating system."
	// MsgUnknownImageOS is returned, with ok=true, for images the table does
	// not classify.
	MsgUnknownImageOS = "unknown image OS"
)

// windowsBuilds maps tag markers to the Windows build they need under
// process isolation: ltsc2025 is Windows Server 2025, ltsc2022 Server 2022,
// ltsc2019 and 1809 Server 2019.
var windowsBuilds = []struct{ marker, build string }{
	{"ltsc2025", "10.0.26100"},
	{"ltsc2022", "10.0.20348"},
	{"ltsc2019", "10.0.17763"},
	{"1809", "10.0.17763"},
}

// windowsMarkers in a reference mark a Windows-only image: the Windows base
// image repositories on mcr.microsoft.com and the .NET image tags built on
// them.
var windowsMarkers = []string{"mcr.microsoft.com/windows/", "nanoserver", "windowsservercore", "servercore"}

// linuxOnlyRepos are images known to publish Linux variants only.
var linuxOnlyRepos = map[string]bool{
	"docker.io/library/busybox":               true,
	"docker.io/library/nginx":                 true,
	"docker.io/library/alpine":                true,
	"docker.io/library/debian":                true,
	"docker.io/library/ubuntu":                true,
	"docker.io/library/redis":                 true,
	"docker.io/library/postgres":              true,
	"registry.k8s.io/coredns/coredns":         true,
	"registry.k8s.io/kube-apiserver":          true,
	"registry.k8s.io/kube-controller-manager": true,
	"registry.k8s.io/kube-scheduler":          true,
	"registry.k8s.io/kube-proxy":              true,
	"registry.k8s.io/etcd":                    true,
	"quay.io/tigera/operator":                 true,
	"docker.io/calico/node":                   true,
	"docker.io/calico/typha":                  true,
	"docker.io/calico/kube-controllers":       true,
	"quay.io/calico/node":                     true,
	"quay.io/calico/typha":                    true,
	"quay.io/calico/kube-controllers":         true,
}

// ImageFitsNode reports whether the node's runtime can run image, judged from
// a small table rather than from registry manifests:
//
//   - references naming a Windows base image (mcr.microsoft.com/windows/*,
//     *nanoserver*, *windowsservercore*, *servercore*) are Windows-only, and
//     their ltsc2025/ltsc2022/ltsc2019/1809 tag needs node.kubernetes.io/windows-build
//     10.0.26100/10.0.20348/10.0.17763 (process isolation: the build must match);
//   - the repositories in linuxOnlyRepos, and tags with "alpine", are Linux-only;
//   - everything else is ok=true with reason MsgUnknownImageOS.
//
// A Windows-only image on a Linux node, or a Linux-only one on a Windows
// node, fails at pull with the kubelet's event text (containerd finds no
// manifest for the node's platform); a build mismatch fails at container
// start with MsgOSMismatch. When the node's OS or build is unknown, or a
// Windows image names no build, the result is ok=true with a reason saying so.
//
// The build rule is the process-isolation rule: it does not apply to
// hostProcess containers, which run on the host, nor to Hyper-V isolation
// (a runhcs-wcow-hypervisor RuntimeClass); callers skip those.
func ImageFitsNode(image string, node *corev1.Node) (ok bool, reason string) {
	ref := normalizeImage(image)
	lower := strings.ToLower(ref)
	imageOS := ""
	switch {
	case containsAny(lower, windowsMarkers):
		imageOS = "windows"
	case linuxOnlyRepos[repository(lower)] || strings.Contains(tagOf(lower), "alpine"):
		imageOS = "linux"
	}
	nodeOS := node.Labels[corev1.LabelOSStable]
	if nodeOS == "" {
		nodeOS = node.Status.NodeInfo.OperatingSystem
	}
	switch {
	case imageOS == "":
		return true, MsgUnknownImageOS
	case nodeOS == "":
		return true, "node OS unknown"
	case imageOS != nodeOS:
		return false, fmt.Sprintf("Failed to pull image %q: rpc error: code = NotFound desc = failed to pull and unpack image %q: no match for platform in manifest: not found", image, ref)
	case imageOS == "linux":
		return true, ""
	}
	want := ""
	for _, b := range windowsBuilds {
		if strings.Contains(tagOf(lower), b.marker) {
			want = b.build
			break
		}
	}
	if want == "" {
		return true, "image names no Windows build"
	}
	have := nodeWindowsBuild(node)
	switch {
	case have == "":
		return true, "node Windows build unknown"
	case have != want:
		return false, MsgOSMismatch
	}
	return true, ""
}

// nodeWindowsBuild is the node.kubernetes.io/windows-build label, or the
// major.minor.build prefix of the kernel version the kubelet reports
// ("10.0.26100.33438").
func nodeWindowsBuild(node *corev1.Node) string {
	if b := node.Labels[corev1.LabelWindowsBuild]; b != "" {
		return b
	}
	fields := strings.Fields(node.Status.NodeInfo.KernelVersion)
	if len(fields) == 0 {
		return ""
	}
	parts := strings.SplitN(fields[0], ".", 4)
	if len(parts) < 3 {
		return ""
	}
	return strings.Join(parts[:3], ".")
}

// normalizeImage expands a reference the way containerd names it in its
// errors: Docker Hub names get docker.io/ and library/, and a missing tag
// becomes :latest.
func normalizeImage(image string) string {
	name, digest, hasDigest := strings.Cut(image, "@")
	first, _, hasSlash := strings.Cut(name, "/")
	switch {
	case !hasSlash:
		name = "docker.io/library/" + name
	case !strings.ContainsAny(first, ".:") && first != "localhost":
		name = "docker.io/" + name
	}
	if hasDigest {
		return name + "@" + digest
	}
	if !strings.Contains(name[strings.LastIndex(name, "/")+1:], ":") {
		name += ":latest"
	}
	return name
}

// repository strips the tag and digest from a normalized reference.
func repository(ref string) string {
	ref, _, _ = strings.Cut(ref, "@")
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref = ref[:i]
	}
	return ref
}

func tagOf(ref string) string {
	ref, _, _ = strings.Cut(ref, "@")
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		return ref[i+1:]
	}
	return ""
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
