package powershell

import (
	"strings"
	"testing"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/engine"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load"
)

// labWindowsNode is the lab's Windows node, compiled.
func labWindowsNode(t *testing.T) *windows.Node {
	t.Helper()
	s, err := load.Load(load.Options{Lab: true})
	if err != nil {
		t.Fatal(err)
	}
	c, err := engine.Build(s)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := windows.Compile(c)
	if err != nil {
		t.Fatal(err)
	}
	n := nodes["k8s-lab-win-1"]
	if n == nil {
		t.Fatal("no Windows node k8s-lab-win-1 in the lab")
	}
	return n
}

// runPS runs a script with preset variables on an empty node.
func runPS(t *testing.T, vars map[string]any, script string) string {
	t.Helper()
	stmts, err := parseScript(script)
	if err != nil {
		t.Fatalf("parse %q: %v", script, err)
	}
	sc := &scope{node: node{&windows.Node{}}, vars: vars}
	var sb strings.Builder
	for _, st := range stmts {
		objs, err := sc.run(st.pipe)
		if err != nil {
			t.Fatalf("run %q: %v", script, err)
		}
		if st.assign != "" {
			sc.vars[strings.ToLower(st.assign)] = unwrap(objs)
			continue
		}
		sb.WriteString(outDefault(objs))
	}
	return sb.String()
}

func obj(kv ...any) *psObj {
	o := newObj(typePSCustomObject)
	for i := 0; i < len(kv); i += 2 {
		o.set(kv[i].(string), kv[i+1])
	}
	return o
}

func TestConvertToJSONIndentsLikeWindowsPowerShell51(t *testing.T) {
	v := obj("a", 1, "b", []any{1, "x"}, "c", obj("d", true), "e", []any{}, "f", []any{obj("g", nil)})
	want := `{
    "a":  1,
    "b":  [
              1,
              "x"
          ],
    "c":  {
              "d":  true
          },
    "e":  [

          ],
    "f":  [
              {
                  "g":  null
              }
          ]
}`
	if got := convertToJSON(v, 10, false); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := convertToJSON(v, 10, true); got != `{"a":1,"b":[1,"x"],"c":{"d":true},"e":[],"f":[{"g":null}]}` {
		t.Errorf("compressed %s", got)
	}
}

func TestConvertToJSONTurnsObjectsBeyondTheDepthIntoStrings(t *testing.T) {
	v := obj("a", obj("b", obj("c", 1)))
	if got := convertToJSON(v, 1, true); got != `{"a":{"b":"@{c=1}"}}` {
		t.Errorf("%s", got)
	}
}

func TestConvertToJSONEscapesAsJavaScriptSerializer(t *testing.T) {
	if got := convertToJSON(obj("s", `a"b\<c>&'`), 2, true); got != `{"s":"a\"b\\\u003cc\u003e\u0026\u0027"}` {
		t.Errorf("%s", got)
	}
}

func TestFormatTableAlignsByTheFirstRowsValue(t *testing.T) {
	vars := map[string]any{"x": []any{obj("N", 5, "S", "ab", "B", true), obj("N", 123, "S", "c", "B", false)}}
	got := runPS(t, vars, "$x | Format-Table N, S, B")
	want := "\n  N S      B\n  - -      -\n  5 ab  True\n123 c  False\n\n"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	// A string in the first row makes the column left-aligned.
	vars = map[string]any{"x": []any{obj("N", "five"), obj("N", 5)}}
	if got := runPS(t, vars, "$x | ft N"); got != "\nN\n-\nfive\n5\n\n" {
		t.Errorf("got %q", got)
	}
}

func TestFormatTableShowsArraysUpToTheEnumerationLimit(t *testing.T) {
	vars := map[string]any{"x": obj("A", []any{1, 2, 3, 4, 5}, "O", obj("k", "v", "l", []any{1}))}
	got := runPS(t, vars, "$x | Format-Table A, O")
	if !strings.Contains(got, "{1, 2, 3, 4...} @{k=v; l=System.Object[]}") {
		t.Errorf("%q", got)
	}
}

func TestSortObjectPutsObjectsWithoutThePropertyLastEitherWay(t *testing.T) {
	vars := map[string]any{"x": []any{obj("IP", "b"), obj("R", true, "IP", "z"), obj("IP", "a"), obj("R", true, "IP", "c")}}
	got := runPS(t, vars, "$x | Sort-Object R, IP | Select-Object -ExpandProperty IP")
	if got != "c\nz\na\nb\n" {
		t.Errorf("ascending %q", got)
	}
	got = runPS(t, vars, "$x | Sort-Object R, IP -Descending | Select-Object -ExpandProperty IP")
	if got != "z\nc\nb\na\n" {
		t.Errorf("descending %q", got)
	}
}

