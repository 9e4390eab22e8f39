package console

import (
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// Twin is the compiled state the console reads: the cluster, the walk
// the client tools take, and one node's dataplane at a time. A node that
// is not of the asked operating system, or has no dataplane, is nil
// without an error. The layer that owns the compiled state implements it;
// FromCluster compiles on demand.
type Twin interface {
	Cluster() *model.Cluster
	Engine() (*trace.Engine, error)
	LinuxNode(name string) (*linux.Node, error)
	WindowsNode(name string) (*windows.Node, error)
}

// FromCluster is a Twin that compiles what a command asks for the first
// time it asks, and keeps it.
func FromCluster(c *model.Cluster) Twin { return &lazyTwin{c: c} }

type lazyTwin struct {
	c       *model.Cluster
	engine  *trace.Engine
	linux   map[string]*linux.Node
	windows map[string]*windows.Node
	winComp *windows.Compiler
}

func (t *lazyTwin) Cluster() *model.Cluster { return t.c }

func (t *lazyTwin) Engine() (*trace.Engine, error) {
	if t.engine == nil {
		e, err := trace.New(t.c)
		if err != nil {
			return nil, err
		}
		t.engine = e
	}
	return t.engine, nil
}

func (t *lazyTwin) LinuxNode(name string) (*linux.Node, error) {
	if t.linux == nil {
		nodes, err := linux.Compile(t.c)
		if err != nil {
			return nil, err
		}
		t.linux = nodes
	}
	return t.linux[name], nil
}

func (t *lazyTwin) WindowsNode(name string) (*windows.Node, error) {
	if n, ok := t.windows[name]; ok {
		return n, nil
	}
	if t.winComp == nil {
		x, err := windows.NewCompiler(t.c)
		if err != nil {
			return nil, err
		}
		t.winComp, t.windows = x, map[string]*windows.Node{}
	}
	node := nodeNamed(t.c, name)
	if node == nil {
		return nil, nil
	}
	n, err := t.winComp.Node(node)
	if err != nil {
		return nil, err
	}
	t.windows[name] = n
	return n, nil
}
