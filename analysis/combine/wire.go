package combine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// The combiner rewrites XSpace at the wire level: a plane is parsed just
// far enough to find its metadata, lines and events, each event's times are
// rewritten in place of the old ones, and everything else is copied as it
// was. Decoding a whole XSpace into Go objects (and encoding it again) costs
// several allocations per event and about 25 times the file's size in
// memory; this costs none per event and holds only the file's bytes.
// TestWireMatchesProto checks that both give proto.Equal results.
//
// What is copied unparsed is checked first against the schema of the
// message it belongs to (wireChecks: UTF-8 strings, nested messages such
// as an event's stats, packed lists), as proto.Unmarshal would check it,
// so that whatever the combiner accepts, xspace.Read reads back
// (TestCombineRefusesCorrupt); a trace that fails is refused with the
// place where it breaks (combiner.locate).

// Field numbers of the XSpace schema (trace/xplanepb/xplane.proto).
const (
	fSpacePlanes    = 1
	fSpaceHostnames = 4

	fPlaneID        = 1
	fPlaneName      = 2
	fPlaneLines     = 3
	fPlaneEventMeta = 4
	fPlaneStatMeta  = 5
	fPlaneStats     = 6

	fLineTimestamp = 3
	fLineEvents    = 4

	fEventMeta     = 1
	fEventOffset   = 2
	fEventDuration = 3
	fEventStats    = 4
	// fEventOccurrences is num_occurrences, offset_ps's other half of
	// their oneof.
	fEventOccurrences = 5

	fStatMeta   = 1
	fStatDouble = 2
	fStatUint   = 3
	fStatInt    = 4
	fStatStr    = 5
	fStatBytes  = 6
	fStatRef    = 7
	fStatZStr   = 8

	fMapKey   = 1
	fMapValue = 2

	fMetaID      = 1
	fMetaName    = 2
	fMetaDisplay = 4
	fMetaStats   = 5
)

// The wire type of each field of a message, by field number: v varint, f
// fixed64, b length-delimited, '.' not read by number (or either of two
// types: child_id, packed or not). A field of the schema's number but
// another wire type is an unknown field to proto.Unmarshal, so next hands
// it out as field number 0, which no reader takes for one of its own.
const (
	spaceSpec     = ".bbbb"        // planes, errors, warnings, hostnames
	planeSpec     = ".vbbbbb"      // id, name, lines, event_metadata, stat_metadata, stats
	lineSpec      = ".vbvb....vvb" // id, name, timestamp_ns, events, …, duration_ps, display_id, display_name
	eventSpec     = ".vvvbv"       // metadata_id, offset_ps, duration_ps, stats, num_occurrences
	statSpec      = ".vfvvbbvb"    // metadata_id, double, uint64, int64, str, bytes, ref, compressed_str
	mapSpec       = ".vb"          // key, value
	eventMetaSpec = ".vbbbb."      // id, name, metadata, display_name, stats, child_id
	statMetaSpec  = ".vbb"         // id, name, description
)

// wireTypeChars are the spec letters of wire types 0, 1 and 2.
const wireTypeChars = "vfb"

// fits reports whether a field num of wire type typ is the field spec
// says it is (or spec says nothing of num).
func fits(spec string, num protowire.Number, typ protowire.Type) bool {
	if int(num) >= len(spec) || spec[num] == '.' {
		return true
	}
	return int(typ) < len(wireTypeChars) && wireTypeChars[typ] == spec[num]
}

// errWire reports wire data the combiner cannot parse, or would copy but
// proto.Unmarshal refuses; the caller checks the whole file for an error
// that says where (combiner.locate).
var errWire = errors.New("malformed XSpace")

// wireChecks are the checkers of the messages whose fields the combiner
// copies unparsed: the space's own fields (host names), a plane's (its
// name, metadata and stats), a line's (its names) and an event's (its
// stats).
type wireChecks struct {
	space, plane, line, event *xspace.Checker
}

func newWireChecks() *wireChecks {
	return &wireChecks{
		space: xspace.NewChecker((*xplanepb.XSpace)(nil).ProtoReflect().Descriptor()),
		plane: xspace.NewChecker((*xplanepb.XPlane)(nil).ProtoReflect().Descriptor()),
		line:  xspace.NewChecker((*xplanepb.XLine)(nil).ProtoReflect().Descriptor()),
		event: xspace.NewChecker((*xplanepb.XEvent)(nil).ProtoReflect().Descriptor()),
	}
}

