package templatehash_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/dump"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine/templatehash"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/gen"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// templates are the pod templates of a snapshot's and its cluster's
// workloads, and the cluster's pods as templates.
func templates(s *model.Snapshot, c *model.Cluster) map[string]*corev1.PodTemplateSpec {
	out := map[string]*corev1.PodTemplateSpec{}
	add := func(kind string, m metav1.ObjectMeta, tpl *corev1.PodTemplateSpec) {
		out[kind+" "+m.Namespace+"/"+m.Name] = tpl
	}
	for _, o := range s.Objects {
		switch w := o.Typed.(type) {
		case *appsv1.Deployment:
			add("input Deployment", w.ObjectMeta, &w.Spec.Template)
		case *appsv1.DaemonSet:
			add("input DaemonSet", w.ObjectMeta, &w.Spec.Template)
		}
	}
	for _, d := range c.Deployments {
		add("Deployment", d.ObjectMeta, &d.Spec.Template)
	}
	for _, d := range c.DaemonSets {
		add("DaemonSet", d.ObjectMeta, &d.Spec.Template)
	}
	for _, r := range c.ReplicaSets {
		add("ReplicaSet", r.ObjectMeta, &r.Spec.Template)
	}
	for _, p := range c.Pods {
		add("Pod", p.ObjectMeta, &corev1.PodTemplateSpec{ObjectMeta: p.ObjectMeta, Spec: p.Spec})
	}
	return out
}

func loadAndBuild(t testing.TB, o load.Options) (*model.Snapshot, *model.Cluster) {
	t.Helper()
	s, err := load.Load(o)
	if err != nil {
		t.Fatalf("load.Load(%+v): %v", o, err)
	}
	c, err := engine.Build(s)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return s, c
}

func generated(t testing.TB, o gen.Options) (*model.Snapshot, *model.Cluster) {
	t.Helper()
	dir := t.TempDir()
	if _, err := gen.WriteDir(dir, o); err != nil {
		t.Fatalf("gen.WriteDir: %v", err)
	}
	return loadAndBuild(t, load.Options{Filenames: []string{dir}})
}

func TestTemplateDumpMatchesSpewOnExamplesAndGeneratedClusters(t *testing.T) {
	small := gen.Options{Nodes: 8, WindowsNodes: 2, Namespaces: 4, Pods: 300, Services: 60, Policies: 40, Seed: 7}
	observed := small
	observed.ObservedIPs, observed.PlainNodes, observed.Seed = true, true, 11
	tests := []struct {
		name  string
		build func(t *testing.T) (*model.Snapshot, *model.Cluster)
	}{
		{"the lab's workloads and pods match dump.ForHash", func(t *testing.T) (*model.Snapshot, *model.Cluster) {
			return loadAndBuild(t, load.Options{Lab: true})
		}},
		{"the lab with every what-if file matches dump.ForHash", func(t *testing.T) (*model.Snapshot, *model.Cluster) {
			return loadAndBuild(t, load.Options{Lab: true, Filenames: []string{
				"../../../examples/what-if/no-strict-affinity.yaml",
				"../../../examples/what-if/aspnetapp-60.yaml",
				"../../../examples/what-if/windows-block-full/",
			}})
		}},
		{"the plain objects match dump.ForHash", func(t *testing.T) (*model.Snapshot, *model.Cluster) {
			return loadAndBuild(t, load.Options{Filenames: []string{"../../../examples/plain/"}})
		}},
		{"the main cluster matches dump.ForHash", func(t *testing.T) (*model.Snapshot, *model.Cluster) {
			return loadAndBuild(t, load.Options{Filenames: []string{"../../../examples/main-cluster/"}})
		}},
		{"a generated cluster left to the controllers matches dump.ForHash", func(t *testing.T) (*model.Snapshot, *model.Cluster) {
			return generated(t, small)
		}},
		{"a generated cluster of observed pods and plain nodes matches dump.ForHash", func(t *testing.T) (*model.Snapshot, *model.Cluster) {
			return generated(t, observed)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tpls := templates(tt.build(t))
			if len(tpls) == 0 {
				t.Fatal("no templates")
			}
			for name, tpl := range tpls {
				templatehash.CheckTemplate(t, name, tpl)
			}
		})
	}
}

// benchTemplates are the richest pod templates of a generated cluster: of
// the generated Deployments, and of those the twin adds.
func benchTemplates(b *testing.B) map[string]*corev1.PodTemplateSpec {
	s, c := generated(b, gen.Options{Nodes: 8, WindowsNodes: 2, Namespaces: 4, Pods: 300, Services: 60, Policies: 40, Seed: 7})
	richest := func(ds []*appsv1.Deployment) *corev1.PodTemplateSpec {
		var best *corev1.PodTemplateSpec
		for _, d := range ds {
			if best == nil || len(dump.ForHash(d.Spec.Template)) > len(dump.ForHash(*best)) {
				best = &d.Spec.Template
			}
		}
		if best == nil {
			b.Fatal("no Deployments")
		}
		return best
	}
	var input []*appsv1.Deployment
	for _, o := range s.Objects {
		if d, ok := o.Typed.(*appsv1.Deployment); ok {
			input = append(input, d)
		}
	}
	return map[string]*corev1.PodTemplateSpec{"workload": richest(input), "twin": richest(c.Deployments)}
}

func BenchmarkTemplateHash(b *testing.B) {
	tpls := benchTemplates(b)
	for _, name := range []string{"workload", "twin"} {
		tpl := tpls[name]
		b.Logf("%s template %s: dump of %d bytes", name, tpl.Labels, len(dump.ForHash(*tpl)))
		b.Run(name+"/dump.ForHash", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = templatehash.OldTemplateHash(tpl)
			}
		})
		b.Run(name+"/dumper", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = templatehash.Of(tpl)
			}
		})
	}
}
