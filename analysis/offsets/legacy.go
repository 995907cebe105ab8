package offsets

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"

	"github.com/chronosync/chronosync/infile"
)

// The limits of the legacy midpoint form, all in one place. DecodeLegacy
// refuses a line beyond them with a *LineError naming the file, the line,
// the field and the limit:
//
//   - node_id is a non-negative integer; round_id and window_id, when
//     present, non-negative integers.
//   - offset_ns, drift_ppm and uncertainty_ns have the bounds of
//     offsets.jsonl (see Offset.Check): |offset_ns| ≤ MaxOffsetNS,
//     |drift_ppm| ≤ MaxDriftPPM, uncertainty_ns finite and ≥ 0; JSON has
//     no NaN or infinity, and a number beyond float64's range is an error.
//   - midpoint_ns is any int64, but its window must end after it starts
//     within [LegacyMinNS, LegacyMaxNS]: of two midpoints 1 ns apart at the
//     very top of the range, the later has no room left.
const (
	// LegacyLoneReachNS is how far the window of a node's only record
	// reaches either side of its midpoint: 1 s.
	LegacyLoneReachNS = 1_000_000_000
	// LegacyMinNS and LegacyMaxNS bound every window: the ends of the
	// int64 range, which the outer windows reach no further than. Every
	// bound is computed with overflow checks against them.
	LegacyMinNS = math.MinInt64
	LegacyMaxNS = math.MaxInt64
)

// legacyRecord is one line of the legacy midpoint form: the node's clock
// model measured at the midpoint of a window, as the first ChronoSync
// tools wrote it. offset_ns is the node's clock minus global time at
// midpoint_ns (a reading of the node's clock); drift_ppm the node's rate
// minus the global rate. Fields tagged omitempty may be absent.
type legacyRecord struct {
	RoundID       uint64  `json:"round_id,omitempty"`
	WindowID      uint64  `json:"window_id,omitempty"`
	NodeID        int     `json:"node_id"`
	MidpointNS    int64   `json:"midpoint_ns"`
	OffsetNS      float64 `json:"offset_ns"`
	DriftPPM      float64 `json:"drift_ppm,omitempty"`
	UncertaintyNS float64 `json:"uncertainty_ns,omitempty"`
}

// legacySpec is the JSON shape of a legacyRecord.
var legacySpec = specOf(legacyRecord{})

// ReadLegacy reads an offsets file in the legacy midpoint form (see
// DecodeLegacy).
func ReadLegacy(path string) ([]Offset, error) {
	f, err := infile.Open(path, infile.LegacyOffsets)
	if err != nil {
		return nil, fmt.Errorf("read offsets: %w", err)
	}
	defer f.Close()
	return DecodeLegacy(f, path)
}

// DecodeLegacy reads the legacy midpoint form of an offsets file from r
// (name names it in errors) and returns its records as windows of Offset,
// ordered by node, then window.
//
// The form has no meta line: every non-blank line is one JSON object with
// node_id, midpoint_ns and offset_ns, and optionally drift_ppm,
// uncertainty_ns, round_id and window_id, and nothing else, not even data
// after the object; a final line may lack its newline. Values are checked
// against the limits stated with LegacyLoneReachNS.
//
// Each node's window k runs from halfway between midpoints k−1 and k to
// halfway between k and k+1 (where they are an odd number of ns apart, the
// earlier window takes the odd ns), with the model re-anchored at the
// window's start. The first and last windows reach as far out as they
// reach in (a lone record: LegacyLoneReachNS either side), but no further
// than [LegacyMinNS, LegacyMaxNS]. Of two records at one midpoint the later
// in the file covers it. Re-anchored, the offset may lie beyond
// MaxOffsetNS by up to drift × the window's reach (at most about 1.8e16 ns
// at MaxDriftPPM).
//
// Errors are *LineError values, except those of r itself, e.g.
//
//	offsets.json:3: drift_ppm: 1e+308 is out of range; expected |drift_ppm| ≤ 1000
//	offsets.json:2: unexpected data after the JSON object at column 61
func DecodeLegacy(r io.Reader, name string) ([]Offset, error) {
	var recs []legacyRecord
	var at []int // each record's line
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := readLine(br)
		switch err {
		case nil, errTorn: // a final line without its newline is read too
		case io.EOF:
			return legacyWindows(name, recs, at)
		case errLong:
			return nil, &LineError{File: name, Line: n, Msg: errLongMsg}
		default:
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			rec, err := decodeLegacyLine(line)
			if err != nil {
				return nil, &LineError{File: name, Line: n, Msg: err.Error()}
			}
			recs, at = append(recs, rec), append(at, n)
		}
		if err == errTorn {
			return legacyWindows(name, recs, at)
		}
	}
}

