package xspace

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"

	"github.com/chronosync/chronosync/trace/xplanepb"
)

type statKind uint8

const (
	kindInt statKind = iota
	kindUint
	kindStr
	kindFloat
)

// Stat is a named value for [LineBuilder.Add] and [PlaneBuilder.AddStat]:
// an int64, a uint64, a string or a float64. Make one with [Int], [Uint],
// [Str] or [Float].
type Stat struct {
	name string
	kind statKind
	i    int64
	u    uint64
	s    string
	f    float64
}

// Int is an int64 stat (XStat.int64_value).
func Int(name string, v int64) Stat { return Stat{name: name, kind: kindInt, i: v} }

// Uint is a uint64 stat (XStat.uint64_value).
func Uint(name string, v uint64) Stat { return Stat{name: name, kind: kindUint, u: v} }

// Str is a string stat (XStat.str_value).
func Str(name, s string) Stat { return Stat{name: name, kind: kindStr, s: s} }

// Float is a float64 stat (XStat.double_value).
func Float(name string, v float64) Stat { return Stat{name: name, kind: kindFloat, f: v} }

// xstat is s as an XStat whose metadata id is id.
func (s Stat) xstat(id int64) *xplanepb.XStat {
	st := &xplanepb.XStat{MetadataId: id}
	switch s.kind {
	case kindUint:
		st.Value = &xplanepb.XStat_Uint64Value{Uint64Value: s.u}
	case kindStr:
		st.Value = &xplanepb.XStat_StrValue{StrValue: s.s}
	case kindFloat:
		st.Value = &xplanepb.XStat_DoubleValue{DoubleValue: s.f}
	default:
		st.Value = &xplanepb.XStat_Int64Value{Int64Value: s.i}
	}
	return st
}

// StatByName returns the first of stats (stats of plane, or of one of its
// events or event metadata) whose stat metadata in plane is named name.
func StatByName(plane *xplanepb.XPlane, stats []*xplanepb.XStat, name string) (*xplanepb.XStat, bool) {
	for _, st := range stats {
		if plane.GetStatMetadata()[st.GetMetadataId()].GetName() == name {
			return st, true
		}
	}
	return nil, false
}

// StatString renders the value of stat, a stat of plane, whatever its kind:
// numbers in decimal (floats in the shortest form that reads back exactly),
// strings as they are, bytes in hex, a compressed string decompressed, and
// a ref_value as the name of the stat metadata it refers to in plane. A
// stat with no value renders as "".
func StatString(plane *xplanepb.XPlane, stat *xplanepb.XStat) string {
	switch v := stat.GetValue().(type) {
	case *xplanepb.XStat_DoubleValue:
		return strconv.FormatFloat(v.DoubleValue, 'g', -1, 64)
	case *xplanepb.XStat_Uint64Value:
		return strconv.FormatUint(v.Uint64Value, 10)
	case *xplanepb.XStat_Int64Value:
		return strconv.FormatInt(v.Int64Value, 10)
	case *xplanepb.XStat_StrValue:
		return v.StrValue
	case *xplanepb.XStat_BytesValue:
		return hex.EncodeToString(v.BytesValue)
	case *xplanepb.XStat_RefValue:
		if md, ok := plane.GetStatMetadata()[int64(v.RefValue)]; ok {
			return md.GetName()
		}
		return fmt.Sprintf("<unknown ref %d>", v.RefValue)
	case *xplanepb.XStat_CompressedStrValue:
		s, err := gunzip(v.CompressedStrValue)
		if err != nil {
			return fmt.Sprintf("<bad compressed string: %v>", err)
		}
		return s
	default:
		return ""
	}
}

func gunzip(b []byte) (string, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return "", err
	}
	s, err := io.ReadAll(zr)
	if err != nil {
		return "", err
	}
	return string(s), zr.Close()
}

// StartPs is the start of ev, an event of line, in ps:
// line.timestamp_ns*1000 + ev.offset_ps, as XLA's XEventVisitor computes it.
// An int64 of ps spans ±106 days, so line timestamps must be relative to
// the profile's start (XLA normalizes them so), not ns since the Unix epoch.
func StartPs(line *xplanepb.XLine, ev *xplanepb.XEvent) int64 {
	return line.GetTimestampNs()*1000 + ev.GetOffsetPs()
}

// EndPs is the end of ev, an event of line, in ps: [StartPs] + duration_ps.
func EndPs(line *xplanepb.XLine, ev *xplanepb.XEvent) int64 {
	return StartPs(line, ev) + ev.GetDurationPs()
}
