package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/admission"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/names"
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

// admissionWorld is what the admission plugins read from the API server:
// namespaces (nil when missing), the ServiceAccounts per namespace, the
// PriorityClasses and RuntimeClasses.
type admissionWorld struct {
	namespaces map[string]*corev1.Namespace
	accounts   map[string]map[string]bool
	priorities []*schedulingv1.PriorityClass
	rcs        map[string]*nodev1.RuntimeClass
}

// toolVerdict is what the twin answers for a pod create, the chain as
// engine.admit runs it: the decoder's BadRequest (load), mutating
// admission (NamespaceLifecycle, ServiceAccount, Priority,
// DefaultTolerationSeconds, RuntimeClass) on the pod before its name is
// generated, validation of metadata and spec, the API warnings of a valid
// pod, Pod Security. It is rendered as kubectl prints the API server's
// refusal, with the warnings the server sends (those of a valid pod that
// Pod Security refuses included).
func toolVerdict(t *testing.T, doc []byte, w *admissionWorld) (string, []string) {
	snap, err := load.Load(load.Options{Filenames: []string{"-"}, Stdin: bytes.NewReader(doc)})
	if err != nil {
		t.Fatalf("the twin cannot load the pod: %v", err)
	}
	var pod *corev1.Pod
	switch typed := snap.Objects[0].Typed.(type) {
	case *model.Undecodable:
		return admission.FormatError(typed.Err), nil
	case *corev1.Pod:
		pod = typed
	default:
		t.Fatalf("the twin loads a %T", typed)
	}
	name := pod.Name
	if pod.GenerateName != "" && names.IsGenerated(pod.Name, pod.GenerateName) {
		pod.Name = ""
	}
	if err := admission.AdmitNamespace(pod, w.namespaces[pod.Namespace]); err != nil {
		return admission.FormatError(err), nil
	}
	accounts := w.accounts[pod.Namespace]
	if err := admission.AdmitServiceAccount(pod, func(n string) bool { return accounts[n] }); err != nil {
		return admission.FormatError(err), nil
	}
	if err := admission.AdmitPriority(pod, w.priorities); err != nil {
		return admission.FormatError(err), nil
	}
	admission.DefaultTolerations(pod)
	var rc *nodev1.RuntimeClass
	if pod.Spec.RuntimeClassName != nil {
		rc = w.rcs[*pod.Spec.RuntimeClassName]
	}
	if err := admission.ApplyRuntimeClass(pod, rc); err != nil {
		return admission.FormatError(err), nil
	}
	pod.Name = name
	if errs := admission.ValidatePodCreate(pod, admission.DefaultOptions()); len(errs) > 0 {
		return admission.FormatInvalid("Pod", pod.Name, errs), nil
	}
	warnings := admission.PodWarnings(pod)
	res := admission.CheckPodSecurity(w.namespaces[pod.Namespace], pod)
	if !res.Allowed {
		return admission.FormatError(res.Err), warnings
	}
	return "", append(warnings, res.Warnings...)
}

// corpusPod is one pod of the corpus: its document, and what of it the
// harness needs to send it.
type corpusPod struct {
	file, name, namespace, generateName string
	json                                []byte
}

// terminateAnnotation marks a corpus namespace the harness deletes after
// creating it: with no namespace controller running, it stays Terminating.
const terminateAnnotation = "test.kubectl-hybrid.io/terminate"

// corpus reads testdata/pods: the Namespaces, ServiceAccounts and
// PriorityClasses the pods need, and the pods of every file, in file order.
// A pod is kept as JSON, as kubectl sends it, so that pods the API server
// cannot decode are sent too.
func corpus(t *testing.T) (objs []map[string]any, pods []corpusPod) {
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
			var head struct {
				metav1.TypeMeta `json:",inline"`
				Metadata        struct {
					Name, Namespace, GenerateName string
				} `json:"metadata"`
			}
			if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			text, err := yaml.YAMLToJSON([]byte(doc))
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			switch head.Kind {
			case "Namespace", "ServiceAccount", "PriorityClass":
				var m map[string]any
				if err := json.Unmarshal(text, &m); err != nil {
					t.Fatalf("%s: %v", p, err)
				}
				objs = append(objs, m)
			case "Pod":
				ns := head.Metadata.Namespace
				if ns == "" {
					ns = "default"
				}
				pods = append(pods, corpusPod{file: filepath.Base(p), name: head.Metadata.Name, namespace: ns,
					generateName: head.Metadata.GenerateName, json: text})
			case "":
			default:
				t.Fatalf("%s: unexpected kind %s", p, head.Kind)
			}
		}
	}
	return objs, pods
}

