package live

import (
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// deploy/rbac.yaml grants exactly what Read lists: get, list and watch (serve) on every
// kind of every Target choice, nothing else, no Secrets.
func TestRBACGrantsExactlyWhatIsRead(t *testing.T) {
	data, err := os.ReadFile("../../deploy/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	granted := map[string]bool{}
	kinds := map[string]bool{}
	for _, doc := range strings.Split(string(data), "\n---") {
		var obj struct {
			Kind  string `json:"kind"`
			Rules []struct {
				APIGroups     []string `json:"apiGroups"`
				Resources     []string `json:"resources"`
				ResourceNames []string `json:"resourceNames"`
				Verbs         []string `json:"verbs"`
			} `json:"rules"`
		}
		if err := yaml.UnmarshalStrict([]byte(doc), &obj); err != nil {
			// Other kinds have fields this struct leaves out.
			if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
				t.Fatal(err)
			}
		}
		kinds[obj.Kind] = true
		if obj.Kind != "ClusterRole" {
			continue
		}
		for _, r := range obj.Rules {
			if !reflect.DeepEqual(r.Verbs, []string{"get", "list", "watch"}) {
				t.Errorf("rule %v grants %v, want [get list watch]", r.Resources, r.Verbs)
			}
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					if res == "*" || g == "*" || res == "secrets" || strings.Contains(res, "/") {
						t.Errorf("rule grants %s in %q", res, g)
					}
					granted[g+"/"+res] = true
				}
			}
		}
	}
	for _, k := range []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding"} {
		if !kinds[k] {
			t.Errorf("deploy/rbac.yaml has no %s", k)
		}
	}
	read := map[string]bool{}
	for _, tg := range Targets() {
		for _, c := range tg.Choices {
			read[c.Group+"/"+Plural(c.Kind)] = true
		}
	}
	var missing, extra []string
	for r := range read {
		if !granted[r] {
			missing = append(missing, r)
		}
	}
	for r := range granted {
		if !read[r] {
			extra = append(extra, r)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("read but not granted: %v", missing)
	}
	if len(extra) > 0 {
		t.Errorf("granted but never read: %v", extra)
	}
}