// decodeLegacyLine decodes and checks one line of the legacy form.
func decodeLegacyLine(line []byte) (legacyRecord, error) {
	var rec legacyRecord
	ms, err := splitObject(line)
	if err != nil {
		return rec, err
	}
	if err := decodeFields(ms, legacySpec, reflect.ValueOf(&rec).Elem(), "", ""); err != nil {
		return rec, err
	}
	// The record's own values, by offsets.jsonl's bounds. It has no
	// window of its own: [0, 1) stands in for the one legacyWindows makes
	// (and checks).
	o := Offset{OffsetNS: rec.OffsetNS, DriftPPM: rec.DriftPPM, UncertaintyNS: rec.UncertaintyNS, WindowEndNS: 1}
	if field, msg := o.Check(); field != "" {
		return rec, fmt.Errorf("%s: %s", field, msg)
	}
	return rec, nil
}

// legacyWindows turns the records, read from lines at of file name, into
// windows (see DecodeLegacy). Distances between int64 values are taken in
// uint64, which holds any, and every bound is checked against LegacyMinNS
// and LegacyMaxNS before it is computed.
func legacyWindows(name string, recs []legacyRecord, at []int) ([]Offset, error) {
	type rec struct {
		legacyRecord
		line int
	}
	rs := make([]rec, len(recs))
	for i := range recs {
		rs[i] = rec{recs[i], at[i]}
	}
	slices.SortStableFunc(rs, func(a, b rec) int {
		return cmp.Or(cmp.Compare(a.NodeID, b.NodeID), cmp.Compare(a.MidpointNS, b.MidpointNS))
	})
	// Keep the last record of each node and midpoint.
	kept := rs[:0]
	for i, r := range rs {
		if i+1 < len(rs) && rs[i+1].NodeID == r.NodeID && rs[i+1].MidpointNS == r.MidpointNS {
			continue
		}
		kept = append(kept, r)
	}
	rs = kept
	same := func(i, j int) bool { return j >= 0 && j < len(rs) && rs[i].NodeID == rs[j].NodeID }
	dist := func(a, b int64) uint64 { return uint64(b) - uint64(a) } // b − a for a ≤ b
	// half is the bound between the midpoints a < b: a + ⌈(b − a)/2⌉,
	// which lies in (a, b].
	half := func(a, b int64) int64 {
		gap := dist(a, b)
		return int64(uint64(a) + (gap - gap/2))
	}
	out := make([]Offset, 0, len(rs))
	for i, r := range rs {
		mid := r.MidpointNS
		first, last := !same(i, i-1), !same(i, i+1)
		var start, end int64
		var left, right uint64 // reach to start and to end
		if !first {
			start = half(rs[i-1].MidpointNS, mid)
			left = dist(start, mid)
		}
		if !last {
			end = half(mid, rs[i+1].MidpointNS)
			right = dist(mid, end)
		}
		switch {
		case first && last:
			left, right = LegacyLoneReachNS, LegacyLoneReachNS
		case first:
			left = right
		case last:
			right = max(left, 1)
		}
		// Outer bounds reach out as far as the inner ones reach in, up to
		// the limits.
		if first {
			start = LegacyMinNS
			if left <= dist(LegacyMinNS, mid) {
				start = int64(uint64(mid) - left)
			}
		}
		if last {
			end = LegacyMaxNS
			if right <= dist(mid, LegacyMaxNS) {
				end = int64(uint64(mid) + right)
			}
		}
		if end <= start {
			return nil, &LineError{File: name, Line: r.line, Msg: fmt.Sprintf(
				"midpoint_ns: %d leaves its window no room before the end of the int64 range: [%d, %d) does not end after it starts",
				mid, start, end)}
		}
		out = append(out, Offset{
			Type: "offset", RoundID: r.RoundID, WindowID: r.WindowID, NodeID: r.NodeID,
			WindowStartNS: start, WindowEndNS: end,
			OffsetNS: r.OffsetNS - r.DriftPPM*1e-6*float64(dist(start, mid)),
			DriftPPM: r.DriftPPM, UncertaintyNS: r.UncertaintyNS,
		})
	}
	return out, nil
}
