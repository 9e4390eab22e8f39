package load

import (
	"bytes"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/crash"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Parsing a YAML stream's documents on every core. The stream is split
// into chunks (its "---" lines) as before, on one goroutine; each chunk is
// parsed and decoded by a worker with a decoder of its own, which counts
// the chunk's documents from zero; and the objects are emitted in input
// order, with the documents before them added to their Origin, their
// findings and their errors. A chunk's objects, the first error in it and
// the error of an earlier chunk come out exactly as when the chunks are
// decoded one after another: an object is decoded from its chunk alone,
// and a chunk's decoding reads nothing of the decoder but its file, its
// limits and its validator (which takes findings from several goroutines).

// yamlJob is one chunk and, once done is closed, what its decoding gave.
type yamlJob struct {
	chunk    []byte
	first    int
	explicit bool
	// before is the empty documents counted between the previous chunk
	// and this one.
	before int

	objs    []*model.Object
	docs    int // the documents the chunk held
	err     error
	crashed crash.Group
	done    chan struct{}
}

// yamlPipeline decodes the chunks of one stream.
type yamlPipeline struct {
	d       *decoder
	jobs    chan *yamlJob
	pending []*yamlJob // submitted, not yet emitted, in input order
	limit   int
	wg      sync.WaitGroup
	stopped atomic.Bool
	started bool
}

func (d *decoder) newYAMLPipeline() *yamlPipeline {
	w := runtime.GOMAXPROCS(0)
	return &yamlPipeline{d: d, jobs: make(chan *yamlJob, 2*w), limit: 2 * w}
}

func (p *yamlPipeline) start() {
	p.started = true
	for range runtime.GOMAXPROCS(0) {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			// The worker's decoder: its interned keys and JSON buffer
			// serve all its chunks, as the stream's decoder's did.
			wd := &decoder{
				file: p.d.file, fastMin: p.d.fastMin, keys: map[string]string{}, itemBatch: p.d.itemBatch,
				maxDoc: p.d.maxDoc, val: p.d.val,
			}
			for j := range p.jobs {
				if !p.stopped.Load() {
					runYAMLJob(wd, j)
				}
				close(j.done)
			}
		}()
	}
}

// runYAMLJob decodes one chunk with a worker's decoder, counting its documents
// from zero.
func runYAMLJob(wd *decoder, j *yamlJob) {
	defer j.crashed.Recover()
	wd.doc = 0
	wd.emit = func(o *model.Object) error {
		j.objs = append(j.objs, o)
		return nil
	}
	j.err = wd.yamlChunk(j.chunk, j.first, j.explicit)
	j.docs = wd.doc
	j.chunk = nil
}

// submit queues a chunk, emitting the oldest ones first while too many
// are in flight.
func (p *yamlPipeline) submit(chunk []byte, first int, explicit bool, before int) error {
	for len(p.pending) >= p.limit {
		if err := p.emitOldest(); err != nil {
			return err
		}
	}
	if !p.started {
		p.start()
	}
	j := &yamlJob{chunk: bytes.Clone(chunk), first: first, explicit: explicit, before: before, done: make(chan struct{})}
	p.pending = append(p.pending, j)
	p.jobs <- j
	return nil
}

// drain emits every chunk submitted.
func (p *yamlPipeline) drain() error {
	for len(p.pending) > 0 {
		if err := p.emitOldest(); err != nil {
			return err
		}
	}
	return nil
}

// stop ends the workers, skipping the chunks not yet decoded.
func (p *yamlPipeline) stop() {
	p.stopped.Store(true)
	close(p.jobs)
	p.wg.Wait()
}

// emitOldest waits for the oldest chunk and emits its objects, numbering
// its documents after those before it.
func (p *yamlPipeline) emitOldest() error {
	j := p.pending[0]
	p.pending[0] = nil
	p.pending = p.pending[1:]
	<-j.done
	j.crashed.Repanic()
	d := p.d
	off := d.doc + j.before
	for _, o := range j.objs {
		o.Origin.Doc += off
		if d.val != nil {
			d.val.mu.Lock()
			for _, f := range d.val.pending[o] {
				f.err.Doc += off
			}
			d.val.mu.Unlock()
		}
		if err := d.emit(o); err != nil {
			return err
		}
	}
	if j.err != nil {
		var le *Error
		if errors.As(j.err, &le) {
			le.Doc += off
		}
		return j.err
	}
	d.doc = off + j.docs
	return nil
}

// eachOnEveryCore calls, for every i in [0, n), a function that newWorker
// made for one of GOMAXPROCS workers (its own decoder and converter), and
// returns when all are done; a panic is raised again on the caller's
// goroutine.
func eachOnEveryCore(n int, newWorker func() func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	var next atomic.Int64
	var wg sync.WaitGroup
	var crashed crash.Group
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer crashed.Recover()
			do := newWorker()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				do(i)
			}
		}()
	}
	wg.Wait()
	crashed.Repanic()
}
