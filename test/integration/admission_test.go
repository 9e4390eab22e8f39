package integration

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/admission"
)

// warnings collects the Warning headers of responses.
type warnings struct {
	mu   sync.Mutex
	list []string
}

func (w *warnings) HandleWarningHeader(code int, agent, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.list = append(w.list, text)
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.list
	w.list = nil
	return out
}

// toolVerdict is what the twin answers for a pod create: the admission
// chain as engine.admit runs it (DefaultTolerationSeconds and RuntimeClass
// admission, validation, the API warnings of a valid pod, Pod Security),
// rendered as kubectl prints the API server's refusal, with the warnings the
// server sends (those of a valid pod that Pod Security refuses included).
func toolVerdict(pod *corev1.Pod, ns *corev1.Namespace, rcs map[string]*nodev1.RuntimeClass) (string, []string) {
	admission.DefaultTolerations(pod)
	var rc *nodev1.RuntimeClass
	if pod.Spec.RuntimeClassName != nil {
		rc = rcs[*pod.Spec.RuntimeClassName]
	}
	if err := admission.ApplyRuntimeClass(pod, rc); err != nil {
		return admission.FormatError(err), nil
	}
	if errs := admission.ValidatePod(pod, admission.DefaultOptions()); len(errs) > 0 {
		return admission.FormatInvalid("Pod", pod.Name, errs), nil
	}
	warnings := admission.PodWarnings(pod)
	res := admission.CheckPodSecurity(ns, pod)
	if !res.Allowed {
		return admission.FormatError(res.Err), warnings
	}
	return "", append(warnings, res.Warnings...)
}

// corpus reads testdata/pods: the namespaces file and the pods of every
// other file, in file order.
func corpus(t *testing.T) (nss []*corev1.Namespace, pods []*corev1.Pod, files []string) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "pods", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(paths)
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(data), "\n---") {
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			switch tm.Kind {
			case "Namespace":
				ns := &corev1.Namespace{}
				if err := yaml.UnmarshalStrict([]byte(doc), ns); err != nil {
					t.Fatalf("%s: %v", p, err)
				}
				nss = append(nss, ns)
			case "Pod":
				pod := &corev1.Pod{}
				if err := yaml.UnmarshalStrict([]byte(doc), pod); err != nil {
					t.Fatalf("%s: %v", p, err)
				}
				pods = append(pods, pod)
				files = append(files, filepath.Base(p))
			case "":
			default:
				t.Fatalf("%s: unexpected kind %s", p, tm.Kind)
			}
		}
	}
	return nss, pods, files
}

// TestAdmissionMatchesAPIServer compares, pod by pod, the twin's verdict on
// a corpus of Windows and Linux pods with the API server's verdict on a
// server-side dry-run create of the same pod: the same refusal message
// (as kubectl prints it), or the same warnings.
func TestAdmissionMatchesAPIServer(t *testing.T) {
	ctx := context.Background()
	cfg := env.lab.loader()
	collected := &warnings{}
	cfg.WarningHandler = collected
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	nss, pods, files := corpus(t)
	for _, ns := range nss {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	namespaces := map[string]*corev1.Namespace{}
	for _, pod := range pods {
		name := pod.Namespace
		if namespaces[name] != nil {
			continue
		}
		ns, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		namespaces[name] = ns
		// ServiceAccount admission wants the account to exist.
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: name}}
		if _, err := cs.CoreV1().ServiceAccounts(name).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	rcList, err := cs.NodeV1().RuntimeClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rcs := map[string]*nodev1.RuntimeClass{}
	for i := range rcList.Items {
		rcs[rcList.Items[i].Name] = &rcList.Items[i]
	}
	if rcs["windows-2025"] == nil {
		t.Fatal("the lab cluster has no RuntimeClass windows-2025")
	}

	refused, allowed, warned := 0, 0, 0
	for i, pod := range pods {
		t.Run(files[i]+"/"+pod.Name, func(t *testing.T) {
			collected.take()
			_, err := cs.CoreV1().Pods(pod.Namespace).Create(ctx, pod.DeepCopy(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			server := admission.FormatError(err)
			serverWarnings := collected.take()
			tool, toolWarnings := toolVerdict(pod.DeepCopy(), namespaces[pod.Namespace], rcs)
			if tool != server {
				t.Errorf("verdicts differ\n  api server: %q\n  twin:       %q", server, tool)
			}
			if strings.Join(toolWarnings, "\n") != strings.Join(serverWarnings, "\n") {
				t.Errorf("warnings differ\n  api server: %q\n  twin:       %q", serverWarnings, toolWarnings)
			}
			switch {
			case server != "":
				refused++
				t.Logf("refused: %s", strings.TrimSpace(server))
			case len(serverWarnings) > 0:
				warned++
				t.Logf("allowed with warnings: %q", serverWarnings)
			default:
				allowed++
			}
		})
	}
	t.Logf("%d pods: %d refused, %d allowed with warnings, %d allowed", len(pods), refused, warned, allowed)
	if refused == 0 || allowed == 0 || warned == 0 {
		t.Errorf("the corpus should have refused, warned and allowed pods")
	}
}
