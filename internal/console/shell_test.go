package console

import (
	"strings"
	"testing"
)

func TestCommandsSplitLikeAShellSplitsThem(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"blanks separate words", "ping -n 2  172.21.172.4", []string{"ping", "-n", "2", "172.21.172.4"}},
		{"double quotes keep blanks and a backslash-n", `curl.exe -w "%{remote_ip} %{http_code}\n" http://x`, []string{"curl.exe", "-w", `%{remote_ip} %{http_code}\n`, "http://x"}},
		{"single quotes keep everything", `sh -c 'echo "a b" | tail -1'`, []string{"sh", "-c", `echo "a b" | tail -1`}},
		{"a backslash escapes a quote inside double quotes", `echo "say \"hi\""`, []string{"echo", `say "hi"`}},
		{"quotes join with the word around them", `a"b c"d`, []string{"ab cd"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SplitCommand(tc.in)
			if err != nil || strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("%q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if _, err := SplitCommand(`echo "open`); err == nil {
		t.Error("an unterminated quote is an error")
	}
}

func TestPipelinesFilterTheOutputAsTailHeadAndGrepDo(t *testing.T) {
	in := "one\ntwo <title>x</title>\nthree\n"
	for _, tc := range []struct {
		name string
		argv []string
		want string
		code int
	}{
		{"tail -2 keeps the last two lines", []string{"tail", "-2"}, "two <title>x</title>\nthree\n", 0},
		{"tail -n 1 keeps the last line", []string{"tail", "-n", "1"}, "three\n", 0},
		{"head -1 keeps the first line", []string{"head", "-1"}, "one\n", 0},
		{"grep -o prints only the match", []string{"grep", "-o", "<title>[^<]*</title>"}, "<title>x</title>\n", 0},
		{"grep without a match exits 1", []string{"grep", "four"}, "", 1},
		{"grep -v inverts", []string{"grep", "-v", "t"}, "one\n", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, code, ok := filter(tc.argv, in)
			if !ok || got != tc.want || code != tc.code {
				t.Errorf("%q %d %v", got, code, ok)
			}
		})
	}
}

func TestAScriptRunsEveryLineAndKeepsTheLastExitCode(t *testing.T) {
	e := lab(t)
	o := execIn(t, e, "pod/check", "default", "sh", "-c", "ping -c 1 nope.demo; nslookup aspnetapp.win-demo.svc.cluster.local | tail -2 | head -1")
	if o.Stdout != "Address: 10.102.98.171\n" || o.Stderr != "ping: bad address 'nope.demo'\n" || o.Code != 0 {
		t.Errorf("%q %q %d", o.Stdout, o.Stderr, o.Code)
	}
}

func TestCommandsTheEmulationDoesNotKnowAreLeftToTheCaller(t *testing.T) {
	e := lab(t)
	for _, argv := range [][]string{{"ip", "route"}, {"Get-HnsNetwork | ConvertTo-Json -Depth 10"}} {
		s, _ := e.ParseSource("node/k8s-lab-win-1", "")
		if _, handled, err := (tracer{e}).exec(s, argv); handled || err != nil {
			t.Errorf("%q: handled=%v err=%v", argv, handled, err)
		}
	}
}
