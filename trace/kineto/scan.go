package kineto

// A small walker over JSON text that the json.Decoder has already checked
// (so it needs no error handling): the members of an object, the extent of a
// value. It lets an event be picked apart without encoding/json's reflection
// and per-value allocations, and gives each value's exact offset.

// members iterates over the members of the JSON object b (checked JSON).
type members struct {
	b []byte
	i int
}

// newMembers starts an iteration over the object b, which begins with '{'
// (after optional space).
func newMembers(b []byte) members { return members{b: b, i: skipSpace(b, 0) + 1} }

// next returns the next member's key (with its quotes), its value and the
// value's offset in b; ok is false after the last member.
func (m *members) next() (key, val []byte, off int, ok bool) {
	b := m.b
	i := skipSpace(b, m.i)
	if i < len(b) && b[i] == ',' {
		i = skipSpace(b, i+1)
	}
	if i >= len(b) || b[i] != '"' {
		return nil, nil, 0, false // '}'
	}
	k := valueEnd(b, i)
	key = b[i:k]
	i = skipSpace(b, k)
	i = skipSpace(b, i+1) // past ':'
	j := valueEnd(b, i)
	m.i = j
	return key, b[i:j], i, true
}

// valueEnd returns the index just past the value that starts at b[i].
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return len(b)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				j = valueEnd(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	}
	j := i
	for j < len(b) && !isDelim(b[j]) {
		j++
	}
	return j
}

// isDelim reports whether c ends a number or a literal.
func isDelim(c byte) bool {
	return c == ',' || c == '}' || c == ']' || c == ':' || isSpace(c)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// skipSpace returns the index of the first non-space byte of b from i.
func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}
