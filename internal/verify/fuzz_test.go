package verify

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seedFrom adds every example output of a command as a fuzz seed.
func seedFrom(f *testing.F, typed string) {
	files, _ := filepath.Glob("../../examples/verify-actual/*/*")
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		head, body, _ := strings.Cut(string(data), "\n")
		if c, ok := LookupCommand(strings.TrimPrefix(head, "# ")); ok && c.Typed == typed {
			f.Add(body)
		}
	}
	f.Add("")
	f.Add("\n\n")
}

// fuzzParser holds every parser to: no panic, a bad output is a
// *ParseError on a line the output has, and parsing is deterministic.
func fuzzParser(f *testing.F, typed string) {
	cmd, ok := LookupCommand(typed)
	if !ok {
		f.Fatalf("no command %q", typed)
	}
	seedFrom(f, typed)
	f.Fuzz(func(t *testing.T, out string) {
		items, err := cmd.Parse(out)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a ParseError", err)
			}
			if n := len(lines(out)); pe.Line < 1 || pe.Line > n+1 {
				t.Fatalf("line %d of an output of %d lines", pe.Line, n)
			}
			return
		}
		again, _ := cmd.Parse(out)
		if render(items) != render(again) {
			t.Fatal("two parses of one output differ")
		}
		if d := Compare("n", typed, items, again); len(d) != 0 {
			t.Fatalf("an output differs from itself: %v", d)
		}
	})
}

func FuzzParseIPRoute(f *testing.F)       { fuzzParser(f, "ip route") }
func FuzzParseLinkVXLAN(f *testing.F)     { fuzzParser(f, "ip -d link show vxlan.calico") }
func FuzzParseIPNeigh(f *testing.F)       { fuzzParser(f, "ip neigh show dev vxlan.calico") }
func FuzzParseBridgeFDB(f *testing.F)     { fuzzParser(f, "bridge fdb show dev vxlan.calico") }
func FuzzParseNft(f *testing.F)           { fuzzParser(f, "nft list table ip kube-proxy") }
func FuzzParseHnsNetwork(f *testing.F)    { fuzzParser(f, "Get-HnsNetwork | ConvertTo-Json -Depth 10") }
func FuzzParseHnsEndpoint(f *testing.F)   { fuzzParser(f, "Get-HnsEndpoint | ConvertTo-Json -Depth 10") }
func FuzzParseHnsdiag(f *testing.F)       { fuzzParser(f, "hnsdiag list all") }
func FuzzParseHnsPolicyList(f *testing.F) { fuzzParser(f, "Get-HnsPolicyList") }
func FuzzParseNetAdapter(f *testing.F)    { fuzzParser(f, "Get-NetAdapter") }
func FuzzParseIpconfig(f *testing.F)      { fuzzParser(f, "ipconfig /all") }
