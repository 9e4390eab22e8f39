// Package load reads a cluster's manifests into a model.Snapshot: YAML and
// JSON files, directories, stdin and the built-in lab, with Lists flattened,
// every object decoded into its typed kind, and bad input reported as an
// *Error that names the file, the line, the document and the field.
package load

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-hybrid/kubectl-hybrid/examples/lab"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/apis/calico"
	"github.com/kubectl-hybrid/kubectl-hybrid/internal/model"
)

// Options say what to load.
type Options struct {
	// Filenames are the -f arguments in order: a regular file, a directory
	// (read recursively, in lexical order, taking *.yaml, *.yml and *.json,
	// which must be regular files or links to them) or "-" for Stdin. A named
	// pipe, socket or device is refused: it may block or never end.
	Filenames []string
	// Lab loads the built-in lab first; Filenames then add to or replace its
	// objects.
	Lab bool
	// Base is a snapshot read before (a live cluster, or files read once
	// for several layerings): its objects come first, as the lab's would,
	// and Filenames add to, replace, delete or act on them. Its objects
	// are shared, never changed: an action changes a copy. Its warnings,
	// node network and unread kinds carry over. Not with Lab.
	Base *model.Snapshot
	// Stdin is read for "-" (os.Stdin when nil).
	Stdin io.Reader
	// DropRaw leaves Object.Raw nil for the kinds the twin models, which
	// it reads from Typed alone: the generic map costs as much memory as
	// the typed object again (about 1 GB for 150,000 pods). Kinds not
	// modeled, and KubeletConfiguration documents (kubeadm applies a patch
	// file as written, see engine.patchDocument), keep theirs. For commands
	// that only build the twin; dump and other re-emitters need Raw.
	// Without Raw, an ordinary object is also decoded straight from its
	// text into its type, with no generic value made at all (direct.go).
	DropRaw bool
	// Limits bound each file, stdin and each object's text.
	Limits Limits
	// Validation is what becomes of objects the API server would refuse
	// and of unknown fields (ValidateWarn by default).
	Validation Validation
}

// StdinName is the Origin.File of objects read from stdin.
const StdinName = "<stdin>"

// LabPrefix starts the Origin.File of lab objects ("lab:00-cluster.yaml").
const LabPrefix = "lab:"

// source is where an object came from: the lab, or one -f argument (a
// file, a directory or stdin). An object replaces one with the same Key only
// when it comes from a later source, so that what-if files layer on the lab
// and on each other; the same Key twice within one source is an error.
type source int

const fromLab source = 0

type builder struct {
	snap    model.Snapshot
	index   map[model.Key]int
	source  []source
	dropRaw bool
	// deleted: a what-if deletion left a nil place in snap.Objects.
	deleted bool
}

func (b *builder) add(src source) func(*model.Object) error {
	return func(o *model.Object) error {
		if b.dropRaw && o.Typed != nil && o.Key.Kind != "KubeletConfiguration" {
			o.Raw = nil
			// The API server's record of which manager set which field: no
			// rule or derivation reads it and no output shows it (get
			// leaves it out, as kubectl does), and in a dump of a live
			// cluster it is often a third of an object's size.
			if m, ok := o.Typed.(metav1.Object); ok && m.GetManagedFields() != nil {
				m.SetManagedFields(nil)
			}
		}
		if ann, ok := markerOf(o); ok {
			return b.marker(o, src, ann)
		}
		if i, ok := b.index[o.Key]; ok {
			prev := b.snap.Objects[i]
			if b.source[i] == src && prev.GVK.Group != o.GVK.Group {
				// Calico's API server serves the objects of its
				// crd.projectcalico.org/v1 CRDs as projectcalico.org/v3, so
				// a dump may hold one object under both groups: it is one
				// object, read as projectcalico.org/v3.
				b.sameObject(i, prev, o)
				return nil
			}
			if b.source[i] == src {
				return &Error{
					File: o.Origin.File, Doc: o.Origin.Doc, Line: o.Origin.Line,
					Object: keyLabel(o.Key),
					Msg:    "duplicate object: also defined at " + prev.Origin.String(),
				}
			}
			b.snap.Objects[i] = o
			b.source[i] = src
			return nil
		}
		b.index[o.Key] = len(b.snap.Objects)
		b.snap.Objects = append(b.snap.Objects, o)
		b.source = append(b.source, src)
		return nil
	}
}

// sameObject keeps one of two spellings of a Calico object, the
// projectcalico.org/v3 one, and warns when the two disagree on what they
// say (their spec), which one stored object cannot do.
func (b *builder) sameObject(i int, prev, o *model.Object) {
	keep, other := prev, o
	if prev.GVK.Group == calico.CRDGroup {
		keep, other = o, prev
	}
	if !reflect.DeepEqual(specOf(keep), specOf(other)) {
		b.snap.Warnings = append(b.snap.Warnings, fmt.Sprintf(
			"%s: %s is also given as %s at %s with a different spec; one stored object cannot differ from itself, so the %s one is read",
			keep.Origin, keyLabel(keep.Key), printable(other.GVK.GroupVersion().String()), other.Origin, printable(keep.GVK.GroupVersion().String())))
	}
	b.snap.Objects[i] = keep
}

