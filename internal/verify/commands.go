package verify

import (
	"regexp"
	"strings"
)

// Command is one command verify reads.
type Command struct {
	// Typed is the command as collect runs it and as it is written on the
	// first line of its file.
	Typed string
	// File is the file collect writes it to.
	File string
	// Windows: the command runs on Windows nodes (else Linux).
	Windows bool
	// Parse reads its output.
	Parse func(string) ([]Item, error)
	// Emulated: the twin answers it. Output of a command the twin does not
	// emulate is parsed (so bad input is caught) but not compared.
	Emulated bool
}

// Commands is every command verify reads, in the order collect runs them.
var Commands = []Command{
	{Typed: "ip route", File: "ip-route.txt", Parse: ParseIPRoute, Emulated: true},
	{Typed: "ip -d link show vxlan.calico", File: "ip-link-vxlan.txt", Parse: ParseLinkVXLAN, Emulated: true},
	{Typed: "ip neigh show dev vxlan.calico", File: "ip-neigh-vxlan.txt", Parse: ParseIPNeigh, Emulated: true},
	{Typed: "bridge fdb show dev vxlan.calico", File: "bridge-fdb-vxlan.txt", Parse: ParseBridgeFDB, Emulated: true},
	{Typed: "nft list ruleset", File: "nft-ruleset.txt", Parse: ParseNft, Emulated: true},
	{Typed: "nft list table ip kube-proxy", File: "nft-kube-proxy.txt", Parse: ParseNft, Emulated: true},
	{Typed: "Get-HnsNetwork | ConvertTo-Json -Depth 10", File: "hns-networks.json", Windows: true, Parse: ParseHnsNetworkJSON, Emulated: true},
	{Typed: "Get-HnsEndpoint | ConvertTo-Json -Depth 10", File: "hns-endpoints.json", Windows: true, Parse: ParseHnsEndpointJSON, Emulated: true},
	{Typed: "hnsdiag list all", File: "hnsdiag-all.txt", Windows: true, Parse: ParseHnsdiag, Emulated: true},
	{Typed: "Get-HnsPolicyList", File: "hns-policylist.txt", Windows: true, Parse: ParseHnsPolicyList, Emulated: true},
	{Typed: "Get-NetAdapter", File: "netadapter.txt", Windows: true, Parse: ParseNetAdapter, Emulated: true},
	{Typed: "ipconfig /all", File: "ipconfig-all.txt", Windows: true, Parse: ParseIpconfig},
}

var space = regexp.MustCompile(`\s+`)

// canonCommand folds what does not change a command: surrounding and
// repeated blanks, "sudo", the case of PowerShell cmdlets and ".exe".
func canonCommand(s string) string {
	s = strings.TrimSpace(space.ReplaceAllString(s, " "))
	s = strings.TrimPrefix(s, "sudo ")
	s = strings.ReplaceAll(s, " | ", "|")
	s = strings.ReplaceAll(s, "|", " | ")
	s = strings.TrimSpace(strings.Replace(s, "hnsdiag.exe", "hnsdiag", 1))
	s = strings.Replace(s, "ipconfig.exe", "ipconfig", 1)
	return strings.ToLower(s)
}

// LookupCommand finds the command a file's first line names.
func LookupCommand(typed string) (Command, bool) {
	c := canonCommand(typed)
	for _, cmd := range Commands {
		if canonCommand(cmd.Typed) == c {
			return cmd, true
		}
	}
	// Accepted spellings of the same thing.
	aliases := map[string]string{
		"ip r":                                      "ip route",
		"ip route show":                             "ip route",
		"ip neighbour show dev vxlan.calico":        "ip neigh show dev vxlan.calico",
		"ip n show dev vxlan.calico":                "ip neigh show dev vxlan.calico",
		"ip -details link show vxlan.calico":        "ip -d link show vxlan.calico",
		"get-hnsnetwork | convertto-json -depth 10": "Get-HnsNetwork | ConvertTo-Json -Depth 10",
	}
	if a, ok := aliases[c]; ok {
		return LookupCommand(a)
	}
	return Command{}, false
}

// CommandNames lists the commands for messages.
func CommandNames() []string {
	names := make([]string, len(Commands))
	for i, c := range Commands {
		names[i] = c.Typed
	}
	return names
}