// field is one parsed field: its number, wire type, the whole field's bytes
// (tag included) and, for varints, the value, for length-delimited fields
// the payload.
type field struct {
	num  protowire.Number
	typ  protowire.Type
	raw  []byte
	v    uint64
	data []byte
}

// next parses the first field of b, a message whose fields spec
// describes, and returns it and the rest of b. A field of the wrong wire
// type for its number comes out as number 0 (unknown).
func next(b []byte, spec string) (field, []byte, error) {
	f, rest, err := nextField(b)
	if err == nil && !fits(spec, f.num, f.typ) {
		f.num = 0
	}
	return f, rest, err
}

// nextField parses the first field of b and returns it and the rest of b.
func nextField(b []byte) (field, []byte, error) {
	// Fast path: a one-byte tag (field numbers 1–15) of a varint or a
	// length-delimited field, each value parsed once.
	if len(b) > 1 && b[0] >= 8 && b[0] < 0x80 {
		num, typ := protowire.Number(b[0]>>3), protowire.Type(b[0]&7)
		switch typ {
		case protowire.VarintType:
			v, n := consumeVarint(b[1:])
			if n < 0 {
				return field{}, nil, errWire
			}
			return field{num: num, typ: typ, raw: b[:1+n], v: v}, b[1+n:], nil
		case protowire.BytesType:
			l, n := consumeVarint(b[1:])
			if n < 0 || l > uint64(len(b)-1-n) {
				return field{}, nil, errWire
			}
			end := 1 + n + int(l)
			return field{num: num, typ: typ, raw: b[:end], data: b[1+n : end]}, b[end:], nil
		}
	}
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 {
		return field{}, nil, errWire
	}
	f := field{num: num, typ: typ}
	m := protowire.ConsumeFieldValue(num, typ, b[n:])
	if m < 0 {
		return field{}, nil, errWire
	}
	f.raw = b[:n+m]
	switch typ {
	case protowire.VarintType:
		f.v, _ = protowire.ConsumeVarint(b[n:])
	case protowire.BytesType:
		f.data, _ = protowire.ConsumeBytes(b[n:])
	case protowire.Fixed64Type:
		f.v, _ = protowire.ConsumeFixed64(b[n:])
	}
	return f, b[n+m:], nil
}

// wireMeta is what the combiner needs of an event metadata entry.
type wireMeta struct {
	name, display string
	collective    bool   // the name contains rccl or nccl
	hloOp         string // an hlo_op stat of the metadata
	hasHlo        bool
	stats         []byte // its stats, concatenated XStat fields, for the JSON export
	// jsonName and jsonArgs are its name as a JSON string and its stats as
	// JSON members, once the JSON export has rendered them.
	jsonName, jsonArgs []byte
}

// wirePlane is one input plane, parsed.
type wirePlane struct {
	id     int64
	name   string
	lines  [][]byte // each line's message bytes
	meta   map[int64]*wireMeta
	stats  map[int64]string // stat metadata: id → name
	maxID  int64            // the largest stat metadata id
	copied []byte           // metadata map entries and plane stats, as they were (fields 4, 5, 6)
	extra  []byte           // unknown fields
	pstats [][]byte         // the plane's own stats (field 6 payloads)
	base   int64            // its time_base_ns stat (0 when it has none), dropped from copied and pstats
	// jsonKeys caches the stat names as JSON strings, for the export.
	jsonKeys map[int64][]byte
}

