package combine

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/chronosync/chronosync/analysis/offsets"
)

// readOffsets reads an offsets file: GraphCalc's offsets.jsonl (a meta line,
// then one record per node and window), or the legacy midpoint form (no meta
// line; one record per node and window with the node's clock reading at the
// window's midpoint, see legacyRecord). It returns the run id ("" for the
// legacy form) and the records, as windows of offsets.Offset.
func readOffsets(path string) (runID string, offs []offsets.Offset, err error) {
	legacy, err := isLegacy(path)
	if err != nil {
		return "", nil, err
	}
	if !legacy {
		info, offs, err := offsets.ReadOffsets(path)
		if err != nil {
			return "", nil, err
		}
		if info.Torn {
			return "", nil, fmt.Errorf("%s: the last line is torn (an interrupted write)", path)
		}
		return info.Meta.RunID, offs, nil
	}
	recs, err := readLegacy(path)
	if err != nil {
		return "", nil, err
	}
	windows, err := legacyWindows(path, recs)
	if err != nil {
		return "", nil, err
	}
	return "", windows, nil
}

// isLegacy reports whether the file's first non-empty line is not a meta
// record.
func isLegacy(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("read offsets: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var head struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(line, &head); err != nil {
			return false, fmt.Errorf("%s:1: not a JSON object: %v", path, err)
		}
		return head.Type != "meta", nil
	}
	if err := sc.Err(); err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	return false, fmt.Errorf("%s: empty offsets file", path)
}

// legacyRecord is one line of the legacy midpoint form: the node's clock
// model measured at the midpoint of a window, as the first ChronoSync tools
// wrote it. offset_ns is the node's clock minus global time at midpoint_ns
// (a reading of the node's clock); drift_ppm the node's rate minus the
// global rate.
type legacyRecord struct {
	RoundID    uint64   `json:"round_id"`
	WindowID   uint64   `json:"window_id"`
	NodeID     *int     `json:"node_id"`
	MidpointNS *int64   `json:"midpoint_ns"`
	OffsetNS   *float64 `json:"offset_ns"`
	DriftPPM   float64  `json:"drift_ppm"`
	Uncert     float64  `json:"uncertainty_ns"`
	line       int      // its line in the file, for errors
}

// readLegacy reads the legacy form strictly: every line a JSON object with
// node_id, midpoint_ns and offset_ns, its values within offsets.jsonl's
// bounds (offsets.Offset.Check); an error names the file and line.
func readLegacy(path string) ([]legacyRecord, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read offsets: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var out []legacyRecord
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		r := legacyRecord{line: n}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			var ute *json.UnmarshalTypeError
			if errors.As(err, &ute) && ute.Field != "" {
				return nil, fmt.Errorf("%s:%d: %s: expected %s, got %s", path, n, ute.Field, jsonKind(ute.Type), strings.TrimPrefix(ute.Value, "number "))
			}
			return nil, fmt.Errorf("%s:%d: legacy offsets record: %v", path, n, err)
		}
		switch {
		case r.NodeID == nil:
			return nil, fmt.Errorf("%s:%d: legacy offsets record: node_id missing", path, n)
		case r.MidpointNS == nil:
			return nil, fmt.Errorf("%s:%d: legacy offsets record: midpoint_ns missing", path, n)
		case r.OffsetNS == nil:
			return nil, fmt.Errorf("%s:%d: legacy offsets record: offset_ns missing", path, n)
		case *r.NodeID < 0:
			return nil, fmt.Errorf("%s:%d: node_id: expected a non-negative integer, got %d", path, n, *r.NodeID)
		}
		// The record's own values, by offsets.jsonl's bounds. It has no
		// window of its own: [0, 1) stands in for the one legacyWindows
		// makes (and checks).
		o := offsets.Offset{OffsetNS: *r.OffsetNS, DriftPPM: r.DriftPPM, UncertaintyNS: r.Uncert, WindowEndNS: 1}
		if field, msg := o.Check(); field != "" {
			return nil, fmt.Errorf("%s:%d: %s: %s", path, n, field, msg)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return out, nil
}

