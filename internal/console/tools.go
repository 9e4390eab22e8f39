package console

import (
	"fmt"
	"math"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/hybrid"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/console/hosttools"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dns"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/imagecatalog"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

func notModeled(format string, args ...any) error {
	return &NotModeledError{Msg: fmt.Sprintf(format, args...)}
}

// Tools the emulation answers, by the name the user types.
var toolNames = map[string]string{
	"ping": imagecatalog.ToolPing, "ping.exe": imagecatalog.ToolPing,
	"curl": imagecatalog.ToolCurl, "curl.exe": imagecatalog.ToolCurl,
	"wget":     imagecatalog.ToolWget,
	"nslookup": imagecatalog.ToolNSLookup, "nslookup.exe": imagecatalog.ToolNSLookup,
	"resolve-dnsname": toolResolveDNSName,
}

// isTool reports whether a program name (as typed, any case) is one of the
// client tools the emulation answers.
func isTool(name string) bool {
	_, ok := toolNames[strings.ToLower(name)]
	return ok
}

// toolResolveDNSName is a PowerShell cmdlet, not a program: it runs on a
// Windows node's PowerShell, or in a pod under powershell.exe.
const toolResolveDNSName = "Resolve-DnsName"

// How a command was started.
const (
	viaRuntime    = ""           // kubectl exec: the container runtime starts it
	viaShell      = "shell"      // sh -c, cmd /c
	viaPowerShell = "powershell" // powershell.exe -Command
)

// tracer runs the client tools: each walks the twin through the trace
// engine.
type tracer struct{ *trace.Engine }

// parseAddr reads an address the engine printed (the zero Addr if none).
func parseAddr(s string) netip.Addr {
	a, _ := netip.ParseAddr(s)
	return a
}

// exec runs a command in a pod or on a node: ping, curl, wget and nslookup
// walk the twin; sh -c scripts and pipelines into tail, head and grep are
// run as a shell would. handled is false for a command the emulation does
// not know, so that the caller can hand it to the node's dataplane; err is
// a *NotModeledError when the twin cannot say what the command prints.
func (e tracer) exec(src trace.Source, argv []string) (out Output, handled bool, err error) {
	if len(argv) == 1 && strings.ContainsAny(argv[0], " \t\n") {
		words, serr := SplitCommand(argv[0])
		if serr != nil {
			return Output{}, true, notModeled("%v", serr)
		}
		if len(words) == 0 {
			return Output{}, false, nil
		}
		if !hasOperator(argv[0]) {
			argv = words
		} else {
			return e.script(src, argv[0])
		}
	}
	if len(argv) == 0 {
		return Output{}, false, nil
	}
	name := strings.ToLower(baseName(argv[0]))
	if (name == "sh" || name == "ash" || name == "bash") && len(argv) >= 3 && argv[1] == "-c" {
		if src.Kind == "pod" {
			prof := e.profile(src)
			if sh := prof.Shell(); sh == imagecatalog.ShellCmd {
				return notStartedOnWindows(), true, nil
			} else if sh == imagecatalog.ShellNone {
				o, c := prof.NotFound(argv[0])
				return Output{Stderr: o, Code: c}, true, nil
			}
		}
		return e.script(src, argv[2])
	}
	if name == "cmd" || name == "cmd.exe" {
		if len(argv) >= 3 && strings.EqualFold(argv[1], "/c") {
			return e.script(src, strings.Join(argv[2:], " "))
		}
	}
	if (name == "powershell" || name == "powershell.exe") && src.Kind == "pod" {
		return e.powershell(src, argv)
	}
	return e.command(src, argv, viaRuntime)
}

// powershell runs `powershell [-NoProfile] [-NonInteractive] [-NoLogo]
// [-Command] <command>` in a pod: an image without PowerShell cannot start
// it; one with it runs the command if it is a single emulated command.
func (e tracer) powershell(src trace.Source, argv []string) (Output, bool, error) {
	prof := e.profile(src)
	f, ok := prof.Tool(imagecatalog.ToolPowerShell)
	if !ok {
		return Output{}, true, notModeled("which tools the image %s has is not in the twin's table (internal/workload)", prof.Image)
	}
	if f == imagecatalog.FlavorNone {
		if prof.Shell() == imagecatalog.ShellCmd {
			return notStartedOnWindows(), true, nil
		}
		o, c := prof.NotFound(argv[0])
		return Output{Stderr: o, Code: c}, true, nil
	}
	rest := argv[1:]
	for len(rest) > 0 && strings.HasPrefix(rest[0], "-") {
		switch strings.ToLower(rest[0]) {
		case "-noprofile", "-noninteractive", "-nologo":
			rest = rest[1:]
			continue
		case "-command", "-c":
			rest = rest[1:]
		default:
			return Output{}, true, notModeled("powershell.exe option %s", rest[0])
		}
		break
	}
	if len(rest) == 0 {
		return Output{}, true, notModeled("an interactive PowerShell")
	}
	text := strings.Join(rest, " ")
	if hasOperator(text) {
		return Output{}, true, notModeled("a PowerShell pipeline or script; emulated: one Resolve-DnsName, ping, curl.exe or nslookup command")
	}
	words, err := SplitCommand(text)
	if err != nil || len(words) == 0 {
		return Output{}, true, notModeled("PowerShell command %q", text)
	}
	o, handled, err := e.command(src, words, viaPowerShell)
	if err == nil && !handled {
		return Output{}, true, notModeled("%q in PowerShell; emulated: Resolve-DnsName, ping, curl.exe, nslookup", words[0])
	}
	return o, true, err
}

// notStartedOnWindows is what kubectl exec prints when a Windows
// container has no such program: containerd asks hcsshim to create the
// process and the Host Compute Service fails with ERROR_FILE_NOT_FOUND
// (hcsshim internal/hcs/system.go CreateProcess, "hcs::System::
// CreateProcess"; kubernetes/kubernetes#60956). No shell is involved, so
// cmd.exe's "is not recognized" message appears only under `cmd /c`. The
// runtime's exec ID and the container ID hcsshim names are left out (the
// twin has none); kubectl exits 1.
func notStartedOnWindows() Output {
	return Output{NotStarted: true, Code: 1,
		Stderr: fmt.Sprintf("error: Internal error occurred: error executing command in container: failed to exec in container: failed to start exec: hcs::System::CreateProcess: The system cannot find the file specified.: unknown\n")}
}

func hasOperator(s string) bool {
	parts := splitTop(s, "\n", ";", "&&", "|")
	return len(parts) > 1
}

func baseName(s string) string {
	if i := strings.LastIndexAny(s, `/\`); i >= 0 {
		return s[i+1:]
	}
	return s
}

// script runs a shell script: commands separated by newlines, ";" or "&&",
// each a pipeline whose later stages are text filters.
func (e tracer) script(src trace.Source, s string) (Output, bool, error) {
	var total Output
	handledAny := false
	for _, line := range splitTop(s, "\n", ";", "&&", "&") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		stages := splitTop(line, "|")
		words, err := SplitCommand(stages[0])
		if err != nil {
			return total, true, notModeled("%v", err)
		}
		if len(words) == 0 {
			continue
		}
		o, handled, err := e.command(src, words, viaShell)
		if err != nil {
			return total, true, err
		}
		if !handled {
			if !handledAny {
				// Not a script of the emulated tools (a PowerShell
				// pipeline for the node, say): the caller decides.
				return Output{}, false, nil
			}
			return total, true, notModeled("%q is not emulated in a script; emulated: ping, curl, wget, nslookup, with | tail, head, grep", words[0])
		}
		handledAny = true
		for _, st := range stages[1:] {
			fw, err := SplitCommand(st)
			if err != nil || len(fw) == 0 {
				return total, true, notModeled("bad pipeline stage %q", st)
			}
			text, code, ok := filter(fw, o.Stdout)
			if !ok {
				return total, true, notModeled("%q is not emulated in a pipeline; emulated filters: tail, head, grep", fw[0])
			}
			o.Stdout, o.Code = text, code
		}
		total.Stdout += o.Stdout
		total.Stderr += o.Stderr
		total.Code = o.Code
	}
	return total, true, nil
}

// kernelVersion is the node's kernelVersion as its kubelet reports it.
func (e tracer) kernelVersion(node string) string {
	for _, n := range e.Cluster().Nodes {
		if n.Name == node {
			return n.Status.NodeInfo.KernelVersion
		}
	}
	return ""
}

// profile is the workload table's view of a pod source.
func (e tracer) profile(src trace.Source) imagecatalog.Profile {
	return imagecatalog.For(src.Pod, e.NodeOS(src.Node))
}

// command runs one command; via tells what started it: the container
// runtime itself (a plain exec), a shell (a script, cmd /c) or PowerShell.
func (e tracer) command(src trace.Source, argv []string, via string) (Output, bool, error) {
	name := strings.ToLower(baseName(argv[0]))
	if o, c, ok := filter(argv, ""); ok && name != "" {
		return Output{Stdout: o, Code: c}, true, nil
	}
	windowsOS := e.NodeOS(src.Node) == hybrid.OSWindows
	if src.Kind == "pod" && windowsOS {
		prof := e.profile(src)
		whoami, known := prof.Tool(imagecatalog.ToolWhoami)
		if r, ok := hosttools.InWindowsPod(src.Pod, e.kernelVersion(src.Node), argv, via == viaShell, known && whoami != imagecatalog.FlavorNone); ok {
			return Output{Stdout: r.Stdout, Stderr: r.Stderr, Code: r.Code}, true, nil
		}
		if name == "whoami" && known && whoami == imagecatalog.FlavorNone {
			if via == viaRuntime {
				return notStartedOnWindows(), true, nil
			}
			o, c := prof.NotFound(argv[0])
			return Output{Stderr: o, Code: c}, true, nil
		}
	}
	tool, known := toolNames[name]
	if !known {
		return Output{}, false, nil
	}
	if tool == toolResolveDNSName {
		return e.resolveDNSNameIn(src, windowsOS, via, argv)
	}
	flavor := ""
	switch src.Kind {
	case "pod":
		prof := e.profile(src)
		f, ok := prof.Tool(tool)
		if !ok {
			return Output{}, true, notModeled("which tools the image %s has is not in the twin's table (internal/workload); known images: busybox, ghcr.io/example/hello, mcr.microsoft.com/dotnet/samples:aspnetapp, nanoserver, servercore", prof.Image)
		}
		// curl.exe in Nano Server answers to "curl" too (PATHEXT), and
		// Linux images have no ".exe" names.
		if f == imagecatalog.FlavorNone || (!windowsOS && strings.HasSuffix(name, ".exe")) {
			if via == viaRuntime && prof.Shell() == imagecatalog.ShellCmd {
				return notStartedOnWindows(), true, nil
			}
			o, c := prof.NotFound(argv[0])
			return Output{Stderr: o, Code: c}, true, nil
		}
		flavor = f
	case "node":
		switch {
		case windowsOS:
			flavor = imagecatalog.FlavorWindows
		case tool == imagecatalog.ToolPing:
			flavor = imagecatalog.FlavorIPUtils
		case tool == imagecatalog.ToolCurl:
			flavor = imagecatalog.FlavorIPUtils // Ubuntu's curl
		default:
			return Output{}, false, nil
		}
	default:
		return Output{}, true, notModeled("commands run in pods and on nodes")
	}
	switch tool {
	case imagecatalog.ToolPing:
		return e.ping(src, flavor, argv[1:])
	case imagecatalog.ToolCurl:
		return e.curl(src, flavor, argv[0], argv[1:])
	case imagecatalog.ToolWget:
		return e.wget(src, argv[1:])
	case imagecatalog.ToolNSLookup:
		return e.nslookup(src, flavor, argv)
	}
	return Output{}, false, nil
}

func (e tracer) traceTo(src trace.Source, a netip.Addr, proto trace.Proto, port int) *trace.Result {
	t := trace.Target{Kind: "ip", Addr: a, Given: a.String()}
	return e.Trace(src, t, proto, port)
}

// pingTimes are the per-packet round trips of the model: the trace's
// RTT, the first packet's flow setup, and a fixed jitter per sequence
// number (see the package documentation).
func pingTimes(r *trace.Result, n int) []float64 {
	jitter := []float64{0, 0.084, 0.042, 0.063}
	out := make([]float64, n)
	for i := range out {
		t := r.RTTMillis + jitter[i%len(jitter)]
		if i == 0 {
			t += r.FirstPacketMillis
		}
		out[i] = math.Round(t*1000) / 1000
	}
	return out
}

func (e tracer) ping(src trace.Source, flavor string, args []string) (Output, bool, error) {
	count := 4
	var host string
	for i := 0; i < len(args); i++ {
		a := args[i]
		low := strings.ToLower(a)
		takesValue := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch {
		case flavor == imagecatalog.FlavorWindows && (low == "-n" || low == "/n"):
			count, _ = strconv.Atoi(takesValue())
		case flavor == imagecatalog.FlavorWindows && (low == "-w" || low == "/w" || low == "-l" || low == "/l" || low == "-i" || low == "/i"):
			takesValue()
		case flavor != imagecatalog.FlavorWindows && a == "-c":
			count, _ = strconv.Atoi(takesValue())
		case flavor != imagecatalog.FlavorWindows && strings.HasPrefix(a, "-c") && len(a) > 2:
			count, _ = strconv.Atoi(a[2:])
		case flavor != imagecatalog.FlavorWindows && (a == "-W" || a == "-w" || a == "-s" || a == "-i" || a == "-t"):
			takesValue()
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "/") && flavor == imagecatalog.FlavorWindows:
		default:
			host = a
		}
	}
	if host == "" || count <= 0 {
		return Output{}, true, notModeled("ping without a host or with a bad count: the usage message is not emulated")
	}
	if flavor == imagecatalog.FlavorBusybox && src.Kind == "pod" {
		if ok, _ := imagecatalog.CanRawPing(src.Pod); !ok {
			return Output{Stderr: "ping: permission denied (are you root?)\n", Code: 1}, true, nil
		}
	}
	res := e.Lookup(src, host)
	a := res.Addr
	if !res.OK {
		if res.Outcome == trace.NotModeled {
			return Output{}, true, notModeled("%s", res.Reason)
		}
		switch flavor {
		case imagecatalog.FlavorWindows:
			return Output{Stdout: fmt.Sprintf("Ping request could not find host %s. Please check the name and try again.\n", host), Code: 1}, true, nil
		case imagecatalog.FlavorIPUtils:
			return Output{Stderr: fmt.Sprintf("ping: %s: Name or service not known\n", host), Code: 2}, true, nil
		}
		return Output{Stderr: fmt.Sprintf("ping: bad address '%s'\n", host), Code: 1}, true, nil
	}
	r := e.traceTo(src, a, trace.ICMP, 0)
	if r.Outcome == trace.NotModeled {
		return Output{}, true, notModeled("%s", r.Reason)
	}
	got := r.Delivered && r.ReplyTTL > 0
	times := pingTimes(r, count)
	var b strings.Builder
	switch flavor {
	case imagecatalog.FlavorWindows:
		b.WriteString("\n")
		if host == a.String() {
			fmt.Fprintf(&b, "Pinging %s with 32 bytes of data:\n", a)
		} else {
			fmt.Fprintf(&b, "Pinging %s [%s] with 32 bytes of data:\n", host, a)
		}
		received := 0
		var ms []int
		for i := 0; i < count; i++ {
			if !got {
				b.WriteString("Request timed out.\n")
				continue
			}
			received++
			m := int(math.Floor(times[i]))
			ms = append(ms, m)
			t := fmt.Sprintf("time=%dms", m)
			if m < 1 {
				t = "time<1ms"
			}
			fmt.Fprintf(&b, "Reply from %s: bytes=32 %s TTL=%d\n", a, t, r.ReplyTTL)
		}
		lost := count - received
		fmt.Fprintf(&b, "\nPing statistics for %s:\n", a)
		fmt.Fprintf(&b, "    Packets: Sent = %d, Received = %d, Lost = %d (%d%% loss),\n", count, received, lost, lost*100/count)
		if received > 0 {
			lo, hi, sum := ms[0], ms[0], 0
			for _, m := range ms {
				lo, hi, sum = min(lo, m), max(hi, m), sum+m
			}
			b.WriteString("Approximate round trip times in milli-seconds:\n")
			fmt.Fprintf(&b, "    Minimum = %dms, Maximum = %dms, Average = %dms\n", lo, hi, sum/received)
			return Output{Stdout: b.String()}, true, nil
		}
		return Output{Stdout: b.String(), Code: 1}, true, nil
	case imagecatalog.FlavorIPUtils:
		fmt.Fprintf(&b, "PING %s (%s) 56(84) bytes of data.\n", host, a)
		received := 0
		var ts []float64
		for i := 0; i < count; i++ {
			if !got {
				continue
			}
			received++
			ts = append(ts, times[i])
			fmt.Fprintf(&b, "64 bytes from %s: icmp_seq=%d ttl=%d time=%s ms\n", a, i+1, r.ReplyTTL, ipUtilsTime(times[i]))
		}
		fmt.Fprintf(&b, "\n--- %s ping statistics ---\n", host)
		elapsed := (count - 1) * 1001
		if !got {
			elapsed = (count-1)*1000 + 16*(count-1)
		}
		fmt.Fprintf(&b, "%d packets transmitted, %d received, %d%% packet loss, time %dms\n", count, received, (count-received)*100/count, elapsed)
		if received == 0 {
			return Output{Stdout: b.String(), Code: 1}, true, nil
		}
		lo, hi, avg, mdev := stats(ts)
		fmt.Fprintf(&b, "rtt min/avg/max/mdev = %.3f/%.3f/%.3f/%.3f ms\n", lo, avg, hi, mdev)
		return Output{Stdout: b.String()}, true, nil
	}
	// busybox.
	fmt.Fprintf(&b, "PING %s (%s): 56 data bytes\n", host, a)
	received := 0
	var ts []float64
	for i := 0; i < count; i++ {
		if !got {
			continue
		}
		received++
		ts = append(ts, times[i])
		fmt.Fprintf(&b, "64 bytes from %s: seq=%d ttl=%d time=%.3f ms\n", a, i, r.ReplyTTL, times[i])
	}
	fmt.Fprintf(&b, "\n--- %s ping statistics ---\n", host)
	fmt.Fprintf(&b, "%d packets transmitted, %d packets received, %d%% packet loss\n", count, received, (count-received)*100/count)
	if received == 0 {
		return Output{Stdout: b.String(), Code: 1}, true, nil
	}
	lo, hi, avg, _ := stats(ts)
	fmt.Fprintf(&b, "round-trip min/avg/max = %.3f/%.3f/%.3f ms\n", lo, avg, hi)
	return Output{Stdout: b.String()}, true, nil
}

// ipUtilsTime prints a time as iputils does: three significant digits
// below 100 ms.
func ipUtilsTime(t float64) string {
	switch {
	case t >= 100:
		return fmt.Sprintf("%.0f", t)
	case t >= 10:
		return fmt.Sprintf("%.1f", t)
	}
	return fmt.Sprintf("%.3f", t)
}

func stats(ts []float64) (lo, hi, avg, mdev float64) {
	lo, hi = ts[0], ts[0]
	var sum, sq float64
	for _, t := range ts {
		lo, hi = math.Min(lo, t), math.Max(hi, t)
		sum += t
		sq += t * t
	}
	n := float64(len(ts))
	avg = sum / n
	mdev = math.Sqrt(math.Max(sq/n-avg*avg, 0))
	return
}

// httpGet is one HTTP request's outcome.
type httpGet struct {
	res      trace.Lookup
	trace    *trace.Result
	addr     netip.Addr
	resp     imagecatalog.Response
	answered bool
}

// get resolves the URL's host, walks the trace.TCP connection and asks the
// workload table for the answer.
func (e tracer) get(src trace.Source, u *url.URL) (httpGet, error) {
	var g httpGet
	host := u.Hostname()
	port := 80
	if p := u.Port(); p != "" {
		port, _ = strconv.Atoi(p)
	}
	res := e.Lookup(src, host)
	a := res.Addr
	g.res, g.addr = res, a
	if !res.OK {
		if res.Outcome == trace.NotModeled {
			return g, notModeled("%s", res.Reason)
		}
		return g, nil
	}
	r := e.traceTo(src, a, trace.TCP, port)
	g.trace = r
	if r.Outcome == trace.NotModeled {
		return g, notModeled("%s", r.Reason)
	}
	if !r.Delivered {
		return g, nil
	}
	if r.Assumed || r.DeliveredTo == nil || r.DeliveredTo.Kind != "pod" {
		return g, notModeled("what %s:%d answers over HTTP is not modeled (only pods of the workload table answer)", a, port)
	}
	p := e.PodAt(parseAddr(r.DeliveredTo.IP))
	if p == nil {
		return g, notModeled("the pod at %s is not known", r.DeliveredTo.IP)
	}
	l, ok := imagecatalog.Listen(p, r.DeliveredTo.OS, corev1.ProtocolTCP, int32(r.DeliveredTo.Port))
	if !ok {
		return g, notModeled("nothing listens")
	}
	g.resp = l.HTTP("GET", u.EscapedPath())
	if g.resp.Status == 0 {
		return g, notModeled("%s on %s:%d does not speak HTTP", l.What, r.DeliveredTo.IP, r.DeliveredTo.Port)
	}
	g.answered = true
	return g, nil
}

func parseURL(raw string) (*url.URL, error) {
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" {
		return nil, notModeled("%s: only http:// is emulated", raw)
	}
	return u, nil
}

func (e tracer) curl(src trace.Source, flavor, prog string, args []string) (Output, bool, error) {
	silent, showErr, fail := false, false, false
	var outFile, writeOut, rawURL string
	maxTime := 0.0
	for i := 0; i < len(args); i++ {
		a := args[i]
		next := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch {
		case a == "-o" || a == "--output":
			outFile = next()
		case a == "-w" || a == "--write-out":
			writeOut = next()
		case a == "-m" || a == "--max-time" || a == "--connect-timeout":
			maxTime, _ = strconv.ParseFloat(next(), 64)
		case a == "--silent":
			silent = true
		case a == "--show-error":
			showErr = true
		case a == "--fail":
			fail = true
		case a == "-L" || a == "--location" || a == "-k" || a == "--insecure":
		case strings.HasPrefix(a, "--"):
			return Output{}, true, notModeled("curl option %s is not emulated", a)
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for j := 1; j < len(a); j++ {
				switch a[j] {
				case 's':
					silent = true
				case 'S':
					showErr = true
				case 'f':
					fail = true
				case 'L', 'k':
				case 'o', 'w', 'm':
					val := a[j+1:]
					if val == "" {
						val = next()
					}
					switch a[j] {
					case 'o':
						outFile = val
					case 'w':
						writeOut = val
					case 'm':
						maxTime, _ = strconv.ParseFloat(val, 64)
					}
					j = len(a)
				default:
					return Output{}, true, notModeled("curl option -%c is not emulated", a[j])
				}
			}
		default:
			rawURL = a
		}
	}
	if rawURL == "" {
		return Output{Stderr: "curl: try 'curl --help' or 'curl --manual' for more information\n", Code: 2}, true, nil
	}
	u, err := parseURL(rawURL)
	if err != nil {
		return Output{}, true, err
	}
	g, err := e.get(src, u)
	if err != nil {
		return Output{}, true, err
	}
	var o Output
	wout := func(remote string, code int, port int) {
		if writeOut != "" {
			o.Stdout += curlWriteOut(writeOut, remote, code, port, u.String())
		}
	}
	say := func(code int, msg string) {
		if !silent || showErr {
			o.Stderr += fmt.Sprintf("curl: (%d) %s\n", code, msg)
		}
		o.Code = code
	}
	port := 80
	if p := u.Port(); p != "" {
		port, _ = strconv.Atoi(p)
	}
	if !g.res.OK {
		wout("", 0, 0)
		if g.res.Timeout > 0 && maxTime > 0 && maxTime < float64(g.res.Timeout) {
			say(28, fmt.Sprintf("Resolving timed out after %d milliseconds", int(maxTime*1000)))
			return o, true, nil
		}
		say(6, "Could not resolve host: "+u.Hostname())
		return o, true, nil
	}
	r := g.trace
	switch {
	case r.Outcome == trace.Refused || r.Outcome == trace.Rejected:
		wout("", 0, 0)
		say(7, fmt.Sprintf("Failed to connect to %s port %d after 0 ms: Couldn't connect to server", u.Hostname(), port))
		return o, true, nil
	case !r.Delivered:
		wout("", 0, 0)
		if maxTime > 0 {
			say(28, fmt.Sprintf("Failed to connect to %s port %d after %d ms: Timeout was reached", u.Hostname(), port, int(maxTime*1000)+2))
		} else {
			after := 133000 // Linux: tcp_syn_retries 6
			if flavor == imagecatalog.FlavorWindows {
				after = 21000 // Windows: TcpMaxConnectRetransmissions 2
			}
			say(7, fmt.Sprintf("Failed to connect to %s port %d after %d ms: Couldn't connect to server", u.Hostname(), port, after))
		}
		return o, true, nil
	}
	if outFile == "" {
		o.Stdout += g.resp.Body
	}
	wout(g.addr.String(), g.resp.Status, port)
	if fail && g.resp.Status >= 400 {
		o.Stdout = ""
		wout("", 0, 0)
		say(22, fmt.Sprintf("The requested URL returned error: %d", g.resp.Status))
	}
	_ = prog
	return o, true, nil
}

// curlWriteOut expands -w's variables and escapes.
func curlWriteOut(f, remote string, code, port int, u string) string {
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c == '\\' && i+1 < len(f) {
			switch f[i+1] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '\\':
				b.WriteByte('\\')
			default:
				b.WriteByte(c)
				b.WriteByte(f[i+1])
			}
			i++
			continue
		}
		if c == '%' && strings.HasPrefix(f[i:], "%{") {
			end := strings.IndexByte(f[i:], '}')
			if end > 0 {
				switch f[i+2 : i+end] {
				case "remote_ip":
					b.WriteString(remote)
				case "http_code", "response_code":
					fmt.Fprintf(&b, "%03d", code)
				case "remote_port":
					if remote != "" {
						b.WriteString(strconv.Itoa(port))
					}
				case "url_effective", "url":
					b.WriteString(u)
				}
				i += end
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

func (e tracer) wget(src trace.Source, args []string) (Output, bool, error) {
	quiet := false
	toStdout := false
	outSet := false
	var rawURL string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-O" || a == "--output-document":
			if i+1 < len(args) {
				i++
				outSet, toStdout = true, args[i] == "-"
			}
		case a == "-T" || a == "--timeout":
			i++
		case a == "-q" || a == "--quiet":
			quiet = true
		case strings.HasPrefix(a, "-") && len(a) > 1 && !strings.HasPrefix(a, "--"):
			for j := 1; j < len(a); j++ {
				switch a[j] {
				case 'q':
					quiet = true
				case 'O':
					val := a[j+1:]
					if val == "" && i+1 < len(args) {
						i++
						val = args[i]
					}
					outSet, toStdout = true, val == "-"
					j = len(a)
				case 'T':
					if a[j+1:] == "" {
						i++
					}
					j = len(a)
				case 'S':
				default:
					return Output{}, true, notModeled("wget option -%c is not emulated", a[j])
				}
			}
		case strings.HasPrefix(a, "--"):
			return Output{}, true, notModeled("wget option %s is not emulated", a)
		default:
			rawURL = a
		}
	}
	if rawURL == "" {
		return Output{Stderr: "BusyBox v1.37.0 multi-call binary.\n", Code: 1}, true, nil
	}
	u, err := parseURL(rawURL)
	if err != nil {
		return Output{}, true, err
	}
	g, err := e.get(src, u)
	if err != nil {
		return Output{}, true, err
	}
	if !g.res.OK {
		return Output{Stderr: fmt.Sprintf("wget: bad address '%s'\n", u.Hostname()), Code: 1}, true, nil
	}
	port := 80
	if p := u.Port(); p != "" {
		port, _ = strconv.Atoi(p)
	}
	var o Output
	if !quiet {
		o.Stderr += fmt.Sprintf("Connecting to %s (%s:%d)\n", u.Host, g.addr, port)
	}
	r := g.trace
	switch {
	case r.Outcome == trace.Refused || r.Outcome == trace.Rejected:
		o.Stderr += fmt.Sprintf("wget: can't connect to remote host (%s): Connection refused\n", g.addr)
		o.Code = 1
		return o, true, nil
	case !r.Delivered:
		o.Stderr += "wget: download timed out\n"
		o.Code = 1
		return o, true, nil
	}
	if g.resp.Status >= 400 {
		o.Stderr += fmt.Sprintf("wget: server returned error: HTTP/1.1 %d %s\n", g.resp.Status, g.resp.Reason)
		o.Code = 1
		return o, true, nil
	}
	switch {
	case toStdout:
		if !quiet {
			o.Stderr += "writing to stdout\n"
		}
		o.Stdout += g.resp.Body
		if !quiet {
			o.Stderr += "written to stdout\n"
		}
	case !outSet:
		if !quiet {
			o.Stderr += "saving to 'index.html'\n'index.html' saved\n"
		}
	}
	return o, true, nil
}

// nslookup runs busybox's or Windows' nslookup after checking that the
// query gets through to the nameserver.
func (e tracer) nslookup(src trace.Source, flavor string, argv []string) (Output, bool, error) {
	dsrc, ok := e.DNSSource(src)
	if !ok {
		return Output{}, true, notModeled("nslookup runs in pods and on nodes")
	}
	switch {
	case src.Kind == "pod" && flavor == imagecatalog.FlavorBusybox:
		dsrc.NSLookup = "busybox"
	case src.Kind == "pod" && flavor == imagecatalog.FlavorWindows:
		dsrc.NSLookup = "nslookup.exe"
	}
	cfg, err := dns.ConfigFor(e.Cluster(), dsrc)
	if err == nil && len(cfg.Nameservers) > 0 {
		server := cfg.Nameservers[0]
		args := argv[1:]
		var plain []string
		for _, a := range args {
			if !strings.HasPrefix(a, "-") {
				plain = append(plain, a)
			}
		}
		if len(plain) == 2 {
			server = plain[1]
		}
		if a, perr := netip.ParseAddr(server); perr == nil {
			r := e.traceTo(src, a, trace.UDP, 53)
			if !r.Delivered && r.Outcome != trace.NotModeled {
				if flavor == imagecatalog.FlavorBusybox {
					return Output{Stdout: ";; connection timed out; no servers could be reached\n\n", Code: 1}, true, nil
				}
				return Output{}, true, notModeled("nslookup.exe timing out on %s is not modeled (%s)", server, r.Reason)
			}
		}
	}
	out, errOut, code := nsLookup(e.Cluster(), dsrc, argv)
	if code == exitNotModeled {
		return Output{}, true, notModeled("%s", strings.TrimSpace(errOut))
	}
	return Output{Stdout: out, Stderr: errOut, Code: code}, true, nil
}

// resolveDNSNameIn runs the Resolve-DnsName cmdlet where PowerShell runs
// it — a Windows node, or a pod under powershell.exe — after checking that
// the query gets through to the DNS server. Anywhere else the name is not
// a program: the runtime cannot start it, cmd.exe does not know it.
func (e tracer) resolveDNSNameIn(src trace.Source, windowsOS bool, via string, argv []string) (Output, bool, error) {
	switch {
	case src.Kind == "node" && !windowsOS:
		return Output{}, false, nil
	case src.Kind == "pod" && via == viaRuntime && windowsOS:
		return notStartedOnWindows(), true, nil
	case src.Kind == "pod" && via != viaPowerShell:
		o, c := e.profile(src).NotFound(argv[0])
		return Output{Stderr: o, Code: c}, true, nil
	}
	dsrc, ok := e.DNSSource(src)
	if !ok {
		return Output{}, true, notModeled("Resolve-DnsName runs in pods and on nodes")
	}
	server := ""
	for i, a := range argv {
		if p := strings.ToLower(a); len(p) >= 3 && strings.HasPrefix("-server", p) && i+1 < len(argv) {
			server = argv[i+1]
		}
	}
	if server == "" {
		if cfg, err := dns.ConfigFor(e.Cluster(), dsrc); err == nil && len(cfg.Nameservers) > 0 {
			server = cfg.Nameservers[0]
		}
	}
	if a, err := netip.ParseAddr(server); err == nil {
		if r := e.traceTo(src, a, trace.UDP, 53); !r.Delivered && r.Outcome != trace.NotModeled {
			return Output{}, true, notModeled("Resolve-DnsName timing out on %s is not modeled (%s)", server, r.Reason)
		}
	}
	out, errOut, code := resolveDNSName(e.Cluster(), dsrc, argv)
	if code == exitNotModeled {
		return Output{}, true, notModeled("%s", strings.TrimSpace(errOut))
	}
	return Output{Stdout: out, Stderr: errOut, Code: code}, true, nil
}
