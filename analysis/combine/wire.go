package combine

import (
	"fmt"
	"math"
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
// TestWireMatchesProto checks that both give proto.Equal results. The
// schema's field numbers, the field iterator (xspace.Next) and the varint
// helpers are trace/xspace's wire-level API; what is here is what the
// combiner makes of the fields.
//
// What is copied unparsed is checked first against the schema of the
// message it belongs to (wireChecks: UTF-8 strings, nested messages such
// as an event's stats, packed lists), as proto.Unmarshal would check it,
// so that whatever the combiner accepts, xspace.Read reads back
// (TestCombineRefusesCorrupt); a trace that fails is refused with the
// place where it breaks (combiner.locate).

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
	// jsonKeys caches the stat names as JSON strings, for the export;
	// jsonKeyList holds the same by id, for ids below maxKeyList (nil:
	// no stat of that id).
	jsonKeys    map[int64][]byte
	jsonKeyList [][]byte
}

// parsePlane parses the plane b, checking with checks every field but its
// lines, which the line rewriting checks.
func parsePlane(b []byte, checks *wireChecks) (*wirePlane, error) {
	p := &wirePlane{meta: map[int64]*wireMeta{}, stats: map[int64]string{}}
	var evMeta [][]byte
	for len(b) > 0 {
		f, rest, err := xspace.Next(b, xspace.PlaneSpec)
		if err != nil {
			return nil, err
		}
		b = rest
		if f.Num != xspace.FieldPlaneLines && !checks.plane.Valid(f.Raw) {
			return nil, xspace.ErrWire
		}
		switch f.Num {
		case xspace.FieldPlaneID:
			p.id = int64(f.Value)
		case xspace.FieldPlaneName:
			p.name = string(f.Data)
		case xspace.FieldPlaneLines:
			p.lines = append(p.lines, f.Data)
		case xspace.FieldPlaneEventMeta:
			evMeta = append(evMeta, f.Data)
			p.copied = append(p.copied, f.Raw...)
		case xspace.FieldPlaneStatMeta:
			id, name, err := parseStatMeta(f.Data)
			if err != nil {
				return nil, err
			}
			p.stats[id] = name
			p.maxID = max(p.maxID, id)
			p.copied = append(p.copied, f.Raw...)
		case xspace.FieldPlaneStats:
			p.pstats = append(p.pstats, f.Data)
			p.copied = append(p.copied, f.Raw...)
		default:
			p.extra = append(p.extra, f.Raw...)
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
		f, rest, err := xspace.Next(b, xspace.PlaneSpec)
		if err != nil {
			return err
		}
		b = rest
		if f.Num == xspace.FieldPlaneStats {
			sid, _, err := statOf(f.Data)
			if err != nil {
				return err
			}
			if sid == id {
				continue
			}
		}
		copied = append(copied, f.Raw...)
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
		f, rest, err := xspace.Next(b, xspace.MapSpec)
		if err != nil {
			return 0, nil, err
		}
		b = rest
		switch f.Num {
		case xspace.FieldMapKey:
			key = int64(f.Value)
		case xspace.FieldMapValue:
			value = f.Data
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
		var g xspace.Field
		if g, v, err = xspace.Next(v, xspace.StatMetaSpec); err == nil && g.Num == xspace.FieldMetaName {
			name = string(g.Data)
		}
	}
	return id, name, err
}

// parseEventMeta reads an event_metadata map entry.
func parseEventMeta(b []byte, p *wirePlane, hloID int64, hasHlo bool) (int64, *wireMeta, error) {
	id, v, err := mapEntry(b)
	m := &wireMeta{}
	for err == nil && len(v) > 0 {
		var g xspace.Field
		if g, v, err = xspace.Next(v, xspace.EventMetaSpec); err != nil {
			break
		}
		switch g.Num {
		case xspace.FieldMetaName:
			m.name = string(g.Data)
		case xspace.FieldMetaDisplay:
			m.display = string(g.Data)
		case xspace.FieldMetaStats:
			m.stats = append(m.stats, g.Raw...)
			if hasHlo && !m.hasHlo {
				err = m.takeHlo(g.Data, p, hloID)
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
func statOf(b []byte) (id int64, val xspace.Field, err error) {
	// Fast path: the stat as encoders write it, a one-byte metadata_id
	// and then one integer value (uint64, int64 or ref) or one short
	// string, nothing else; anything else goes through statOfFields,
	// which gives the same for these.
	if len(b) >= 4 && b[0] == tagStatMeta && b[1] < 0x80 {
		switch t := b[2]; t {
		case tagStatUint, tagStatInt, tagStatRef:
			if v, n := xspace.ConsumeVarint(b[3:]); n > 0 && 3+n == len(b) {
				return int64(b[1]), xspace.Field{Num: protowire.Number(t >> 3), Type: protowire.VarintType, Raw: b[2:], Value: v}, nil
			}
		case tagStatStr:
			if b[3] < 0x80 && 4+int(b[3]) == len(b) {
				return int64(b[1]), xspace.Field{Num: xspace.FieldStatStr, Type: protowire.BytesType, Raw: b[2:], Data: b[4:]}, nil
			}
		}
	}
	return statOfFields(b)
}

// statOfFields is statOf for any encoding: it reads every field.
func statOfFields(b []byte) (id int64, val xspace.Field, err error) {
	for len(b) > 0 {
		f, rest, err := xspace.Next(b, xspace.StatSpec)
		if err != nil {
			return 0, xspace.Field{}, err
		}
		b = rest
		switch f.Num {
		case xspace.FieldStatMeta:
			id = int64(f.Value)
		case xspace.FieldStatDouble, xspace.FieldStatUint, xspace.FieldStatInt, xspace.FieldStatStr, xspace.FieldStatRef, xspace.FieldStatBytes, xspace.FieldStatZStr:
			val = f
		}
	}
	return id, val, nil
}

// statText renders the value val (from statOf) of a stat of p whose
// metadata id is id, as xspace.StatValue does: the error, for a compressed
// string that does not decompress or decompresses to more than
// xspace.MaxDecompressedStat bytes, names the stat.
func (p *wirePlane) statText(id int64, val xspace.Field) (string, error) {
	switch val.Num {
	case xspace.FieldStatDouble:
		return strconv.FormatFloat(protowireFloat(val.Value), 'g', -1, 64), nil
	case xspace.FieldStatUint:
		return strconv.FormatUint(val.Value, 10), nil
	case xspace.FieldStatInt:
		return strconv.FormatInt(int64(val.Value), 10), nil
	case xspace.FieldStatStr:
		return string(val.Data), nil
	case xspace.FieldStatRef:
		if n, ok := p.stats[int64(val.Value)]; ok {
			return n, nil
		}
		return xspace.StatString(nil, &xplanepb.XStat{Value: &xplanepb.XStat_RefValue{RefValue: val.Value}}), nil
	case xspace.FieldStatBytes:
		return xspace.StatString(nil, &xplanepb.XStat{Value: &xplanepb.XStat_BytesValue{BytesValue: val.Data}}), nil
	case xspace.FieldStatZStr:
		s, err := xspace.DecompressString(val.Data)
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
