package verify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
)

// Producers of what a Windows node holds.
const (
	prodCalicoWin    = "HNS via calico-node-windows"
	prodCNIWin       = "HNS via the Calico CNI plugin (kubelet)"
	prodKubeProxyWin = "HNS via kube-proxy-windows"
	prodHNS          = "HNS (host network service)"
)

var (
	// Endpoint and adapter names carry the pod sandbox's container ID,
	// which the runtime draws at random.
	sandboxName = regexp.MustCompile(`\b[0-9a-f]{64}_`)
	// The distributed router port is named by a GUID HNS draws.
	drPortName = regexp.MustCompile(`(?i)DrPort [0-9a-f-]{36}`)
	// "Hyper-V Virtual Ethernet Container Adapter #3": the number is the
	// order the adapters were created in.
	adapterOrdinal = regexp.MustCompile(` #\d+$`)
)

// decodeJSONList reads ConvertTo-Json output: an array, or one object
// when the pipeline had one, or nothing when it had none.
func decodeJSONList(out string) ([]map[string]any, error) {
	data := bytes.TrimSpace([]byte(out))
	if len(data) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, jsonErr(data, dec, err)
	}
	if dec.More() {
		return nil, parseErr(lineAt(data, int(dec.InputOffset())), "text after the JSON value")
	}
	switch t := v.(type) {
	case map[string]any:
		return []map[string]any{t}, nil
	case []any:
		var objs []map[string]any
		for i, e := range t {
			m, ok := e.(map[string]any)
			if !ok {
				return nil, parseErr(1, "element %d of the JSON array is not an object", i)
			}
			objs = append(objs, m)
		}
		return objs, nil
	}
	return nil, parseErr(1, "expected a JSON object or array")
}

func jsonErr(data []byte, dec *json.Decoder, err error) error {
	off := int(dec.InputOffset())
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off = int(se.Offset)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		off = len(data)
	}
	return parseErr(lineAt(data, off), "invalid JSON: %v", err)
}

func lineAt(data []byte, off int) int {
	if off > len(data) {
		off = len(data)
	}
	return bytes.Count(data[:off], []byte("\n")) + 1
}

