// Package imagecatalog is the twin's documented table of what known container
// images are: which tools a shell in them has (ping, wget, curl, nslookup)
// and what their server answers. The trace engine asks it when a packet
// reaches a pod (is anything listening on that port? what does GET /path
// return?) and the exec emulation asks it before running a tool (does the
// image have it, and how does its shell say so when not?).
//
// # The table
//
//	image                                         OS       tools                              serves
//	busybox*, docker.io/library/busybox*          linux    busybox ping, wget, nslookup       nothing of its own
//	ghcr.io/example/hello*                        linux    busybox ping, wget, nslookup (1)   TCP 8080: GET /healthz, /readyz → 200 "ok"; else 404
//	mcr.microsoft.com/dotnet/samples:aspnetapp*   windows  curl.exe, ping (Nano Server)       TCP 8080: GET / → 200 the Razor sample's page, /Privacy → 200; else 404
//	mcr.microsoft.com/windows/nanoserver*         windows  curl.exe, ping                     nothing of its own
//	mcr.microsoft.com/windows/servercore*         windows  curl.exe, ping, nslookup.exe (2)   nothing of its own
//	mcr.microsoft.com/windows/servercore/iis*     windows  curl.exe, ping, nslookup.exe (2)   TCP 80: GET / → 200 the IIS welcome page; else 404
//	registry.k8s.io/coredns/coredns*              linux    none (distroless, no shell)        UDP/TCP 53 DNS, TCP 9153 metrics, 8080 /health, 8181 /ready
//
// (1) ghcr.io/example/hello is the seed's placeholder image; the twin
// assumes a busybox base, so its shell has busybox's applets.
// (2) and powershell.exe (Windows PowerShell 5.1, with Resolve-DnsName);
// Nano Server has no PowerShell.
//
// An image not in the table serves HTTP 200 with an empty body on every
// path of every containerPort the pod declares (TCP), and has no known
// tools: exec reports that as not modeled rather than guessing.
//
// The aspnetapp tags without "nanoserver" are multi-platform; on Linux they
// are chiseled Ubuntu images with no shell. The row applies to Windows pods;
// on Linux the image has no tools.
//
// # Missing commands
//
// A Linux image's shell says "sh: NAME: not found" and exits 127 (the exec
// is assumed to go through sh, as `sh -c` scripts do); cmd.exe says
// "'NAME' is not recognized as an internal or external command, operable
// program or batch file." and exits 9009.
//
// # busybox ping and root
//
// busybox's ping opens a raw ICMP socket and fails with "ping: permission
// denied (are you root?)" when the container does not run as root (seed 000:
// "ping в busybox требует прав root, которых restricted не даст"). The twin
// takes runAsNonRoot, a non-zero runAsUser or a dropped NET_RAW (or ALL)
// capability to mean it does not.
package imagecatalog

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Tools a shell in an image may have.
const (
	ToolPing     = "ping"
	ToolWget     = "wget"
	ToolCurl     = "curl"
	ToolNSLookup = "nslookup"
	// ToolPowerShell is powershell.exe (Windows PowerShell 5.1), whose
	// DnsClient module has Resolve-DnsName.
	ToolPowerShell = "powershell"
	// ToolWhoami is whoami.exe, which Server Core has and Nano Server
	// does not.
	ToolWhoami = "whoami"
)

// Flavours of a tool: which implementation's output and exit codes apply.
const (
	FlavorBusybox = "busybox"   // busybox 1.37 applets
	FlavorWindows = "windows"   // ping.exe, curl.exe, nslookup.exe
	FlavorIPUtils = "iputils"   // Ubuntu nodes: iputils ping, curl
	FlavorNone    = ""          // not present
	ShellSh       = "sh"        // a POSIX shell (busybox ash)
	ShellCmd      = "cmd"       // cmd.exe
	ShellNone     = "none"      // no shell at all
	flavorUnknown = "not known" // the table has no entry
)

// Route is one HTTP answer of a known server.
type Route struct {
	Method string
	Path   string
	Status int
	Body   string
}

