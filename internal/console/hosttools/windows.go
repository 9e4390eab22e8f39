package hosttools

import (
	"fmt"
	"net/netip"
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/console/powershell"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/host"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Cmdlets are the host cmdlets of a Windows node's PowerShell. vSwitch
// says HNS has made the external vSwitch (an HNS network exists), which
// moves the host's address to the "vEthernet (<NIC>)" adapter.
func Cmdlets(c *model.Cluster, node string, vSwitch bool) []powershell.HostCmdlet {
	return []powershell.HostCmdlet{
		{Name: "Get-Service", Params: []string{"name", "displayname"}, Run: func(args map[string][]string) ([]*powershell.Object, string, error) {
			h, err := host.For(c, node)
			if err != nil {
				return nil, "", err
			}
			return getService(h, args)
		}},
		{Name: "Get-NetIPAddress", Params: []string{"ipaddress", "interfacealias", "addressfamily"}, Run: func(args map[string][]string) ([]*powershell.Object, string, error) {
			return getNetIPAddress(c, node, vSwitch, args)
		}},
		{Name: "Get-Process", Params: []string{"name"}, Run: func(args map[string][]string) ([]*powershell.Object, string, error) {
			return getProcess(c, node, args)
		}},
		{Name: "Get-ItemProperty", Params: []string{"path", "name"}, Run: func(args map[string][]string) ([]*powershell.Object, string, error) {
			return getItemProperty(c, node, args)
		}},
	}
}

const typeService = "System.ServiceProcess.ServiceController"

// getService is Get-Service [-Name] names: the services in the service
// database's order (by name), each name a wildcard; a name no service
// has is a non-terminating error on stderr.
func getService(h *host.Host, args map[string][]string) ([]*powershell.Object, string, error) {
	names, byDisplay := args["name"], false
	if d, ok := args["displayname"]; ok {
		names, byDisplay = d, true
	}
	var out []*powershell.Object
	var note strings.Builder
	matched := map[string]bool{}
	for _, s := range h.Services {
		key := s.Name
		if byDisplay {
			key = s.DisplayName
		}
		hit := len(names) == 0
		for _, n := range names {
			if ok, _ := path.Match(strings.ToLower(n), strings.ToLower(key)); ok {
				hit, matched[n] = true, true
			}
		}
		if !hit {
			continue
		}
		o := powershell.NewObject(typeService, "Status", "Name", "DisplayName").
			Set("Name", s.Name).
			Set("RequiredServices", s.DependsOn).
			Set("DisplayName", s.DisplayName).
			Set("ServiceName", s.Name).
			Set("ServicesDependedOn", s.DependsOn).
			Set("Status", powershell.Enum(s.Status)).
			Set("ServiceType", powershell.Enum("Win32OwnProcess")).
			Set("StartType", powershell.Enum(s.StartType))
		out = append(out, o)
	}
	for _, n := range names {
		if !matched[n] && !strings.ContainsAny(n, "*?[") {
			what := "service name"
			if byDisplay {
				what = "displayname"
			}
			fmt.Fprintf(&note, "Get-Service : Cannot find any service with %s '%s'.\n", what, n)
		}
	}
	return out, note.String(), nil
}

func nodeAndHost(c *model.Cluster, node string) (*corev1.Node, *hostInfo) {
	var n *corev1.Node
	for _, x := range c.Nodes {
		if x.Name == node {
			n = x
		}
	}
	hi := &hostInfo{nic: "Ethernet"}
	for _, h := range c.Hosts {
		if h.Name == node && h.NIC.Name != "" {
			hi.nic = h.NIC.Name
		}
	}
	if n != nil {
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP && hi.addr == "" {
				hi.addr = a.Address
			}
		}
	}
	hi.bits = 24
	if p, err := netip.ParsePrefix(c.Network.CIDR); err == nil {
		hi.bits = p.Bits()
	}
	return n, hi
}

type hostInfo struct {
	nic, addr string
	bits      int
}

// getNetIPAddress lists the host's IPv4 addresses: the loopback and the
// node address, on the NIC until HNS makes the external vSwitch and on
// "vEthernet (<NIC>)" after (HNS moves the address to the host vNIC).
func getNetIPAddress(c *model.Cluster, node string, vSwitch bool, args map[string][]string) ([]*powershell.Object, string, error) {
	_, hi := nodeAndHost(c, node)
	alias := hi.nic
	if vSwitch {
		alias = "vEthernet (" + hi.nic + ")"
	}
	mk := func(addr, alias string, bits int, origin string) *powershell.Object {
		return powershell.NewObject("Microsoft.Management.Infrastructure.CimInstance#ROOT/StandardCimv2/MSFT_NetIPAddress").
			Set("IPAddress", addr).
			Set("InterfaceAlias", alias).
			Set("AddressFamily", powershell.Enum("IPv4")).
			Set("Type", powershell.Enum("Unicast")).
			Set("PrefixLength", bits).
			Set("PrefixOrigin", powershell.Enum(origin)).
			Set("SuffixOrigin", powershell.Enum(origin)).
			Set("AddressState", powershell.Enum("Preferred"))
	}
	all := []*powershell.Object{mk(hi.addr, alias, hi.bits, "Manual"), mk("127.0.0.1", "Loopback Pseudo-Interface 1", 8, "WellKnown")}
	if fam, ok := args["addressfamily"]; ok && len(fam) == 1 && !strings.EqualFold(fam[0], "IPv4") {
		return nil, "kubectl-hybrid: only the IPv4 addresses are modelled\n", nil
	}
	return all, "kubectl-hybrid: the host's IPv4 addresses only (IPv6 link-local and container compartments are not modelled)\n", nil
}

