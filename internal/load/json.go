package load

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/crash"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load/rawdoc"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// skipValue validates JSON without decoding it.
type skipValue struct{}

func (*skipValue) UnmarshalJSON([]byte) error { return nil }

func (d *decoder) jsonStream(data []byte) error {
	pos, line := 0, 1
	for {
		start := rawdoc.SkipSpace(data, pos)
		line += bytes.Count(data[pos:start], newline)
		if start >= len(data) {
			return nil
		}
		end := rawdoc.ValueEnd(data, start)
		text := data[start:end]
		d.doc++
		// The value is checked whole while it is decoded: nothing is emitted
		// before the check passes, and when it fails its error is the
		// value's, whatever the decode found meanwhile.
		valid := checkJSON(text)
		err := d.jsonValue(text, line, valid)
		if verr := valid.wait(); verr != nil {
			if d.doc == 1 && yamlParses(data) {
				// YAML in flow style ({apiVersion: v1, …}) looks like JSON.
				d.doc = 0
				return d.yamlStream(bufio.NewReader(bytes.NewReader(data)))
			}
			off := len(text)
			var se *json.SyntaxError
			if errors.As(verr, &se) {
				off = int(se.Offset) - 1
			}
			off = max(0, min(off, len(text)))
			return d.errorAt(line+bytes.Count(text[:off], newline), "", "invalid JSON: %s", strings.TrimPrefix(verr.Error(), "json: "))
		}
		if err != nil {
			return err
		}
		line += bytes.Count(text, newline)
		pos = end
	}
}

// validity is the outcome of checking one JSON value's syntax, made on
// another core while the value is split and decoded.
type validity struct {
	done chan struct{}
	err  error
}

// checkConcurrentMin is the size from which the check runs beside the
// decode; a smaller value is checked first, as it is decoded at once.
const checkConcurrentMin = 64 << 10

func checkJSON(text []byte) *validity {
	v := &validity{done: make(chan struct{})}
	if len(text) < checkConcurrentMin {
		v.err = json.Unmarshal(text, &skipValue{})
		close(v.done)
		return v
	}
	go func() {
		defer close(v.done)
		v.err = json.Unmarshal(text, &skipValue{})
	}()
	return v
}

// wait returns the check's error once it is known.
func (v *validity) wait() error {
	<-v.done
	return v.err
}

// errInvalidJSON stops a decode whose text failed the syntax check;
// jsonStream reports the check's error instead.
var errInvalidJSON = errors.New("invalid JSON")

var newline = []byte{'\n'}

// yamlParses reports whether text is valid YAML throughout.
func yamlParses(text []byte) bool {
	dec := yaml.NewDecoder(bytes.NewReader(text))
	for {
		var n yaml.Node
		switch err := dec.Decode(&n); {
		case err == io.EOF:
			return true
		case err != nil:
			return false
		}
	}
}

// jsonValue decodes one JSON value of the stream. Until valid says the
// text is JSON, only the scanners that bound every index read it, and
// items are decoded where a panic is recovered; nothing is emitted.
func (d *decoder) jsonValue(text []byte, line int, valid *validity) error {
	if text[0] != '{' {
		v, _ := decodeJSON(text)
		return d.errorAt(line, "", "expected an object with apiVersion and kind, got %s", rawdoc.Describe(v))
	}
	var apiVersion, kind string
	itemsStart, itemsEnd := -1, -1
	rawdoc.EachField(text, 0, func(k string, start, end int) bool {
		switch k {
		case "apiVersion":
			apiVersion = jsonString(text[start:end])
		case "kind":
			kind = jsonString(text[start:end])
		case "items":
			itemsStart, itemsEnd = start, end
		}
		return true
	})
	listItems := itemsStart >= 0 && (text[itemsStart] == '[' || bytes.Equal(text[itemsStart:itemsEnd], []byte("null")))
	if !isList(apiVersion, kind, listItems) {
		if d.overDoc(len(text)) {
			return d.errorAt(line, "", "%s", documentTooLarge("JSON value", d.maxDoc))
		}
		if valid.wait() != nil {
			return errInvalidJSON
		}
		obj, err := d.jsonObject(text, line, "", "")
		if err != nil {
			return err
		}
		return d.emit(obj)
	}
	if itemsStart < 0 {
		return nil
	}
	items := text[itemsStart:itemsEnd]
	itemsLine := line + bytes.Count(text[:itemsStart], newline)
	if bytes.Equal(items, []byte("null")) {
		return nil
	}
	if items[0] != '[' {
		v, _ := decodeJSON(items)
		return d.errorAt(itemsLine, objectLabel(kind, "", ""), "items: expected a list of objects, got %s", rawdoc.Describe(v))
	}
	var err error
	at, atLine := 0, itemsLine
	batch := d.newItemBatch(apiVersion, kind, valid)
	rawdoc.EachElement(items, 0, func(i, start, end int) bool {
		atLine += bytes.Count(items[at:start], newline)
		at = start
		it := items[start:end]
		if it[0] != '{' {
			if err = batch.finish(); err != nil {
				return false
			}
			v, _ := decodeJSON(it)
			err = d.errorAt(atLine, objectLabel(kind, "", ""), "items[%d]: expected an object, got %s", i, rawdoc.Describe(v))
			return false
		}
		if d.overDoc(len(it)) {
			if err = batch.finish(); err != nil {
				return false
			}
			err = d.errorAt(atLine, objectLabel(kind, "", ""), "items[%d]: %s", i, documentTooLarge("item", d.maxDoc))
			return false
		}
		err = batch.add(it, atLine)
		return err == nil
	})
	if err != nil {
		batch.wait()
		return err
	}
	return batch.finish()
}

