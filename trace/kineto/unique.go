package kineto

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// One rule for duplicate keys (issue 30): no object anywhere in a trace,
// the top-level one, distributedInfo, deviceProperties' entries, an event,
// its args or any value nested in them, may have a key twice. JSON leaves
// the meaning of a repeated key open and encoding/json lets the last one
// win, so a second baseTimeNanoseconds or rank silently moved a trace in
// time or onto another node; Kineto's own writer never repeats a key.
// Keys are compared as the strings they decode to ("ph" and "\u0070h" are
// one key). The check is linear in the input: each object's keys are kept
// in a short list, a map past smallKeys of them.

// smallKeys is how many keys of one object are compared one by one before
// they go into a map.
const smallKeys = 8

// keyAt is a key of an object, as it compares, and the offset of its text.
type keyAt struct {
	key []byte
	off int
}

// keySet is the keys of one object read so far.
type keySet struct {
	small []keyAt
	big   map[string]int
}

// reset empties s, keeping its list's memory.
func (s *keySet) reset() {
	s.small = s.small[:0]
	s.big = nil
}

// add adds key, whose text starts at off; for a key already there it
// returns the offset of the first one and true instead.
func (s *keySet) add(key []byte, off int) (first int, dup bool) {
	if s.big != nil {
		if f, ok := s.big[string(key)]; ok {
			return f, true
		}
		s.big[string(key)] = off
		return 0, false
	}
	for _, k := range s.small {
		if bytes.Equal(k.key, key) {
			return k.off, true
		}
	}
	if len(s.small) < smallKeys {
		s.small = append(s.small, keyAt{key, off})
		return 0, false
	}
	s.big = make(map[string]int, 4*smallKeys)
	for _, k := range s.small {
		s.big[string(k.key)] = k.off
	}
	s.big[string(key)] = off
	return 0, false
}

// keyValue is what a JSON key (with its quotes, checked JSON) compares as:
// its text between the quotes when that has no escape and is valid UTF-8,
// else the string it decodes to.
func keyValue(raw []byte) []byte {
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		return body
	}
	return []byte(unquote(raw))
}

// frame is one open array or object of the value a uniqueness check walks.
type frame struct {
	object bool
	index  int    // for an array: the index of the element being read
	key    []byte // for an object: the key of the member being read, with its quotes
	keys   keySet // for an object: its keys so far
}

// uniqueness checks values for repeated keys; its stack is kept from one
// value to the next, so that checking an event allocates nothing.
type uniqueness struct {
	stack []frame
}

// dupKey is a key that an object has twice.
type dupKey struct {
	at, first int    // the offsets of the second and the first key's text in the value
	where     string // the key's place in the value, e.g. ".args.x" or "[2].name"
}

// check walks raw, one checked JSON value, and returns the first key (in
// the text's order) that its object already has.
func (u *uniqueness) check(raw []byte) (dupKey, bool) {
	u.stack = u.stack[:0]
	expectKey := false
	for i := 0; i < len(raw); {
		switch raw[i] {
		case '{', '[':
			u.push(raw[i] == '{')
			expectKey = raw[i] == '{'
		case '}', ']':
			u.stack = u.stack[:len(u.stack)-1]
			expectKey = false
		case ',':
			if top := &u.stack[len(u.stack)-1]; top.object {
				expectKey = true
			} else {
				top.index++
			}
		case '"':
			j := valueEnd(raw, i)
			if expectKey {
				top := &u.stack[len(u.stack)-1]
				top.key = raw[i:j]
				if first, dup := top.keys.add(keyValue(top.key), i); dup {
					return dupKey{at: i, first: first, where: u.where()}, true
				}
				expectKey = false
			}
			i = j
			continue
		}
		i++
	}
	return dupKey{}, false
}

// push opens an object or an array, reusing the stack's memory.
func (u *uniqueness) push(object bool) {
	if n := len(u.stack); n < cap(u.stack) {
		u.stack = u.stack[:n+1]
	} else {
		u.stack = append(u.stack, frame{})
	}
	f := &u.stack[len(u.stack)-1]
	f.object, f.index, f.key = object, 0, nil
	f.keys.reset()
}

// where names the member being read in the innermost object, from the
// value walked: ".args.x", "[2].name".
func (u *uniqueness) where() string {
	var s []byte
	for _, f := range u.stack {
		if f.object {
			s = append(s, '.')
			s = append(s, unquote(f.key)...)
		} else {
			s = append(s, '[')
			s = strconv.AppendInt(s, int64(f.index), 10)
			s = append(s, ']')
		}
	}
	return string(s)
}