// Listener is a port a known image's server listens on.
type Listener struct {
	Protocol corev1.Protocol
	Port     int32
	// What serves it, in a few words.
	What string
	// Routes for HTTP listeners; empty means not HTTP (or not modeled).
	Routes []Route
	// NotFound is the body of the 404 for other paths.
	NotFound string
}

// Image is one row of the table.
type Image struct {
	// Pattern is the image reference prefix the row matches (registry and
	// repository, optionally ":tag-prefix"); matching is case-insensitive
	// and ignores a "docker.io/library/" prefix.
	Pattern string
	// OS the row applies to ("" both).
	OS    string
	Shell string
	// Tools maps a tool to its flavour.
	Tools map[string]string
	// Listeners are what the image serves by itself; nil means nothing.
	Listeners []Listener
	// Assumption says what the row assumes, if anything.
	Assumption string
}

// aspnetPage is the part of the ASP.NET Core Razor sample's home page the
// seed shows (its <title>); the rest is a short stand-in.
const aspnetPage = `<!DOCTYPE html>
<html lang="en">
<head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1.0" />
    <title>Welcome to .NET - AspNetCoreRazorApp</title>
</head>
<body>
    <main role="main">
        <h1>Welcome to .NET</h1>
    </main>
</body>
</html>
`

const iisPage = `<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">
<html xmlns="http://www.w3.org/1999/xhtml">
<head>
<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1" />
<title>IIS Windows Server</title>
</head>
<body>
<div id="container"><a href="http://go.microsoft.com/fwlink/?linkid=66138&amp;clcid=0x409"><img src="iisstart.png" alt="IIS" width="960" height="600" /></a></div>
</body>
</html>
`

var (
	busyboxTools = map[string]string{ToolPing: FlavorBusybox, ToolWget: FlavorBusybox, ToolNSLookup: FlavorBusybox}
	nanoTools    = map[string]string{ToolPing: FlavorWindows, ToolCurl: FlavorWindows}
	coreTools    = map[string]string{ToolPing: FlavorWindows, ToolCurl: FlavorWindows, ToolNSLookup: FlavorWindows, ToolPowerShell: FlavorWindows, ToolWhoami: FlavorWindows}
)

// Table is the documented table, most specific rows first.
var Table = []Image{
	{Pattern: "busybox", OS: "linux", Shell: ShellSh, Tools: busyboxTools},
	{Pattern: "ghcr.io/example/hello", OS: "linux", Shell: ShellSh, Tools: busyboxTools,
		Listeners: []Listener{{Protocol: corev1.ProtocolTCP, Port: 8080, What: "the hello HTTP server",
			Routes: []Route{{"GET", "/healthz", 200, "ok"}, {"GET", "/readyz", 200, "ok"}}, NotFound: "404 page not found\n"}},
		Assumption: "ghcr.io/example/hello is assumed to have a busybox base (ping, wget, nslookup in sh)"},
	{Pattern: "mcr.microsoft.com/dotnet/samples:aspnetapp", OS: "windows", Shell: ShellCmd, Tools: nanoTools,
		Listeners: []Listener{{Protocol: corev1.ProtocolTCP, Port: 8080, What: "Kestrel (ASPNETCORE_HTTP_PORTS=8080)",
			Routes: []Route{{"GET", "/", 200, aspnetPage}, {"GET", "/Privacy", 200, aspnetPage}}}}},
	{Pattern: "mcr.microsoft.com/dotnet/samples:aspnetapp", OS: "linux", Shell: ShellNone, Tools: map[string]string{},
		Listeners: []Listener{{Protocol: corev1.ProtocolTCP, Port: 8080, What: "Kestrel (ASPNETCORE_HTTP_PORTS=8080)",
			Routes: []Route{{"GET", "/", 200, aspnetPage}, {"GET", "/Privacy", 200, aspnetPage}}}},
		Assumption: "the Linux variant of aspnetapp is a chiseled image without a shell"},
	{Pattern: "mcr.microsoft.com/windows/nanoserver", OS: "windows", Shell: ShellCmd, Tools: nanoTools},
	{Pattern: "mcr.microsoft.com/windows/servercore/iis", OS: "windows", Shell: ShellCmd, Tools: coreTools,
		Listeners: []Listener{{Protocol: corev1.ProtocolTCP, Port: 80, What: "IIS",
			Routes: []Route{{"GET", "/", 200, iisPage}}, NotFound: "<!DOCTYPE html>\n<title>404 - File or directory not found.</title>\n"}}},
	{Pattern: "mcr.microsoft.com/windows/servercore", OS: "windows", Shell: ShellCmd, Tools: coreTools},
	{Pattern: "registry.k8s.io/coredns/coredns", OS: "linux", Shell: ShellNone, Tools: map[string]string{},
		Listeners: []Listener{
			{Protocol: corev1.ProtocolUDP, Port: 53, What: "CoreDNS"},
			{Protocol: corev1.ProtocolTCP, Port: 53, What: "CoreDNS"},
			{Protocol: corev1.ProtocolTCP, Port: 9153, What: "CoreDNS prometheus metrics",
				Routes: []Route{{"GET", "/metrics", 200, "# HELP coredns_build_info A metric with a constant '1' value labeled by version, revision, and goversion from which CoreDNS was built.\n"}}, NotFound: "404 page not found\n"},
			{Protocol: corev1.ProtocolTCP, Port: 8080, What: "CoreDNS health plugin", Routes: []Route{{"GET", "/health", 200, "OK"}}, NotFound: "404 page not found\n"},
			{Protocol: corev1.ProtocolTCP, Port: 8181, What: "CoreDNS ready plugin", Routes: []Route{{"GET", "/ready", 200, "OK"}}, NotFound: "404 page not found\n"},
		}},
}

