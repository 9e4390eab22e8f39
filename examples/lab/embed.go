// Package lab embeds examples/lab, the seeds' lab cluster as its admin wrote
// it, so that --lab works from the binary alone.
package lab

import "embed"

// FS holds every YAML file of the lab, read in lexical path order.
//
//go:embed *.yaml
var FS embed.FS
