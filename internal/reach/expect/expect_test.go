package expect

import (
	"strings"
	"testing"
)

func TestABadExpectationIsRefusedWithItsFileAndItem(t *testing.T) {
	cases := []struct {
		name, yaml, want string
	}{
		{"no list", "from: a\n", "expect.yaml: "},
		{"an unknown field", "- {from: a, to: b, verdict: allowed, when: now}\n", `unknown field "when"`},
		{"no destination", "- {from: a, verdict: allowed}\n", "item 1: from and to are required"},
		{"an unknown verdict", "- {from: a, to: b, verdict: maybe}\n", `item 1: verdict "maybe"`},
		{"a port out of range", "- {from: a, to: b, port: 70000, verdict: denied}\n", "item 1: port 70000: out of range"},
		{"an unknown protocol", "- {from: a, to: b, proto: sctp, verdict: denied}\n", `item 1: proto "sctp"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("expect.yaml", []byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "expect.yaml: ") {
				t.Errorf("error %v, want expect.yaml: …%s", err, tc.want)
			}
		})
	}
}

func TestASavedJSONRunIsAnExpectation(t *testing.T) {
	exps, err := Parse("run.json", []byte(`[
  {"from":"demo/hello","to":"win-demo/aspnetapp","port":8080,"proto":"tcp","verdict":"allowed","reason":"delivered"}]`))
	if err != nil || len(exps) != 1 || exps[0].Port != 8080 {
		t.Fatalf("%v %+v", err, exps)
	}
}

func FuzzParseExpectations(f *testing.F) {
	f.Add([]byte("- {from: a, to: b, verdict: allowed}\n"))
	f.Add([]byte(`[{"from":"a","to":"b","port":1,"proto":"udp","verdict":"n/a"}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		exps, err := Parse("f.yaml", data)
		if err != nil {
			return
		}
		for _, e := range exps {
			if e.From == "" || e.To == "" || e.Port < 0 || e.Port > 65535 {
				t.Fatalf("accepted %+v", e)
			}
		}
	})
}
