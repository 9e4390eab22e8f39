package admission

import (
	"errors"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

var (
	osWindows   = corev1.Toleration{Key: "os", Operator: corev1.TolerationOpEqual, Value: "windows", Effect: corev1.TaintEffectNoSchedule}
	notReady300 = corev1.Toleration{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)}
	unreach300  = corev1.Toleration{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)}
)

func TestAdmissionGivesTheAspnetPodWhatTheSeedObserved(t *testing.T) {
	// Seed 000: the aspnetapp pod ends up with the RuntimeClass selector and
	// the os=windows toleration next to the default not-ready/unreachable ones.
	pod := aspnetPod()
	DefaultTolerations(pod)
	if err := ApplyRuntimeClass(pod, windows2025()); err != nil {
		t.Fatal(err)
	}
	wantSelector := map[string]string{
		"kubernetes.io/arch":               "amd64",
		"kubernetes.io/os":                 "windows",
		"node.kubernetes.io/windows-build": "10.0.26100",
	}
	if !reflect.DeepEqual(pod.Spec.NodeSelector, wantSelector) {
		t.Errorf("nodeSelector = %v, want %v", pod.Spec.NodeSelector, wantSelector)
	}
	wantTolerations := []corev1.Toleration{notReady300, unreach300, osWindows}
	if !reflect.DeepEqual(pod.Spec.Tolerations, wantTolerations) {
		t.Errorf("tolerations = %+v, want %+v", pod.Spec.Tolerations, wantTolerations)
	}
	if len(ValidatePod(pod, DefaultOptions())) != 0 {
		t.Error("the admitted pod should still validate")
	}
}

