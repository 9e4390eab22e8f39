package load

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

func TestBadInput(t *testing.T) {
	tests := []struct {
		name  string
		files []string
		want  string
	}{
		{
			name:  "broken YAML names the line the parser stopped at",
			files: []string{"testdata/bad/broken.yaml"},
			want:  "testdata/bad/broken.yaml:9 (document 2): invalid YAML: mapping values are not allowed in this context",
		},
		{
			name:  "broken JSON names the line of the bad character",
			files: []string{"testdata/bad/broken.json"},
			want:  `testdata/bad/broken.json:4 (document 2): invalid JSON: invalid character '"' after object key:value pair`,
		},
		{
			name:  "a value of the wrong type names the field, the type and the value",
			files: []string{"testdata/bad/wrongtype.yaml"},
			want:  `testdata/bad/wrongtype.yaml:16 (document 2): Pod demo/x: spec.containers[0].ports[0].containerPort: expected int32, got string "80"`,
		},
		{
			name:  "a wrong type inside a List names the item's field",
			files: []string{"testdata/bad/list-item-wrongtype.yaml"},
			want:  `testdata/bad/list-item-wrongtype.yaml:13 (document 1): Pod default/b: spec.nodeName: expected string, got a list`,
		},
		{
			name:  "a quantity that does not parse outside a pod names its field",
			files: []string{"testdata/bad/quantity.yaml"},
			want:  `testdata/bad/quantity.yaml:8 (document 1): RuntimeClass windows: overhead.podFixed.memory: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
		},
		{
			name:  "two objects with one identity in the files are a duplicate",
			files: []string{"testdata/bad/duplicate.yaml"},
			want:  "testdata/bad/duplicate.yaml:8 (document 2): ConfigMap default/settings: duplicate object: also defined at testdata/bad/duplicate.yaml:1 (document 1)",
		},
		{
			name:  "a key given twice in one mapping is an error",
			files: []string{"testdata/bad/duplicate-key.yaml"},
			want:  "testdata/bad/duplicate-key.yaml:7 (document 1): ConfigMap default/settings: data.mode: key given twice (first at line 6)",
		},
		{
			name:  "a bad CIDR in the Cluster kind names the field",
			files: []string{"testdata/bad/cluster-bad-cidr.yaml"},
			want:  `testdata/bad/cluster-bad-cidr.yaml:7 (document 1): Cluster lab: spec.network.cidr: "192.168.10.0/33" is not a CIDR`,
		},
		{
			name:  "a bad tunnel address in a Calico Node names the field",
			files: []string{"testdata/bad/calico-node-bad-tunnel.yaml"},
			want:  `testdata/bad/calico-node-bad-tunnel.yaml:9 (document 1): Node lnx-01: spec.ipv4VXLANTunnelAddr: "10.244.185.256" is not an IP address`,
		},
		{
			name:  "a bad host address in the Cluster kind names the host",
			files: []string{"testdata/bad/cluster-bad-address.yaml"},
			want:  `testdata/bad/cluster-bad-address.yaml:15 (document 1): Cluster lab: spec.hosts[1].address: "192.168.10.300" is not an IP address`,
		},
		{
			name:  "a bad IPPool CIDR is found in crd.projectcalico.org too",
			files: []string{"testdata/bad/ippool-bad-cidr.yaml"},
			want:  `testdata/bad/ippool-bad-cidr.yaml:6 (document 1): IPPool default-ipv4-ippool: spec.cidr: "172.21.0/16" is not a CIDR`,
		},
		{
			name:  "a bad half of a dual-stack podSubnet is quoted",
			files: []string{"testdata/bad/kubeadm-bad-subnet.yaml"},
			want:  `testdata/bad/kubeadm-bad-subnet.yaml:4 (document 1): ClusterConfiguration: networking.podSubnet: "fd00::10:244::/56" in "172.21.0.0/16,fd00::10:244::/56" is not a CIDR`,
		},
		{
			name:  "a bad clusterIP in JSON names its line",
			files: []string{"testdata/bad/service-bad-clusterip.json"},
			want:  `testdata/bad/service-bad-clusterip.json:6 (document 1): Service demo/web: spec.clusterIP: "10.96.0.1000" is not an IP address`,
		},
		{
			name:  "a document without apiVersion is an error",
			files: []string{"testdata/bad/no-apiversion.yaml"},
			want:  "testdata/bad/no-apiversion.yaml:6 (document 2): Pod demo/x: apiVersion is missing",
		},
		{
			name:  "a document without kind is an error",
			files: []string{"testdata/bad/no-kind.yaml"},
			want:  "testdata/bad/no-kind.yaml:1 (document 1): kind is missing",
		},
		{
			name:  "a document that is not a mapping is an error",
			files: []string{"testdata/bad/not-an-object.yaml"},
			want:  "testdata/bad/not-an-object.yaml:1 (document 1): expected an object with apiVersion and kind, got a list",
		},
		{
			name:  "a file that cannot be read is an error naming the path",
			files: []string{"testdata/bad/does-not-exist.yaml"},
			want:  "testdata/bad/does-not-exist.yaml: cannot read: no such file or directory",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(Options{Filenames: tt.files})
			if err == nil {
				t.Fatal("Load succeeded")
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error\n got: %s\nwant: %s", got, tt.want)
			}
			if !IsBadInput(err) {
				t.Errorf("IsBadInput(%v) = false", err)
			}
		})
	}
}

func TestUnreadableFileWrapsTheOSError(t *testing.T) {
	_, err := Load(Options{Filenames: []string{"testdata/bad/does-not-exist.yaml"}})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("errors.Is(%v, fs.ErrNotExist) = false", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.File != "testdata/bad/does-not-exist.yaml" {
		t.Fatalf("error %#v does not name the file", err)
	}
}

func TestIsBadInputIsFalseForOtherErrors(t *testing.T) {
	if IsBadInput(errors.New("boom")) || IsBadInput(nil) {
		t.Fatal("IsBadInput is true for an error that is not *Error")
	}
}

// summary is what the good cases compare: origin and key of each object.
func summary(objs []*model.Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.Origin.String()+" "+o.Key.String())
	}
	return out
}

func load(t *testing.T, opts Options) *model.Snapshot {
	t.Helper()
	s, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestMultiDocumentYAMLSkipsEmptyDocumentsAndCountsThem(t *testing.T) {
	s := load(t, Options{Filenames: []string{"testdata/good/multidoc.yaml"}})
	want := []string{
		"testdata/good/multidoc.yaml:2 (document 1) Namespace demo",
		"testdata/good/multidoc.yaml:10 (document 4) ConfigMap default/settings",
		"testdata/good/multidoc.yaml:17 (document 5) Deployment.apps demo/web",
	}
	if got := summary(s.Objects); !reflect.DeepEqual(got, want) {
		t.Fatalf("objects\n got: %q\nwant: %q", got, want)
	}
	if len(s.Warnings) != 0 {
		t.Errorf("warnings: %q", s.Warnings)
	}
	cm := s.Objects[1].Typed.(*corev1.ConfigMap)
	if cm.Data["mode"] != "on" || cm.Kind != "ConfigMap" || cm.APIVersion != "v1" {
		t.Errorf("ConfigMap decoded as %+v", cm)
	}
	if s.Objects[2].GVK != (schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}) {
		t.Errorf("GVK %v", s.Objects[2].GVK)
	}
}

func TestListIsFlattenedIntoItsItems(t *testing.T) {
	s := load(t, Options{Filenames: []string{"testdata/good/list.yaml"}})
	want := []string{
		"testdata/good/list.yaml:3 (document 1) Pod demo/a",
		"testdata/good/list.yaml:12 (document 1) Service demo/web",
	}
	if got := summary(s.Objects); !reflect.DeepEqual(got, want) {
		t.Fatalf("objects\n got: %q\nwant: %q", got, want)
	}
	pod := s.Objects[0].Typed.(*corev1.Pod)
	if pod.Status.PodIP != "172.21.0.5" || pod.Spec.NodeName != "k8s-lab-node-1" {
		t.Errorf("pod %+v", pod)
	}
	if s.Objects[0].Raw["kind"] != "Pod" {
		t.Errorf("raw %v", s.Objects[0].Raw)
	}
}

func TestPodListJSONFromKubectl(t *testing.T) {
	s := load(t, Options{Filenames: []string{"testdata/good/pods-kubectl.json"}})
	want := []string{
		"testdata/good/pods-kubectl.json:4 (document 1) Pod kube-system/coredns-8f97fdbd9-9gc9h",
		"testdata/good/pods-kubectl.json:50 (document 1) Pod demo/hello-55fb8f8684-69mvv",
	}
	if got := summary(s.Objects); !reflect.DeepEqual(got, want) {
		t.Fatalf("objects\n got: %q\nwant: %q", got, want)
	}
	pod := s.Objects[0].Typed.(*corev1.Pod)
	if got := pod.Spec.Containers[0].Resources.Requests.Cpu().String(); got != "100m" {
		t.Errorf("cpu request %s", got)
	}
	if pod.Spec.Containers[0].Ports[0].ContainerPort != 53 || pod.Status.PodIPs[0].IP != "172.21.172.3" {
		t.Errorf("pod %+v", pod)
	}
	if pod.CreationTimestamp.IsZero() {
		t.Error("creationTimestamp not decoded")
	}
	// Numbers in Raw are int64, as YAML gives them.
	ports := s.Objects[0].Raw["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["ports"].([]any)
	if p := ports[0].(map[string]any)["containerPort"]; p != int64(53) {
		t.Errorf("raw containerPort %T %v", p, p)
	}
}

func TestTypedListItemsTakeTheirKindFromTheList(t *testing.T) {
	s := load(t, Options{Filenames: []string{"testdata/good/podlist-raw.json"}})
	want := []string{
		"testdata/good/podlist-raw.json:2 (document 1) Pod demo/a",
		"testdata/good/podlist-raw.json:3 (document 1) Pod demo/b",
	}
	if got := summary(s.Objects); !reflect.DeepEqual(got, want) {
		t.Fatalf("objects\n got: %q\nwant: %q", got, want)
	}
	pod := s.Objects[1].Typed.(*corev1.Pod)
	if pod.Kind != "Pod" || pod.APIVersion != "v1" || s.Objects[1].Raw["kind"] != "Pod" {
		t.Errorf("pod %v raw %v", pod.TypeMeta, s.Objects[1].Raw)
	}
}

func TestJSONStreamOfObjects(t *testing.T) {
	s := load(t, Options{Filenames: []string{"testdata/good/stream.json"}})
	want := []string{
		"testdata/good/stream.json:1 (document 1) Namespace one",
		"testdata/good/stream.json:2 (document 2) Namespace two",
		"testdata/good/stream.json:4 (document 3) Namespace three",
	}
	if got := summary(s.Objects); !reflect.DeepEqual(got, want) {
		t.Fatalf("objects\n got: %q\nwant: %q", got, want)
	}
}

func TestDirectoryIsReadRecursivelyInLexicalOrder(t *testing.T) {
	s := load(t, Options{Filenames: []string{"testdata/dir"}})
	want := []string{
		"testdata/dir/a/z.yaml:1 (document 1) Namespace a-z",
		"testdata/dir/a.yml:1 (document 1) Namespace a-yml",
		"testdata/dir/b.yaml:1 (document 1) Namespace b",
		"testdata/dir/c.json:1 (document 1) Namespace c",
		"testdata/dir/sub/x.yaml:1 (document 1) Namespace sub-x",
	}
	if got := summary(s.Objects); !reflect.DeepEqual(got, want) {
		t.Fatalf("objects\n got: %q\nwant: %q", got, want)
	}
}

func TestStdin(t *testing.T) {
	in := "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: from-stdin\n"
	s := load(t, Options{Filenames: []string{"testdata/dir/b.yaml", "-"}, Stdin: strings.NewReader(in)})
	want := []string{
		"testdata/dir/b.yaml:1 (document 1) Namespace b",
		"<stdin>:1 (document 1) Namespace from-stdin",
	}
	if got := summary(s.Objects); !reflect.DeepEqual(got, want) {
		t.Fatalf("objects\n got: %q\nwant: %q", got, want)
	}
}

func TestTheLabParses(t *testing.T) {
	s := load(t, Options{Lab: true})
	for _, o := range s.Objects {
		if !strings.HasPrefix(o.Origin.File, LabPrefix) {
			t.Errorf("lab object %s has origin %s", o.Key, o.Origin)
		}
	}
}

// fakeLab stands in for lab.FS, whose content the lab's authors change.
var fakeLab = fstest.MapFS{
	"hello.yaml": {Data: []byte(`apiVersion: v1
kind: Namespace
metadata:
  name: demo
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: hello
  namespace: demo
spec:
  replicas: 2
  selector: {matchLabels: {app: hello}}
  template: {metadata: {labels: {app: hello}}}
`)},
	"z.yaml": {Data: []byte(`apiVersion: v1
kind: Service
metadata:
  name: hello
  namespace: demo
spec:
  ports: [{port: 80}]
`)},
	"README.md": {Data: []byte("not read")},
}

func TestFilesReplaceLabObjectsInPlaceAndAddNewOnes(t *testing.T) {
	s, err := loadWith(Options{Lab: true, Filenames: []string{"testdata/good/override-hello.yaml", "testdata/dir/b.yaml"}}, fakeLab)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"lab:hello.yaml:1 (document 1) Namespace demo",
		"testdata/good/override-hello.yaml:1 (document 1) Deployment.apps demo/hello",
		"lab:z.yaml:1 (document 1) Service demo/hello",
		"testdata/dir/b.yaml:1 (document 1) Namespace b",
	}
	if got := summary(s.Objects); !reflect.DeepEqual(got, want) {
		t.Fatalf("objects\n got: %q\nwant: %q", got, want)
	}
}

func TestTwoLabObjectsWithOneIdentityAreADuplicate(t *testing.T) {
	lab := fstest.MapFS{
		"a.yaml": {Data: []byte("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: demo\n")},
		"b.yaml": {Data: []byte("# again\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: demo\n")},
	}
	_, err := loadWith(Options{Lab: true}, lab)
	want := "lab:b.yaml:2 (document 1): Namespace demo: duplicate object: also defined at lab:a.yaml:1 (document 1)"
	if err == nil || err.Error() != want || !IsBadInput(err) {
		t.Fatalf("error\n got: %v\nwant: %s", err, want)
	}
}

func TestCRDGroupIPPoolDecodesLikeProjectcalicoV3(t *testing.T) {
	v3 := load(t, Options{Filenames: []string{"testdata/good/ippool-v3.yaml"}}).Objects[0]
	v1 := load(t, Options{Filenames: []string{"testdata/good/ippool-crd-v1.yaml"}}).Objects[0]
	if v1.Key != v3.Key {
		t.Errorf("keys differ: %v and %v", v1.Key, v3.Key)
	}
	p1, ok1 := v1.Typed.(*calico.IPPool)
	p3, ok3 := v3.Typed.(*calico.IPPool)
	if !ok1 || !ok3 {
		t.Fatalf("typed %T and %T", v1.Typed, v3.Typed)
	}
	if !reflect.DeepEqual(p1.Spec, p3.Spec) || !reflect.DeepEqual(p1.ObjectMeta, p3.ObjectMeta) {
		t.Errorf("decoded differently:\n%+v\n%+v", p1, p3)
	}
	if p1.Spec.CIDR != "172.21.0.0/16" || p1.Spec.BlockSize != 26 || !p1.Spec.NATOutgoing {
		t.Errorf("spec %+v", p1.Spec)
	}
	if v1.GVK.Group != "crd.projectcalico.org" || p1.APIVersion != "crd.projectcalico.org/v1" {
		t.Errorf("the object's own apiVersion is lost: %v %v", v1.GVK, p1.TypeMeta)
	}
}

func TestOneCalicoObjectUnderBothGroupsIsOneObject(t *testing.T) {
	tests := []struct {
		name     string
		v1Spec   string
		wantWarn string
	}{
		{name: "the same spec twice is read once, silently", v1Spec: "cidr: 172.21.0.0/16\n  blockSize: 26\n  vxlanMode: Always\n  natOutgoing: true\n  nodeSelector: all()"},
		{name: "two different specs are read once, with a warning", v1Spec: "cidr: 172.21.0.0/16\n  blockSize: 24",
			wantWarn: "IPPool default-ipv4-ippool is also given as crd.projectcalico.org/v1 at <stdin>:1 (document 1) with a different spec"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The v1 spelling comes first, as `kubectl get ippools.crd.projectcalico.org,ippools.projectcalico.org` lists them.
			in := "apiVersion: crd.projectcalico.org/v1\nkind: IPPool\nmetadata:\n  name: default-ipv4-ippool\nspec:\n  " + tt.v1Spec + "\n---\n" +
				"apiVersion: projectcalico.org/v3\nkind: IPPool\nmetadata:\n  name: default-ipv4-ippool\nspec:\n  cidr: 172.21.0.0/16\n  blockSize: 26\n  vxlanMode: Always\n  natOutgoing: true\n  nodeSelector: all()\n"
			snap, err := loadStdin(in, ValidateWarn)
			if err != nil {
				t.Fatal(err)
			}
			if len(snap.Objects) != 1 {
				t.Fatalf("%d objects, want 1", len(snap.Objects))
			}
			if g := snap.Objects[0].GVK.Group; g != "projectcalico.org" {
				t.Errorf("kept the %s spelling, want projectcalico.org", g)
			}
			if p := snap.Objects[0].Typed.(*calico.IPPool); p.Spec.BlockSize != 26 {
				t.Errorf("blockSize %d, want the v3 object's 26", p.Spec.BlockSize)
			}
			got := strings.Join(snap.Warnings, "\n")
			if tt.wantWarn == "" && got != "" || tt.wantWarn != "" && !strings.Contains(got, tt.wantWarn) {
				t.Errorf("warnings %q, want %q", got, tt.wantWarn)
			}
		})
	}
	dir := load(t, Options{Filenames: []string{"testdata/good-dirs/both-calico-groups"}})
	if len(dir.Objects) != 1 || len(dir.Warnings) != 0 {
		t.Errorf("a directory with both spellings: %d objects, warnings %q", len(dir.Objects), dir.Warnings)
	}
}

func TestCRDGroupIPAMConfigIsTheIPAMConfiguration(t *testing.T) {
	o := load(t, Options{Filenames: []string{"testdata/good/ipamconfig-crd-v1.yaml"}}).Objects[0]
	want := model.Key{Group: "projectcalico.org", Kind: "IPAMConfiguration", Name: "default"}
	if o.Key != want {
		t.Errorf("key %#v, want %#v", o.Key, want)
	}
	if c, ok := o.Typed.(*calico.IPAMConfiguration); !ok || !c.Spec.StrictAffinity {
		t.Errorf("typed %#v", o.Typed)
	}
}

func TestUnknownKindIsKeptWithAWarning(t *testing.T) {
	s := load(t, Options{Filenames: []string{"testdata/good/certificate.yaml"}})
	if len(s.Objects) != 1 || s.Objects[0].Typed != nil {
		t.Fatalf("objects %v", summary(s.Objects))
	}
	o := s.Objects[0]
	if want := (model.Key{Group: "cert-manager.io", Kind: "Certificate", Namespace: "demo", Name: "web-tls"}); o.Key != want {
		t.Errorf("key %#v", o.Key)
	}
	if o.Raw["spec"].(map[string]any)["secretName"] != "web-tls" {
		t.Errorf("raw %v", o.Raw)
	}
	want := []string{"testdata/good/certificate.yaml:3 (document 1): kind Certificate (cert-manager.io/v1) is not modeled; kept as-is"}
	if !reflect.DeepEqual(s.Warnings, want) {
		t.Errorf("warnings\n got: %q\nwant: %q", s.Warnings, want)
	}
}

func TestNamelessKubeadmDocumentsAreToldApart(t *testing.T) {
	s := load(t, Options{Filenames: []string{"testdata/good/kubeadm.yaml", "testdata/good/kubeletconfiguration+strategic.yaml"}})
	want := []string{
		"testdata/good/kubeadm.yaml:1 (document 1) ClusterConfiguration.kubeadm.k8s.io ",
		"testdata/good/kubeadm.yaml:7 (document 2) KubeletConfiguration.kubelet.config.k8s.io ",
		"testdata/good/kubeadm.yaml:11 (document 3) JoinConfiguration.kubeadm.k8s.io k8s-lab-win-1",
		"testdata/good/kubeadm.yaml:16 (document 4) JoinConfiguration.kubeadm.k8s.io k8s-lab-node-1",
		"testdata/good/kubeletconfiguration+strategic.yaml:1 (document 1) KubeletConfiguration.kubelet.config.k8s.io kubeletconfiguration+strategic",
	}
	if got := summary(s.Objects); !reflect.DeepEqual(got, want) {
		t.Fatalf("objects\n got: %q\nwant: %q", got, want)
	}
}

func TestAnchorsAndMergeKeys(t *testing.T) {
	s := load(t, Options{Filenames: []string{"testdata/good/anchors.yaml"}})
	cm := s.Objects[0].Typed.(*corev1.ConfigMap)
	if cm.Annotations["app"] != "web" || cm.Annotations["tier"] != "back" || cm.Data["b"] != "hello" {
		t.Errorf("configmap %+v", cm.ObjectMeta)
	}
	// YAML 1.2: yes is a string, not a bool.
	if s.Objects[0].Raw["data"].(map[string]any)["enabled"] != "yes" {
		t.Errorf("raw %v", s.Objects[0].Raw["data"])
	}
}

func TestDecodeDocuments(t *testing.T) {
	objs, err := DecodeDocuments(strings.NewReader("apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || objs[0].Origin.File != "<input>" || objs[0].Key.Name != "x" {
		t.Fatalf("objects %v", summary(objs))
	}
}

func TestLargeListIsSplitIntoItemsWithTheSameResult(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("apiVersion: v1\nkind: List\nmetadata:\n  resourceVersion: \"\"\nitems:\n")
	for i := 0; i < 50; i++ {
		writePod(&b, i, "- ", "  ")
	}
	b.WriteString("# trailing comment\n")
	text := b.Bytes()
	collect := func(fastMin int) ([]*model.Object, error) {
		var objs []*model.Object
		err := decode(bytes.NewReader(text), "big.yaml", func(o *model.Object) error {
			objs = append(objs, o)
			return nil
		}, fastMin)
		return objs, err
	}
	d := &decoder{file: "big.yaml", doc: 1}
	if objs, ok, err := d.fastList(text, 1); !ok || err != nil || len(objs) != 50 {
		t.Fatalf("the list was not split: %v %v, %d objects", ok, err, len(objs))
	}
	whole, err := collect(len(text) + 1)
	if err != nil {
		t.Fatal(err)
	}
	split, err := collect(0)
	if err != nil {
		t.Fatal(err)
	}
	if len(whole) != 50 || !reflect.DeepEqual(whole, split) {
		t.Fatalf("split decoding differs: %d and %d objects\n%q\n%q", len(whole), len(split), summary(whole)[:2], summary(split)[:2])
	}
}

func TestHostileYAMLIsRefused(t *testing.T) {
	var bomb, merge strings.Builder
	bomb.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	merge.WriteString("a0: &a0 {x: 1}\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&bomb, "a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 10), ","))
		fmt.Fprintf(&merge, "a%d: &a%d {<<: [%s]}\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d,", i-1), 10), ","))
	}
	merge.WriteString("<<: [*a9, *a9]\n")
	tests := []struct{ name, in, want string }{
		{"an alias bomb", bomb.String(), "too many nodes after expanding aliases"},
		{"a merge-key bomb", merge.String(), "too many nodes after expanding aliases"},
		{"an alias of its own container", "a: &a [*a]\n", "<stdin>:1 (document 1): a[0][0]: alias *a refers to the value that contains it"},
		{"deep nesting", strings.Repeat("- ", 20000) + "x\n", "<stdin>:1 (document 1): invalid YAML: exceeded max depth of 10000"},
		{"infinity", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\nx: .inf\n", "<stdin>:4 (document 1): ConfigMap default/x: x: .inf has no JSON representation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(Options{Filenames: []string{"-"}, Stdin: strings.NewReader(tt.in)})
			if err == nil || !IsBadInput(err) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one with %q", err, tt.want)
			}
		})
	}
}

func TestBadInputOnStdin(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{
			name: "an alias of an unknown anchor names its line",
			in:   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: *nope\n",
			want: "<stdin>:6 (document 1): invalid YAML: unknown anchor 'nope' referenced",
		},
		{
			name: "a JSON array is not an object",
			in:   `[{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}}]`,
			want: "<stdin>:1 (document 1): expected an object with apiVersion and kind, got a list",
		},
		{
			name: "an apiVersion that is no group/version",
			in:   "apiVersion: a/b/c\nkind: Thing\nmetadata:\n  name: x\n",
			want: `<stdin>:1 (document 1): Thing x: apiVersion: "a/b/c" is not a valid group/version`,
		},
		{
			name: "a name that is not a string",
			in:   "apiVersion: example.com/v1\nkind: Thing\nmetadata:\n  name: [x]\n",
			want: "<stdin>:4 (document 1): Thing: metadata.name: expected string, got a list",
		},
		{
			name: "a List whose items are no list",
			in:   "apiVersion: v1\nkind: List\nitems:\n  a: b\n",
			want: "<stdin>:4 (document 1): List: items: expected a list of objects, got an object",
		},
		{
			name: "a List item that is no object",
			in:   `{"apiVersion": "v1", "kind": "List", "items": [` + "\n" + `"x"]}`,
			want: `<stdin>:2 (document 1): List: items[0]: expected an object, got string "x"`,
		},
		{
			name: "a syntax error the parser finds at the start of a construct",
			in:   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata: [a, b\n",
			want: "<stdin>:5 (document 1): invalid YAML: did not find expected ',' or ']'",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(Options{Filenames: []string{"-"}, Stdin: strings.NewReader(tt.in)})
			if err == nil || err.Error() != tt.want || !IsBadInput(err) {
				t.Fatalf("error\n got: %v\nwant: %s", err, tt.want)
			}
		})
	}
}

func TestFlowStyleYAMLThatLooksLikeJSON(t *testing.T) {
	s := load(t, Options{Filenames: []string{"-"}, Stdin: strings.NewReader("{apiVersion: v1, kind: Namespace, metadata: {name: x}}\n")})
	if got := summary(s.Objects); len(got) != 1 || got[0] != "<stdin>:1 (document 1) Namespace x" {
		t.Fatalf("objects %q", got)
	}
}

func TestTypedObjectsGetTheDefaultNamespace(t *testing.T) {
	s := load(t, Options{Filenames: []string{"testdata/good/multidoc.yaml"}})
	if ns := s.Objects[1].Typed.(*corev1.ConfigMap).Namespace; ns != "default" {
		t.Errorf("namespace %q", ns)
	}
	if _, ok := s.Objects[1].Raw["metadata"].(map[string]any)["namespace"]; ok {
		t.Error("Raw was changed")
	}
}

func TestALaterFileReplacesAnEarlierOnesObject(t *testing.T) {
	snap, err := Load(Options{Filenames: []string{"testdata/good/ippool-v3.yaml", "testdata/good/ippool-crd-v1.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	var pools []string
	for _, o := range snap.Objects {
		if o.Key.Kind == "IPPool" {
			pools = append(pools, o.Origin.File)
		}
	}
	if len(pools) != 1 || pools[0] != "testdata/good/ippool-crd-v1.yaml" {
		t.Fatalf("IPPools from %v, want only the later file's", pools)
	}
}

// TestJSONListItemsDecodedInBatchesAreTheItemsOneByOne decodes a JSON List
// of more items than a batch holds on every core, and item by item: the
// objects, their order and origins, and the first bad item's error are
// the same.
func TestJSONListItemsDecodedInBatchesAreTheItemsOneByOne(t *testing.T) {
	list := func(n int, bad ...int) []byte {
		var b bytes.Buffer
		b.WriteString(`{"apiVersion": "v1", "kind": "List", "items": [`)
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteString(",")
			}
			port := "80"
			if slices.Contains(bad, i) {
				port = `"eighty"`
			}
			fmt.Fprintf(&b, "\n"+`{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-%d", "namespace": "demo"},`+
				"\n"+`"spec": {"nodeName": "node-%d", "containers": [{"name": "web", "image": "nginx", "ports": [{"containerPort": %s}]}]}}`, i, i%7, port)
		}
		b.WriteString("\n]}\n")
		return b.Bytes()
	}
	collect := func(text []byte, batch int) ([]*model.Object, error) {
		var objs []*model.Object
		d := &decoder{file: "pods.json", emit: func(o *model.Object) error {
			objs = append(objs, o)
			return nil
		}, fastMin: fastListMin, keys: map[string]string{}, itemBatch: batch}
		err := d.jsonStream(text)
		return objs, err
	}
	tests := []struct {
		name string
		text []byte
		want string // the error, "" for none
	}{
		{"a list of three batches and a part", list(3*itemBatchSize + 17), ""},
		{"a list shorter than a batch", list(5), ""},
		{"bad items in two batches: the first one is reported", list(2*itemBatchSize+3, itemBatchSize+9, itemBatchSize+200, 2*itemBatchSize+1),
			fmt.Sprintf(`pods.json:%d (document 1): Pod demo/web-%d: spec.containers[0].ports[0].containerPort: expected int32, got string "eighty"`, 2*(itemBatchSize+9)+3, itemBatchSize+9)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			batched, err := collect(tt.text, 0)
			if got := fmt.Sprint(err); tt.want != "" && got != tt.want || tt.want == "" && err != nil {
				t.Fatalf("error\n got: %v\nwant: %s", err, tt.want)
			}
			one, err1 := collect(tt.text, 1)
			if fmt.Sprint(err) != fmt.Sprint(err1) {
				t.Fatalf("errors differ:\nbatched:     %v\none by one:  %v", err, err1)
			}
			if len(one) != len(batched) || !reflect.DeepEqual(one, batched) {
				t.Fatalf("batched decoding differs: %d and %d objects", len(batched), len(one))
			}
			if tt.want == "" && len(batched) == 0 {
				t.Fatal("no objects")
			}
		})
	}
}

