package combine

import (
	"encoding/hex"
	"strconv"

	"github.com/chronosync/chronosync/trace/chromejson"
	"github.com/chronosync/chronosync/trace/kineto"
	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// Event arguments in the Chrome JSON keep their stat's kind: int64 and
// uint64 stats are JSON numbers, doubles too (NaN and ±Inf as strings),
// strings strings, a ref_value the name it refers to, bytes their hex and
// a compressed string the string. The wire path (transcode.go's
// appendStatJSON) and the decoded one (appendXStatJSON) render alike.

// Flows. A slice with a "flow" stat (kineto.StatFlow, XLA's encoding
// id<<2 | direction) gets a Chrome flow event right after it, on its
// thread at its start: "s" for a flow's start, "f" for its end, "t" for a
// step, each with "bp":"e" (bound to the enclosing slice, as Kineto writes
// them) and the category and name Kineto gives launch→kernel flows. The
// flow events a Kineto trace had as events of their own (an event with a
// "ph" stat of "s", "f" or "t") are not exported: their flows are on the
// slices they bound to (kineto.ToXSpace).

// flowJSONID is the id of flow id of input node in the Chrome JSON, unique
// across inputs (whose flow ids each count from 0): node<<32 + id.
func flowJSONID(node int, id uint64) uint64 { return uint64(node)<<32 + id }

// flowPhase is the Chrome phase of a flow stat's direction; false for an
// unspecified direction.
func flowPhase(v uint64) (byte, bool) {
	switch v & 3 {
	case kineto.FlowIn:
		return 'f', true
	case kineto.FlowOut:
		return 's', true
	case kineto.FlowInOut:
		return 't', true
	}
	return 0, false
}

// appendFlowJSON appends ",\n" and the flow event of the flow stat v of a
// slice of input node on (pid, tid) starting at ps; nothing for a stat of
// unspecified direction.
func appendFlowJSON(b []byte, v uint64, node int, pid, tid, ps int64) []byte {
	ph, ok := flowPhase(v)
	if !ok {
		return b
	}
	b = append(b, ",\n{\"ph\":\""...)
	b = append(b, ph)
	b = append(b, `","id":`...)
	b = strconv.AppendUint(b, flowJSONID(node, v>>2&kineto.MaxFlowID), 10)
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, pid, 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, tid, 10)
	b = append(b, `,"ts":`...)
	b = chromejson.AppendMicros(b, ps, chromejson.Picoseconds, chromejson.Trim)
	return append(b, `,"cat":"ac2g","name":"ac2g","bp":"e"}`...)
}

// flowMarker reports whether a "ph" stat's value marks a flow event of a
// converted Kineto trace.
func flowMarker(ph string) bool { return ph == "s" || ph == "f" || ph == "t" }

// appendXStatJSON appends a decoded stat of p as the JSON member
// `"key":value,` (see above).
func appendXStatJSON(b []byte, p *xplanepb.XPlane, s *xplanepb.XStat) ([]byte, error) {
	if m := p.StatMetadata[s.MetadataId]; m != nil {
		b = chromejson.AppendString(b, m.Name)
	} else {
		b = chromejson.AppendString(b, strconv.FormatInt(s.MetadataId, 10))
	}
	b = append(b, ':')
	switch v := s.Value.(type) {
	case *xplanepb.XStat_Int64Value:
		b = strconv.AppendInt(b, v.Int64Value, 10)
	case *xplanepb.XStat_Uint64Value:
		b = strconv.AppendUint(b, v.Uint64Value, 10)
	case *xplanepb.XStat_DoubleValue:
		b = chromejson.AppendFloat(b, v.DoubleValue)
	case *xplanepb.XStat_StrValue:
		b = chromejson.AppendString(b, v.StrValue)
	case *xplanepb.XStat_BytesValue:
		b = append(b, '"')
		b = hex.AppendEncode(b, v.BytesValue)
		b = append(b, '"')
	default: // refs, compressed strings, no value
		str, err := xspace.StatValue(p, s)
		if err != nil {
			return b, err
		}
		b = chromejson.AppendString(b, str)
	}
	return append(b, ','), nil
}
