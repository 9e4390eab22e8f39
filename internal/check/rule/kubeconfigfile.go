package rule

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	clientcmdlatest "k8s.io/client-go/tools/clientcmd/api/latest"
)

// Kubeconfig is one parsed kubeconfig file.
type Kubeconfig struct {
	// File is the path as given.
	File   string
	Config *clientcmdapi.Config
	// Lines maps "clusters/NAME", "users/NAME", "contexts/NAME" to the line
	// of the entry's name.
	Lines map[string]int
}

// ParseKubeconfig decodes a kubeconfig the way client-go's clientcmd.Load
// does (its api/latest codec; the clientcmd package itself pulls in
// dependencies the module does not carry).
func ParseKubeconfig(file string, data []byte) (*Kubeconfig, error) {
	cfg := clientcmdapi.NewConfig()
	if len(strings.TrimSpace(string(data))) > 0 {
		obj, _, err := clientcmdlatest.Codec.Decode(data, &schema.GroupVersionKind{Version: clientcmdlatest.Version, Kind: "Config"}, cfg)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", file, err)
		}
		c, ok := obj.(*clientcmdapi.Config)
		if !ok {
			return nil, fmt.Errorf("%s: not a kubeconfig (got %T)", file, obj)
		}
		cfg = c
	}
	return &Kubeconfig{File: file, Config: cfg, Lines: entryLines(string(data))}, nil
}

var (
	sectionLine = regexp.MustCompile(`^(clusters|users|contexts):`)
	nameLine    = regexp.MustCompile(`^\s*(?:-\s+)?name:\s*["']?([^"'#]+?)["']?\s*$`)
)

// entryLines finds the line of each entry's name in a YAML kubeconfig.
func entryLines(text string) map[string]int {
	out := map[string]int{}
	section := ""
	for i, line := range strings.Split(text, "\n") {
		if m := sectionLine.FindStringSubmatch(line); m != nil {
			section = m[1]
			continue
		}
		if line != "" && line[0] != ' ' && line[0] != '-' && line[0] != '#' {
			section = ""
		}
		if m := nameLine.FindStringSubmatch(line); m != nil && section != "" {
			k := section + "/" + m[1]
			if _, ok := out[k]; !ok {
				out[k] = i + 1
			}
		}
	}
	return out
}
