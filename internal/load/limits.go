package load

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
)

// Limits bound what one input may cost: a stream of unbounded size
// (/dev/zero, a pipe that never ends) stops at Input with an error instead
// of filling memory.
type Limits struct {
	// Input is the most bytes read from one file or from stdin
	// (DefaultMaxInputBytes when 0).
	Input int64
	// Document is the most bytes of one object's text: a YAML document (the
	// text between "---" lines, blank lines around it not counted) or a
	// top-level JSON value, or one item of a List, whose own size only Input
	// bounds (DefaultMaxDocumentBytes when 0).
	Document int64
}

// DefaultMaxInputBytes is 512 MiB: a List of a cluster at Kubernetes'
// scale limits (5,000 nodes, 150,000 pods) as the generator writes it is
// 105 MiB of JSON (see BENCHMARKS.md), and real pods carry more fields.
const DefaultMaxInputBytes = 512 << 20

// DefaultMaxDocumentBytes is 64 MiB: kube-apiserver refuses a request body
// over 3 MiB (MaxRequestBodyBytes in k8s.io/apiserver pkg/server/config.go)
// and etcd a request over 1.5 MiB (--max-request-bytes), so no object a
// cluster holds comes near it, while the Cluster kind describing 5,000 hosts
// is 2.4 MB of YAML.
const DefaultMaxDocumentBytes = 64 << 20

// InputFlag and DocumentFlag name the command-line flags that set the
// limits, for the messages that tell how to raise them.
const (
	InputFlag    = "--max-input-bytes"
	DocumentFlag = "--max-document-bytes"
)

func (l Limits) withDefaults() Limits {
	if l.Input <= 0 {
		l.Input = DefaultMaxInputBytes
	}
	if l.Document <= 0 {
		l.Document = DefaultMaxDocumentBytes
	}
	return l
}

// tooLargeError is a stream longer than Limits.Input.
type tooLargeError struct{ max int64 }

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("input larger than %s (%s)", FormatBytes(e.max), InputFlag)
}

// limitReader reads at most max bytes of r and then fails with
// *tooLargeError if r has more (io.LimitReader would end silently, and a
// truncated manifest can still parse).
type limitReader struct {
	r    io.Reader
	left int64
	max  int64
}

func newLimitReader(r io.Reader, max int64) *limitReader {
	return &limitReader{r: r, left: max, max: max}
}

func (l *limitReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if l.left <= 0 {
		// At the limit: one more byte means the stream is too long.
		var one [1]byte
		for {
			n, err := l.r.Read(one[:])
			if n > 0 {
				return 0, &tooLargeError{max: l.max}
			}
			if err != nil {
				return 0, err
			}
		}
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// documentTooLarge is the message for an object's text over the limit.
func documentTooLarge(what string, max int64) string {
	return fmt.Sprintf("%s larger than %s (%s)", what, FormatBytes(max), DocumentFlag)
}

// FormatBytes writes a size the way the flags take it: "512 MiB", "3 KiB",
// "1000 bytes".
func FormatBytes(n int64) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + " " + u.name
		}
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// notRegular refuses what is neither a regular file nor a directory: a
// named pipe or a device would block or never end, and a socket cannot be
// opened.
func notRegular(file string, mode fs.FileMode, inDir bool) *Error {
	msg := "not a regular file but " + fileType(mode)
	if inDir {
		msg += "; a directory is read for its regular files only"
	} else {
		msg += "; -f takes a regular file, a directory or - for stdin"
	}
	return &Error{File: file, Msg: msg}
}

func fileType(mode fs.FileMode) string {
	switch {
	case mode&fs.ModeDir != 0:
		return "a directory"
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeCharDevice != 0:
		return "a character device"
	case mode&fs.ModeDevice != 0:
		return "a block device"
	case mode&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "an irregular file"
}

// isTooLarge reports whether err is a stream over Limits.Input.
func isTooLarge(err error) (*tooLargeError, bool) {
	var tl *tooLargeError
	return tl, errors.As(err, &tl)
}