// TestAJSONListLargerThanTheConcurrentCheckIsReadAsBefore reads Lists large
// enough for their syntax check to run beside the decode: a syntax error
// anywhere is the error, even after an item that does not decode or a
// duplicate, and a valid List gives the same objects and first error as
// items decoded one by one after the check.
func TestAJSONListLargerThanTheConcurrentCheckIsReadAsBefore(t *testing.T) {
	list := func(n int, tail string, bad ...int) []byte {
		var b bytes.Buffer
		b.WriteString(`{"apiVersion": "v1", "kind": "List", "items": [`)
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteString(",")
			}
			port := "80"
			if slices.Contains(bad, i) {
				port = `"eighty"`
			}
			name := i
			if slices.Contains(bad, -i) {
				name = i - 1 // a duplicate of the item before
			}
			fmt.Fprintf(&b, "\n"+`{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-%d", "namespace": "demo"},`+
				"\n"+`"spec": {"nodeName": "node-%d", "containers": [{"name": "web", "image": "nginx", "ports": [{"containerPort": %s}]}]}}`, name, i%7, port)
		}
		b.WriteString(tail)
		return b.Bytes()
	}
	n := 2*itemBatchSize + 40
	lines := 2*n + 2 // the line of the text after the last item
	tests := []struct {
		name string
		text []byte
		want string
	}{
		{"a valid list", list(n, "\n]}\n"), ""},
		{"a list cut short", list(n, "\n"),
			fmt.Sprintf("pods.json:%d (document 1): invalid JSON: unexpected end of JSON input", lines-1)},
		{"a stray character after the last item", list(n, "\n]x}\n"),
			fmt.Sprintf("pods.json:%d (document 1): invalid JSON: invalid character 'x' after object key:value pair", lines)},
		{"a trailing comma, which YAML's flow style allows: read as YAML, the bad item is the error", list(n, "\n],}\n", 3),
			`pods.json:9 (document 1): Pod demo/web-3: spec.containers[0].ports[0].containerPort: expected int32, got string "eighty"`},
		{"a syntax error after a duplicate item", list(n, "\n]]\n", -5),
			fmt.Sprintf("pods.json:%d (document 1): invalid JSON: invalid character ']' after object key:value pair", lines)},
		{"an item that does not decode in a valid list", list(n, "\n]}\n", itemBatchSize+3),
			fmt.Sprintf(`pods.json:%d (document 1): Pod demo/web-%d: spec.containers[0].ports[0].containerPort: expected int32, got string "eighty"`, 2*(itemBatchSize+3)+3, itemBatchSize+3)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.text) < 64<<10 {
				t.Fatalf("the list has %d bytes, fewer than the concurrent check's %d", len(tt.text), checkConcurrentMin)
			}
			var objs []*model.Object
			d := &decoder{file: "pods.json", emit: func(o *model.Object) error {
				for _, p := range objs {
					if p.Key == o.Key {
						return errors.New("duplicate " + o.Key.Name)
					}
				}
				objs = append(objs, o)
				return nil
			}, fastMin: fastListMin, keys: map[string]string{}}
			err := d.jsonStream(tt.text)
			if got := fmt.Sprint(err); tt.want != "" && got != tt.want || tt.want == "" && err != nil {
				t.Fatalf("error\n got: %v\nwant: %s", err, tt.want)
			}
			if err != nil && len(objs) > 0 && strings.Contains(tt.want, "invalid JSON") {
				t.Fatalf("%d objects emitted before the syntax error", len(objs))
			}
			if tt.want == "" && len(objs) != n {
				t.Fatalf("%d objects, want %d", len(objs), n)
			}
		})
	}
}