// ipconfig prints the host adapter as `ipconfig` does (the header, then
// one adapter block).
func ipconfig(c *model.Cluster, h *host.Host, args []string, vSwitch bool) Result {
	if len(args) > 0 {
		return Result{Stderr: "kubectl-hybrid: ipconfig without options is emulated\n", Code: 1}
	}
	_, hi := nodeAndHost(c, h.Node)
	alias := hi.nic
	if vSwitch {
		alias = "vEthernet (" + hi.nic + ")"
	}
	m := net4Mask(hi.bits)
	var b strings.Builder
	b.WriteString("\nWindows IP Configuration\n\n\n")
	fmt.Fprintf(&b, "Ethernet adapter %s:\n\n", alias)
	b.WriteString("   Connection-specific DNS Suffix  . : \n")
	fmt.Fprintf(&b, "   IPv4 Address. . . . . . . . . . . : %s\n", hi.addr)
	fmt.Fprintf(&b, "   Subnet Mask . . . . . . . . . . . : %s\n", m)
	fmt.Fprintf(&b, "   Default Gateway . . . . . . . . . : %s\n", c.Network.Gateway)
	return Result{Stdout: b.String(), Stderr: "kubectl-hybrid: the host adapter only (IPv6 link-local addresses and the HNS adapters are not modelled)\n"}
}

func net4Mask(bits int) string {
	var m uint32
	if bits > 0 {
		m = ^uint32(0) << (32 - bits)
	}
	return fmt.Sprintf("%d.%d.%d.%d", m>>24, m>>16&0xff, m>>8&0xff, m&0xff)
}

// getItemProperty reads HKLM:\SOFTWARE\Microsoft\Windows NT\CurrentVersion
// from what the kubelet reports: osImage is the ProductName, and
// kernelVersion (pkg/kubelet/winstats/version.go) is
// major.minor.CurrentBuild.UBR read from this very key.
func getItemProperty(c *model.Cluster, node string, args map[string][]string) ([]*powershell.Object, string, error) {
	p := strings.Join(args["path"], ",")
	norm := strings.ToLower(strings.TrimSuffix(strings.ReplaceAll(p, "HKEY_LOCAL_MACHINE", "HKLM:"), `\`))
	if norm != strings.ToLower(`HKLM:\SOFTWARE\Microsoft\Windows NT\CurrentVersion`) {
		return nil, "", fmt.Errorf("kubectl-hybrid emulates only HKLM:\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion, not '%s'", p)
	}
	n, _ := nodeAndHost(c, node)
	if n == nil {
		return nil, "", fmt.Errorf("node %s not found", node)
	}
	parts := strings.Split(n.Status.NodeInfo.KernelVersion, ".")
	for len(parts) < 4 {
		parts = append(parts, "")
	}
	edition := n.Status.NodeInfo.OSImage
	if i := strings.LastIndexByte(edition, ' '); i >= 0 {
		edition = "Server" + edition[i+1:]
	}
	// CurrentBuild is a REG_SZ; UBR a REG_DWORD, which the transcripts
	// show aligned as text.
	o := powershell.NewObject("System.Management.Automation.PSCustomObject").
		Set("CurrentMajorVersionNumber", atoi(parts[0])).
		Set("CurrentMinorVersionNumber", atoi(parts[1])).
		Set("CurrentBuild", parts[2]).
		Set("CurrentBuildNumber", parts[2]).
		Set("EditionID", edition).
		Set("InstallationType", "").
		Set("ProductName", n.Status.NodeInfo.OSImage).
		Set("UBR", parts[3]).
		Set("PSPath", `Microsoft.PowerShell.Core\Registry::HKEY_LOCAL_MACHINE\SOFTWARE\Microsoft\Windows NT\CurrentVersion`)
	return []*powershell.Object{o}, "kubectl-hybrid: InstallationType (Server or Server Core) is not in the twin; the other values come from the node's osImage and kernelVersion\n", nil
}

func atoi(s string) int {
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' {
			return n
		}
		n = n*10 + int(r-'0')
	}
	return n
}
