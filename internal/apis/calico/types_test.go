package calico

import "testing"

func TestPolicyDirectionsFollowTypesOrCalicosDefault(t *testing.T) {
	tests := []struct {
		name         string
		spec         PolicySpec
		ingress, egr bool
	}{
		{"no types and no egress rules is ingress only", PolicySpec{Ingress: []Rule{{Action: "Allow"}}}, true, false},
		{"no types with egress rules is both", PolicySpec{Egress: []Rule{{Action: "Allow"}}}, true, true},
		{"types are read in any case", PolicySpec{Types: []string{"egress"}}, false, true},
		{"types name both directions", PolicySpec{Types: []string{"Ingress", "Egress"}}, true, true},
		{"an unknown type names no direction", PolicySpec{Types: []string{"Forward"}}, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, eg := tc.spec.Directions()
			if in != tc.ingress || eg != tc.egr {
				t.Errorf("Directions() = %t, %t; want %t, %t", in, eg, tc.ingress, tc.egr)
			}
		})
	}
}