// field reads a JSON field whatever its case (HNS's v1 and v2 schemas
// and PowerShell's versions differ in it).
func field(m map[string]any, name string) any {
	if v, ok := m[name]; ok {
		return v
	}
	for k, v := range m {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return nil
}

func str(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case json.Number:
		return t.String()
	case bool:
		return fmt.Sprint(t)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func list(v any) []map[string]any {
	switch t := v.(type) {
	case map[string]any:
		return []map[string]any{t}
	case []any:
		var out []map[string]any
		for _, e := range t {
			if m, ok := e.(map[string]any); ok {
				out = append(out, m)
			}
		}
		return out
	}
	return nil
}

// canonJSON writes an object with sorted keys, leaving out fields that
// are identifiers HNS draws or state.
func canonJSON(m map[string]any, drop ...string) string {
	c := map[string]any{}
	for k, v := range m {
		skip := false
		for _, d := range drop {
			if strings.EqualFold(k, d) {
				skip = true
			}
		}
		if !skip {
			c[k] = v
		}
	}
	b, _ := json.Marshal(c)
	return string(b)
}

// ParseHnsNetworkJSON reads `Get-HnsNetwork | ConvertTo-Json -Depth 10`:
// an item per network (type, subnets with their VSID, management IP,
// adapter, distributed router MAC) and per network policy, a
// RemoteSubnetRoute keyed by its destination. IDs, state, endpoint counts
// and resource records are not compared.
func ParseHnsNetworkJSON(out string) ([]Item, error) {
	nets, err := decodeJSONList(out)
	if err != nil {
		return nil, err
	}
	var items []Item
	for i, n := range nets {
		name := str(field(n, "Name"))
		if name == "" {
			return nil, parseErr(1, "network %d has no Name", i+1)
		}
		var subnets []string
		for _, s := range list(field(n, "Subnets")) {
			sub := str(field(s, "AddressPrefix")) + " gateway " + str(field(s, "GatewayAddress"))
			for _, p := range list(field(s, "Policies")) {
				if str(field(p, "Type")) == "VSID" {
					sub += " vsid " + str(field(p, "VSID"))
				}
			}
			subnets = append(subnets, sub)
		}
		sort.Strings(subnets)
		a := map[string]string{
			"type":         str(field(n, "Type")),
			"subnets":      "[" + strings.Join(subnets, ", ") + "]",
			"managementIP": str(field(n, "ManagementIP")),
			"adapter":      str(field(n, "NetworkAdapterName")),
			"drMAC":        normMAC(str(field(n, "DrMacAddress"))),
		}
		items = append(items, Item{Kind: "hns network", Key: name, Value: attrs(a), Producer: prodCalicoWin})
		for _, p := range list(field(n, "Policies")) {
			typ := str(field(p, "Type"))
			if typ == "RemoteSubnetRoute" {
				items = append(items, Item{Kind: "hns network policy", Key: name + " RemoteSubnetRoute " + str(field(p, "DestinationPrefix")),
					Value: attrs(map[string]string{
						"providerAddress": str(field(p, "ProviderAddress")),
						"drMAC":           normMAC(str(field(p, "DistributedRouterMacAddress"))),
						"isolationId":     str(field(p, "IsolationId")),
					}), Producer: prodCalicoWin, Parent: parentRef("hns network", name)})
				continue
			}
			items = append(items, Item{Kind: "hns network policy", Key: name + " " + typ + " " + canonJSON(p, "Type"), Producer: prodCalicoWin, Parent: parentRef("hns network", name), Group: name + " " + typ})
		}
	}
	return items, nil
}

// ParseHnsEndpointJSON reads `Get-HnsEndpoint | ConvertTo-Json -Depth 10`:
// an item per endpoint keyed by network and IP address, and one per
// endpoint policy. Endpoint IDs, the network and namespace IDs, state and
// the sandbox part of pod endpoint names are not compared.
func ParseHnsEndpointJSON(out string) ([]Item, error) {
	eps, err := decodeJSONList(out)
	if err != nil {
		return nil, err
	}
	var items []Item
	for i, e := range eps {
		ip := str(field(e, "IPAddress"))
		if ip == "" {
			return nil, parseErr(1, "endpoint %d has no IPAddress", i+1)
		}
		key := str(field(e, "VirtualNetworkName")) + " " + ip
		name := sandboxName.ReplaceAllString(str(field(e, "Name")), "<sandbox>_")
		remote := str(field(e, "IsRemoteEndpoint")) == "true"
		a := map[string]string{
			"name":      name,
			"mac":       normMAC(str(field(e, "MacAddress"))),
			"remote":    fmt.Sprint(remote),
			"prefix":    str(field(e, "PrefixLength")),
			"gateway":   str(field(e, "GatewayAddress")),
			"dns":       str(field(e, "DNSServerList")),
			"dnsSuffix": str(field(e, "DNSSuffix")),
		}
		prod := endpointProducer(name, remote)
		items = append(items, Item{Kind: "hns endpoint", Key: key, Value: attrs(a), Producer: prod})
		for _, p := range list(field(e, "Policies")) {
			pp := prod
			if str(field(p, "Type")) == "ACL" {
				pp = prodCalicoWin
			}
			typ := str(field(p, "Type"))
			items = append(items, Item{Kind: "hns endpoint policy", Key: key + " " + typ + " " + canonJSON(p, "Type"), Producer: pp,
				Parent: parentRef("hns endpoint", key), Group: key + " " + typ})
		}
	}
	return items, nil
}

// endpointProducer: the CNI plugin creates pod endpoints, calico-node-
// windows the host's Calico_ep, kube-proxy-windows the remote endpoints of
// service backends and VIPs (pkg/proxy/winkernel/proxier.go).
func endpointProducer(name string, remote bool) string {
	switch {
	case strings.HasSuffix(name, "_ep"):
		return prodCalicoWin
	case remote:
		return prodKubeProxyWin
	}
	return prodCNIWin
}

var (
	hnsdiagHead = regexp.MustCompile(`^([A-Za-z][A-Za-z ]*[A-Za-z])\s+:\s*(.*)$`)
	hnsdiagAttr = regexp.MustCompile(`^\s+([A-Za-z][A-Za-z ]*[A-Za-z])\s+:\s?(.*)$`)
)

type hnsdiagObj struct {
	kind, id string
	line     int
	attrs    map[string][]string
}

// ParseHnsdiag reads `hnsdiag list all` (or one of its lists): networks
// by name, endpoints by IP address, namespaces by their endpoints'
// addresses and load balancers by VIP and backend addresses. The GUIDs
// that link them are resolved within the output and then dropped.
func ParseHnsdiag(out string) ([]Item, error) {
	var objs []*hnsdiagObj
	var last string
	for n, line := range lines(out) {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if m := hnsdiagHead.FindStringSubmatch(line); m != nil && line[0] != ' ' && line[0] != '\t' {
			objs = append(objs, &hnsdiagObj{kind: m[1], id: strings.ToLower(strings.TrimSpace(m[2])), line: n + 1, attrs: map[string][]string{}})
			last = ""
			continue
		}
		if len(objs) == 0 {
			return nil, parseErr(n+1, "expected \"Network|Endpoint|Namespace|Load Balancer : ID\", got %q", strings.TrimSpace(line))
		}
		o := objs[len(objs)-1]
		if m := hnsdiagAttr.FindStringSubmatch(line); m != nil {
			last = m[1]
			if v := strings.TrimSpace(m[2]); v != "" {
				o.attrs[last] = append(o.attrs[last], v)
			} else if _, ok := o.attrs[last]; !ok {
				o.attrs[last] = nil
			}
			continue
		}
		if last == "" {
			return nil, parseErr(n+1, "value %q without a field name", strings.TrimSpace(line))
		}
		o.attrs[last] = append(o.attrs[last], strings.TrimSpace(line))
	}
	epIP := map[string]string{}
	for _, o := range objs {
		if o.kind == "Endpoint" {
			epIP[o.id] = first(o.attrs["IP Address"])
		}
	}
	resolve := func(ids []string) string {
		var ips []string
		for _, id := range ids {
			for _, f := range strings.Fields(id) {
				ip, ok := epIP[strings.ToLower(f)]
				if !ok {
					ip = "unlisted-endpoint"
				}
				ips = append(ips, ip)
			}
		}
		sort.Strings(ips)
		return strings.Join(ips, ",")
	}
	var items []Item
	for _, o := range objs {
		switch o.kind {
		case "Network":
			items = append(items, Item{Kind: "hns network", Key: first(o.attrs["Name"]), Value: attrs(map[string]string{"type": first(o.attrs["Type"])}), Producer: prodCalicoWin})
		case "Endpoint":
			name := sandboxName.ReplaceAllString(first(o.attrs["Name"]), "<sandbox>_")
			items = append(items, Item{Kind: "hns endpoint", Key: first(o.attrs["IP Address"]), Value: attrs(map[string]string{"name": name}), Producer: endpointProducer(name, name == "")})
		case "Namespace":
			items = append(items, Item{Kind: "hns namespace", Key: "endpoints " + resolve(o.attrs["Endpoint IDs"]), Producer: prodCNIWin})
		case "Load Balancer":
			vips := append([]string(nil), o.attrs["Virtual IPs"]...)
			sort.Strings(vips)
			items = append(items, Item{Kind: "hns load balancer", Key: "vips " + strings.Join(vips, ",") + " backends " + resolve(o.attrs["Direct IP IDs"]), Producer: prodKubeProxyWin, Group: "vips " + strings.Join(vips, ",")})
		default:
			return nil, parseErr(o.line, "unknown hnsdiag object %q", o.kind)
		}
	}
	return items, nil
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

var (
	listField = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9]*)\s*:\s?(.*)$`)
	psHash    = regexp.MustCompile(`@\{([^{}]*)\}`)
)

// ParseHnsPolicyList reads `Get-HnsPolicyList` (Format-List records): an
// item per policy list, keyed by its policies (type, protocol, ports,
// source VIP, DSR) with the number of endpoints it references. The IDs and
// activity IDs are drawn by HNS; PowerShell prints the VIPs as
// System.Object[], so two lists that differ only in VIPs look alike here
// (hnsdiag list all names them).
func ParseHnsPolicyList(out string) ([]Item, error) {
	var items []Item
	rec := map[string]string{}
	var last string
	recLine := 0
	flush := func() error {
		if len(rec) == 0 {
			return nil
		}
		pol, ok := rec["Policies"]
		if !ok {
			return parseErr(recLine, "policy list without Policies")
		}
		var ps []string
		for _, h := range psHash.FindAllStringSubmatch(pol, -1) {
			kv := map[string]string{}
			for _, f := range strings.Split(h[1], ";") {
				k, v, _ := strings.Cut(strings.TrimSpace(f), "=")
				switch k {
				case "VIPs", "":
				default:
					kv[k] = v
				}
			}
			ps = append(ps, attrs(kv))
		}
		sort.Strings(ps)
		refs := 0
		for _, r := range strings.Split(strings.Trim(rec["References"], "{}"), ",") {
			if strings.TrimSpace(r) != "" {
				refs++
			}
		}
		items = append(items, Item{Kind: "hns load balancer", Key: strings.Join(ps, " | "), Value: fmt.Sprintf("endpoints=%d", refs), Producer: prodKubeProxyWin})
		rec, last = map[string]string{}, ""
		return nil
	}
	for n, line := range lines(out) {
		if strings.TrimSpace(line) == "" {
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		if m := listField.FindStringSubmatch(line); m != nil {
			if len(rec) == 0 {
				recLine = n + 1
			}
			last = m[1]
			rec[last] = strings.TrimSpace(m[2])
			continue
		}
		if last == "" || (line[0] != ' ' && line[0] != '\t') {
			return nil, parseErr(n+1, "expected \"Field : value\", got %q", strings.TrimSpace(line))
		}
		// Format-List wraps a long value onto indented lines.
		rec[last] += strings.TrimSpace(line)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return items, nil
}

// ParseNetAdapter reads `Get-NetAdapter` as PowerShell formats it (a table
// whose dashes line marks the columns): an item per adapter with its
// description, status and MAC. ifIndex and link speed are not compared;
// sandbox IDs and the router port's GUID in names are folded.
func ParseNetAdapter(out string) ([]Item, error) {
	ls := lines(out)
	var header, dashes = -1, -1
	for i, l := range ls {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if header < 0 {
			header = i
			continue
		}
		dashes = i
		break
	}
	if header < 0 {
		return nil, nil
	}
	if dashes < 0 || strings.Trim(ls[dashes], "- ") != "" {
		return nil, parseErr(header+2, "expected the table's dashes line under the header")
	}
	type col struct {
		name       string
		start, end int
	}
	var cols []col
	d := ls[dashes]
	for i := 0; i < len(d); i++ {
		if d[i] == '-' && (i == 0 || d[i-1] == ' ') {
			j := i
			for j < len(d) && d[j] == '-' {
				j++
			}
			h := ls[header]
			name := ""
			if i < len(h) {
				name = strings.TrimSpace(h[i:min(j, len(h))])
			}
			cols = append(cols, col{name: name, start: i, end: j})
			i = j
		}
	}
	get := func(l string, c int) string {
		start := cols[c].start
		end := len(l)
		if c+1 < len(cols) {
			end = min(cols[c+1].start, len(l))
		}
		if start >= len(l) || start >= end {
			return ""
		}
		return strings.TrimSpace(l[start:end])
	}
	idx := map[string]int{}
	for i, c := range cols {
		idx[c.name] = i
	}
	if _, ok := idx["Name"]; !ok {
		return nil, parseErr(header+1, "the table has no Name column")
	}
	var items []Item
	for _, l := range ls[dashes+1:] {
		if strings.TrimSpace(l) == "" {
			continue
		}
		row := map[string]string{}
		for name, i := range idx {
			row[name] = get(l, i)
		}
		items = append(items, adapterItem(row["Name"], map[string]string{
			"description": adapterDescription(row["InterfaceDescription"]),
			"status":      row["Status"],
			"mac":         normMAC(row["MacAddress"]),
		}))
	}
	return items, nil
}

// adapterDescription folds the ordinal and cuts the description shorter
// than Get-NetAdapter's default view does (about 40 columns, "..." at the
// end), so a full and a cut description compare equal.
func adapterDescription(d string) string {
	d = adapterOrdinal.ReplaceAllString(strings.TrimSuffix(d, "..."), "")
	if len(d) > 30 {
		d = d[:30]
	}
	return d
}

func adapterItem(name string, a map[string]string) Item {
	key := drPortName.ReplaceAllString(sandboxName.ReplaceAllString(name, "<sandbox>_"), "DrPort <id>")
	if strings.HasPrefix(key, "vEthernet (DrPort") {
		// The default view cuts the name at 25 columns.
		key = "vEthernet (DrPort <id>)"
	} else if strings.HasPrefix(key, "vEthernet (") && strings.HasSuffix(key, "...") {
		// A pod adapter's name cut by the default view.
		key = "vEthernet (<sandbox>_" + "...)"
	}
	prod := prodHNS
	switch {
	case strings.Contains(key, "<sandbox>_"):
		// Pod adapters differ only in the sandbox ID; their MAC is made
		// from the pod's address, so it identifies them.
		key = "vEthernet (<sandbox>_…) " + a["mac"]
		prod = prodCNIWin
	case strings.HasPrefix(key, "vEthernet"):
		prod = prodCalicoWin
	case !strings.Contains(key, "("):
		prod = prodHost
	}
	return Item{Kind: "net adapter", Key: key, Value: attrs(a), Producer: prod}
}

var ipconfigField = regexp.MustCompile(`^\s+([^.:]+?)[ .]*:\s?(.*)$`)

// ParseIpconfig reads `ipconfig /all`: an item per adapter with its MAC,
// DHCP setting, IPv4 addresses, masks, gateways and DNS servers. Lease
// times, DHCPv6 IAID and DUID and link-local IPv6 addresses are not
// compared.
func ParseIpconfig(out string) ([]Item, error) {
	var items []Item
	var adapter string
	var a map[string]string
	var last string
	flush := func() {
		if adapter != "" {
			items = append(items, adapterItemIP(adapter, a))
		}
	}
	for n, line := range lines(out) {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if line[0] != ' ' && line[0] != '\t' {
			flush()
			head := strings.TrimSuffix(strings.TrimSpace(line), ":")
			if head == "Windows IP Configuration" {
				adapter = ""
				continue
			}
			_, name, ok := strings.Cut(head, " adapter ")
			if !ok {
				return nil, parseErr(n+1, "expected \"… adapter NAME:\", got %q", head)
			}
			adapter, a, last = name, map[string]string{}, ""
			continue
		}
		if adapter == "" {
			continue
		}
		m := ipconfigField.FindStringSubmatch(line)
		if m == nil || !strings.Contains(line, ". :") && !strings.Contains(line, " : ") {
			if last != "" {
				a[last] += "," + strings.TrimSpace(line)
			}
			continue
		}
		val := strings.TrimSpace(m[2])
		val = strings.TrimSuffix(strings.TrimSuffix(val, "(Preferred)"), "(Deprecated)")
		switch m[1] {
		case "Physical Address":
			last = "mac"
			a[last] = normMAC(val)
		case "DHCP Enabled":
			last = "dhcp"
			a[last] = val
		case "IPv4 Address", "Autoconfiguration IPv4 Address":
			last = "ipv4"
			a[last] = strings.TrimPrefix(a[last]+","+val, ",")
		case "Subnet Mask":
			last = "mask"
			a[last] = strings.TrimPrefix(a[last]+","+val, ",")
		case "Default Gateway":
			last = "gateway"
			a[last] = val
		case "DNS Servers":
			last = "dns"
			a[last] = val
		case "Media State":
			last = "media"
			a[last] = val
		default:
			last = ""
		}
	}
	flush()
	return items, nil
}

func adapterItemIP(name string, a map[string]string) Item {
	if d, ok := a["description"]; ok {
		a["description"] = adapterDescription(d)
	}
	it := adapterItem(name, a)
	it.Kind = "ip configuration"
	return it
}
