package powershell

import (
	"fmt"
	"strconv"
	"strings"
)

// convertToJSON is Windows PowerShell 5.1's ConvertTo-Json: the value is
// serialized compactly as JavaScriptSerializer writes it (objects deeper
// than depth become their string form), then, unless compress, re-indented
// by 5.1's own pretty-printer, whose nesting is 4 spaces past where the
// enclosing value starts (so a nested value lines up under its key) and
// whose empty arrays and objects span two lines.
func convertToJSON(v any, depth int, compress bool) string {
	var sb strings.Builder
	writeJSON(&sb, v, 0, depth)
	if compress {
		return sb.String()
	}
	return prettyJSON(sb.String())
}

func writeJSON(sb *strings.Builder, v any, level, depth int) {
	if level > depth {
		switch v.(type) {
		case *psObj, []any:
			writeJSONString(sb, scalarStr(v))
			return
		}
	}
	switch x := v.(type) {
	case nil:
		sb.WriteString("null")
	case string:
		writeJSONString(sb, x)
	case psEnum:
		// Enums serialize as their numeric value in 5.1; the twin's enums
		// have no numbers, so they keep their names.
		writeJSONString(sb, string(x))
	case bool:
		sb.WriteString(strconv.FormatBool(x))
	case int:
		sb.WriteString(strconv.Itoa(x))
	case float64:
		sb.WriteString(strconv.FormatFloat(x, 'f', -1, 64))
	case []any:
		sb.WriteString("[")
		for i, e := range x {
			if i > 0 {
				sb.WriteString(",")
			}
			writeJSON(sb, e, level+1, depth)
		}
		sb.WriteString("]")
	case *psObj:
		sb.WriteString("{")
		for i, p := range x.props {
			if i > 0 {
				sb.WriteString(",")
			}
			writeJSONString(sb, p.name)
			sb.WriteString(":")
			writeJSON(sb, p.val, level+1, depth)
		}
		sb.WriteString("}")
	default:
		writeJSONString(sb, fmt.Sprint(v))
	}
}

// writeJSONString escapes as JavaScriptSerializer does: quote, backslash,
// the usual control escapes, other control characters and < > & ' as \uXXXX.
func writeJSONString(sb *strings.Builder, s string) {
	sb.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			sb.WriteString(`\"`)
		case '\\':
			sb.WriteString(`\\`)
		case '\b':
			sb.WriteString(`\b`)
		case '\f':
			sb.WriteString(`\f`)
		case '\n':
			sb.WriteString(`\n`)
		case '\r':
			sb.WriteString(`\r`)
		case '\t':
			sb.WriteString(`\t`)
		case '<', '>', '&', '\'':
			fmt.Fprintf(sb, `\u%04x`, r)
		default:
			if r < 0x20 {
				fmt.Fprintf(sb, `\u%04x`, r)
			} else {
				sb.WriteRune(r)
			}
		}
	}
	sb.WriteByte('"')
}

// prettyJSON re-indents compact JSON the way ConvertTo-Json in Windows
// PowerShell 5.1 does (ConvertToJsonCommand's ConvertDictionary and
// ConvertList): a dictionary's members go 4 spaces past its pad; a value
// that is itself a container is padded by the length of its key, the
// colon and two spaces, so its contents sit 4 spaces past the key's value
// column; a list's items go 4 spaces past the list's pad.
func prettyJSON(js string) string {
	var sb strings.Builder
	switch {
	case strings.HasPrefix(js, "{"):
		sb.WriteString("{")
		prettyDict(js, 1, &sb, "", 0)
	case strings.HasPrefix(js, "["):
		sb.WriteString("[")
		prettyList(js, 1, &sb, "", 0)
	default:
		return js
	}
	return sb.String()
}

func prettyDict(js string, i int, sb *strings.Builder, pad string, spaces int) int {
	sb.WriteString("\n")
	inner := pad + strings.Repeat(" ", spaces) + "    "
	head := true  // at the start of a member
	inKey := true // before the member's colon
	keyLen := 0   // the member's key, quotes included, plus ":  "
	for ; i < len(js); i++ {
		switch c := js[i]; c {
		case '{':
			sb.WriteByte(c)
			i = prettyDict(js, i+1, sb, inner, keyLen)
			head = false
		case '[':
			sb.WriteByte(c)
			i = prettyList(js, i+1, sb, inner, keyLen)
			head = false
		case '}', ']':
			sb.WriteString("\n" + pad + strings.Repeat(" ", spaces))
			sb.WriteByte(c)
			return i
		case '"':
			if head {
				sb.WriteString(inner)
			}
			end := copyString(js, i, sb)
			if inKey {
				keyLen = end - i + 1 + 3
			}
			i = end
			head = false
		case ':':
			sb.WriteString(":  ")
			inKey = false
		case ',':
			sb.WriteString(",\n")
			head, inKey, keyLen = true, true, 0
		default:
			if head {
				sb.WriteString(inner)
			}
			sb.WriteByte(c)
			head = false
		}
	}
	return len(js) - 1
}

func prettyList(js string, i int, sb *strings.Builder, pad string, spaces int) int {
	sb.WriteString("\n")
	inner := pad + strings.Repeat(" ", spaces) + "    "
	head := true
	for ; i < len(js); i++ {
		switch c := js[i]; c {
		case '{':
			sb.WriteString(inner)
			sb.WriteByte(c)
			i = prettyDict(js, i+1, sb, inner, 0)
			head = false
		case '[':
			sb.WriteString(inner)
			sb.WriteByte(c)
			i = prettyList(js, i+1, sb, inner, 0)
			head = false
		case ']', '}':
			sb.WriteString("\n" + pad + strings.Repeat(" ", spaces))
			sb.WriteByte(c)
			return i
		case '"':
			if head {
				sb.WriteString(inner)
			}
			i = copyString(js, i, sb)
			head = false
		case ',':
			sb.WriteString(",\n")
			head = true
		default:
			if head {
				sb.WriteString(inner)
			}
			sb.WriteByte(c)
			head = false
		}
	}
	return len(js) - 1
}

// copyString copies the JSON string starting at js[i] (the opening quote)
// and returns the index of its closing quote.
func copyString(js string, i int, sb *strings.Builder) int {
	sb.WriteByte('"')
	for j := i + 1; j < len(js); j++ {
		sb.WriteByte(js[j])
		switch js[j] {
		case '\\':
			j++
			if j < len(js) {
				sb.WriteByte(js[j])
			}
		case '"':
			return j
		}
	}
	return len(js) - 1
}
