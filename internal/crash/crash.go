// Package crash carries a panic from a worker goroutine back to the
// goroutine that started it, so that the command's single top-level
// recover (cli.Execute) sees every panic the command causes: a panic in a
// goroutine of its own would end the process before any recover ran.
package crash

import (
	"fmt"
	"runtime/debug"
	"sync"
)

// Panic is a recovered panic with the stack of the goroutine it happened
// in.
type Panic struct {
	Value any
	Stack []byte
}

func (p *Panic) Error() string { return fmt.Sprintf("%v", p.Value) }

// Unwrap lets errors.As reach an error the panic was raised with.
func (p *Panic) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}

// Recovered turns a value returned by recover into a *Panic, keeping the
// stack of one raised in another goroutine and passed on by Group.Wait.
// It must be called in the deferred function that called recover, for
// the stack to be the panicking goroutine's.
func Recovered(r any) *Panic {
	if p, ok := r.(*Panic); ok {
		return p
	}
	return &Panic{Value: r, Stack: debug.Stack()}
}

// Group records the first panic of a set of goroutines.
type Group struct {
	once sync.Once
	p    *Panic
}

// Recover is deferred first in each goroutine of the group: it stops the
// panic there and keeps the first one.
func (g *Group) Recover() {
	if r := recover(); r != nil {
		g.Keep(r)
	}
}

// Keep records r, a value a deferred function's recover returned, as the
// group's panic unless it has one already.
func (g *Group) Keep(r any) {
	p := Recovered(r)
	g.once.Do(func() { g.p = p })
}

// Repanic raises the group's first panic, if any, in the calling
// goroutine; it is called after the group's goroutines have ended.
func (g *Group) Repanic() {
	if g.p != nil {
		panic(g.p)
	}
}
