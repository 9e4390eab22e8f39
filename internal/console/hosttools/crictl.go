package hosttools

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/host"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// sandboxIDAnnotation carries a pod's observed sandbox ID; the Windows
// dataplane names the pod's HNS endpoint by the same value
// (internal/dataplane/windows ids.go SandboxIDAnnotation).
const sandboxIDAnnotation = "hybrid.kubectl-hybrid.io/sandbox-id"

// sandboxID is the pod's sandbox ID: the observed one, else the stand-in
// the engine and the Windows dataplane use (SHA-256 of namespace/name/uid),
// so crictl, the IPAM handle and the HNS endpoint agree.
func sandboxID(p *corev1.Pod) (string, bool) {
	if v := p.Annotations[sandboxIDAnnotation]; v != "" {
		return v, true
	}
	sum := sha256.Sum256([]byte(p.Namespace + "/" + p.Name + "/" + string(p.UID)))
	return hex.EncodeToString(sum[:]), false
}

// standIn is a 64-hex-digit stand-in for an ID the runtime makes.
func standIn(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "/")))
	return hex.EncodeToString(sum[:])
}

// truncID is crictl's getTruncatedID: the first 13 characters.
func truncID(id string) string {
	id = strings.TrimPrefix(id, "sha256:")
	if len(id) > 13 {
		return id[:13]
	}
	return id
}

// humanDuration is docker/go-units HumanDuration, which crictl prints
// with " ago".
func humanDuration(d time.Duration) string {
	switch seconds := int(d.Seconds()); {
	case seconds < 1:
		return "Less than a second"
	case seconds == 1:
		return "1 second"
	case seconds < 60:
		return fmt.Sprintf("%d seconds", seconds)
	}
	if minutes := int(d.Minutes()); minutes == 1 {
		return "About a minute"
	} else if minutes < 60 {
		return fmt.Sprintf("%d minutes", minutes)
	}
	hours := int(d.Hours() + 0.5)
	switch {
	case hours == 1:
		return "About an hour"
	case hours < 48:
		return fmt.Sprintf("%d hours", hours)
	case hours < 24*7*2:
		return fmt.Sprintf("%d days", hours/24)
	case hours < 24*30*2:
		return fmt.Sprintf("%d weeks", hours/24/7)
	case hours < 24*365*2:
		return fmt.Sprintf("%d months", hours/24/30)
	}
	return fmt.Sprintf("%d years", int(d.Hours())/24/365)
}

func created(t time.Time, now time.Time) string { return humanDuration(now.Sub(t)) + " ago" }

// podStart is when the pod's sandbox was made: status.startTime, else
// the pod's creation.
func podStart(p *corev1.Pod) time.Time {
	if p.Status.StartTime != nil {
		return p.Status.StartTime.Time
	}
	return p.CreationTimestamp.Time
}

func sortNewestFirst(pods []*corev1.Pod) {
	sort.SliceStable(pods, func(i, j int) bool {
		a, b := podStart(pods[i]), podStart(pods[j])
		if !a.Equal(b) {
			return a.After(b)
		}
		return pods[i].Namespace+"/"+pods[i].Name < pods[j].Namespace+"/"+pods[j].Name
	})
}

// table writes rows as crictl does (text/tabwriter, minimum width 20,
// padding 3).
func table(rows [][]string) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 20, 1, 3, ' ', 0)
	for _, r := range rows {
		fmt.Fprintln(w, strings.Join(r, "\t"))
	}
	w.Flush()
	return b.String()
}

const crictlUsage = "kubectl-hybrid: crictl version, pods, ps and images are emulated\n"

func crictl(c *model.Cluster, h *host.Host, args []string, now time.Time) Result {
	if len(args) == 0 {
		return Result{Stderr: crictlUsage, Code: 1}
	}
	if cd, _ := h.Service(hybrid.ServiceContainerd); !cd.Running() {
		return Result{Stderr: unreachable(h), Code: 1}
	}
	switch args[0] {
	case "version":
		v := h.Containerd.Version
		return Result{Stdout: "Version:  0.1.0\nRuntimeName:  containerd\nRuntimeVersion:  v" + v + "\nRuntimeApiVersion:  v1\n"}
	case "pods":
		return crictlPods(c, h, now)
	case "ps":
		return crictlPs(c, h, now)
	case "images", "image", "img":
		return crictlImages(c, h)
	}
	return Result{Stderr: fmt.Sprintf("kubectl-hybrid: crictl %s is not emulated; %s", args[0], crictlUsage), Code: 1}
}