func TestGroupObjectKeepsFirstAppearanceOrder(t *testing.T) {
	vars := map[string]any{"x": []any{obj("T", "b"), obj("T", "a"), obj("T", "B"), obj("T", "c")}}
	got := runPS(t, vars, "$x | Group-Object T | Format-Table Count, Name")
	if got != "\nCount Name\n----- ----\n    2 b\n    1 a\n    1 c\n\n" {
		t.Errorf("%q", got)
	}
}

func TestWhereObjectScriptBlocksAndTheSimplifiedSyntax(t *testing.T) {
	vars := map[string]any{"x": []any{
		obj("Name", "Calico_ep", "Ips", []any{"10.0.0.2"}, "N", 3),
		obj("Name", "pod_Calico", "Ips", []any{}, "N", 12),
	}}
	cases := map[string]string{
		"$x | Where-Object Name -eq calico_ep | Select-Object -ExpandProperty Name":                         "Calico_ep\n",
		"$x | ? Name -like '*_Calico' | select -ExpandProperty Name":                                        "pod_Calico\n",
		"$x | where { $_.N -gt 5 -or $_.Name -match '^C' } | select -ExpandProperty N":                      "3\n12\n",
		"$x | Where-Object { -not $_.Ips } | Select-Object -ExpandProperty Name":                            "pod_Calico\n",
		"$x | Where-Object { !($_.N -lt 10) -and $_.Name -notlike 'C*' } | Select-Object -ExpandProperty N": "12\n",
		"$x | Where-Object { $_.Ips -contains '10.0.0.2' } | Select-Object -First 1 -ExpandProperty Name":   "Calico_ep\n",
		"$x | Where-Object N -eq '12' | Select-Object -ExpandProperty Name":                                 "pod_Calico\n",
	}
	for script, want := range cases {
		if got := runPS(t, vars, script); got != want {
			t.Errorf("%s\n got %q\nwant %q", script, got, want)
		}
	}
}

func TestMemberAccessEnumeratesArraysAndUnwrapsOneResult(t *testing.T) {
	vars := map[string]any{"net": obj("Subnets", []any{obj("P", []any{obj("T", "VSID")})})}
	if got := runPS(t, vars, "$net.Subnets.P.T"); got != "VSID\n" {
		t.Errorf("%q", got)
	}
	vars = map[string]any{"x": []any{obj("A", []any{1, 2}), obj("A", 3)}}
	if got := runPS(t, vars, "$x.A"); got != "1\n2\n3\n" {
		t.Errorf("%q", got)
	}
}

func TestCalculatedPropertiesAndFormatList(t *testing.T) {
	vars := map[string]any{"x": obj("Name", "n", "Subnets", []any{obj("AddressPrefix", "10.0.0.0/26")})}
	got := runPS(t, vars, "$x | Select-Object Name, @{n='Subnet';e={$_.Subnets.AddressPrefix}} | Format-List")
	if got != "\nName   : n\nSubnet : 10.0.0.0/26\n\n" {
		t.Errorf("%q", got)
	}
	// Five or more properties without a view default to a list, fewer to a table.
	if got := runPS(t, map[string]any{"x": obj("a", 1, "b", 2)}, "$x"); got != "\na b\n- -\n1 2\n\n" {
		t.Errorf("%q", got)
	}
}

func TestExecJoinsArgvAndReportsWhatIsNotEmulated(t *testing.T) {
	n := labWindowsNode(t)
	out, _, code := Exec(n, []string{"Get-HnsNetwork", "|", "Select-Object", "-ExpandProperty", "Name"})
	if out != "External\nCalico\n" || code != 0 {
		t.Errorf("%q %d", out, code)
	}
	_, errOut, code := Exec(n, []string{"Get-Process"})
	if code != 1 || !strings.Contains(errOut, "Get-Process is not emulated") || !strings.Contains(errOut, "vfpctrl /list-vmswitch-port") {
		t.Errorf("%q %d", errOut, code)
	}
	if _, _, err := resolveParam("e", []string{"expandproperty", "excludeproperty"}, nil); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Errorf("an ambiguous prefix: %v", err)
	}
	want, _, _ := Exec(n, []string{"Get-HnsEndpoint | Sort-Object -Descending IPAddress | Select-Object -First 1 -ExpandProperty IPAddress"})
	if out, _, code := Exec(n, []string{`PS C:\> Get-HnsEndpoint | Sort-Object -Desc IPAddress | Select-Object -First 1 -ExpandProperty IPAddress`}); out != want || want == "" || code != 0 {
		t.Errorf("a pasted prompt and a parameter prefix: %q %d, want %q", out, code, want)
	}
}
