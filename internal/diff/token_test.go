package diff

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// hashedTwin is a twin whose digest hashes every object from scratch (no
// tokens, nothing taken from an earlier twin): the reference.
func hashedTwin(c *model.Cluster) *Twin {
	t := NewTwin(c)
	t.digOnce.Do(func() { t.dig, t.digMatch = newDigestMatch(c, nil, false) })
	return t
}

// A plan's first twin gives its objects tokens and hashes only those a
// later twin holds copies of: each comparison of a chain of twins (every
// part compared or skipped, every object reported) must be the one made
// through hashes of every object, whether the copies are equal or not.
func TestComparisonsThroughTokensEqualThoseThroughHashes(t *testing.T) {
	base := build(t, true)
	// copied replaces an object with a copy: equal, or changed by change.
	copied := func(c *model.Cluster, i int, change func(p *corev1.Pod)) {
		p := c.Pods[i].DeepCopy()
		if change != nil {
			change(p)
		}
		c.Pods[i] = p
	}
	for _, tc := range []struct {
		name  string
		steps []func(t *testing.T, c *model.Cluster)
	}{
		{"every node and pod replaced by an equal copy, twice", []func(*testing.T, *model.Cluster){
			func(_ *testing.T, c *model.Cluster) {
				for i := range c.Nodes {
					c.Nodes[i] = c.Nodes[i].DeepCopy()
				}
				for i := range c.Pods {
					copied(c, i, nil)
				}
			},
			func(_ *testing.T, c *model.Cluster) {
				for i := range c.Pods {
					copied(c, i, nil)
				}
			},
		}},
		{"a pod's labels change in a copy, then its copy is equal", []func(*testing.T, *model.Cluster){
			func(t *testing.T, c *model.Cluster) {
				copied(c, workloadPod(t, c), func(p *corev1.Pod) { p.Labels = map[string]string{"app": "changed"} })
			},
			func(t *testing.T, c *model.Cluster) { copied(c, workloadPod(t, c), nil) },
		}},
		{"an agent's copy rolls out, then a node's copy changes", []func(*testing.T, *model.Cluster){
			func(t *testing.T, c *model.Cluster) {
				copied(c, hostNetworkPod(t, c), func(p *corev1.Pod) {
					p.Spec.Containers[0].Env = append(p.Spec.Containers[0].Env, corev1.EnvVar{Name: "X", Value: "y"})
				})
			},
			func(_ *testing.T, c *model.Cluster) {
				n := c.Nodes[0].DeepCopy()
				n.Annotations = map[string]string{"example.com/x": "y"}
				c.Nodes[0] = n
			},
		}},
		{"a pod's address changes in a copy", []func(*testing.T, *model.Cluster){
			func(t *testing.T, c *model.Cluster) {
				copied(c, workloadPod(t, c), func(p *corev1.Pod) { p.Status.PodIP = "172.21.99.99" })
			},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			chain := []*model.Cluster{base}
			for _, step := range tc.steps {
				chain = append(chain, sharing(chain[len(chain)-1], step, t))
			}
			tokens, hashes := NewTwin(chain[0]), hashedTwin(chain[0])
			for k, next := range chain[1:] {
				// Each reference twin hashes its own objects, from scratch.
				tt, th := NewTwin(next), hashedTwin(next)
				got, err := CompareTwins(tokens, tt, Options{NoReach: true})
				if err != nil {
					t.Fatal(err)
				}
				want, err := CompareTwins(hashes, th, Options{NoReach: true})
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("step %d through tokens %+v\nthrough hashes %+v", k+1, got, want)
				}
				// The same parts compared, the same objects matched: a copy
				// equal to its object keeps the object's token.
				if g, w := changedParts(tokens.dig, tt.dig), changedParts(hashes.dig, th.dig); g != w {
					t.Errorf("step %d: parts through tokens %+v, through hashes %+v", k+1, g, w)
				}
				for i := range tt.dig.sums {
					if (tt.dig.sums[i].sum == tokens.dig.sumOfKey(tt.dig.objects[i].key)) != (th.dig.sums[i].sum == hashes.dig.sumOfKey(th.dig.objects[i].key)) {
						t.Errorf("step %d: %v matches its earlier self through tokens and hashes differently", k+1, tt.dig.objects[i].key)
					}
				}
				tokens, hashes = tt, th
			}
		})
	}
}

// sumOfKey is the sum of the digest's object with the key, 0 when none.
func (d *digest) sumOfKey(k model.Key) uint64 {
	for i, o := range d.objects {
		if o.key == k {
			return d.sums[i].sum
		}
	}
	return 0
}
