package combine

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"

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
	return "", legacyWindows(recs), nil
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
}

// readLegacy reads the legacy form strictly: every line a JSON object with
// node_id, midpoint_ns and offset_ns; an error names the file and line.
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
		var r legacyRecord
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			return nil, fmt.Errorf("%s:%d: legacy offsets record: %v", path, n, err)
		}
		switch {
		case r.NodeID == nil:
			return nil, fmt.Errorf("%s:%d: legacy offsets record: node_id missing", path, n)
		case r.MidpointNS == nil:
			return nil, fmt.Errorf("%s:%d: legacy offsets record: midpoint_ns missing", path, n)
		case r.OffsetNS == nil:
			return nil, fmt.Errorf("%s:%d: legacy offsets record: offset_ns missing", path, n)
		case math.IsNaN(*r.OffsetNS) || math.IsInf(*r.OffsetNS, 0):
			return nil, fmt.Errorf("%s:%d: legacy offsets record: offset_ns is not finite", path, n)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return out, nil
}

// legacyWindows turns midpoint records into windows: each node's window k
// runs from halfway between midpoints k−1 and k to halfway between k and
// k+1, with the model re-anchored at the window start. The first and last
// windows reach as far out as they reach in (a lone record: 1 s either
// side); readings beyond them use the nearest window's model and are
// flagged, as with GraphCalc's own windows.
func legacyWindows(recs []legacyRecord) []offsets.Offset {
	slices.SortStableFunc(recs, func(a, b legacyRecord) int {
		return cmp.Or(cmp.Compare(*a.NodeID, *b.NodeID), cmp.Compare(*a.MidpointNS, *b.MidpointNS))
	})
	same := func(i, j int) bool { return j >= 0 && j < len(recs) && *recs[i].NodeID == *recs[j].NodeID }
	out := make([]offsets.Offset, 0, len(recs))
	for i, r := range recs {
		mid := *r.MidpointNS
		var left, right int64 = -1, -1 // half-gaps to the neighbours
		if same(i, i-1) {
			left = (mid - *recs[i-1].MidpointNS) / 2
		}
		if same(i, i+1) {
			right = (*recs[i+1].MidpointNS - mid) / 2
		}
		switch {
		case left < 0 && right < 0:
			left, right = 1e9, 1e9
		case left < 0:
			left = right
		case right < 0:
			right = left
		}
		if left == 0 && right == 0 {
			continue // two records at one midpoint: the later one covers it
		}
		start := mid - left
		out = append(out, offsets.Offset{
			Type: "offset", RoundID: r.RoundID, WindowID: r.WindowID, NodeID: *r.NodeID,
			WindowStartNS: start, WindowEndNS: mid + max(right, 1),
			OffsetNS: *r.OffsetNS - r.DriftPPM*1e-6*float64(left),
			DriftPPM: r.DriftPPM, UncertaintyNS: r.Uncert,
		})
	}
	return out
}
