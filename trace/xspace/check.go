package xspace

import (
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// A Checker tells, without decoding, whether proto.Unmarshal accepts wire
// data as a message of one type: every tag, length and value well-formed,
// proto3 strings UTF-8, packed lists whole, and so, recursively, the
// messages inside (map entries included), known fields and unknown ones
// alike. A message's wire data is the concatenation of its fields, so a
// Checker also checks any run of a message's fields: a reader that walks
// the wire format itself and copies parts of a message unparsed (the
// combiner) checks what it copies, so that what it writes reads back.
//
// A Checker holds its type's schema, compiled once; it is safe for
// concurrent use.
type Checker struct {
	md protoreflect.MessageDescriptor
	s  *schema
}

// NewChecker returns the Checker of messages md.
func NewChecker(md protoreflect.MessageDescriptor) *Checker {
	return &Checker{md: md, s: compile(md, map[protoreflect.FullName]*schema{})}
}

// Valid reports whether proto.Unmarshal accepts b as a message of c's
// type. It allocates nothing.
func (c *Checker) Valid(b []byte) bool { return c.s.valid(b, 0) }

// Check returns nil when b is [Checker.Valid], otherwise the
// [*CorruptError] that [Unmarshal] returns for b, found without decoding
// b.
func (c *Checker) Check(b []byte) error {
	if c.Valid(b) {
		return nil
	}
	if ce := locate(b, c.md); ce != nil {
		return ce
	}
	// locate walks by the same rules, so it finds the place; this is only
	// a guard.
	return &CorruptError{Offset: -1, Reason: "not a valid " + string(c.md.FullName())}
}

// schema is what a Checker needs of a message type: the rule of each field
// that it looks inside when the field is length-delimited (see delimited).
// Fields without a rule, and fields of any other wire type, only have to
// be well-formed.
type schema struct {
	near []fieldRule // by field number, for numbers below nearFields
	far  map[protowire.Number]fieldRule
}

// nearFields bounds the field numbers a schema keeps in a slice.
const nearFields = 64

// fieldRule is what a length-delimited field's payload must be.
type fieldRule struct {
	kind   ruleKind
	msg    *schema        // ruleMessage: the message's schema
	packed protowire.Type // rulePacked: the wire type of one element
}

type ruleKind uint8

const (
	ruleNone    ruleKind = iota // anything: bytes, or a field a Checker does not look inside
	ruleUTF8                    // a proto3 string
	ruleMessage                 // a message (or a map entry)
	rulePacked                  // a packed list of scalars
)

// compile returns md's schema, compiling the schemas of the messages in it
// on the way; memo holds those compiled so far, so that recursive types
// end.
func compile(md protoreflect.MessageDescriptor, memo map[protoreflect.FullName]*schema) *schema {
	if s, ok := memo[md.FullName()]; ok {
		return s
	}
	s := &schema{}
	memo[md.FullName()] = s
	fields := md.Fields()
	for i := range fields.Len() {
		// A slot for every declared field number below nearFields, so
		// that looking a declared field up costs no map access.
		if n := int(fields.Get(i).Number()); n < nearFields && n >= len(s.near) {
			s.near = append(s.near, make([]fieldRule, n+1-len(s.near))...)
		}
	}
	for i := range fields.Len() {
		fd := fields.Get(i)
		var r fieldRule
		switch k := fd.Kind(); {
		case !delimited(fd, protowire.BytesType):
			continue
		case k == protoreflect.MessageKind:
			r = fieldRule{kind: ruleMessage, msg: compile(fd.Message(), memo)}
		case k == protoreflect.StringKind:
			if fd.Syntax() != protoreflect.Proto3 {
				continue
			}
			r = fieldRule{kind: ruleUTF8}
		default:
			r = fieldRule{kind: rulePacked, packed: wireType(k)}
		}
		if n := fd.Number(); n < nearFields {
			s.near[n] = r
		} else {
			if s.far == nil {
				s.far = map[protowire.Number]fieldRule{}
			}
			s.far[n] = r
		}
	}
	return s
}

// rule is the rule of field num.
func (s *schema) rule(num protowire.Number) fieldRule {
	if int(num) < len(s.near) {
		return s.near[num]
	}
	return s.far[num] // the zero rule when absent (or far is nil)
}

// valid reports whether b parses as a message of schema s at nesting depth
// depth, by the rules of walk. Tags, lengths and varints of one byte, as
// most are, take a fast path.
func (s *schema) valid(b []byte, depth int) bool {
	if depth > protowire.DefaultRecursionLimit {
		return false
	}
	for len(b) > 0 {
		var num protowire.Number
		var typ protowire.Type
		if c := b[0]; c < 0x80 {
			num, typ, b = protowire.Number(c>>3), protowire.Type(c&7), b[1:]
			if num == 0 {
				return false
			}
		} else {
			var n int
			if num, typ, n = protowire.ConsumeTag(b); n < 0 || num > protowire.MaxValidNumber {
				return false
			}
			b = b[n:]
		}
		switch typ {
		case protowire.VarintType:
			// Skip it as protowire.ConsumeVarint reads it: up to 10
			// bytes, the 10th at most 1.
			i := 0
			for i < len(b) && b[i] >= 0x80 {
				i++
			}
			if i >= len(b) || i > 9 || (i == 9 && b[9] > 1) {
				return false
			}
			b = b[i+1:]
		case protowire.Fixed64Type:
			if len(b) < 8 {
				return false
			}
			b = b[8:]
		case protowire.Fixed32Type:
			if len(b) < 4 {
				return false
			}
			b = b[4:]
		case protowire.BytesType:
			var size uint64
			if len(b) > 0 && b[0] < 0x80 {
				size, b = uint64(b[0]), b[1:]
			} else {
				var n int
				if size, n = protowire.ConsumeVarint(b); n < 0 {
					return false
				}
				b = b[n:]
			}
			if size > uint64(len(b)) {
				return false
			}
			v := b[:size]
			b = b[size:]
			switch r := s.rule(num); r.kind {
			case ruleUTF8:
				if !utf8.Valid(v) {
					return false
				}
			case ruleMessage:
				if !r.msg.valid(v, depth+1) {
					return false
				}
			case rulePacked:
				if !validPacked(v, r.packed) {
					return false
				}
			}
		default: // groups (rare), and the wire types that are errors
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return false
			}
			b = b[n:]
		}
	}
	return true
}

// validPacked reports whether v is a packed list of scalars of wire type
// typ.
func validPacked(v []byte, typ protowire.Type) bool {
	for len(v) > 0 {
		n := protowire.ConsumeFieldValue(0, typ, v)
		if n < 0 {
			return false
		}
		v = v[n:]
	}
	return true
}
