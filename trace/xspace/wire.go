package xspace

import (
	"encoding/binary"
	"errors"
	"math/bits"

	"google.golang.org/protobuf/encoding/protowire"
)

// The wire-level API: readers that walk an XSpace's wire format themselves
// (the combiner rewrites planes and events in place, copying what it does
// not parse) find here the schema's field numbers, the wire type each field
// must have ([SpaceSpec] and the other specs), a field iterator ([Next],
// [NextField]) and the varint helpers of a writer that fills in a
// message's tag and length once its body is written ([HeadRoom],
// [WithHead], [PutHead]). What such a reader copies unparsed it checks with
// a [Checker] first.

// Field numbers of the XSpace schema (trace/xplanepb/xplane.proto).
const (
	FieldSpacePlanes    = 1
	FieldSpaceHostnames = 4

	FieldPlaneID        = 1
	FieldPlaneName      = 2
	FieldPlaneLines     = 3
	FieldPlaneEventMeta = 4
	FieldPlaneStatMeta  = 5
	FieldPlaneStats     = 6

	FieldLineTimestamp = 3
	FieldLineEvents    = 4

	FieldEventMeta     = 1
	FieldEventOffset   = 2
	FieldEventDuration = 3
	FieldEventStats    = 4
	// FieldEventOccurrences is num_occurrences, offset_ps's other half of
	// their oneof.
	FieldEventOccurrences = 5

	FieldStatMeta   = 1
	FieldStatDouble = 2
	FieldStatUint   = 3
	FieldStatInt    = 4
	FieldStatStr    = 5
	FieldStatBytes  = 6
	FieldStatRef    = 7
	FieldStatZStr   = 8

	FieldMapKey   = 1
	FieldMapValue = 2

	FieldMetaID      = 1
	FieldMetaName    = 2
	FieldMetaDisplay = 4
	FieldMetaStats   = 5
)

// The wire type of each field of a message, by field number: v varint, f
// fixed64, b length-delimited, '.' not read by number (or either of two
// types: child_id, packed or not). A field of the schema's number but
// another wire type is an unknown field to proto.Unmarshal, so [Next] hands
// it out as field number 0, which no reader takes for one of its own.
const (
	SpaceSpec     = ".bbbb"        // planes, errors, warnings, hostnames
	PlaneSpec     = ".vbbbbb"      // id, name, lines, event_metadata, stat_metadata, stats
	LineSpec      = ".vbvb....vvb" // id, name, timestamp_ns, events, …, duration_ps, display_id, display_name
	EventSpec     = ".vvvbv"       // metadata_id, offset_ps, duration_ps, stats, num_occurrences
	StatSpec      = ".vfvvbbvb"    // metadata_id, double, uint64, int64, str, bytes, ref, compressed_str
	MapSpec       = ".vb"          // key, value
	EventMetaSpec = ".vbbbb."      // id, name, metadata, display_name, stats, child_id
	StatMetaSpec  = ".vbb"         // id, name, description
)

// wireTypeChars are the spec letters of wire types 0, 1 and 2.
const wireTypeChars = "vfb"

// Fits reports whether a field num of wire type typ is the field spec
// says it is (or spec says nothing of num).
func Fits(spec string, num protowire.Number, typ protowire.Type) bool {
	if int(num) >= len(spec) || spec[num] == '.' {
		return true
	}
	return int(typ) < len(wireTypeChars) && wireTypeChars[typ] == spec[num]
}

// ErrWire reports wire data a wire-level reader cannot parse, or would
// copy but proto.Unmarshal refuses; it says not where: the caller checks
// the whole file for an error that does (a [*CorruptError]).
var ErrWire = errors.New("malformed XSpace")

// Field is one parsed field: its number, wire type, the whole field's bytes
// (tag included) and, for varints and fixed64 fields, the value, for
// length-delimited fields the payload.
type Field struct {
	Num   protowire.Number
	Type  protowire.Type
	Raw   []byte
	Value uint64
	Data  []byte
}