// parsePlane parses the plane b, checking with checks every field but its
// lines, which the line rewriting checks.
func parsePlane(b []byte, checks *wireChecks) (*wirePlane, error) {
	p := &wirePlane{meta: map[int64]*wireMeta{}, stats: map[int64]string{}}
	var evMeta [][]byte
	for len(b) > 0 {
		f, rest, err := next(b, planeSpec)
		if err != nil {
			return nil, err
		}
		b = rest
		if f.num != fPlaneLines && !checks.plane.Valid(f.raw) {
			return nil, errWire
		}
		switch f.num {
		case fPlaneID:
			p.id = int64(f.v)
		case fPlaneName:
			p.name = string(f.data)
		case fPlaneLines:
			p.lines = append(p.lines, f.data)
		case fPlaneEventMeta:
			evMeta = append(evMeta, f.data)
			p.copied = append(p.copied, f.raw...)
		case fPlaneStatMeta:
			id, name, err := parseStatMeta(f.data)
			if err != nil {
				return nil, err
			}
			p.stats[id] = name
			p.maxID = max(p.maxID, id)
			p.copied = append(p.copied, f.raw...)
		case fPlaneStats:
			p.pstats = append(p.pstats, f.data)
			p.copied = append(p.copied, f.raw...)
		default:
			p.extra = append(p.extra, f.raw...)
		}
	}
	if err := p.takeBase(); err != nil {
		return nil, fmt.Errorf("plane %s: %w", p.name, err)
	}
	hloID, hasHlo := p.statID(statHloOp)
	for _, e := range evMeta {
		id, m, err := parseEventMeta(e, p, hloID, hasHlo)
		if err != nil {
			return nil, fmt.Errorf("plane %s: event metadata %d: %w", p.name, id, err)
		}
		p.meta[id] = m
	}
	return p, nil
}

// takeBase reads the plane's time_base_ns stat (xspace.StatTimeBase) into
// p.base and drops it from the stats copied: the combiner writes the
// combined trace's own.
func (p *wirePlane) takeBase() error {
	id, ok := p.statID(xspace.StatTimeBase)
	if !ok {
		return nil
	}
	keep := p.pstats[:0]
	for _, st := range p.pstats {
		sid, val, err := statOf(st)
		if err != nil {
			return err
		}
		if sid != id {
			keep = append(keep, st)
			continue
		}
		v, err := p.statText(sid, val)
		if err != nil {
			return err
		}
		p.base, _ = strconv.ParseInt(v, 10, 64)
	}
	p.pstats = keep
	var copied []byte
	for b := p.copied; len(b) > 0; {
		f, rest, err := next(b, planeSpec)
		if err != nil {
			return err
		}
		b = rest
		if f.num == fPlaneStats {
			sid, _, err := statOf(f.data)
			if err != nil {
				return err
			}
			if sid == id {
				continue
			}
		}
		copied = append(copied, f.raw...)
	}
	p.copied = copied
	return nil
}

// statID finds the stat metadata named name (the smallest id on ties).
func (p *wirePlane) statID(name string) (int64, bool) {
	best, found := int64(0), false
	for id, n := range p.stats {
		if n == name && (!found || id < best) {
			best, found = id, true
		}
	}
	return best, found
}

// mapEntry splits a map entry into its int64 key and its value message.
func mapEntry(b []byte) (key int64, value []byte, err error) {
	for len(b) > 0 {
		f, rest, err := next(b, mapSpec)
		if err != nil {
			return 0, nil, err
		}
		b = rest
		switch f.num {
		case fMapKey:
			key = int64(f.v)
		case fMapValue:
			value = f.data
		}
	}
	return key, value, nil
}

// parseStatMeta reads a stat_metadata map entry: the key, and the value's
// name.
func parseStatMeta(b []byte) (int64, string, error) {
	id, v, err := mapEntry(b)
	var name string
	for err == nil && len(v) > 0 {
		var g field
		if g, v, err = next(v, statMetaSpec); err == nil && g.num == fMetaName {
			name = string(g.data)
		}
	}
	return id, name, err
}

// parseEventMeta reads an event_metadata map entry.
func parseEventMeta(b []byte, p *wirePlane, hloID int64, hasHlo bool) (int64, *wireMeta, error) {
	id, v, err := mapEntry(b)
	m := &wireMeta{}
	for err == nil && len(v) > 0 {
		var g field
		if g, v, err = next(v, eventMetaSpec); err != nil {
			break
		}
		switch g.num {
		case fMetaName:
			m.name = string(g.data)
		case fMetaDisplay:
			m.display = string(g.data)
		case fMetaStats:
			m.stats = append(m.stats, g.raw...)
			if hasHlo && !m.hasHlo {
				err = m.takeHlo(g.data, p, hloID)
			}
		}
	}
	low := strings.ToLower(m.name)
	m.collective = strings.Contains(low, "rccl") || strings.Contains(low, "nccl")
	return id, m, err
}

