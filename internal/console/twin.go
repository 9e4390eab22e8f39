package console

import (
	"sync"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/linux"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/plane"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// Twin is the compiled state the console reads: the cluster, the walk
// the client tools take, and one node's dataplane at a time. A node that
// is not of the asked operating system, or has no dataplane, is nil
// without an error. internal/plane owns the compiled state; FromPlane and
// FromCluster read it.
type Twin interface {
	Cluster() *model.Cluster
	Engine() (*trace.Engine, error)
	LinuxNode(name string) (*linux.Node, error)
	WindowsNode(name string) (*windows.Node, error)
}

// FromCluster is a Twin over a plane made on first use: a command on one
// node compiles that node only.
func FromCluster(c *model.Cluster) Twin { return &planeTwin{c: c} }

// FromPlane is a Twin over a plane the caller already holds.
func FromPlane(p *plane.Plane) Twin { return &planeTwin{c: p.Cluster(), p: p} }

type planeTwin struct {
	c *model.Cluster

	once   sync.Once
	p      *plane.Plane
	err    error
	engine *trace.Engine
}

func (t *planeTwin) plane() (*plane.Plane, error) {
	t.once.Do(func() {
		if t.p == nil {
			t.p, t.err = plane.New(t.c)
		}
	})
	return t.p, t.err
}

func (t *planeTwin) Cluster() *model.Cluster { return t.c }

// Engine walks the plane, compiling only the nodes a walk crosses.
func (t *planeTwin) Engine() (*trace.Engine, error) {
	if t.engine != nil {
		return t.engine, nil
	}
	p, err := t.plane()
	if err != nil {
		return nil, err
	}
	e, err := trace.FromPlane(p)
	if err != nil {
		return nil, err
	}
	t.engine = e
	return e, nil
}

func (t *planeTwin) LinuxNode(name string) (*linux.Node, error) {
	p, err := t.plane()
	if err != nil {
		return nil, err
	}
	return p.Linux(name), nil
}

func (t *planeTwin) WindowsNode(name string) (*windows.Node, error) {
	p, err := t.plane()
	if err != nil {
		return nil, err
	}
	return p.Windows(name)
}