func TestApplyRuntimeClassRefusals(t *testing.T) {
	cases := []struct {
		name string
		pod  func() *corev1.Pod
		rc   *nodev1.RuntimeClass
		want string
	}{
		{
			name: "a nodeSelector that contradicts the RuntimeClass is a conflict",
			pod: func() *corev1.Pod {
				p := aspnetPod()
				p.Spec.NodeSelector = map[string]string{"kubernetes.io/os": "linux"}
				return p
			},
			rc:   windows2025(),
			want: `pods "aspnetapp-769559d8ff-dkp9z" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[kubernetes.io/os] = windows; pod.spec.nodeSelector[kubernetes.io/os] = linux`,
		},
		{
			name: "a missing RuntimeClass is named in the refusal, and a generateName pod by its prefix",
			pod: func() *corev1.Pod {
				p := aspnetPod()
				p.Name = ""
				p.GenerateName = "aspnetapp-769559d8ff-"
				p.Spec.RuntimeClassName = ptr.To("windows-2022")
				return p
			},
			rc:   nil,
			want: `pods "aspnetapp-769559d8ff-" is forbidden: pod rejected: RuntimeClass "windows-2022" not found`,
		},
		{
			name: "an overhead on the pod that differs from the RuntimeClass is refused",
			pod: func() *corev1.Pod {
				p := aspnetPod()
				p.Spec.Overhead = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}
				return p
			},
			rc: func() *nodev1.RuntimeClass {
				rc := windows2025()
				rc.Overhead = &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}}
				return rc
			}(),
			want: `pods "aspnetapp-769559d8ff-dkp9z" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead`,
		},
		{
			name: "an overhead on a pod whose RuntimeClass defines none is refused",
			pod: func() *corev1.Pod {
				p := aspnetPod()
				p.Spec.Overhead = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}
				return p
			},
			rc:   windows2025(),
			want: `pods "aspnetapp-769559d8ff-dkp9z" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := ApplyRuntimeClass(tc.pod(), tc.rc)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("error = %v\nwant    %s", err, tc.want)
			}
			var se *apierrors.StatusError
			if !errors.As(err, &se) || !apierrors.IsForbidden(err) {
				t.Errorf("want a Forbidden StatusError, got %T", err)
			}
			if got := FormatError(err); got != "Error from server (Forbidden): "+tc.want+"\n" {
				t.Errorf("kubectl line = %q", got)
			}
		})
	}
}

func TestApplyRuntimeClassCopiesOverheadAndIgnoresPodsWithoutAClass(t *testing.T) {
	rc := windows2025()
	rc.Overhead = &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}}
	pod := aspnetPod()
	if err := ApplyRuntimeClass(pod, rc); err != nil {
		t.Fatal(err)
	}
	if q := pod.Spec.Overhead[corev1.ResourceMemory]; q.String() != "128Mi" {
		t.Errorf("overhead = %v", pod.Spec.Overhead)
	}
	plain := helloPod()
	if err := ApplyRuntimeClass(plain, rc); err != nil || plain.Spec.NodeSelector != nil || plain.Spec.Overhead != nil {
		t.Errorf("a pod without runtimeClassName must be left alone: err=%v spec=%+v", err, plain.Spec)
	}
}

func TestMergeTolerationsKeepsOnlyTheBroadestOfOverlappingTolerations(t *testing.T) {
	tolerateAll := corev1.Toleration{Operator: corev1.TolerationOpExists}
	osAnyEffect := corev1.Toleration{Key: "os", Operator: corev1.TolerationOpExists}
	notReady60 := corev1.Toleration{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](60)}
	cases := []struct {
		name        string
		pod, rc     []corev1.Toleration
		wantOutcome []corev1.Toleration
	}{
		{"an identical toleration on both sides is kept once", []corev1.Toleration{osWindows}, []corev1.Toleration{osWindows}, []corev1.Toleration{osWindows}},
		{"a pod that tolerates everything absorbs the RuntimeClass tolerations", []corev1.Toleration{tolerateAll}, []corev1.Toleration{osWindows}, []corev1.Toleration{tolerateAll}},
		{"a broader RuntimeClass toleration replaces the narrower pod one", []corev1.Toleration{osWindows}, []corev1.Toleration{osAnyEffect}, []corev1.Toleration{osAnyEffect}},
		{"unrelated tolerations keep pod order then RuntimeClass order", []corev1.Toleration{notReady300}, []corev1.Toleration{osWindows}, []corev1.Toleration{notReady300, osWindows}},
		{"a longer NoExecute bound covers a shorter one", []corev1.Toleration{notReady60}, []corev1.Toleration{notReady300}, []corev1.Toleration{notReady300}},
		{"a shorter NoExecute bound does not cover a longer one", []corev1.Toleration{notReady300}, []corev1.Toleration{notReady60}, []corev1.Toleration{notReady300}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := mergeTolerations(tc.pod, tc.rc)
			if !reflect.DeepEqual(got, tc.wantOutcome) {
				t.Errorf("got %+v\nwant %+v", got, tc.wantOutcome)
			}
		})
	}
}

func TestDefaultTolerations(t *testing.T) {
	notReadyForever := corev1.Toleration{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}
	notReadyNoSchedule := corev1.Toleration{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	tolerateAll := corev1.Toleration{Operator: corev1.TolerationOpExists}
	cases := []struct {
		name string
		have []corev1.Toleration
		want []corev1.Toleration
	}{
		{"a pod without tolerations gets both 300 s tolerations, not-ready first", nil, []corev1.Toleration{notReady300, unreach300}},
		{"an existing not-ready NoExecute toleration is kept and only unreachable is added", []corev1.Toleration{notReadyForever}, []corev1.Toleration{notReadyForever, unreach300}},
		{"a not-ready NoSchedule toleration does not count", []corev1.Toleration{notReadyNoSchedule}, []corev1.Toleration{notReadyNoSchedule, notReady300, unreach300}},
		{"a toleration of everything covers both", []corev1.Toleration{tolerateAll}, []corev1.Toleration{tolerateAll}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{Tolerations: tc.have}}
			DefaultTolerations(pod)
			if !reflect.DeepEqual(pod.Spec.Tolerations, tc.want) {
				t.Errorf("got %+v\nwant %+v", pod.Spec.Tolerations, tc.want)
			}
		})
	}
}