// TestManagedFieldsAreDroppedWithTheGenericValues loads a Pod as kubectl
// get -o json prints it, with its managedFields: a load that drops the
// generic values (as the commands that build the twin do) drops them too,
// from YAML and JSON alike; one that keeps Raw keeps them in both forms.
func TestManagedFieldsAreDroppedWithTheGenericValues(t *testing.T) {
	const managed = `[{"manager": "kubectl-client-side-apply", "operation": "Update", "apiVersion": "v1",` +
		` "time": "2024-05-01T10:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}}}]`
	jsonPod := `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "demo", "labels": {"app": "web"},` +
		` "managedFields": ` + managed + `}, "spec": {"containers": [{"name": "web", "image": "nginx"}]}}`
	yamlPod := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: demo\n  labels: {app: web}\n  managedFields: " + managed +
		"\nspec:\n  containers:\n  - {name: web, image: nginx}\n"
	tests := []struct {
		name    string
		text    string
		dropRaw bool
		want    int // managed field entries left on the typed Pod
	}{
		{"JSON, generic values dropped", jsonPod, true, 0},
		{"YAML, generic values dropped", yamlPod, true, 0},
		{"JSON, generic values kept", jsonPod, false, 1},
		{"YAML, generic values kept", yamlPod, false, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap, err := Load(Options{Filenames: []string{"-"}, Stdin: strings.NewReader(tt.text), DropRaw: tt.dropRaw})
			if err != nil {
				t.Fatal(err)
			}
			if len(snap.Objects) != 1 {
				t.Fatalf("%d objects, want 1", len(snap.Objects))
			}
			pod, ok := snap.Objects[0].Typed.(*corev1.Pod)
			if !ok {
				t.Fatalf("typed object is %T", snap.Objects[0].Typed)
			}
			if got := len(pod.ManagedFields); got != tt.want {
				t.Fatalf("%d managed field entries, want %d", got, tt.want)
			}
			if pod.Labels["app"] != "web" || pod.Spec.Containers[0].Image != "nginx" {
				t.Fatalf("the rest of the Pod is lost: %+v", pod.ObjectMeta)
			}
			if !tt.dropRaw {
				md, _ := snap.Objects[0].Raw["metadata"].(map[string]any)
				if _, ok := md["managedFields"]; !ok {
					t.Fatal("Raw lost its managedFields")
				}
			}
		})
	}
}

