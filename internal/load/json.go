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
		if err := json.Unmarshal(text, &skipValue{}); err != nil {
			if d.doc == 1 && yamlParses(data) {
				// YAML in flow style ({apiVersion: v1, …}) looks like JSON.
				d.doc = 0
				return d.yamlStream(bufio.NewReader(bytes.NewReader(data)))
			}
			off := len(text)
			var se *json.SyntaxError
			if errors.As(err, &se) {
				off = int(se.Offset) - 1
			}
			off = max(0, min(off, len(text)))
			return d.errorAt(line+bytes.Count(text[:off], newline), "", "invalid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
		}
		if err := d.jsonValue(text, line); err != nil {
			return err
		}
		line += bytes.Count(text, newline)
		pos = end
	}
}

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

func (d *decoder) jsonValue(text []byte, line int) error {
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
	batch := d.newItemBatch(apiVersion, kind)
	rawdoc.EachElement(items, 0, func(i, start, end int) bool {
		atLine += bytes.Count(items[at:start], newline)
		at = start
		it := items[start:end]
		if it[0] != '{' {
			if err = batch.flush(); err != nil {
				return false
			}
			v, _ := decodeJSON(it)
			err = d.errorAt(atLine, objectLabel(kind, "", ""), "items[%d]: expected an object, got %s", i, rawdoc.Describe(v))
			return false
		}
		if d.overDoc(len(it)) {
			if err = batch.flush(); err != nil {
				return false
			}
			err = d.errorAt(atLine, objectLabel(kind, "", ""), "items[%d]: %s", i, documentTooLarge("item", d.maxDoc))
			return false
		}
		err = batch.add(it, atLine)
		return err == nil
	})
	if err != nil {
		return err
	}
	return batch.flush()
}

// itemBatch decodes a List's items on every core, a batch at a time, and
// emits them in input order: an item is decoded from its own text alone
// (jsonObject reads only the decoder's file and document number), and the
// first error in input order is the one returned, as when decoding one by
// one. A batch bounds how many items' generic values are held at once.
type itemBatch struct {
	d                        *decoder
	listAPIVersion, listKind string
	texts                    [][]byte
	lines                    []int
	objs                     []*model.Object
	errs                     []error
}

// itemBatchSize is how many items are decoded before they are emitted.
const itemBatchSize = 512

func (d *decoder) newItemBatch(listAPIVersion, listKind string) *itemBatch {
	return &itemBatch{d: d, listAPIVersion: listAPIVersion, listKind: listKind}
}

func (b *itemBatch) add(text []byte, line int) error {
	b.texts = append(b.texts, text)
	b.lines = append(b.lines, line)
	size := itemBatchSize
	if b.d.itemBatch > 0 {
		size = b.d.itemBatch
	}
	if len(b.texts) < size {
		return nil
	}
	return b.flush()
}

func (b *itemBatch) flush() error {
	n := len(b.texts)
	if n == 0 {
		return nil
	}
	b.objs = append(b.objs[:0], make([]*model.Object, n)...)
	b.errs = append(b.errs[:0], make([]error, n)...)
	workers := min(runtime.GOMAXPROCS(0), (n+63)/64)
	var wg sync.WaitGroup
	var crashed crash.Group
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer crashed.Recover()
			for i := w; i < n; i += workers {
				b.objs[i], b.errs[i] = b.d.jsonObject(b.texts[i], b.lines[i], b.listAPIVersion, b.listKind)
			}
		}()
	}
	wg.Wait()
	crashed.Repanic()
	var err error
	for i := 0; i < n && err == nil; i++ {
		if err = b.errs[i]; err == nil {
			err = b.d.emit(b.objs[i])
		}
	}
	clear(b.texts)
	clear(b.objs)
	b.texts, b.lines = b.texts[:0], b.lines[:0]
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
