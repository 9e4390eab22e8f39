package dns

import (
	"fmt"
	"strconv"
	"strings"
)

// directive is one line of a Corefile with its optional block.
type directive struct {
	Name string
	Args []string
	Body []directive
}

// serverBlock is one "zones { plugins }" block of a Corefile.
type serverBlock struct {
	Zones   []string // normalized, "." for the root
	Plugins []directive
}

func (b serverBlock) plugin(name string) *directive {
	for i := range b.Plugins {
		if b.Plugins[i].Name == name {
			return &b.Plugins[i]
		}
	}
	return nil
}

// parseCorefile reads the Caddyfile syntax CoreDNS uses: server blocks keyed
// by zones (with an optional ":port" and "dns://" scheme), each holding
// directives, each directive optionally holding a block. Comments start with
// "#". Snippets, imports and environment substitution are not modeled.
func parseCorefile(text string) ([]serverBlock, error) {
	var toks []string
	for _, line := range strings.Split(text, "\n") {
		if i := strings.Index(line, "#"); i >= 0 {
			line = line[:i]
		}
		for _, f := range strings.Fields(line) {
			// Braces may touch their neighbours ("{" at line end is usual).
			for f != "" {
				switch {
				case strings.HasPrefix(f, "{") || strings.HasPrefix(f, "}"):
					toks = append(toks, f[:1])
					f = f[1:]
				case strings.HasSuffix(f, "{") || strings.HasSuffix(f, "}"):
					toks = append(toks, f[:len(f)-1], f[len(f)-1:])
					f = ""
				default:
					toks = append(toks, f)
					f = ""
				}
			}
		}
		toks = append(toks, "\n")
	}
	p := &corefileParser{toks: toks}
	var blocks []serverBlock
	for {
		p.skipNewlines()
		if p.done() {
			return blocks, nil
		}
		var keys []string
		for !p.done() && p.peek() != "{" && p.peek() != "\n" {
			keys = append(keys, strings.TrimSuffix(p.next(), ","))
		}
		p.skipNewlines()
		if p.done() || p.next() != "{" {
			return nil, fmt.Errorf("Corefile: server block %v has no body", keys)
		}
		body, err := p.body()
		if err != nil {
			return nil, err
		}
		var zones []string
		for _, k := range keys {
			zones = append(zones, zoneOfKey(k))
		}
		blocks = append(blocks, serverBlock{Zones: zones, Plugins: body})
	}
}

type corefileParser struct {
	toks []string
	i    int
}

func (p *corefileParser) done() bool   { return p.i >= len(p.toks) }
func (p *corefileParser) peek() string { return p.toks[p.i] }
func (p *corefileParser) next() string { p.i++; return p.toks[p.i-1] }
func (p *corefileParser) skipNewlines() {
	for !p.done() && p.peek() == "\n" {
		p.i++
	}
}

// body reads directives up to the closing brace.
func (p *corefileParser) body() ([]directive, error) {
	var out []directive
	for {
		p.skipNewlines()
		if p.done() {
			return nil, fmt.Errorf("Corefile: missing }")
		}
		if p.peek() == "}" {
			p.i++
			return out, nil
		}
		d := directive{Name: p.next()}
		for !p.done() && p.peek() != "\n" && p.peek() != "{" && p.peek() != "}" {
			d.Args = append(d.Args, p.next())
		}
		if !p.done() && p.peek() == "{" {
			p.i++
			inner, err := p.body()
			if err != nil {
				return nil, err
			}
			d.Body = inner
		}
		out = append(out, d)
	}
}

// zoneOfKey turns a server block key (".:53", "dns://cluster.local:53",
// "example.com") into a normalized zone.
func zoneOfKey(k string) string {
	k = strings.TrimPrefix(k, "dns://")
	if i := strings.LastIndex(k, ":"); i >= 0 {
		k = k[:i]
	}
	if k == "" || k == "." {
		return "."
	}
	z, _ := normalize(k)
	return z
}

// kubernetesConfig is what the twin reads from the kubernetes plugin's
// directive (coredns plugin/kubernetes/setup.go: zones from the arguments or
// the server block, "pods", "ttl", "fallthrough"; defaults pods disabled,
// ttl 5, plugin/kubernetes/kubernetes.go).
type kubernetesConfig struct {
	Zones       []string
	Pods        string
	TTL         uint32
	Fallthrough []string // zones; empty slice with All means every name
	FallAll     bool
	Unmodeled   []string // options the twin ignores
}

func parseKubernetes(d *directive, blockZones []string) (kubernetesConfig, error) {
	k := kubernetesConfig{Pods: "disabled", TTL: 5}
	for _, a := range d.Args {
		z, _ := normalize(a)
		k.Zones = append(k.Zones, z)
	}
	if len(k.Zones) == 0 {
		k.Zones = append(k.Zones, blockZones...)
	}
	for _, o := range d.Body {
		switch o.Name {
		case "pods":
			if len(o.Args) != 1 {
				return k, fmt.Errorf("Corefile: kubernetes: pods takes one argument")
			}
			switch o.Args[0] {
			case "disabled", "insecure", "verified":
				k.Pods = o.Args[0]
			default:
				return k, fmt.Errorf("Corefile: kubernetes: pods %q is not disabled, insecure or verified", o.Args[0])
			}
		case "ttl":
			if len(o.Args) != 1 {
				return k, fmt.Errorf("Corefile: kubernetes: ttl takes one argument")
			}
			// setup.go accepts 0..3600.
			n, err := strconv.ParseUint(o.Args[0], 10, 32)
			if err != nil || n > 3600 {
				return k, fmt.Errorf("Corefile: kubernetes: ttl %q is not 0..3600", o.Args[0])
			}
			k.TTL = uint32(n)
		case "fallthrough":
			if len(o.Args) == 0 {
				k.FallAll = true
			}
			for _, a := range o.Args {
				z, _ := normalize(a)
				k.Fallthrough = append(k.Fallthrough, z)
			}
		default:
			k.Unmodeled = append(k.Unmodeled, o.Name)
		}
	}
	return k, nil
}

// fallsThrough reports whether a name error for name goes on to the next
// plugin (coredns plugin/pkg/fall: no zones listed means every name).
func (k kubernetesConfig) fallsThrough(name string) bool {
	if k.FallAll {
		return true
	}
	for _, z := range k.Fallthrough {
		if inZone(name, z) {
			return true
		}
	}
	return false
}

// modeledPlugins do not change answers to A, AAAA, CNAME, PTR or TXT
// questions (or change only their order or timing, as loadbalance and cache
// do, which the comments at the use sites say).
var modeledPlugins = map[string]bool{
	"errors": true, "health": true, "ready": true, "kubernetes": true, "prometheus": true,
	"forward": true, "cache": true, "loop": true, "reload": true, "loadbalance": true,
	"log": true, "debug": true,
}