// Profile is what the twin knows about one container of a pod.
type Profile struct {
	Image string
	OS    string
	// Known is false when no row matches.
	Known bool
	Row   *Image
}

// normalizeRef drops the default registry and library prefixes and lower-cases.
func normalizeRef(ref string) string {
	r := strings.ToLower(strings.TrimSpace(ref))
	for _, p := range []string{"docker.io/library/", "index.docker.io/library/", "docker.io/", "library/"} {
		r = strings.TrimPrefix(r, p)
	}
	return r
}

// Lookup finds the row for an image on an OS ("linux", "windows" or "").
func Lookup(image, os string) Profile {
	ref := normalizeRef(image)
	for i := range Table {
		row := &Table[i]
		if row.OS != "" && os != "" && row.OS != os {
			continue
		}
		if strings.HasPrefix(ref, strings.ToLower(row.Pattern)) {
			return Profile{Image: image, OS: orStr(os, row.OS), Known: true, Row: row}
		}
	}
	return Profile{Image: image, OS: os}
}

// For is the profile of a pod's first container on its OS.
func For(pod *corev1.Pod, os string) Profile {
	if pod == nil || len(pod.Spec.Containers) == 0 {
		return Profile{OS: os}
	}
	return Lookup(pod.Spec.Containers[0].Image, os)
}

func orStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Tool returns the flavour of a tool in the image: FlavorNone when the
// image lacks it; ok is false when the image is not in the table.
func (p Profile) Tool(name string) (flavor string, ok bool) {
	if !p.Known {
		return flavorUnknown, false
	}
	return p.Row.Tools[name], true
}

// Shell is the image's shell (ShellSh, ShellCmd, ShellNone); "" when not known.
func (p Profile) Shell() string {
	if !p.Known {
		if p.OS == "windows" {
			return ShellCmd
		}
		return ""
	}
	return p.Row.Shell
}

// Assumption is what the row assumes ("" for none).
func (p Profile) Assumption() string {
	if !p.Known {
		return ""
	}
	return p.Row.Assumption
}

// NotFound is what the image's shell prints, and its exit code, for a
// command it does not have.
func (p Profile) NotFound(cmd string) (stderr string, code int) {
	switch p.Shell() {
	case ShellCmd:
		return fmt.Sprintf("'%s' is not recognized as an internal or external command,\noperable program or batch file.\n", cmd), 9009
	case ShellNone:
		// No shell: the runtime cannot start the process.
		return fmt.Sprintf("error: Internal error occurred: error executing command in container: failed to exec in container: failed to start exec: OCI runtime exec failed: exec failed: unable to start container process: exec: %q: executable file not found in $PATH: unknown\n", cmd), 126
	}
	return fmt.Sprintf("sh: %s: not found\n", cmd), 127
}