// unreachable is crictl's fatal error when nothing listens on the CRI
// endpoint (the logrus line without its time stamp).
func unreachable(h *host.Host) string {
	ep := h.Containerd.Endpoint()
	dial := "dial unix " + h.Containerd.Address + ": connect: no such file or directory"
	if h.OS == hybrid.OSWindows {
		dial = `open \\\\.\\pipe\\containerd-containerd: The system cannot find the file specified.`
	}
	return fmt.Sprintf("level=fatal msg=\"validate service connection: validate CRI v1 runtime API for endpoint \\\"%s\\\": rpc error: code = Unavailable desc = connection error: desc = \\\"transport: Error while dialing: %s\\\"\"\n"+
		"kubectl-hybrid: containerd is stopped on %s (simulated; the real line starts with its time)\n", ep, dial, h.Node)
}

// handler is the runtime handler the kubelet asks for: the pod's
// RuntimeClass's, else the runtime's default, which crictl prints as
// "(default)".
func handler(c *model.Cluster, p *corev1.Pod) string {
	if rc := p.Spec.RuntimeClassName; rc != nil {
		for _, r := range c.RuntimeClasses {
			if r.Name == *rc {
				return r.Handler
			}
		}
	}
	return "(default)"
}

func crictlPods(c *model.Cluster, h *host.Host, now time.Time) Result {
	rows := [][]string{{"POD ID", "CREATED", "STATE", "NAME", "NAMESPACE", "ATTEMPT", "RUNTIME"}}
	standIns := 0
	for _, p := range podsOn(c, h.Node) {
		id, observed := sandboxID(p)
		if !observed {
			standIns++
		}
		state := "Ready"
		if p.Status.Phase != corev1.PodRunning {
			state = "NotReady"
		}
		rows = append(rows, []string{truncID(id), created(podStart(p), now), state, p.Name, p.Namespace, "0", handler(c, p)})
	}
	return Result{Stdout: table(rows), Stderr: idNote(standIns, "sandbox")}
}

func idNote(standIns int, what string) string {
	if standIns == 0 {
		return ""
	}
	return fmt.Sprintf("kubectl-hybrid: %d %s ID(s) are stand-ins (containerd makes them at random); give observed ones in the pod annotation %s\n", standIns, what, sandboxIDAnnotation)
}

func crictlPs(c *model.Cluster, h *host.Host, now time.Time) Result {
	rows := [][]string{{"CONTAINER", "IMAGE", "CREATED", "STATE", "NAME", "ATTEMPT", "POD ID", "POD", "NAMESPACE"}}
	for _, p := range podsOn(c, h.Node) {
		if p.Status.Phase != corev1.PodRunning {
			continue
		}
		sid, _ := sandboxID(p)
		for _, ct := range p.Spec.Containers {
			attempt, started := 0, podStart(p)
			for _, st := range p.Status.ContainerStatuses {
				if st.Name == ct.Name {
					attempt = int(st.RestartCount)
					if st.State.Running != nil {
						started = st.State.Running.StartedAt.Time
					}
				}
			}
			id := standIn(sid, ct.Name, fmt.Sprint(attempt))
			rows = append(rows, []string{truncID(id), truncID(imageID(ct.Image)), created(started, now), "Running", ct.Name, fmt.Sprint(attempt), truncID(sid), p.Name, p.Namespace})
		}
	}
	return Result{Stdout: table(rows), Stderr: "kubectl-hybrid: container and image IDs are stand-ins (the runtime makes them)\n"}
}

// imageID is a stand-in for an image's config digest.
func imageID(ref string) string { return "sha256:" + standIn("image", ref) }

// splitRef is crictl's repository and tag of a reference.
func splitRef(ref string) (string, string) {
	slash := strings.LastIndexByte(ref, '/')
	if i := strings.LastIndexByte(ref, ':'); i > slash {
		return ref[:i], ref[i+1:]
	}
	return ref, "latest"
}

func crictlImages(c *model.Cluster, h *host.Host) Result {
	refs := map[string]bool{h.Containerd.SandboxImage: true}
	for _, p := range podsOn(c, h.Node) {
		for _, ct := range append(append([]corev1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...) {
			refs[ct.Image] = true
		}
	}
	sorted := make([]string, 0, len(refs))
	for r := range refs {
		sorted = append(sorted, r)
	}
	sort.Strings(sorted)
	rows := [][]string{{"IMAGE", "TAG", "IMAGE ID", "SIZE"}}
	for _, r := range sorted {
		repo, tag := splitRef(r)
		rows = append(rows, []string{repo, tag, truncID(imageID(r)), "n/a"})
	}
	return Result{Stdout: table(rows), Stderr: "kubectl-hybrid: IMAGE ID is a stand-in and SIZE is not modelled (the registry's manifests decide them)\n"}
}

func containerdCmd(h *host.Host, args []string) Result {
	if len(args) == 2 && args[0] == "config" && args[1] == "dump" {
		return Result{Stdout: h.Containerd.Dump(), Stderr: "kubectl-hybrid: only the settings the twin models are printed; containerd prints every plugin's\n"}
	}
	return Result{Stderr: "kubectl-hybrid: containerd config dump is emulated\n", Code: 1}
}
