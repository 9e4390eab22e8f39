package felix

import "testing"

func TestTheDerivedVTEPMACIsFelixsRule(t *testing.T) {
	for _, c := range []struct {
		name, node, want string
	}{
		// sha1sum of the names: eef4619850… and 11f6ad8ec5….
		{"a node's MAC is 66 and the first five bytes of SHA-1 of its name", "k8s-lab-node-1", "66:ee:f4:61:98:50"},
		{"a one-letter name derives its MAC the same way", "x", "66:11:f6:ad:8e:c5"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := VTEPMACForHost(c.node); got != c.want {
				t.Errorf("VTEPMACForHost(%q) = %s, want %s", c.node, got, c.want)
			}
		})
	}
}