// TestAYAMLStreamDecodedOnEveryCoreNumbersItsDocumentsInOrder reads a
// stream of many documents, with empty ones and a chunk of two documents
// among them, decoded in parallel: every object, warning and error names
// the document it is in, counted over the whole stream.
func TestAYAMLStreamDecodedOnEveryCoreNumbersItsDocumentsInOrder(t *testing.T) {
	// stream writes n ConfigMaps, one a document, with an empty document
	// after every seventh; unknown gets an unknown field, bad a bad value.
	// It returns the text and the document and line of each ConfigMap.
	stream := func(n, unknown, bad int) (string, []int, []int) {
		var b strings.Builder
		var docs, lines []int
		doc, line := 0, 1
		for i := 0; i < n; i++ {
			switch {
			case i == 41:
				// A marker with a tag stays inside the chunk: two
				// documents in one.
				b.WriteString("--- !!map\n")
				line++
			case i > 0:
				b.WriteString("---\n")
				line++
			}
			doc++
			at := line
			if i == 41 {
				at-- // the tagged node starts on its marker's line
			}
			docs, lines = append(docs, doc), append(lines, at)
			fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\n  namespace: demo\n", i)
			line += 5
			switch i {
			case unknown:
				b.WriteString("colour: red\n")
				line++
			case bad:
				b.WriteString("data: [1, 2]\n")
				line++
			}
			if i%7 == 6 {
				b.WriteString("---\n")
				line++
				doc++ // an empty document
			}
		}
		return b.String(), docs, lines
	}
	t.Run("every object and the warning name their document", func(t *testing.T) {
		text, docs, lines := stream(500, 333, -1)
		snap, err := Load(Options{Filenames: []string{"-"}, Stdin: strings.NewReader(text), DropRaw: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(snap.Objects) != 500 {
			t.Fatalf("%d objects, want 500", len(snap.Objects))
		}
		for i, o := range snap.Objects {
			if want := fmt.Sprintf("cm-%d", i); o.Key.Name != want || o.Origin.Doc != docs[i] || o.Origin.Line != lines[i] {
				t.Fatalf("object %d is %s at document %d line %d, want %s at document %d line %d", i, o.Key.Name, o.Origin.Doc, o.Origin.Line, want, docs[i], lines[i])
			}
		}
		want := fmt.Sprintf(`<stdin>:%d (document %d): ConfigMap demo/cm-333: unknown field "colour"`, lines[333]+5, docs[333])
		if !slices.Contains(snap.Warnings, want) {
			t.Fatalf("warnings %q lack %q", snap.Warnings, want)
		}
	})
	t.Run("a duplicate before a bad document is the error", func(t *testing.T) {
		text, docs, lines := stream(500, -1, 250)
		text = strings.Replace(text, "name: cm-120\n", "name: cm-119\n", 1)
		_, err := Load(Options{Filenames: []string{"-"}, Stdin: strings.NewReader(text), DropRaw: true})
		want := fmt.Sprintf(`<stdin>:%d (document %d): ConfigMap demo/cm-119: duplicate object: also defined at <stdin>:%d (document %d)`,
			lines[120], docs[120], lines[119], docs[119])
		if fmt.Sprint(err) != want {
			t.Fatalf("error\n got: %v\nwant: %s", err, want)
		}
	})
	t.Run("the first bad document is the error", func(t *testing.T) {
		text, docs, lines := stream(500, -1, 250)
		_, err := Load(Options{Filenames: []string{"-"}, Stdin: strings.NewReader(text), DropRaw: true})
		want := fmt.Sprintf(`<stdin>:%d (document %d): ConfigMap demo/cm-250: data: expected an object, got a list`, lines[250]+5, docs[250])
		if fmt.Sprint(err) != want {
			t.Fatalf("error\n got: %v\nwant: %s", err, want)
		}
	})
}
