package classes

import (
	"net/netip"
	"sync"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/dataplane/windows"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// Prep is what the cells are computed over: the nodes and their groups,
// the IPAM blocks, the classes of pods with their placements, the
// NetworkPolicies resolved over the classes, and the Windows classes'
// HNS ACLs.
type Prep struct {
	E *trace.Engine
	C *model.Cluster
	// Filters are --from and --to, which split classes as selectors do.
	Filters []Filter

	Nodes         []*NodeInfo
	NodeByName    map[string]*NodeInfo
	NodeByIP      map[netip.Addr]*NodeInfo
	Blocks        []Block
	BlockByPrefix map[netip.Prefix]Block
	BlockBits     map[int]bool
	Groups        [][]*NodeInfo
	Isolate       map[string]bool
	Placements    []Placement
	Classes       []*Class
	ByPlacement   [][]*Class
	PodClass      map[netip.Addr]*Class
	// NodeClasses are the classes with pods on each node.
	NodeClasses [][]int32
	Pol         *Policies
	HasCalico   bool // the cluster has projectcalico.org policies

	AclMu sync.Mutex
	// AclCompiler waits for the compiler startACLCompiler makes.
	AclCompiler func() *windows.Compiler
	Acls        map[netip.Addr]*EndpointACLs
	AddrSets    *windows.ACLListCache
}
