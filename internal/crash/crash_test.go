package crash

import (
	"strings"
	"sync"
	"testing"
)

// run starts n workers, each calling work(i), and returns what the
// caller's recover saw after the group's Repanic.
func run(n int, work func(i int)) (got any) {
	defer func() { got = recover() }()
	var g Group
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer g.Recover()
			work(i)
		}()
	}
	wg.Wait()
	g.Repanic()
	return nil
}

func TestAWorkersPanicComesBackToTheCallerWithTheWorkersStack(t *testing.T) {
	got := run(4, func(i int) {
		if i == 2 {
			panic("worker two failed")
		}
	})
	p, ok := got.(*Panic)
	if !ok {
		t.Fatalf("recovered %T %v, want a *Panic", got, got)
	}
	if p.Value != "worker two failed" {
		t.Errorf("value %v, want the worker's", p.Value)
	}
	if !strings.Contains(string(p.Stack), "crash_test.go") {
		t.Errorf("the stack does not reach the worker:\n%s", p.Stack)
	}
}

func TestWhenEveryWorkerPanicsTheFirstPanicComesBack(t *testing.T) {
	got := run(8, func(i int) { panic(i) })
	p, ok := got.(*Panic)
	if !ok {
		t.Fatalf("recovered %T %v, want a *Panic", got, got)
	}
	if _, ok := p.Value.(int); !ok {
		t.Errorf("value %v, want a worker's number", p.Value)
	}
}

func TestWorkersThatDoNotPanicRaiseNothing(t *testing.T) {
	if got := run(4, func(int) {}); got != nil {
		t.Errorf("recovered %v, want nothing", got)
	}
}

func TestRecoveredKeepsAPanicPassedOnAndItsStack(t *testing.T) {
	p := &Panic{Value: "x", Stack: []byte("the worker's stack")}
	if got := Recovered(p); got != p {
		t.Errorf("Recovered made a new panic of one passed on")
	}
	if got := Recovered("y"); got.Value != "y" || len(got.Stack) == 0 {
		t.Errorf("Recovered(%q) = %v with %d bytes of stack", "y", got.Value, len(got.Stack))
	}
}
