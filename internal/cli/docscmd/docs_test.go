package docscmd

import "testing"

func TestPortablePathReplacesOnlyAWholeLeadingDirectory(t *testing.T) {
	for _, c := range []struct{ name, v, dir, want string }{
		{"the directory itself", "/home/a", "/home/a", "$HOME"},
		{"a path below it", "/home/a/.kube/cache", "/home/a", "$HOME/.kube/cache"},
		{"a sibling that shares the prefix", "/home/ab/x", "/home/a", "/home/ab/x"},
		{"a trailing slash on the directory", "/home/a/x", "/home/a/", "$HOME/x"},
		{"the root directory is never replaced", "/etc/x", "/", "/etc/x"},
		{"an empty directory is never replaced", "x", "", "x"},
		{"a value that is not a path", "default", "/home/a", "default"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := portablePath(c.v, c.dir, "$HOME"); got != c.want {
				t.Errorf("portablePath(%q, %q) = %q, want %q", c.v, c.dir, got, c.want)
			}
		})
	}
}

func TestRoffEscapeKeepsTextLiteral(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"a backslash", `C:\k`, `C:\ek`},
		{"hyphens as minus signs", "--lab", `\-\-lab`},
		{"a dash beyond ASCII", "a — b", `a \[u2014] b`},
		{"a leading dot is not a request", ".kube", `\&.kube`},
		{"a leading quote is not a request", "'x'", `\&'x'`},
		{"plain text", "plain text", "plain text"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := roffLine(c.in); got != c.want {
				t.Errorf("roffLine(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}
