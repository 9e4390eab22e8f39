package objhash

import (
	"encoding/json"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/operator"
)

// A field hash stands for the object's JSON in the digest: two values
// whose JSON differs must hash differently, and values JSON writes alike
// (a map filled in another order, a quantity written two ways, a time in
// another zone) should hash alike.
func TestFieldHashesDifferWhereJSONDoes(t *testing.T) {
	str := func(s string) *string { return &s }
	at := func(loc *time.Location) *metav1.Time {
		return &metav1.Time{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).In(loc)}
	}
	block := func(change func(b *calico.IPAMBlock)) *calico.IPAMBlock {
		b := &calico.IPAMBlock{ObjectMeta: metav1.ObjectMeta{Name: "10-0-0-0-26"}, Spec: calico.IPAMBlockSpec{
			CIDR: "10.0.0.0/26", Affinity: str("host:a"), Allocations: []*int{nil, new(int)}, Unallocated: []int{0},
			Attributes: []calico.AllocationAttribute{{HandleID: str("h"), ActiveOwnerAttrs: map[string]string{"node": "a", "pod": "p"}}},
		}}
		change(b)
		return b
	}
	type pair struct{ A, B string }
	for _, tc := range []struct {
		name string
		a, b any
	}{
		{"the same block", block(func(*calico.IPAMBlock) {}), block(func(*calico.IPAMBlock) {})},
		{"a map's values swapped between its keys", block(func(*calico.IPAMBlock) {}), block(func(b *calico.IPAMBlock) {
			b.Spec.Attributes[0].ActiveOwnerAttrs = map[string]string{"node": "p", "pod": "a"}
		})},
		{"a map filled in another order", block(func(b *calico.IPAMBlock) {
			b.Spec.Attributes[0].ActiveOwnerAttrs = map[string]string{}
			for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"} {
				b.Spec.Attributes[0].ActiveOwnerAttrs[k] = k
			}
		}), block(func(b *calico.IPAMBlock) {
			b.Spec.Attributes[0].ActiveOwnerAttrs = map[string]string{}
			for _, k := range []string{"i", "h", "g", "f", "e", "d", "c", "b", "a"} {
				b.Spec.Attributes[0].ActiveOwnerAttrs[k] = k
			}
		})},
		{"an allocation freed", block(func(*calico.IPAMBlock) {}), block(func(b *calico.IPAMBlock) { b.Spec.Allocations[1] = nil })},
		{"an allocation's index", block(func(*calico.IPAMBlock) {}), block(func(b *calico.IPAMBlock) { *b.Spec.Allocations[1] = 1 })},
		{"a list emptied", block(func(*calico.IPAMBlock) {}), block(func(b *calico.IPAMBlock) { b.Spec.Unallocated = []int{} })},
		{"a nil list against an empty one that JSON writes", block(func(b *calico.IPAMBlock) { b.Spec.Unallocated = nil }), block(func(b *calico.IPAMBlock) { b.Spec.Unallocated = []int{} })},
		{"a time in another zone", block(func(b *calico.IPAMBlock) { b.Spec.AffinityClaimTime = at(time.UTC) }),
			block(func(b *calico.IPAMBlock) { b.Spec.AffinityClaimTime = at(time.FixedZone("x", 3600)) })},
		{"another time", block(func(b *calico.IPAMBlock) { b.Spec.AffinityClaimTime = at(time.UTC) }),
			block(func(b *calico.IPAMBlock) {
				b.Spec.AffinityClaimTime = &metav1.Time{Time: at(time.UTC).Add(time.Second)}
			})},
		{"two strings split in another place", pair{"ab", "c"}, pair{"a", "bc"}},
		{"an interface holding a number or its text", []any{1}, []any{"1"}},
		{"a quantity written two ways", map[string]resource.Quantity{"cpu": resource.MustParse("1")}, map[string]resource.Quantity{"cpu": resource.MustParse("1000m")}},
		{"two quantities", map[string]resource.Quantity{"cpu": resource.MustParse("1")}, map[string]resource.Quantity{"cpu": resource.MustParse("2")}},
		{"an Installation's field", &operator.Installation{Spec: operator.InstallationSpec{Variant: "Calico"}}, &operator.Installation{Spec: operator.InstallationSpec{Variant: "TigeraSecureEnterprise"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ja, err := json.Marshal(tc.a)
			if err != nil {
				t.Fatal(err)
			}
			jb, err := json.Marshal(tc.b)
			if err != nil {
				t.Fatal(err)
			}
			ha, oka := FieldHash(tc.a)
			hb, okb := FieldHash(tc.b)
			if !oka || !okb {
				t.Fatal("the fields could not be read")
			}
			sameJSON := string(ja) == string(jb)
			if !sameJSON && ha == hb {
				t.Errorf("JSON %s and %s differ, the hashes agree", ja, jb)
			}
			// Equal values, and what JSON writes through a value's own
			// marshaler alike, hash alike.
			if sameJSON && ha != hb {
				t.Errorf("JSON %s written alike, the hashes differ", ja)
			}
		})
	}
}
