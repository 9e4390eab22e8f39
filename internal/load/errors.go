package load

import (
	"errors"
	"io/fs"
	"strconv"
	"strings"
	"unicode"
)

// Error is bad input: a file that cannot be read, a document that does not
// parse, or a value that cannot be what its field says. Its message is one
// line that names the file, the line and the document:
//
//	FILE:LINE (document N): OBJECT: WHAT
//
// OBJECT ("Pod demo/x") is left out when the object is not known yet, LINE
// and the document when the error is about the whole file.
type Error struct {
	File string
	// Doc is the 1-based document (0 when the error is about the file).
	Doc int
	// Line is the 1-based line (0 when unknown).
	Line int
	// Object names the object as "Kind namespace/name" or "Kind name".
	Object string
	Msg    string
	// Err is the underlying error, such as the *fs.PathError of a file that
	// cannot be read; nil for errors found in the input itself.
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File == "" {
		b.WriteString("<input>")
	}
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Line))
	}
	if e.Doc > 0 {
		b.WriteString(" (document ")
		b.WriteString(strconv.Itoa(e.Doc))
		b.WriteByte(')')
	}
	b.WriteString(": ")
	if e.Object != "" {
		b.WriteString(e.Object)
		b.WriteString(": ")
	}
	b.WriteString(oneLine(e.Msg))
	return b.String()
}

// Unwrap returns the underlying error, if any.
func (e *Error) Unwrap() error { return e.Err }

// IsBadInput reports whether err (or an error it wraps) is an *Error: input
// that cannot be loaded, as opposed to a failure of the tool itself.
func IsBadInput(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// readError is the Error for a file that cannot be opened or read.
func readError(file string, err error) *Error {
	if tl, ok := isTooLarge(err); ok {
		return &Error{File: file, Msg: tl.Error(), Err: err}
	}
	msg := err.Error()
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Err != nil {
		msg = pe.Err.Error() // the path is already in front
	}
	return &Error{File: file, Msg: "cannot read: " + msg, Err: err}
}

// oneLine keeps a message on one line.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// printable quotes s when it holds characters that would break a one-line
// message.
func printable(s string) string {
	for _, r := range s {
		if !unicode.IsGraphic(r) || r == '"' {
			return strconv.Quote(s)
		}
	}
	return s
}

// objectLabel names an object for messages: "Pod demo/x", "Cluster lab".
func objectLabel(kind, namespace, name string) string {
	if kind == "" {
		kind = "object"
	}
	switch {
	case name == "":
		return printable(kind)
	case namespace == "":
		return printable(kind) + " " + printable(name)
	}
	return printable(kind) + " " + printable(namespace) + "/" + printable(name)
}
