package linux

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A pod's network namespace name is "cni-" and the UUID made of the
// SHA-256 of namespace/name/uid, in its five dash-separated hex groups.
func TestAPodsNetworkNamespaceIsTheUUIDOfItsNamespaceNameAndUID(t *testing.T) {
	for _, p := range []*corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "first"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "coredns-1", UID: types.UID("0b6f1f8e-5a47-4c55-9d3e-2f0f4f7b9a11")}},
		{ObjectMeta: metav1.ObjectMeta{Name: "no-namespace"}},
	} {
		t.Run(p.Namespace+"/"+p.Name, func(t *testing.T) {
			s := sha256.Sum256([]byte(p.Namespace + "/" + p.Name + "/" + string(p.UID)))
			s[6] = s[6]&0x0f | 0x40
			s[8] = s[8]&0x3f | 0x80
			want := fmt.Sprintf("cni-%x-%x-%x-%x-%x", s[0:4], s[4:6], s[6:8], s[8:10], s[10:16])
			if got := netnsName(p); got != want {
				t.Errorf("netnsName = %q, want %q", got, want)
			}
		})
	}
}

// A pod's host-side veth is "cali" and the first 11 hex digits of the
// SHA-1 of namespace.name (Calico's default interface name).
func TestAPodsVethIsCaliAndElevenHexDigitsOfItsNamesHash(t *testing.T) {
	for _, tc := range [][2]string{{"ns", "first"}, {"kube-system", "coredns-7c65d6cfc9-abcde"}, {"", ""}} {
		h := sha1.Sum([]byte(tc[0] + "." + tc[1]))
		want := "cali" + hex.EncodeToString(h[:])[:11]
		if got := VethName(tc[0], tc[1]); got != want {
			t.Errorf("VethName(%q, %q) = %q, want %q", tc[0], tc[1], got, want)
		}
	}
}
