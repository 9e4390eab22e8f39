package console

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// SplitCommand splits a command line the way a POSIX shell splits words:
// blanks separate words; '…' keeps everything literally; "…" keeps blanks
// and removes the quotes, a backslash escaping only \ " $ and ` inside;
// outside quotes a backslash escapes the next character. kubectl passes
// each word separately, but a user who quotes a whole command hands the
// twin one string.
func SplitCommand(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated quoted string: %s", s[i:])
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\\\"$`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("unterminated quoted string: %s", s)
			}
			inWord = true
		case c == '\\' && i+1 < len(s):
			i++
			if s[i] != '\n' {
				cur.WriteByte(s[i])
			}
			inWord = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// splitTop cuts a script at separators outside quotes: the separator
// strings are tried in order at every position.
func splitTop(s string, seps ...string) []string {
	var out []string
	start := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if quote != 0 {
			if c == '\\' && quote == '"' && i+1 < len(s) {
				i++
				continue
			}
			if c == quote {
				quote = 0
			}
			continue
		}
		if c == '\'' || c == '"' {
			quote = c
			continue
		}
		if c == '\\' && i+1 < len(s) {
			i++
			continue
		}
		for _, sep := range seps {
			if strings.HasPrefix(s[i:], sep) {
				// "||" is not a pipe.
				if sep == "|" && (strings.HasPrefix(s[i:], "||") || i > 0 && s[i-1] == '|') {
					continue
				}
				out = append(out, s[start:i])
				start = i + len(sep)
				i += len(sep) - 1
				break
			}
		}
	}
	return append(out, s[start:])
}

// filter runs one of the text filters a pipeline may end with: tail, head,
// grep. ok is false for a command that is no filter.
func filter(argv []string, in string) (out string, code int, ok bool) {
	lines := strings.SplitAfter(in, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	count := func(args []string, def int) int {
		n := def
		for i := 0; i < len(args); i++ {
			a := args[i]
			switch {
			case a == "-n" && i+1 < len(args):
				n, _ = strconv.Atoi(strings.TrimPrefix(args[i+1], "-"))
				i++
			case strings.HasPrefix(a, "-n"):
				n, _ = strconv.Atoi(a[2:])
			case strings.HasPrefix(a, "-"):
				if v, err := strconv.Atoi(a[1:]); err == nil {
					n = v
				}
			}
		}
		return n
	}
	switch argv[0] {
	case "tail":
		n := count(argv[1:], 10)
		if n < len(lines) {
			lines = lines[len(lines)-n:]
		}
		return strings.Join(lines, ""), 0, true
	case "head":
		n := count(argv[1:], 10)
		if n < len(lines) {
			lines = lines[:n]
		}
		return strings.Join(lines, ""), 0, true
	case "grep":
		only, invert, icase := false, false, false
		var pattern string
		for _, a := range argv[1:] {
			if strings.HasPrefix(a, "-") && len(a) > 1 && pattern == "" {
				for _, f := range a[1:] {
					switch f {
					case 'o':
						only = true
					case 'v':
						invert = true
					case 'i':
						icase = true
					}
				}
				continue
			}
			if pattern == "" {
				pattern = a
			}
		}
		if icase {
			pattern = "(?i)" + pattern
		}
		re, err := regexp.Compile(pattern)
		if err != nil {
			return "", 2, true
		}
		var b strings.Builder
		matched := false
		for _, l := range lines {
			body := strings.TrimSuffix(l, "\n")
			m := re.MatchString(body)
			if m == invert {
				continue
			}
			matched = true
			if only && !invert {
				for _, s := range re.FindAllString(body, -1) {
					b.WriteString(s + "\n")
				}
				continue
			}
			b.WriteString(body + "\n")
		}
		if !matched {
			return "", 1, true
		}
		return b.String(), 0, true
	}
	return "", 0, false
}

// Filter runs a pipeline's text filter (tail, head, grep) on in, as a
// command's output piped into it would be; ok is false for a command that
// is no filter.
func Filter(argv []string, in string) (out string, code int, ok bool) { return filter(argv, in) }