// specOf is an object's spec as generic values, from its typed form when
// there is one (Raw may be dropped).
func specOf(o *model.Object) any {
	if o.Typed == nil {
		return o.Raw["spec"]
	}
	js, err := json.Marshal(o.Typed)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(js, &m) != nil {
		return nil
	}
	return m["spec"]
}

func keyLabel(k model.Key) string { return objectLabel(k.Kind, k.Namespace, k.Name) }

// Load reads the lab (when asked) and then every -f argument in order.
// Objects keep input order; an object with the Key of one from an earlier
// source (the lab, or an earlier -f argument) takes that object's place. Two
// objects with one Key within one source are an error. Errors are *Error
// (see IsBadInput).
func Load(opts Options) (*model.Snapshot, error) {
	return loadWith(opts, lab.FS)
}

func loadWith(opts Options, labFS fs.FS) (*model.Snapshot, error) {
	b := &builder{index: map[model.Key]int{}, dropRaw: opts.DropRaw}
	lim := opts.Limits.withDefaults()
	val := newValidator(opts.Validation)
	val.dropRaw = opts.DropRaw
	if opts.Base != nil {
		if opts.Lab {
			return nil, errors.New("load: a base snapshot and the lab cannot be combined")
		}
		// Added as they are: a base is resolved already, and shared.
		for _, o := range opts.Base.Objects {
			b.index[o.Key] = len(b.snap.Objects)
			b.snap.Objects = append(b.snap.Objects, o)
			b.source = append(b.source, fromLab)
		}
		b.snap.Warnings = append(b.snap.Warnings, opts.Base.Warnings...)
		b.snap.Network, b.snap.Unread = opts.Base.Network, opts.Base.Unread
		b.snap.Actions = append(b.snap.Actions, opts.Base.Actions...)
	}
	if opts.Lab {
		if err := loadFS(labFS, LabPrefix, lim, b.add(fromLab), val); err != nil {
			return nil, err
		}
	}
	for i, name := range opts.Filenames {
		add := b.add(source(i + 1))
		if name == "-" {
			r := opts.Stdin
			if r == nil {
				r = os.Stdin
			}
			if err := decodeWith(r, StdinName, lim, add, fastListMin, val); err != nil {
				return nil, err
			}
			continue
		}
		if err := loadPath(name, lim, add, val); err != nil {
			return nil, err
		}
	}
	b.compact()
	if err := checkHostStates(&b.snap); err != nil {
		return nil, err
	}
	for _, o := range b.snap.Objects {
		if o.Typed == nil {
			b.snap.Warnings = append(b.snap.Warnings, fmt.Sprintf("%s: kind %s (%s) is not modeled; kept as-is",
				o.Origin, printable(o.GVK.Kind), printable(o.GVK.GroupVersion().String())))
		}
	}
	if err := val.finish(&b.snap); err != nil {
		return nil, err
	}
	return &b.snap, nil
}

// isManifest reports whether a file found in a directory is read.
func isManifest(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// loadFS reads the manifests at the root of fsys in lexical order.
func loadFS(fsys fs.FS, prefix string, lim Limits, add func(*model.Object) error, val *validator) error {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return readError(prefix, err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	for _, e := range entries {
		if e.IsDir() || !isManifest(e.Name()) {
			continue
		}
		if err := decodeFile(func() (io.ReadCloser, error) { return fsys.Open(e.Name()) }, prefix+e.Name(), lim, add, val); err != nil {
			return err
		}
	}
	return nil
}

// loadPath reads a regular file, or a directory recursively.
func loadPath(name string, lim Limits, add func(*model.Object) error, val *validator) error {
	fi, err := os.Stat(name)
	if err != nil {
		return readError(name, err)
	}
	if !fi.IsDir() {
		if !fi.Mode().IsRegular() {
			return notRegular(name, fi.Mode(), false)
		}
		return decodeFile(openRegular(name, false), name, lim, add, val)
	}
	root := name
	if lfi, err := os.Lstat(name); err == nil && lfi.Mode()&fs.ModeSymlink != 0 {
		root = name + string(filepath.Separator) // walk the directory a link points to
	}
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return readError(path, err)
		}
		if d.IsDir() || !isManifest(path) {
			return nil
		}
		if !d.Type().IsRegular() {
			// A link is read when it leads to a regular file. Anything else
			// named like a manifest is refused rather than skipped: the
			// answer would silently lack what the user meant it to hold.
			fi, err := os.Stat(path)
			if err != nil {
				return readError(path, err)
			}
			if !fi.Mode().IsRegular() {
				return notRegular(path, fi.Mode(), true)
			}
		}
		return decodeFile(openRegular(path, true), path, lim, add, val)
	})
}

// openRegular opens a file found to be regular, and checks again on the
// open file: it may have been replaced since.
func openRegular(name string, inDir bool) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() {
			f.Close()
			return nil, notRegular(name, fi.Mode(), inDir)
		}
		return f, nil
	}
}

func decodeFile(open func() (io.ReadCloser, error), name string, lim Limits, add func(*model.Object) error, val *validator) error {
	f, err := open()
	if err != nil {
		var le *Error
		if errors.As(err, &le) {
			return le
		}
		return readError(name, err)
	}
	defer f.Close()
	return decodeWith(f, name, lim, add, fastListMin, val)
}
