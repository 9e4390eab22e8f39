package load

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"

	yaml "go.yaml.in/yaml/v3"

	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/registry"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/load/rawdoc"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Decode reads one stream — multi-document YAML, or JSON (one object or a
// stream of objects) — and calls fn with each object in input order. Lists
// (kind: List, and the *List kinds kubectl get -o yaml|json prints) are
// flattened into their items. Empty and comment-only documents are skipped.
// file names the stream in Origins and errors ("" is "<input>"). Errors are
// *Error, or whatever fn returns. The default Limits apply.
//
// YAML is read a few documents at a time (two per core, decoded in
// parallel), so memory follows the largest documents, not the stream;
// blank lines cost nothing.
func Decode(r io.Reader, file string, fn func(*model.Object) error) error {
	return DecodeLimited(r, file, Limits{}, fn)
}

// DecodeLimited is Decode within lim (the defaults for its zero fields).
func DecodeLimited(r io.Reader, file string, lim Limits, fn func(*model.Object) error) error {
	return decodeWith(r, file, lim, fn, fastListMin, nil)
}

func decode(r io.Reader, file string, fn func(*model.Object) error, fastMin int) error {
	return decodeWith(r, file, Limits{}, fn, fastMin, nil)
}

// decodeWith is decode within lim, with val, when not nil, checking each
// object as the API server would.
func decodeWith(r io.Reader, file string, lim Limits, fn func(*model.Object) error, fastMin int, val *validator) error {
	if file == "" {
		file = "<input>"
	}
	lim = lim.withDefaults()
	d := &decoder{file: file, emit: fn, fastMin: fastMin, keys: map[string]string{}, maxDoc: lim.Document, val: val}
	if val != nil {
		d.emit = func(o *model.Object) error {
			if err := fn(o); err != nil {
				return err
			}
			val.emitted(o)
			return nil
		}
	}
	br := bufio.NewReaderSize(newLimitReader(r, lim.Input), 64<<10)
	if b, err := br.Peek(3); err == nil && bytes.Equal(b, utf8BOM) {
		_, _ = br.Discard(3)
	}
	isJSON, err := sniffJSON(br)
	if err != nil {
		return readError(file, err)
	}
	if isJSON {
		data, err := io.ReadAll(br)
		if err != nil {
			return readError(file, err)
		}
		return d.jsonStream(data)
	}
	return d.yamlStream(br)
}

// DecodeDocuments is Decode collecting the objects.
func DecodeDocuments(r io.Reader, file string) ([]*model.Object, error) {
	var objs []*model.Object
	err := Decode(r, file, func(o *model.Object) error {
		objs = append(objs, o)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return objs, nil
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// sniffJSON reports whether the stream's first non-blank byte opens a JSON
// object or array (kubectl's YAMLOrJSONDecoder decides the same way).
func sniffJSON(br *bufio.Reader) (bool, error) {
	for n := 1; n <= br.Size(); n++ {
		b, err := br.Peek(n)
		if len(b) < n {
			if err == io.EOF || errors.Is(err, bufio.ErrBufferFull) {
				return false, nil
			}
			return false, err
		}
		switch b[n-1] {
		case ' ', '\t', '\r', '\n':
			continue
		case '{', '[':
			return true, nil
		}
		return false, nil
	}
	return false, nil
}

type decoder struct {
	file string
	doc  int // the current document, 1-based
	emit func(*model.Object) error
	// fastMin is the size from which a List document is split into items.
	fastMin int
	keys    map[string]string // interned mapping keys
	// jsonBuf is reused for the JSON text of each YAML object.
	jsonBuf []byte
	// itemBatch, when set, replaces itemBatchSize (tests).
	itemBatch int
	// maxDoc is Limits.Document.
	maxDoc int64
	// val checks objects as the API server would (nil: not at all).
	val *validator
}

// overDoc reports whether n bytes of one object's text exceed Limits.Document.
func (d *decoder) overDoc(n int) bool { return d.maxDoc > 0 && int64(n) > d.maxDoc }

func (d *decoder) errorAt(line int, object, format string, args ...any) *Error {
	return &Error{File: d.file, Doc: d.doc, Line: line, Object: object, Msg: fmt.Sprintf(format, args...)}
}

// fastListMin is the size from which a YAML List document is split into its
// items before parsing, so that a list of 100,000 pods never exists as one
// node tree.
const fastListMin = 1 << 20

func (d *decoder) yamlStream(br *bufio.Reader) error {
	cr := chunkReader{br: br, maxLine: d.maxDoc}
	explicit := false
	// Chunks are decoded on every core (yamlpipe.go); before counts the
	// empty documents since the last chunk submitted.
	p := d.newYAMLPipeline()
	defer p.stop()
	before := 0
	for {
		chunk, first, more, err := cr.next()
		if cr.seps > 0 {
			// Empty documents, each ended by "---", came before chunk.
			if explicit {
				before++
			}
			before += cr.seps - 1
			explicit = true
		}
		if err != nil {
			if err := p.drain(); err != nil {
				return err
			}
			var le *Error
			if errors.As(err, &le) {
				le.File = d.file
				return le
			}
			return readError(d.file, err)
		}
		if len(chunk) == 0 {
			// Blank: an empty document after "---", without a parser.
			if explicit {
				before++
			}
		} else {
			if err := p.submit(chunk, first, explicit, before); err != nil {
				return err
			}
			before = 0
		}
		if !more {
			if err := p.drain(); err != nil {
				return err
			}
			d.doc += before
			return nil
		}
		explicit = true
	}
}

// chunkReader splits a stream at "---" lines, as kubectl's YAML reader does.
// Other document markers ("--- !tag", "...") stay inside a chunk for the YAML
// parser.
//
// Blank lines (spaces and CRs only) are held back until a content line
// follows them: those before a chunk's first content line are dropped (the
// chunk's first line moves on), those after its last one too when there are
// more than blankKeep bytes of them, and those between content lines are
// kept. Held back, they are kept exactly up to blankKeep bytes and beyond
// that only counted (then given back as bare line ends, which keeps every
// line number). So a stream of whitespace or of "---" lines costs neither
// memory nor a YAML parser, whose time is many times that of a split.
type chunkReader struct {
	br   *bufio.Reader
	line int // lines consumed
	buf  []byte
	// lines: the held-back blank lines since the chunk's last content line.
	lines     []byte
	nLines    int
	linesLen  int64 // their bytes
	linesLost bool
	overBlank bool // they were more than maxLine bytes
	// cur: the current line's leading whitespace while it has no content.
	cur       []byte
	curLen    int
	curLost   bool
	curSpaces bool // cur holds spaces only
	// seps counts the "---" lines next consumed before its chunk, each
	// ending an empty document.
	seps int
	// first is the line of the chunk's first line; lead says blank lines
	// before it were dropped.
	first int
	lead  bool
	// maxLine is Limits.Document: no line of an object may be longer.
	maxLine int64
}

// blankKeep is how much held-back whitespace is kept exactly; a block
// scalar that keeps its trailing blank lines (|+) keeps them up to it.
const blankKeep = 64 << 10

// next returns the next chunk (valid until the next call), the line its
// first line has, and whether a separator ended it (so another follows).
// The chunk is empty when it holds only blank lines.
func (cr *chunkReader) next() ([]byte, int, bool, error) {
	cr.buf = cr.buf[:0]
	cr.lines, cr.nLines, cr.linesLen, cr.linesLost, cr.overBlank = cr.lines[:0], 0, 0, false, false
	cr.first, cr.lead, cr.seps = cr.line+1, false, 0
	for {
		cr.skipBlank()
		cr.cur, cr.curLen, cr.curLost, cr.curSpaces = cr.cur[:0], 0, false, true
		blankMark, lineStart := -1, -1 // where the held-back lines and this line start in buf
		blankLost := false             // the held-back lines were only counted
		eof := false
		for {
			part, err := cr.br.ReadSlice('\n')
			if lineStart < 0 && isBlank(part) {
				cr.holdCur(part)
			} else {
				if lineStart < 0 {
					blankMark, blankLost = len(cr.buf), cr.linesLost
					if err := cr.release(); err != nil {
						return nil, 0, false, err
					}
					lineStart = len(cr.buf)
					if err := cr.releaseCur(); err != nil {
						return nil, 0, false, err
					}
				}
				cr.buf = append(cr.buf, part...)
				if cr.maxLine > 0 && int64(len(cr.buf)-lineStart) > cr.maxLine {
					// Within one object (a List whose items cannot be
					// split is refused whole): stop before buffering on.
					return nil, 0, false, &Error{Line: cr.line + 1, Msg: documentTooLarge("a line", cr.maxLine)}
				}
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err == io.EOF {
				eof = true
				break
			}
			if err != nil {
				return nil, 0, false, err
			}
			break
		}
		if lineStart < 0 {
			// A blank line, or nothing at the end of the stream.
			if cr.curLen > 0 {
				cr.line++
				if len(cr.buf) == 0 {
					cr.dropLeading()
				} else {
					cr.holdLine()
				}
			}
			if eof {
				cr.keepTrailing()
				return cr.buf, cr.first, false, nil
			}
			continue
		}
		cr.line++
		if isSeparator(cr.buf[lineStart:]) {
			if blankLost || cr.overBlank {
				cr.buf = cr.buf[:blankMark]
			} else {
				cr.buf = cr.buf[:lineStart]
			}
			return cr.buf, cr.first, true, nil
		}
		if cr.overBlank {
			return nil, 0, false, &Error{Line: cr.line, Msg: documentTooLarge("the blank lines before this line", cr.maxLine)}
		}
		if cr.lead {
			// One blank line stays in front of the content: yaml.v3
			// reports some errors on a chunk's first line without a line
			// number, or with another one than on later lines.
			cr.buf = append(cr.buf, 0)
			copy(cr.buf[1:], cr.buf)
			cr.buf[0] = '\n'
			cr.first--
			cr.lead = false
		}
		if eof {
			return cr.buf, cr.first, false, nil
		}
	}
}

// skipBlank consumes the whole blank lines at the reader's position, as
// the line loop of next would but without a call per line: it holds them
// back, or drops them before the chunk's content, and there also consumes
// "---" lines (counted in seps), which end empty documents.
func (cr *chunkReader) skipBlank() {
	for {
		if cr.br.Buffered() == 0 {
			if _, err := cr.br.Peek(1); err != nil {
				return // the line loop sees the end or the error
			}
		}
		b, _ := cr.br.Peek(cr.br.Buffered())
		off := 0
		for off < len(b) {
			// A run of whitespace: its whole lines at once.
			j := off
			for j < len(b) && isSpace(b[j]) {
				j++
			}
			if last := bytes.LastIndexByte(b[off:j], '\n'); last >= 0 {
				cr.blankLines(b[off : off+last+1])
				off += last + 1
				continue
			}
			if j == len(b) || len(cr.buf) > 0 || b[off] != '-' {
				break // content, or a line not all buffered
			}
			k := off + 3
			if k > len(b) || string(b[off:k]) != "---" {
				break
			}
			for k < len(b) && (b[k] == ' ' || b[k] == '\t' || b[k] == '\r') {
				k++
			}
			if k == len(b) || b[k] != '\n' {
				break
			}
			cr.line++
			cr.first, cr.lead = cr.line+1, false // a new chunk
			cr.seps++
			off = k + 1
		}
		_, _ = cr.br.Discard(off)
		if off < len(b) {
			// Content follows, or a line longer than what is buffered.
			if off > 0 {
				continue // read on: the rest of the line may be blank
			}
			return
		}
	}
}

// dropLeading drops the blank lines read before the chunk's content.
func (cr *chunkReader) dropLeading() {
	cr.first, cr.lead = cr.line+1, true
}

// blankLines consumes whole blank lines: dropped before the chunk's
// content, held back after it.
func (cr *chunkReader) blankLines(run []byte) {
	n := bytes.Count(run, newline)
	cr.line += n
	if len(cr.buf) == 0 {
		cr.dropLeading()
		return
	}
	cr.nLines += n
	cr.linesLen += int64(len(run))
	if cr.linesLost || len(cr.lines)+len(run) > blankKeep {
		cr.linesLost = true
		return
	}
	cr.lines = append(cr.lines, run...)
}

// isSpace is what a blank line holds. Not tabs: yaml.v3 refuses a tab
// where a line's indentation could be, even on a line with nothing else,
// and such a line must still reach it.
func isSpace(c byte) bool { return c == ' ' || c == '\r' || c == '\n' }

// isBlank reports whether a part of a line holds whitespace only.
func isBlank(part []byte) bool {
	for _, c := range part {
		if !isSpace(c) {
			return false
		}
	}
	return true
}

// holdCur holds back a blank part of the current line.
func (cr *chunkReader) holdCur(part []byte) {
	cr.curLen += len(part)
	for _, c := range part {
		if c != ' ' && c != '\n' {
			cr.curSpaces = false
		}
	}
	if cr.curLost || len(cr.cur)+len(part) > blankKeep {
		cr.curLost = true
		return
	}
	cr.cur = append(cr.cur, part...)
}

// holdLine adds the current (blank) line to the held-back lines.
func (cr *chunkReader) holdLine() {
	cr.nLines++
	cr.linesLen += int64(cr.curLen)
	if cr.linesLost || cr.curLost || len(cr.lines)+len(cr.cur) > blankKeep {
		cr.linesLost = true
		return
	}
	cr.lines = append(cr.lines, cr.cur...)
}

// release gives back the held-back blank lines before a content line.
func (cr *chunkReader) release() error {
	if cr.maxLine > 0 && cr.linesLen > cr.maxLine {
		// More than an object may hold: next drops them before a
		// separator and refuses them before content.
		cr.overBlank = true
	} else if cr.nLines > 0 {
		if cr.linesLost {
			cr.buf = append(cr.buf, bytes.Repeat(newline, cr.nLines)...)
		} else {
			cr.buf = append(cr.buf, cr.lines...)
		}
	}
	cr.lines, cr.nLines, cr.linesLen, cr.linesLost = cr.lines[:0], 0, 0, false
	return nil
}

// releaseCur gives back the current line's leading whitespace once content
// follows it.
func (cr *chunkReader) releaseCur() error {
	if !cr.curLost {
		cr.buf = append(cr.buf, cr.cur...)
		return nil
	}
	if cr.maxLine > 0 && int64(cr.curLen) > cr.maxLine {
		return &Error{Line: cr.line + 1, Msg: documentTooLarge("a line", cr.maxLine)}
	}
	if !cr.curSpaces {
		// A CR is a line break to YAML: spaces alone would join lines.
		return &Error{File: "", Line: cr.line + 1, Msg: fmt.Sprintf("more than %s of spaces and carriage returns before the line's content", FormatBytes(blankKeep))}
	}
	cr.buf = append(cr.buf, bytes.Repeat([]byte{' '}, cr.curLen)...)
	return nil
}

// keepTrailing keeps the blank lines that end the stream when they were
// kept exactly (a |+ block scalar may end with them).
func (cr *chunkReader) keepTrailing() {
	if len(cr.buf) > 0 && !cr.linesLost {
		cr.buf = append(cr.buf, cr.lines...)
	}
}

func isSeparator(line []byte) bool {
	if !bytes.HasPrefix(line, []byte("---")) {
		return false
	}
	return len(bytes.TrimRight(line[3:], " \t\r\n")) == 0
}

var yamlErrorLine = regexp.MustCompile(`^yaml: line (\d+): `)

// parserProblems are the YAML parser's (not the scanner's) messages, whose
// line yaml.v3 reports 0-based: they start at the construct that failed.
var parserProblems = map[string]bool{
	"did not find expected <stream-start>":   true,
	"did not find expected <document start>": true,
	"found undefined tag handle":             true,
	"did not find expected node content":     true,
	"did not find expected '-' indicator":    true,
	"did not find expected key":              true,
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found duplicate %TAG directive":         true,
}

func (d *decoder) yamlChunk(chunk []byte, first int, explicit bool) error {
	// Blank lines that end the chunk are not the object's.
	over := d.overDoc(len(bytes.TrimRight(chunk, " \t\r\n")))
	if len(chunk) >= d.fastMin || over {
		saved := d.doc
		d.doc++
		objs, ok, err := d.fastList(chunk, first)
		if err != nil {
			return err
		}
		if ok {
			for _, o := range objs {
				if err := d.emit(o); err != nil {
					return err
				}
			}
			return nil
		}
		if over {
			// Parsed whole, it would be a node tree many times its size.
			lead := len(chunk) - len(bytes.TrimLeft(chunk, " \r\n"))
			return d.errorAt(first+bytes.Count(chunk[:lead], newline), "", "%s; a larger List is read item by item when its items are block-style YAML, as kubectl prints them",
				documentTooLarge("document", d.maxDoc))
		}
		d.doc = saved
	}
	conv := rawdoc.NewYAMLConverter(0, 4*len(chunk)+100_000)
	conv.Keys = d.keys
	dec := yaml.NewDecoder(bytes.NewReader(chunk))
	n := 0
	for {
		var node yaml.Node
		err := dec.Decode(&node)
		if err == io.EOF {
			break
		}
		if err != nil {
			d.doc++
			return d.yamlSyntaxError(err, chunk, first)
		}
		n++
		d.doc++
		if err := d.yamlDocument(&node, first-1, conv); err != nil {
			return err
		}
	}
	if n == 0 && explicit {
		d.doc++ // an empty document after "---"
	}
	return nil
}

func (d *decoder) yamlSyntaxError(err error, chunk []byte, first int) error {
	msg := err.Error()
	line := first
	if m := yamlErrorLine.FindStringSubmatch(msg); m != nil {
		if n, perr := strconv.Atoi(m[1]); perr == nil && n > 0 {
			line = first + n - 1
		}
		msg = msg[len(m[0]):]
		if parserProblems[msg] {
			line++ // the parser's marks are 0-based where the scanner's are not
		}
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	if m := unknownAnchor.FindStringSubmatch(msg); m != nil {
		if i := bytes.Index(chunk, []byte("*"+m[1])); i >= 0 {
			line = first + bytes.Count(chunk[:i], newline)
		}
	}
	return d.errorAt(line, "", "invalid YAML: %s", msg)
}

var unknownAnchor = regexp.MustCompile(`^unknown anchor '(.*)' referenced$`)

// yamlDocument handles one parsed document; lineOffset turns the node lines
// into lines of the file.
func (d *decoder) yamlDocument(doc *yaml.Node, lineOffset int, conv *rawdoc.YAMLConverter) error {
	root := doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return nil
		}
		root = root.Content[0]
	}
	root = rawdoc.Deref(root)
	if root == nil || root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return nil
	}
	if root.Kind != yaml.MappingNode {
		return d.errorAt(root.Line+lineOffset, "", "expected an object with apiVersion and kind, got %s", d.describeNode(root))
	}
	apiVersion, _ := rawdoc.ScalarValue(root, "apiVersion")
	kind, _ := rawdoc.ScalarValue(root, "kind")
	items := rawdoc.Deref(rawdoc.MappingValue(root, "items"))
	listItems := items != nil && (items.Kind == yaml.SequenceNode || items.Kind == yaml.ScalarNode && items.ShortTag() == "!!null")
	if !isList(apiVersion, kind, listItems) {
		obj, err := d.yamlObject(root, lineOffset, conv, "", "")
		if err != nil {
			return err
		}
		return d.emit(obj)
	}
	if items == nil || items.Kind == yaml.ScalarNode && items.ShortTag() == "!!null" {
		return nil
	}
	if items.Kind != yaml.SequenceNode {
		return d.errorAt(items.Line+lineOffset, objectLabel(kind, "", ""), "items: expected a list of objects, got %s", d.describeNode(items))
	}
	for i, it := range items.Content {
		obj, err := d.yamlItem(it, i, lineOffset, conv, apiVersion, kind)
		if err != nil {
			return err
		}
		if err := d.emit(obj); err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) yamlItem(it *yaml.Node, i, lineOffset int, conv *rawdoc.YAMLConverter, listAPIVersion, listKind string) (*model.Object, error) {
	item := rawdoc.Deref(it)
	if item == nil || item.Kind != yaml.MappingNode {
		return nil, d.errorAt(it.Line+lineOffset, objectLabel(listKind, "", ""), "items[%d]: expected an object, got %s", i, d.describeNode(item))
	}
	return d.yamlObject(item, lineOffset, conv, listAPIVersion, listKind)
}

func (d *decoder) describeNode(n *yaml.Node) string {
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "an object"
	case yaml.ScalarNode:
		c := rawdoc.NewYAMLConverter(0, 10)
		return rawdoc.Describe(c.Scalar(n))
	}
	return "a value"
}

func (d *decoder) yamlObject(n *yaml.Node, lineOffset int, conv *rawdoc.YAMLConverter, listAPIVersion, listKind string) (*model.Object, error) {
	if d.directOn() {
		// Straight from the nodes to the JSON text the typed object is
		// decoded from (see direct); the buffer is reused, as build's.
		text, ok := rawdoc.AppendYAMLJSON(d.jsonBuf[:0], n)
		d.jsonBuf = text[:0]
		if ok {
			c := candidate{
				line:           n.Line + lineOffset,
				loc:            rawdoc.YAMLLocator{Root: n, LineOffset: lineOffset},
				jsonText:       text,
				listAPIVersion: listAPIVersion,
				listKind:       listKind,
			}
			if obj, ok := d.direct(&c); ok {
				return obj, nil
			}
		}
	}
	conv.Reset(lineOffset)
	raw := conv.Value(n)
	c := candidate{
		line:           n.Line + lineOffset,
		loc:            rawdoc.YAMLLocator{Root: n, LineOffset: lineOffset},
		prob:           conv.Prob,
		listAPIVersion: listAPIVersion,
		listKind:       listKind,
	}
	c.raw, _ = raw.(map[string]any)
	if c.prob != nil {
		// The value is incomplete; name the object from the nodes.
		c.ident.apiVersion, _ = rawdoc.ScalarValue(n, "apiVersion")
		c.ident.kind, _ = rawdoc.ScalarValue(n, "kind")
		if md := rawdoc.Deref(rawdoc.MappingValue(n, "metadata")); md != nil && md.Kind == yaml.MappingNode {
			c.ident.namespace, _ = rawdoc.ScalarValue(md, "namespace")
			c.ident.name, _ = rawdoc.ScalarValue(md, "name")
		}
	}
	return d.build(c)
}

var itemsKey = regexp.MustCompile(`^items:[ \t]*(#.*)?$`)

// fastList decodes a large "kind: List" document item by item: it finds the
// top-level "items:" block sequence by its lines, parses the rest of the
// document and then each entry on its own. Anything unusual (anchors shared
// between entries, flow style, markers, a syntax or type error) makes it
// give up, and the document is parsed whole, which gives the same objects or
// the exact error.
func (d *decoder) fastList(chunk []byte, first int) ([]*model.Object, bool, error) {
	type entry struct{ off, line int }
	var (
		itemsOff, itemsEnd = -1, -1
		indent             = -1
		entries            []entry
	)
	for off, ln := 0, first; off < len(chunk); ln++ {
		next := len(chunk)
		if i := bytes.IndexByte(chunk[off:], '\n'); i >= 0 {
			next = off + i + 1
		}
		line := bytes.TrimRight(chunk[off:next], "\r\n")
		if bytes.HasPrefix(line, []byte("---")) || bytes.HasPrefix(line, []byte("...")) || bytes.HasPrefix(line, []byte("%")) {
			return nil, false, nil
		}
		switch {
		case itemsOff < 0:
			if itemsKey.Match(line) {
				itemsOff = off
			}
		case itemsEnd < 0:
			sp := 0
			for sp < len(line) && line[sp] == ' ' {
				sp++
			}
			switch {
			case sp < len(line) && line[sp] == '\t':
				return nil, false, nil
			case sp == len(line) || line[sp] == '#':
				// blank or comment
			case indent < 0:
				if !isEntry(line, sp) {
					return nil, false, nil
				}
				indent = sp
				entries = append(entries, entry{off, ln})
			case sp > indent:
				// the entry goes on
			case sp == indent && isEntry(line, sp):
				entries = append(entries, entry{off, ln})
			case sp == 0:
				itemsEnd = off
			default:
				return nil, false, nil
			}
		}
		off = next
	}
	if len(entries) == 0 {
		return nil, false, nil
	}
	if itemsEnd < 0 {
		itemsEnd = len(chunk)
	}

	// The document without its items.
	rest := make([]byte, 0, itemsOff+len(chunk)-itemsEnd)
	rest = append(append(rest, chunk[:itemsOff]...), chunk[itemsEnd:]...)
	head, ok := parseOne(rest)
	if !ok || len(head.Content) != 1 {
		return nil, false, nil
	}
	root := head.Content[0]
	if root.Kind != yaml.MappingNode || rawdoc.MappingValue(root, "items") != nil {
		return nil, false, nil
	}
	apiVersion, _ := rawdoc.ScalarValue(root, "apiVersion")
	kind, _ := rawdoc.ScalarValue(root, "kind")
	if !isList(apiVersion, kind, true) {
		return nil, false, nil
	}

	// The entries up to the first one over the limit are parsed and
	// decoded on every core (see yamlpipe.go), each by a decoder of its
	// worker's own; then, in input order, the first entry over the limit
	// is the error and the first that does not parse alone gives up.
	ends := make([]int, len(entries))
	todo := len(entries)
	for i, e := range entries {
		ends[i] = itemsEnd
		if i+1 < len(entries) {
			ends[i] = entries[i+1].off
		}
		if todo == len(entries) && d.overDoc(ends[i]-e.off) {
			todo = i
		}
	}
	objs := make([]*model.Object, len(entries))
	oks := make([]bool, len(entries))
	var failed atomic.Bool
	eachOnEveryCore(todo, func() func(i int) {
		wd := &decoder{file: d.file, doc: d.doc, fastMin: d.fastMin, keys: map[string]string{}, maxDoc: d.maxDoc, val: d.val}
		conv := rawdoc.NewYAMLConverter(0, 4*len(chunk)+100_000)
		conv.Keys = wd.keys
		return func(i int) {
			if failed.Load() {
				return // the list is parsed whole
			}
			n, ok := parseOne(chunk[entries[i].off:ends[i]])
			if ok && len(n.Content) == 1 {
				if seq := n.Content[0]; seq.Kind == yaml.SequenceNode && len(seq.Content) == 1 {
					obj, err := wd.yamlItem(seq.Content[0], i, entries[i].line-1, conv, apiVersion, kind)
					objs[i], oks[i] = obj, err == nil
				}
			}
			if !oks[i] {
				failed.Store(true)
			}
		}
	})
	for i := range todo {
		if !oks[i] {
			return nil, false, nil
		}
	}
	if todo < len(entries) {
		return nil, false, d.errorAt(entries[todo].line, objectLabel(kind, "", ""), "items[%d]: %s", todo, documentTooLarge("item", d.maxDoc))
	}
	return objs, true, nil
}

// isEntry reports whether line has a block sequence entry ("- ") at column sp.
func isEntry(line []byte, sp int) bool {
	return sp < len(line) && line[sp] == '-' && (sp+1 == len(line) || line[sp+1] == ' ')
}

// parseOne parses text that must hold exactly one YAML document.
func parseOne(text []byte) (*yaml.Node, bool) {
	dec := yaml.NewDecoder(bytes.NewReader(text))
	var n yaml.Node
	if err := dec.Decode(&n); err != nil {
		return nil, false
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		return nil, false
	}
	return &n, n.Kind == yaml.DocumentNode
}

// isList says whether a document is a list to flatten: kind List, or a
// *List kind the registry does not know whose items are a list.
func isList(apiVersion, kind string, hasItems bool) bool {
	if kind == "List" {
		return true
	}
	if !hasItems || len(kind) <= len("List") || !strings.HasSuffix(kind, "List") {
		return false
	}
	_, known := registry.Lookup(apiVersion, kind)
	return !known
}