// createCorpusObjects creates the corpus's other objects and deletes the
// namespaces marked to terminate.
func createCorpusObjects(ctx context.Context, t *testing.T, cs kubernetes.Interface, objs []map[string]any) {
	t.Helper()
	for _, m := range objs {
		text, _ := json.Marshal(m)
		var err error
		switch m["kind"] {
		case "Namespace":
			ns := &corev1.Namespace{}
			if err = json.Unmarshal(text, ns); err == nil {
				_, err = cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
				if err == nil && ns.Annotations[terminateAnnotation] == "true" {
					err = cs.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})
				}
			}
		case "ServiceAccount":
			sa := &corev1.ServiceAccount{}
			if err = json.Unmarshal(text, sa); err == nil {
				_, err = cs.CoreV1().ServiceAccounts(sa.Namespace).Create(ctx, sa, metav1.CreateOptions{})
			}
		case "PriorityClass":
			pc := &schedulingv1.PriorityClass{}
			if err = json.Unmarshal(text, pc); err == nil {
				_, err = cs.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{})
			}
		}
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("%s: %v", m["kind"], err)
		}
	}
}

// normalizeGenerated replaces a name the server or the twin generated from
// prefix, so that the two verdicts compare.
func normalizeGenerated(text, prefix string) string {
	if prefix == "" {
		return text
	}
	re := regexp.MustCompile(regexp.QuoteMeta(prefix) + "[bcdfghjklmnpqrstvwxz2456789]{5}")
	return re.ReplaceAllString(text, prefix+"<generated>")
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
	objs, pods := corpus(t)
	createCorpusObjects(ctx, t, cs, objs)
	w := &admissionWorld{namespaces: map[string]*corev1.Namespace{}, accounts: map[string]map[string]bool{}, rcs: map[string]*nodev1.RuntimeClass{}}
	for _, pod := range pods {
		name := pod.namespace
		if _, seen := w.namespaces[name]; seen {
			continue
		}
		ns, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			w.namespaces[name] = nil // NamespaceLifecycle refuses its pods
			continue
		case err != nil:
			t.Fatal(err)
		}
		w.namespaces[name] = ns
		if ns.Status.Phase != corev1.NamespaceTerminating {
			// ServiceAccount admission wants the account to exist.
			sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: name}}
			if _, err := cs.CoreV1().ServiceAccounts(name).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatal(err)
			}
		}
		list, err := cs.CoreV1().ServiceAccounts(name).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w.accounts[name] = map[string]bool{}
		for _, sa := range list.Items {
			w.accounts[name][sa.Name] = true
		}
	}
	rcList, err := cs.NodeV1().RuntimeClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range rcList.Items {
		w.rcs[rcList.Items[i].Name] = &rcList.Items[i]
	}
	if w.rcs["windows-2025"] == nil {
		t.Fatal("the lab cluster has no RuntimeClass windows-2025")
	}
	pcList, err := cs.SchedulingV1().PriorityClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range pcList.Items {
		w.priorities = append(w.priorities, &pcList.Items[i])
	}
	// The twin's built-in classes are the server's.
	for _, want := range admission.SystemPriorityClasses() {
		found := false
		for _, got := range w.priorities {
			if got.Name == want.Name {
				found = true
				if got.Value != want.Value || *got.PreemptionPolicy != *want.PreemptionPolicy || got.Description != want.Description {
					t.Errorf("PriorityClass %s: server %d %s %q, twin %d %s %q", want.Name, got.Value, *got.PreemptionPolicy, got.Description, want.Value, *want.PreemptionPolicy, want.Description)
				}
			}
		}
		if !found {
			t.Errorf("the server has no PriorityClass %s", want.Name)
		}
	}

	refused, allowed, warned := 0, 0, 0
	for _, pod := range pods {
		label := pod.name
		if label == "" {
			label = pod.generateName
		}
		t.Run(pod.file+"/"+label, func(t *testing.T) {
			collected.take()
			err := cs.CoreV1().RESTClient().Post().Namespace(pod.namespace).Resource("pods").
				Param("dryRun", metav1.DryRunAll).SetHeader("Content-Type", "application/json").
				Body(pod.json).Do(ctx).Error()
			server := normalizeGenerated(admission.FormatError(err), pod.generateName)
			serverWarnings := collected.take()
			tool, toolWarnings := toolVerdict(t, pod.json, w)
			tool = normalizeGenerated(tool, pod.generateName)
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
