package plancmd

import (
	"strings"
	"testing"
)

const labBeforeWin1 = "../plan/testdata/lab-before-win-1"

func TestANodesFileLineThatIsNotNameAddressBuildIsRefused(t *testing.T) {
	cases := []struct {
		name, text string
		ok         bool
	}{
		{"name and address", "w1 10.0.0.1\n", true},
		{"with a build and a comment", "w1 10.0.0.1 10.0.20348 # 2022\n", true},
		{"a name alone", "w1\n", false},
		{"four fields", "w1 10.0.0.1 10.0.20348 extra\n", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseNodes(strings.NewReader(tc.text), "nodes.txt")
			if (err == nil) != tc.ok {
				t.Errorf("error %v", err)
			}
			if err != nil && !strings.Contains(err.Error(), "nodes.txt:1") {
				t.Errorf("the error does not name the file and line: %v", err)
			}
		})
	}
}

func FuzzParseNodes(f *testing.F) {
	f.Add("w1 10.0.0.1\n# c\nw2 10.0.0.2 10.0.26100\n")
	f.Add("\x00 \t#\n")
	f.Fuzz(func(t *testing.T, text string) {
		nodes, err := parseNodes(strings.NewReader(text), "f")
		if err != nil {
			return
		}
		for _, n := range nodes {
			if n.Name == "" || n.Address == "" {
				t.Errorf("empty field in %+v", n)
			}
		}
	})
}
