package xspace

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// locate walks b as the wire encoding of a message md, with the rules of
// proto.Unmarshal, and returns where it first fails to parse, or nil if it
// parses.
func locate(b []byte, md protoreflect.MessageDescriptor) *CorruptError {
	return walk(b, 0, md, "", 0)
}

// walk checks b, which starts at byte base of the input and holds a message
// md found at path. It descends into message fields (map entries included),
// checks that proto3 strings are UTF-8 and that packed lists parse, and
// skips everything else with protowire.ConsumeFieldValue. A field whose
// wire type is not its declared one is an unknown field to proto.Unmarshal,
// and is only skipped here too.
func walk(b []byte, base int, md protoreflect.MessageDescriptor, path string, depth int) *CorruptError {
	if depth > MaxNesting {
		return &CorruptError{Offset: int64(base), Field: path,
			Reason: fmt.Sprintf("messages nested deeper than %d levels (xspace.MaxNesting)", MaxNesting)}
	}
	at := func(pos int, reason string) *CorruptError {
		return &CorruptError{Offset: int64(base + pos), Field: path, Reason: reason}
	}
	fail := func(pos, code int) *CorruptError {
		if isTruncated(code) {
			pos = len(b) // the data breaks where it ends
		}
		return at(pos, reason(code))
	}
	seen := map[protowire.Number]int{}
	for pos := 0; pos < len(b); {
		tag := pos
		num, typ, n := protowire.ConsumeTag(b[pos:])
		if n < 0 {
			return fail(tag, n)
		}
		if num > protowire.MaxValidNumber {
			return at(tag, "invalid field number")
		}
		pos += n
		fd := md.Fields().ByNumber(num)
		if !delimited(fd, typ) {
			if n = protowire.ConsumeFieldValue(num, typ, b[pos:]); n < 0 {
				if typ != protowire.StartGroupType {
					return fail(tag, n)
				}
				if at, deep := groupTooDeep(b[pos:]); deep {
					return &CorruptError{Offset: int64(base + pos + at), Field: path,
						Reason: fmt.Sprintf("field %d: groups nested deeper than %d levels (xspace.MaxNesting)", num, MaxNesting)}
				}
				return fail(tag, n)
			}
			pos += n
			continue
		}
		size, n := protowire.ConsumeVarint(b[pos:])
		if n < 0 {
			return fail(pos, n)
		}
		start := pos + n
		name := fieldPath(path, fd, seen)
		kind := fd.Kind()
		if size > uint64(len(b)-start) {
			// Truncated: find the deepest message that breaks.
			if kind == protoreflect.MessageKind {
				if ce := walk(b[start:], base+start, fd.Message(), name, depth+1); ce != nil {
					return ce
				}
			}
			return &CorruptError{Offset: int64(base + len(b)), Field: name,
				Reason: fmt.Sprintf("truncated: %d bytes declared, %d present", size, len(b)-start)}
		}
		val := b[start : start+int(size)]
		switch {
		case kind == protoreflect.MessageKind:
			if ce := walk(val, base+start, fd.Message(), name, depth+1); ce != nil {
				return ce
			}
		case kind == protoreflect.StringKind:
			if i := invalidUTF8(val); i >= 0 && fd.Syntax() == protoreflect.Proto3 {
				return &CorruptError{Offset: int64(base + start + i), Field: name, Reason: "not valid UTF-8"}
			}
		default: // a packed list of scalars
			for p := 0; p < len(val); {
				m := protowire.ConsumeFieldValue(num, wireType(kind), val[p:])
				if m < 0 {
					return &CorruptError{Offset: int64(base + start + p), Field: name, Reason: reason(m)}
				}
				p += m
			}
		}
		pos = start + int(size)
	}
	return nil
}

// MaxNesting is the deepest nesting of messages, and of groups inside a
// field, that a trace may have: proto.Unmarshal's limit
// (protowire.DefaultRecursionLimit, 10,000). The trace schemas nest a few
// levels; only unknown fields of the group wire type, which no schema
// describes, can nest deeper, and a group inside more than MaxNesting
// others is refused by proto.Unmarshal, and so by the walk, which names
// where it starts.
const MaxNesting = protowire.DefaultRecursionLimit

// groupTooDeep looks inside a group field whose start tag ends just
// before b, in the order protowire.ConsumeFieldValue reads it, for a group
// inside more than MaxNesting others. It returns that group's start tag's
// offset in b, or false when the group first fails (or parses) for
// another reason. It iterates: the nesting costs no stack.
func groupTooDeep(b []byte) (int, bool) {
	var open []protowire.Number // the groups inside the outermost, open at pos
	for pos := 0; pos < len(b); {
		num, typ, n := protowire.ConsumeTag(b[pos:])
		if n < 0 {
			return 0, false
		}
		switch typ {
		case protowire.StartGroupType:
			if len(open) >= MaxNesting {
				return pos, true
			}
			open = append(open, num)
			pos += n
		case protowire.EndGroupType:
			if len(open) == 0 || open[len(open)-1] != num {
				return 0, false // the outermost group ends, or a mismatched end
			}
			open = open[:len(open)-1]
			pos += n
		default:
			m := protowire.ConsumeFieldValue(num, typ, b[pos+n:])
			if m < 0 {
				return 0, false
			}
			pos += n + m
		}
	}
	return 0, false
}

// delimited reports whether a field fd (nil if unknown) of wire type typ is
// one that walk looks inside: a message, a string or a packed list.
func delimited(fd protoreflect.FieldDescriptor, typ protowire.Type) bool {
	if fd == nil || typ != protowire.BytesType {
		return false
	}
	switch k := fd.Kind(); {
	case k == protoreflect.MessageKind, k == protoreflect.StringKind:
		return true
	default:
		w := wireType(k)
		return fd.IsList() && (w == protowire.VarintType || w == protowire.Fixed32Type || w == protowire.Fixed64Type)
	}
}

// isTruncated reports whether protowire's error code says that the data
// ends too soon.
func isTruncated(code int) bool {
	return errors.Is(protowire.ParseError(code), io.ErrUnexpectedEOF)
}

// reason describes protowire's error code, without the "proto:" prefix
// (which the protobuf module spells with a space or a no-break space).
func reason(code int) string {
	if isTruncated(code) {
		return "truncated"
	}
	msg := protowire.ParseError(code).Error()
	return strings.TrimLeft(strings.TrimPrefix(msg, "proto:"), " \u00a0")
}

// fieldPath names the next occurrence of fd in the message at path, counting
// the occurrences of repeated and map fields in seen.
func fieldPath(path string, fd protoreflect.FieldDescriptor, seen map[protowire.Number]int) string {
	name := string(fd.Name())
	if fd.Cardinality() == protoreflect.Repeated {
		name += "[" + strconv.Itoa(seen[fd.Number()]) + "]"
		seen[fd.Number()]++
	}
	if path == "" {
		return name
	}
	return path + "." + name
}

// invalidUTF8 is the index of the first byte of b that is not valid UTF-8,
// or -1.
func invalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

// wireType is the wire type of one value of kind k.
func wireType(k protoreflect.Kind) protowire.Type {
	switch k {
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		return protowire.Fixed32Type
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return protowire.Fixed64Type
	case protoreflect.StringKind, protoreflect.BytesKind, protoreflect.MessageKind:
		return protowire.BytesType
	case protoreflect.GroupKind:
		return protowire.StartGroupType
	default:
		return protowire.VarintType
	}
}
