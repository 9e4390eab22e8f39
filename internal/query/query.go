// Package query turns the arguments of the questions the twin answers —
// a trace, a reach matrix — into the engines' calls. The commands and
// the HTTP API (internal/serve) both call it, so that one question gets
// one answer however it is asked.
package query

import (
	"fmt"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/reach"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/trace"
)

// ParamError is a bad argument: Param names it without the command
// line's dashes ("from", "proto"), Msg says what is wrong with it.
type ParamError struct {
	Param string
	Msg   string
}

// Error reads as the command line gives it: "--proto \"x\": use tcp, …".
func (e *ParamError) Error() string { return "--" + e.Param + " " + e.Msg }

// Proto reads a protocol argument; empty is def.
func Proto(s string, def trace.Proto) (trace.Proto, error) {
	if s == "" {
		return def, nil
	}
	p, ok := trace.ParseProto(s)
	if !ok {
		return "", &ParamError{Param: "proto", Msg: fmt.Sprintf("%q: use tcp, udp or icmp", s)}
	}
	return p, nil
}

// Trace is one connection to walk, as `trace SRC DST` takes it.
type Trace struct {
	Src, Dst  string
	Namespace string
	Proto     trace.Proto
	// Port 0 is the destination's default port (trace.Engine.DefaultPort).
	Port int
}

// RunTrace resolves the source and destination and walks the connection.
// An object that does not exist is a *trace.NotFoundError; any other bad
// source or destination is another error.
func RunTrace(e *trace.Engine, q Trace) (*trace.Result, error) {
	if q.Port < 0 || q.Port > 65535 {
		return nil, &ParamError{Param: "port", Msg: fmt.Sprintf("%d: out of range", q.Port)}
	}
	src, err := e.ParseSource(q.Src, q.Namespace)
	if err != nil {
		return nil, err
	}
	dst, err := e.ParseTarget(q.Dst, q.Namespace)
	if err != nil {
		return nil, err
	}
	port := q.Port
	if port == 0 {
		port = e.DefaultPort(dst, q.Proto)
	}
	return e.Trace(src, dst, q.Proto, port), nil
}

// Reach is the filter of a reach matrix, as `reach` takes it.
type Reach struct {
	// Namespace is already defaulted ("default", or the kubeconfig
	// context's).
	Namespace     string
	AllNamespaces bool
	From, To      []string
	Port          int
	// Proto is empty for tcp and udp as declared.
	Proto string
	Nodes bool
}

// ReachOptions parses the filters into reach.Options.
func ReachOptions(q Reach) (reach.Options, error) {
	opt := reach.Options{Namespace: q.Namespace, AllNamespaces: q.AllNamespaces, Port: q.Port, Nodes: q.Nodes}
	if q.Proto != "" {
		p, err := Proto(q.Proto, "")
		if err != nil {
			return opt, err
		}
		opt.Proto = p
	}
	for _, s := range q.From {
		f, err := reach.ParseFilter(s, q.Namespace)
		if err != nil {
			return opt, &ParamError{Param: "from", Msg: err.Error()}
		}
		opt.From = append(opt.From, f)
	}
	for _, s := range q.To {
		f, err := reach.ParseFilter(s, q.Namespace)
		if err != nil {
			return opt, &ParamError{Param: "to", Msg: err.Error()}
		}
		if f.IsNode() {
			return opt, &ParamError{Param: "to", Msg: s + ": nodes are sources only (--nodes, --from node/NAME)"}
		}
		opt.To = append(opt.To, f)
	}
	if q.Port < 0 || q.Port > 65535 {
		return opt, &ParamError{Param: "port", Msg: fmt.Sprintf("%d: out of range", q.Port)}
	}
	if q.Port > 0 && opt.Proto == trace.ICMP {
		return opt, &ParamError{Param: "port", Msg: fmt.Sprintf("%d with --proto icmp: ICMP has no ports", q.Port)}
	}
	return opt, nil
}
