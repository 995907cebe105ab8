package xspace

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"

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

// MaxDecompressedStat is the most bytes a compressed_str_value may
// decompress to: 64 MiB. Real stats are short (the longest string stat of
// the XSpaces in testdata/realdata has 576 bytes, and none of them is
// compressed); 64 MiB leaves room for a whole program's text in one stat,
// while a decompression bomb, whose few kilobytes would otherwise inflate
// to gigabytes, costs at most that. [DecompressString] and [StatValue]
// refuse a longer string with [ErrStatTooLarge]; they never truncate one.
const MaxDecompressedStat = 64 << 20

// ErrStatTooLarge is the error of [DecompressString], and wrapped in that
// of [StatValue], for a compressed_str_value that decompresses to more
// than [MaxDecompressedStat] bytes.
var ErrStatTooLarge = fmt.Errorf("decompresses to more than %d MiB (xspace.MaxDecompressedStat)", MaxDecompressedStat>>20)

// StatValue renders the value of stat, a stat of plane, whatever its kind:
// numbers in decimal (floats in the shortest form that reads back exactly),
// strings as they are, bytes in hex, a compressed string decompressed (see
// [DecompressString]), and a ref_value as the name of the stat metadata it
// refers to in plane ("<unknown ref N>" when plane has none). A stat with
// no value renders as "". The error, for a compressed string that does not
// decompress or decompresses to more than [MaxDecompressedStat] bytes,
// names the stat.
func StatValue(plane *xplanepb.XPlane, stat *xplanepb.XStat) (string, error) {
	switch v := stat.GetValue().(type) {
	case *xplanepb.XStat_DoubleValue:
		return strconv.FormatFloat(v.DoubleValue, 'g', -1, 64), nil
	case *xplanepb.XStat_Uint64Value:
		return strconv.FormatUint(v.Uint64Value, 10), nil
	case *xplanepb.XStat_Int64Value:
		return strconv.FormatInt(v.Int64Value, 10), nil
	case *xplanepb.XStat_StrValue:
		return v.StrValue, nil
	case *xplanepb.XStat_BytesValue:
		return hex.EncodeToString(v.BytesValue), nil
	case *xplanepb.XStat_RefValue:
		if md, ok := plane.GetStatMetadata()[int64(v.RefValue)]; ok {
			return md.GetName(), nil
		}
		return fmt.Sprintf("<unknown ref %d>", v.RefValue), nil
	case *xplanepb.XStat_CompressedStrValue:
		s, err := DecompressString(v.CompressedStrValue)
		if err != nil {
			return "", fmt.Errorf("stat %s: compressed_str_value: %w", statName(plane, stat), err)
		}
		return s, nil
	default:
		return "", nil
	}
}

// StatString is [StatValue] for display: where StatValue fails, it renders
// "<bad compressed string: ERR>" in place of the value.
func StatString(plane *xplanepb.XPlane, stat *xplanepb.XStat) string {
	if v, ok := stat.GetValue().(*xplanepb.XStat_CompressedStrValue); ok {
		s, err := DecompressString(v.CompressedStrValue)
		if err != nil {
			return fmt.Sprintf("<bad compressed string: %v>", err)
		}
		return s
	}
	s, _ := StatValue(plane, stat) // fails only for compressed strings
	return s
}

// statName names stat, a stat of plane, for an error: its metadata's name,
// quoted, or its metadata id when plane has no name for it.
func statName(plane *xplanepb.XPlane, stat *xplanepb.XStat) string {
	if md, ok := plane.GetStatMetadata()[stat.GetMetadataId()]; ok && md.GetName() != "" {
		return strconv.Quote(md.GetName())
	}
	return "with metadata id " + strconv.FormatInt(stat.GetMetadataId(), 10)
}

// DecompressString returns the string a compressed_str_value holds: b
// gunzipped (a gzip stream of one member or more). It inflates at most
// [MaxDecompressedStat]+1 bytes of it: a string longer than
// MaxDecompressedStat is an error wrapping [ErrStatTooLarge], never a
// truncated string. It measures the string before it keeps it, so a
// decompression bomb costs no memory, and a string its length.
func DecompressString(b []byte) (string, error) {
	n, err := inflate(io.Discard, b)
	if err != nil {
		return "", err
	}
	if n > MaxDecompressedStat {
		return "", ErrStatTooLarge
	}
	var s strings.Builder
	s.Grow(int(n))
	if _, err := inflate(&s, b); err != nil {
		return "", err
	}
	return s.String(), nil
}

// inflate writes the gzip stream b, decompressed, to w, but no more than
// MaxDecompressedStat+1 bytes of it, and returns how many it wrote. A
// stream read to its end has its checksums verified.
func inflate(w io.Writer, b []byte) (int64, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return 0, err
	}
	return io.Copy(w, io.LimitReader(zr, MaxDecompressedStat+1))
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
