// Package rawdoc is the text layer under the loader: YAML documents
// converted to generic values (maps, slices, strings, numbers) with the line
// of every field kept, JSON scanned in place without decoding, generic
// values encoded back to JSON, and field paths (spec.ports[0].port) found in
// either text so that a bad field is reported at its line.
package rawdoc