// takeHlo sets m's hlo_op to the value of the stat st of p if its
// metadata id is hloID.
func (m *wireMeta) takeHlo(st []byte, p *wirePlane, hloID int64) error {
	id, val, err := statOf(st)
	if err != nil || id != hloID {
		return err
	}
	if m.hloOp, err = p.statText(id, val); err != nil {
		return err
	}
	m.hasHlo = true
	return nil
}

// statOf reads the XStat b: its metadata id and its value, the last of
// its value fields (num 0: it has none).
func statOf(b []byte) (id int64, val field, err error) {
	for len(b) > 0 {
		f, rest, err := next(b, statSpec)
		if err != nil {
			return 0, field{}, err
		}
		b = rest
		switch f.num {
		case fStatMeta:
			id = int64(f.v)
		case fStatDouble, fStatUint, fStatInt, fStatStr, fStatRef, fStatBytes, fStatZStr:
			val = f
		}
	}
	return id, val, nil
}

// statText renders the value val (from statOf) of a stat of p whose
// metadata id is id, as xspace.StatValue does: the error, for a compressed
// string that does not decompress or decompresses to more than
// xspace.MaxDecompressedStat bytes, names the stat.
func (p *wirePlane) statText(id int64, val field) (string, error) {
	switch val.num {
	case fStatDouble:
		return strconv.FormatFloat(protowireFloat(val.v), 'g', -1, 64), nil
	case fStatUint:
		return strconv.FormatUint(val.v, 10), nil
	case fStatInt:
		return strconv.FormatInt(int64(val.v), 10), nil
	case fStatStr:
		return string(val.data), nil
	case fStatRef:
		if n, ok := p.stats[int64(val.v)]; ok {
			return n, nil
		}
		return xspace.StatString(nil, &xplanepb.XStat{Value: &xplanepb.XStat_RefValue{RefValue: val.v}}), nil
	case fStatBytes:
		return xspace.StatString(nil, &xplanepb.XStat{Value: &xplanepb.XStat_BytesValue{BytesValue: val.data}}), nil
	case fStatZStr:
		s, err := xspace.DecompressString(val.data)
		if err != nil {
			return "", fmt.Errorf("stat %s: compressed_str_value: %w", p.statName(id), err)
		}
		return s, nil
	}
	return "", nil
}

// statName names the stat metadata id of p for an error: its name, quoted,
// or its id when p has no name for it.
func (p *wirePlane) statName(id int64) string {
	if n := p.stats[id]; n != "" {
		return strconv.Quote(n)
	}
	return "with metadata id " + strconv.FormatInt(id, 10)
}

// protowireFloat is the float64 of a fixed64 field's bits.
func protowireFloat(v uint64) float64 { return math.Float64frombits(v) }

// consumeVarint is protowire.ConsumeVarint, faster for the varints of up
// to 7 bytes (to 2^49: times in ps to 6 days) that most are: it reads 8
// bytes at once, past b's end but within its capacity, and uses what
// lies within b.
func consumeVarint(b []byte) (uint64, int) {
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

// putVarint writes v as a varint at the start of b, which has room for
// it, and returns its length.
func putVarint(b []byte, v uint64) int {
	i := 0
	for v >= 0x80 {
		b[i] = byte(v) | 0x80
		v >>= 7
		i++
	}
	b[i] = byte(v)
	return i + 1
}

// headRoom is the room a buffer keeps at its start for a field's tag and
// a varint (the field's length, or its value) known only once the rest is
// written: see withHead.
const headRoom = 1 + binary.MaxVarintLen64

// withHead returns b emptied but for headRoom bytes of room.
func withHead(b []byte) []byte { return append(b[:0], make([]byte, headRoom)...) }

// putHead writes the one-byte tag (of a field 1–15) and the varint v at
// the end of b's room (see withHead) and returns where they start.
func putHead(b []byte, tag byte, v uint64) int {
	var h [headRoom]byte
	h[0] = tag
	n := 1 + putVarint(h[1:], v)
	return headRoom - copy(b[headRoom-n:headRoom], h[:n])
}