// jsonKind names what a Go type holds, for messages.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Float64:
		return "a number"
	case reflect.Uint64:
		return "a non-negative integer"
	case reflect.Int, reflect.Int64:
		return "an integer"
	}
	return t.String()
}

// legacyWindows turns midpoint records into windows: each node's window k
// runs from halfway between midpoints k−1 and k to halfway between k and
// k+1 (where they are an odd number of ns apart, the earlier window takes
// the odd ns), with the model re-anchored at the window start. The first
// and last windows reach as far out as they reach in (a lone record: 1 s
// either side), but no further than an int64 reaches; readings beyond them
// use the nearest window's model and are flagged, as with GraphCalc's own
// windows. Of two records at one midpoint the later in the file covers it.
// A window that cannot end after it starts (a midpoint at the very end of
// the int64 range, 1 ns after another) is an error naming path and the
// record's line. The bounds of offsets.Offset.Check apply to the file's
// values (readLegacy); re-anchored at a window's start, the offset may lie
// beyond them by drift × the reach of the window, which stays far inside
// what alignment can take.
func legacyWindows(path string, recs []legacyRecord) ([]offsets.Offset, error) {
	slices.SortStableFunc(recs, func(a, b legacyRecord) int {
		return cmp.Or(cmp.Compare(*a.NodeID, *b.NodeID), cmp.Compare(*a.MidpointNS, *b.MidpointNS))
	})
	// Keep the last record of each node and midpoint.
	kept := recs[:0]
	for i, r := range recs {
		if i+1 < len(recs) && *recs[i+1].NodeID == *r.NodeID && *recs[i+1].MidpointNS == *r.MidpointNS {
			continue
		}
		kept = append(kept, r)
	}
	recs = kept
	same := func(i, j int) bool { return j >= 0 && j < len(recs) && *recs[i].NodeID == *recs[j].NodeID }
	// half returns the bound between the midpoints a < b and the reach
	// from a to it; the gap is taken in uint64, which holds any.
	half := func(a, b int64) (int64, uint64) {
		gap := uint64(b) - uint64(a)
		reach := gap - gap/2
		return int64(uint64(a) + reach), reach
	}
	out := make([]offsets.Offset, 0, len(recs))
	for i, r := range recs {
		mid := *r.MidpointNS
		var start, end int64
		var left, right uint64 // reach to start and to end; 0 for none yet
		if same(i, i-1) {
			start, _ = half(*recs[i-1].MidpointNS, mid)
			left = uint64(mid) - uint64(start)
		}
		if same(i, i+1) {
			end, right = half(mid, *recs[i+1].MidpointNS)
		}
		first, last := !same(i, i-1), !same(i, i+1)
		switch {
		case first && last:
			left, right = 1e9, 1e9
		case first:
			left = right
		case last:
			right = max(left, 1)
		}
		// Outer bounds reach out as far as the inner ones reach in, up to
		// the ends of the int64 range.
		if first {
			start = math.MinInt64
			if left <= uint64(mid)-uint64(start) {
				start = int64(uint64(mid) - left)
			}
		}
		if last {
			end = math.MaxInt64
			if right <= uint64(end)-uint64(mid) {
				end = int64(uint64(mid) + right)
			}
		}
		o := offsets.Offset{
			Type: "offset", RoundID: r.RoundID, WindowID: r.WindowID, NodeID: *r.NodeID,
			WindowStartNS: start, WindowEndNS: end,
			OffsetNS: *r.OffsetNS - r.DriftPPM*1e-6*float64(uint64(mid)-uint64(start)),
			DriftPPM: r.DriftPPM, UncertaintyNS: r.Uncert,
		}
		if end <= start {
			return nil, fmt.Errorf("%s:%d: midpoint_ns: %d leaves its window no room before the end of the int64 range: [%d, %d) does not end after it starts",
				path, r.line, mid, start, end)
		}
		out = append(out, o)
	}
	return out, nil
}
