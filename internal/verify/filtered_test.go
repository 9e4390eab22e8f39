package verify

import (
	"strings"
	"testing"
)

func TestAPipelinesBaseCommandIsTheLongestStartVerifyReads(t *testing.T) {
	cases := []struct {
		name, typed, base string
		ok                bool
	}{
		{"ip route cut with grep", "ip route | grep 172.21.41", "ip route", true},
		{"a quoted pipe is part of the grep pattern", "ip neigh show dev vxlan.calico | grep 'a|b'", "ip neigh show dev vxlan.calico", true},
		{"a PowerShell command that is itself a pipeline", "Get-HnsNetwork | ConvertTo-Json -Depth 10 | Select-String Calico", "Get-HnsNetwork | ConvertTo-Json -Depth 10", true},
		{"a cmdlet verify reads, formatted", "Get-NetAdapter | Format-Table Name, MacAddress", "Get-NetAdapter", true},
		{"a command verify does not read", "pgrep -a bird || echo none", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd, ok := lookupPipelineBase(tc.typed)
			if ok != tc.ok || cmd.Typed != tc.base {
				t.Errorf("got %q %v, want %q %v", cmd.Typed, ok, tc.base, tc.ok)
			}
		})
	}
}

func TestAFilteredOutputIsReadAsItemsAndTheLinesTheParserRefuses(t *testing.T) {
	cases := []struct {
		name  string
		parse func(string) ([]Item, error)
		in    string
		want  string
	}{
		{"routes kept by grep are routes", ParseIPRoute,
			"172.21.41.0/26 via 172.21.41.1 dev vxlan.calico onlink mtu 1450 \n",
			"route | unicast 172.21.41.0/26 | dev=vxlan.calico mtu=1450 onlink=yes via=172.21.41.1\n"},
		{"what grep -o keeps of a link is a line, blanks collapsed", ParseLinkVXLAN,
			"vxlan id 4096  local 192.168.10.26 dev ens18\n",
			"output line | vxlan id 4096 local 192.168.10.26 dev ens18 | \n"},
		{"a table with a GUID and a sandbox ID in its names", nil,
			"vEthernet (DrPort 1803C339-EAB3-4933-8F1F-62E7D36C6E21)  00-15-5D-EB-90-AE\n" +
				"vEthernet (df1924ad959c693c6dc07f1f797f63458fa53dcc81f8126755c3a4509e87a15e_Calico) 0E-2A-AC-15-29-06\n",
			"output line | vEthernet (DrPort <guid>) 00-15-5D-EB-90-AE | \n" +
				"output line | vEthernet (<sandbox-id>_Calico) 0E-2A-AC-15-29-06 | \n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := render(parseFiltered(tc.parse, tc.in)); got != tc.want {
				t.Errorf("got:\n%swant:\n%s", got, tc.want)
			}
		})
	}
}

func TestAnOutputCutShortIsASubsetWithoutItsEllipses(t *testing.T) {
	rest, subset := dropElisions("a\n...\nb\n  …\n")
	if !subset || rest != "a\nb\n" {
		t.Errorf("got %q %v", rest, subset)
	}
	rest, subset = dropElisions("a ... b\n")
	if subset || rest != "a ... b\n" {
		t.Errorf("an ellipsis inside a line is no cut: got %q %v", rest, subset)
	}
}

func FuzzParseFilteredNeverPanics(f *testing.F) {
	f.Add("172.21.41.0/26 via 172.21.41.1 dev vxlan.calico\nvxlan id 4096\n...\n")
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range []func(string) ([]Item, error){ParseIPRoute, ParseLinkVXLAN, ParseNft, ParseHnsdiag, ParseNetAdapter, nil} {
			for _, it := range parseFiltered(p, s) {
				if it.Kind == "output line" && strings.TrimSpace(it.Key) == "" {
					t.Fatalf("empty line item from %q", s)
				}
			}
		}
	})
}
