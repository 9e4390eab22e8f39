// Package hosttools answers the commands that read a node's host rather
// than its dataplane: the service manager (Get-Service, systemctl), the
// container runtime (crictl, containerd.exe config dump), the host's
// addresses and version (Get-NetIPAddress, ipconfig, Get-ItemProperty for
// the build and UBR), the time service (w32tm), the kubelet's log
// (Get-Content -Tail), Test-NetConnection (with the console's resolver and
// trace) and, inside Windows pods, cmd's whoami, ver and echo.
// Answers come from the host model (internal/host) and the built twin.
// Values no model derives — sandbox and container IDs the runtime makes
// at random, image IDs and sizes, process IDs — are the observed ones
// where the input gives them, else stand-ins; each command says which on
// stderr. Nothing runs.
package hosttools

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/host"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Result is what a command prints and its exit code.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// Options are what a command reads besides the twin.
type Options struct {
	// Now is the time ages are counted to.
	Now time.Time
	// VSwitch: HNS has made the external vSwitch on the (Windows) node,
	// which moves the host's address to "vEthernet (<NIC>)".
	VSwitch bool
}

// Node runs a lone host command on a node — crictl, containerd.exe,
// ipconfig, systemctl, journalctl — optionally piped on Windows into
// Select-String PATTERN. ok is false when argv is none of them (the
// PowerShell cmdlets go through Cmdlets).
func Node(c *model.Cluster, node string, argv []string, o Options) (Result, bool, error) {
	words, filter, ok := splitLine(argv)
	if !ok || len(words) == 0 {
		return Result{}, false, nil
	}
	name := strings.ToLower(words[0])
	name = strings.TrimSuffix(name, ".exe")
	switch name {
	case "crictl", "containerd", "systemctl", "journalctl", "ipconfig", "w32tm":
	case "get-content", "gc", "type", "cat":
		name = "get-content"
	default:
		return Result{}, false, nil
	}
	h, err := host.For(c, node)
	if err != nil {
		return Result{}, true, err
	}
	var r Result
	switch name {
	case "crictl":
		r = crictl(c, h, words[1:], o.Now)
	case "containerd":
		r = containerdCmd(h, words[1:])
	case "systemctl":
		r = systemctl(h, words[1:])
	case "journalctl":
		r = journalctl(h, words[1:])
	case "ipconfig":
		r = ipconfig(c, h, words[1:], o.VSwitch)
	case "w32tm":
		if h.OS != hybrid.OSWindows {
			return Result{}, false, nil
		}
		r = w32tm(c, h, words[1:], o.Now)
	case "get-content":
		if h.OS != hybrid.OSWindows {
			return Result{}, false, nil
		}
		r = getContent(c, h, words[1:], o.Now)
	}
	if filter != "" {
		if h.OS != hybrid.OSWindows {
			return Result{}, false, nil // the console's Linux pipeline filters apply
		}
		re, err := regexp.Compile("(?i)" + filter)
		if err != nil {
			return Result{Stderr: fmt.Sprintf("Select-String : The string %s is not a valid regular expression: %v\n", filter, err), Code: 1}, true, nil
		}
		r.Stdout = selectString(r.Stdout, re)
	}
	return r, true, nil
}

// selectString is Select-String on a native command's lines: the matching
// lines, each printed by its MatchInfo (the line itself for pipeline
// input), with the blank line before and after that the console's
// formatter writes around them.
func selectString(text string, re *regexp.Regexp) string {
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if re.MatchString(l) {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		return ""
	}
	return "\n" + strings.Join(out, "\n") + "\n\n"
}

// splitLine splits a command line into the command's words and, for
// `CMD | Select-String PATTERN`, the pattern. ok is false for anything
// else with a pipe.
func splitLine(argv []string) ([]string, string, bool) {
	text := strings.Trim(strings.Join(argv, " "), " \t")
	if len(argv) > 1 && !strings.Contains(text, "|") {
		return argv, "", true
	}
	stages := splitPipe(text)
	words := fields(stages[0])
	switch len(stages) {
	case 1:
		return words, "", true
	case 2:
		sel := fields(stages[1])
		if len(sel) == 2 && (strings.EqualFold(sel[0], "Select-String") || strings.EqualFold(sel[0], "sls")) {
			return words, sel[1], true
		}
		if len(sel) == 3 && strings.EqualFold(sel[0], "Select-String") && strings.EqualFold(sel[1], "-Pattern") {
			return words, sel[2], true
		}
	}
	return nil, "", false
}

// splitPipe splits at | outside quotes.
func splitPipe(s string) []string {
	var out []string
	var q byte
	start := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case q != 0:
			if c == q {
				q = 0
			}
		case c == '\'' || c == '"':
			q = c
		case c == '|':
			out = append(out, strings.Trim(s[start:i], " \t"))
			start = i + 1
		}
	}
	return append(out, strings.Trim(s[start:], " \t"))
}

// fields splits words at spaces outside quotes and drops the quotes.
func fields(s string) []string {
	var out []string
	var cur strings.Builder
	var q byte
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case q != 0:
			if c == q {
				q = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			q, in = c, true
		case c == ' ' || c == '\t':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// podsOn are the pods of a node whose sandbox exists (not finished),
// newest first as crictl lists them.
func podsOn(c *model.Cluster, node string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range c.Pods {
		if p.Spec.NodeName != node || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		out = append(out, p)
	}
	sortNewestFirst(out)
	return out
}