// itemBatch decodes a List's items on every core, a batch at a time, and
// emits them in input order: an item is decoded from its own text alone
// (jsonObject reads only the decoder's file and document number), and the
// first error in input order is the one returned, as when decoding one by
// one. A batch is decoded while the next one is split off the text, and
// emitted once the value's syntax check has passed. A batch bounds how
// many items' generic values are held at once.
type itemBatch struct {
	d                        *decoder
	listAPIVersion, listKind string
	valid                    *validity
	// cur is being filled; busy, when not nil, is being decoded.
	cur, busy *batchWork
	spare     *batchWork
}

// batchWork is one batch's items and, once done is closed, their objects
// or errors.
type batchWork struct {
	texts   [][]byte
	lines   []int
	objs    []*model.Object
	errs    []error
	crashed crash.Group
	done    chan struct{}
}

// itemBatchSize is how many items are decoded before they are emitted.
const itemBatchSize = 512

func (d *decoder) newItemBatch(listAPIVersion, listKind string, valid *validity) *itemBatch {
	return &itemBatch{d: d, listAPIVersion: listAPIVersion, listKind: listKind, valid: valid, cur: &batchWork{}}
}

func (b *itemBatch) add(text []byte, line int) error {
	b.cur.texts = append(b.cur.texts, text)
	b.cur.lines = append(b.cur.lines, line)
	size := itemBatchSize
	if b.d.itemBatch > 0 {
		size = b.d.itemBatch
	}
	if len(b.cur.texts) < size {
		return nil
	}
	return b.flush()
}

// flush emits the batch being decoded, if any, and starts decoding the
// current one.
func (b *itemBatch) flush() error {
	if err := b.emitBusy(); err != nil {
		return err
	}
	if len(b.cur.texts) == 0 {
		return nil
	}
	b.start(b.cur)
	b.busy, b.cur = b.cur, b.spare
	if b.cur == nil {
		b.cur = &batchWork{}
	}
	b.spare = nil
	return nil
}

// finish decodes and emits every item added.
func (b *itemBatch) finish() error {
	if err := b.flush(); err != nil {
		return err
	}
	return b.emitBusy()
}

// wait lets the batch being decoded end, when the decode stops early.
func (b *itemBatch) wait() {
	if b.busy != nil {
		<-b.busy.done
	}
}

func (b *itemBatch) start(w *batchWork) {
	n := len(w.texts)
	w.objs = append(w.objs[:0], make([]*model.Object, n)...)
	w.errs = append(w.errs[:0], make([]error, n)...)
	w.done = make(chan struct{})
	workers := min(runtime.GOMAXPROCS(0), (n+63)/64)
	var wg sync.WaitGroup
	for k := 0; k < workers; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.crashed.Recover()
			for i := k; i < n; i += workers {
				w.objs[i], w.errs[i] = b.d.jsonObject(w.texts[i], w.lines[i], b.listAPIVersion, b.listKind)
			}
		}()
	}
	go func() {
		wg.Wait()
		close(w.done)
	}()
}

// emitBusy waits for the batch being decoded and emits its objects in
// input order, up to the first error.
func (b *itemBatch) emitBusy() error {
	w := b.busy
	if w == nil {
		return nil
	}
	<-w.done
	b.busy = nil
	// Whatever the decode found, the text must be JSON first: a panic on
	// text that is not is the syntax error's, reported as such.
	if b.valid.wait() != nil {
		return errInvalidJSON
	}
	w.crashed.Repanic()
	var err error
	for i := 0; i < len(w.objs) && err == nil; i++ {
		if err = w.errs[i]; err == nil {
			err = b.d.emit(w.objs[i])
		}
	}
	clear(w.texts)
	clear(w.objs)
	clear(w.errs)
	w.texts, w.lines = w.texts[:0], w.lines[:0]
	w.crashed = crash.Group{}
	b.spare = w
	return err
}

func (d *decoder) jsonObject(text []byte, line int, listAPIVersion, listKind string) (*model.Object, error) {
	c := candidate{
		line:           line,
		loc:            rawdoc.JSONLocator{Text: text, First: line},
		jsonText:       text,
		listAPIVersion: listAPIVersion,
		listKind:       listKind,
	}
	if obj, ok := d.direct(&c); ok {
		return obj, nil
	}
	v, err := decodeJSON(text)
	if err != nil {
		return nil, d.errorAt(line, "", "invalid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	c.raw, _ = v.(map[string]any)
	return d.build(c)
}

// decodeJSON decodes valid JSON into the generic values YAML gives: numbers
// become int64 when whole, else uint64 or float64 (json.Number when out of
// range, so that nothing is lost).
func decodeJSON(text []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return normalizeNumbers(v), nil
}

func normalizeNumbers(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = normalizeNumbers(e)
		}
	case []any:
		for i, e := range t {
			t[i] = normalizeNumbers(e)
		}
	case json.Number:
		s := string(t)
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i
		}
		if !strings.ContainsAny(s, ".eE-") {
			if u, err := strconv.ParseUint(s, 10, 64); err == nil {
				return u
			}
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f
		}
	}
	return v
}

func jsonString(lit []byte) string {
	if len(lit) == 0 || lit[0] != '"' {
		return ""
	}
	return rawdoc.DecodeKey(lit)
}
