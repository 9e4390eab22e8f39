// Command kubectl-hybrid is a digital twin and verifier of Kubernetes
// clusters that mix Linux and Windows nodes. On PATH it also runs as
// `kubectl hybrid`.
package main

import (
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/cli"
)

func main() {
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	os.Exit(cli.Execute(streams, os.Args[1:]))
}