// Listen says whether something in the pod accepts a connection on
// proto/port, and what: the image's own listeners for a known image that
// serves, else the ports the pod's containers declare.
func Listen(pod *corev1.Pod, os string, proto corev1.Protocol, port int32) (Listener, bool) {
	if proto == "" {
		proto = corev1.ProtocolTCP
	}
	for _, c := range pod.Spec.Containers {
		prof := Lookup(c.Image, os)
		if prof.Known && prof.Row.Listeners != nil {
			for _, l := range prof.Row.Listeners {
				if l.Protocol == proto && l.Port == port {
					return l, true
				}
			}
			continue
		}
		if prof.Known {
			continue // a known image that serves nothing by itself
		}
		for _, cp := range c.Ports {
			cpProto := cp.Protocol
			if cpProto == "" {
				cpProto = corev1.ProtocolTCP
			}
			if cpProto == proto && cp.ContainerPort == port {
				return Listener{Protocol: proto, Port: port, What: "container " + c.Name + " (" + c.Image + "), declared port"}, true
			}
		}
	}
	return Listener{}, false
}

// Ports lists what the pod listens on, for messages ("8080/TCP, 53/UDP").
func Ports(pod *corev1.Pod, os string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(p corev1.Protocol, n int32) {
		if p == "" {
			p = corev1.ProtocolTCP
		}
		s := fmt.Sprintf("%d/%s", n, p)
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, c := range pod.Spec.Containers {
		prof := Lookup(c.Image, os)
		if prof.Known {
			for _, l := range prof.Row.Listeners {
				add(l.Protocol, l.Port)
			}
			continue
		}
		for _, cp := range c.Ports {
			add(cp.Protocol, cp.ContainerPort)
		}
	}
	sort.Strings(out)
	return out
}

// Response is an HTTP answer.
type Response struct {
	Status int
	Reason string
	Body   string
}

// HTTP answers a request on a listener: the table's route, 404 for other
// paths of a known server, 200 with an empty body for a declared port of an
// unknown image.
func (l Listener) HTTP(method, path string) Response {
	if path == "" {
		path = "/"
	}
	if len(l.Routes) == 0 && l.NotFound == "" {
		if strings.HasPrefix(l.What, "container ") {
			return Response{Status: 200, Reason: "OK"}
		}
		if l.What == "CoreDNS" {
			return Response{Status: 0, Reason: "not HTTP"}
		}
	}
	for _, r := range l.Routes {
		if strings.EqualFold(r.Method, method) && strings.EqualFold(r.Path, path) {
			return Response{Status: r.Status, Reason: StatusText(r.Status), Body: r.Body}
		}
	}
	return Response{Status: 404, Reason: StatusText(404), Body: l.NotFound}
}

// StatusText is the reason phrase servers send.
func StatusText(code int) string {
	switch code {
	case 200:
		return "OK"
	case 404:
		return "Not Found"
	}
	return ""
}

// CanRawPing reports whether busybox's ping can open its raw socket in the
// pod's first container, and why not.
func CanRawPing(pod *corev1.Pod) (bool, string) {
	if pod == nil || len(pod.Spec.Containers) == 0 {
		return true, ""
	}
	c := pod.Spec.Containers[0]
	var nonRoot *bool
	var uid *int64
	if sc := pod.Spec.SecurityContext; sc != nil {
		nonRoot, uid = sc.RunAsNonRoot, sc.RunAsUser
	}
	if sc := c.SecurityContext; sc != nil {
		if sc.RunAsNonRoot != nil {
			nonRoot = sc.RunAsNonRoot
		}
		if sc.RunAsUser != nil {
			uid = sc.RunAsUser
		}
		if sc.Capabilities != nil {
			for _, d := range sc.Capabilities.Drop {
				if strings.EqualFold(string(d), "ALL") || strings.EqualFold(string(d), "NET_RAW") {
					return false, "the container drops " + string(d)
				}
			}
		}
	}
	if uid != nil && *uid != 0 {
		return false, fmt.Sprintf("the container runs as user %d", *uid)
	}
	if nonRoot != nil && *nonRoot {
		return false, "the container must run as non-root (runAsNonRoot)"
	}
	return true, ""
}