// Next parses the first field of b, a message whose fields spec
// describes, and returns it and the rest of b. A field of the wrong wire
// type for its number comes out as number 0 (unknown).
func Next(b []byte, spec string) (Field, []byte, error) {
	f, rest, err := NextField(b)
	if err == nil && !Fits(spec, f.Num, f.Type) {
		f.Num = 0
	}
	return f, rest, err
}

// NextField parses the first field of b and returns it and the rest of b.
func NextField(b []byte) (Field, []byte, error) {
	// Fast path: a one-byte tag (field numbers 1–15) of a varint or a
	// length-delimited field, each value parsed once.
	if len(b) > 1 && b[0] >= 8 && b[0] < 0x80 {
		num, typ := protowire.Number(b[0]>>3), protowire.Type(b[0]&7)
		switch typ {
		case protowire.VarintType:
			v, n := ConsumeVarint(b[1:])
			if n < 0 {
				return Field{}, nil, ErrWire
			}
			return Field{Num: num, Type: typ, Raw: b[:1+n], Value: v}, b[1+n:], nil
		case protowire.BytesType:
			l, n := ConsumeVarint(b[1:])
			if n < 0 || l > uint64(len(b)-1-n) {
				return Field{}, nil, ErrWire
			}
			end := 1 + n + int(l)
			return Field{Num: num, Type: typ, Raw: b[:end], Data: b[1+n : end]}, b[end:], nil
		}
	}
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 {
		return Field{}, nil, ErrWire
	}
	f := Field{Num: num, Type: typ}
	m := protowire.ConsumeFieldValue(num, typ, b[n:])
	if m < 0 {
		return Field{}, nil, ErrWire
	}
	f.Raw = b[:n+m]
	switch typ {
	case protowire.VarintType:
		f.Value, _ = protowire.ConsumeVarint(b[n:])
	case protowire.BytesType:
		f.Data, _ = protowire.ConsumeBytes(b[n:])
	case protowire.Fixed64Type:
		f.Value, _ = protowire.ConsumeFixed64(b[n:])
	}
	return f, b[n+m:], nil
}

// ConsumeVarint is protowire.ConsumeVarint, faster for the varints of up
// to 7 bytes (to 2^49: times in ps to 6 days) that most are: it reads 8
// bytes at once, past b's end but within its capacity, and uses what
// lies within b.
func ConsumeVarint(b []byte) (uint64, int) {
	if c := b[:cap(b)]; len(c) >= 8 {
		x := binary.LittleEndian.Uint64(c)
		if m := ^x & 0x0080808080808080; m != 0 {
			n := bits.TrailingZeros64(m)/8 + 1
			if n <= len(b) {
				x &= 1<<(8*n) - 1
				x = x&0x7f | x>>1&(0x7f<<7) | x>>2&(0x7f<<14) | x>>3&(0x7f<<21) |
					x>>4&(0x7f<<28) | x>>5&(0x7f<<35) | x>>6&(0x7f<<42)
				return x, n
			}
		}
	}
	return protowire.ConsumeVarint(b)
}

// PutVarint writes v as a varint at the start of b, which has room for
// it, and returns its length.
func PutVarint(b []byte, v uint64) int {
	i := 0
	for v >= 0x80 {
		b[i] = byte(v) | 0x80
		v >>= 7
		i++
	}
	b[i] = byte(v)
	return i + 1
}

// HeadRoom is the room a buffer keeps at its start for a field's tag and
// a varint (the field's length, or its value) known only once the rest is
// written: see [WithHead].
const HeadRoom = 1 + binary.MaxVarintLen64

// WithHead returns b emptied but for [HeadRoom] bytes of room.
func WithHead(b []byte) []byte { return append(b[:0], make([]byte, HeadRoom)...) }

// PutHead writes the one-byte tag (of a field 1–15) and the varint v at
// the end of b's room (see [WithHead]) and returns where they start.
func PutHead(b []byte, tag byte, v uint64) int {
	var h [HeadRoom]byte
	h[0] = tag
	n := 1 + PutVarint(h[1:], v)
	return HeadRoom - copy(b[HeadRoom-n:HeadRoom], h[:n])
}
