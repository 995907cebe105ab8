package offsets_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/chronosync/chronosync/analysis/offsets"
)

// fuzzMeta is the meta line of a file of kind file, as the Writer writes
// it.
func fuzzMeta(t testing.TB, file string) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := offsets.NewWriter(&b, offsets.Meta{File: file, RunID: "fuzz", Estimator: "minfilter", Mode: offsets.ModeRounds}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// fuzzFile is a file of kind file holding records, as the Writer writes
// it.
func fuzzFile(t testing.TB, m offsets.Meta, records ...any) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := offsets.NewWriter(&b, m)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(records...); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// lineCount is the number of lines of data, a final one without its
// newline included.
func lineCount(data []byte) int {
	n := bytes.Count(data, []byte("\n"))
	if len(data) > 0 && data[len(data)-1] != '\n' {
		n++
	}
	return n
}

// checkLineError checks that err is a *LineError at a line of data (or
// just after the last one, for an empty file).
func checkLineError(t *testing.T, data []byte, name string, err error) {
	t.Helper()
	var le *offsets.LineError
	if !errors.As(err, &le) {
		t.Fatalf("error %q (%T) is not a *offsets.LineError", err, err)
	}
	if le.File != name || le.Line < 1 || le.Line > max(lineCount(data), 1) || le.Msg == "" {
		t.Fatalf("error %q: line %d (file %q) is not a line of the %d-line input", err, le.Line, le.File, lineCount(data))
	}
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// checkInfo checks what Info says of data, accepted with n records.
func checkInfo(t *testing.T, data []byte, info offsets.Info, n int, file string) {
	t.Helper()
	m := info.Meta
	if m.Type != "meta" || m.Schema != offsets.Schema || m.File != file || m.Units != "ns" || m.Reference < 0 ||
		m.Model != offsets.Model || m.Uncertainty != offsets.UncertaintyModel ||
		m.Mode != offsets.ModeRounds && m.Mode != offsets.ModeWindows && m.Mode != offsets.ModeConsensus {
		t.Fatalf("accepted meta %+v", m)
	}
	if info.Lines != 1+n {
		t.Fatalf("Info.Lines %d for a meta line and %d records", info.Lines, n)
	}
	tail := len(data) - (bytes.LastIndexByte(data, '\n') + 1)
	if info.Torn != (tail > 0) || info.TornBytes != tail {
		t.Fatalf("Info.Torn %v, TornBytes %d; the input ends in %d bytes after its last newline", info.Torn, info.TornBytes, tail)
	}
	if lines := bytes.Count(data, []byte("\n")); info.Lines != lines {
		t.Fatalf("Info.Lines %d; the input has %d whole lines", info.Lines, lines)
	}
}

// checkOffset checks that o, accepted by a reader, is within the ranges
// Offset.Check states.
func checkOffset(t *testing.T, i int, o offsets.Offset) {
	t.Helper()
	ok := o.Type == "offset" && o.NodeID >= 0 && o.WindowEndNS > o.WindowStartNS &&
		finite(o.OffsetNS) && math.Abs(o.OffsetNS) <= offsets.MaxOffsetNS &&
		finite(o.DriftPPM) && math.Abs(o.DriftPPM) <= offsets.MaxDriftPPM &&
		finite(o.UncertaintyNS) && o.UncertaintyNS >= 0 &&
		finite(o.DriftUncertaintyPPM) && o.DriftUncertaintyPPM >= 0
	for k, s := range o.Steps {
		ok = ok && s.AtNS >= o.WindowStartNS && s.AtNS <= o.WindowEndNS && (k == 0 || s.AtNS > o.Steps[k-1].AtNS) &&
			finite(s.AtUncertaintyNS) && s.AtUncertaintyNS >= 0 &&
			finite(s.SizeNS) && math.Abs(s.SizeNS) <= offsets.MaxOffsetNS &&
			finite(s.SizeUncertaintyNS) && s.SizeUncertaintyNS >= 0
	}
	if field, msg := o.Check(); !ok || field != "" {
		t.Fatalf("accepted offset %d out of range (%s: %s): %+v", i, field, msg, o)
	}
}

// checkEdge and checkRound do the same for the records of rounds.jsonl.
func checkEdge(t *testing.T, i int, e offsets.Edge) {
	t.Helper()
	ok := e.Type == "edge" && e.Src >= 0 && e.Dst >= 0 && e.PairsCount >= 0 && e.LostCount >= 0 &&
		finite(e.Alpha) && finite(e.Beta) && finite(e.Sigma) && e.Sigma >= 0 && finite(e.AsymSigma) && e.AsymSigma >= 0 &&
		(e.Residual == nil || finite(*e.Residual))
	if field, msg := e.Check(); !ok || field != "" {
		t.Fatalf("accepted edge %d out of range (%s: %s): %+v", i, field, msg, e)
	}
}

func checkRound(t *testing.T, i int, r offsets.Round) {
	t.Helper()
	ok := r.Type == "round" && r.Reported != nil && r.Missing != nil && r.Solved >= 0 && r.Rejected >= 0 &&
		r.Retries >= 0 && r.MessageBytes >= 0 && r.Chi2DOF >= 0 &&
		finite(r.RMSResidualNS) && finite(r.MaxResidualNS) && finite(r.Chi2) && r.Chi2 >= 0 &&
		r.PValue >= 0 && r.PValue <= 1 && finite(r.BirgeRatio) && r.BirgeRatio >= 0
	for _, id := range slices.Concat(r.Reported, r.Missing) {
		ok = ok && id >= 0
	}
	if field, msg := r.Check(); !ok || field != "" {
		t.Fatalf("accepted round %d out of range (%s: %s): %+v", i, field, msg, r)
	}
}

// reencode writes m and records with the package's Writer, which must
// take them.
func reencode(t *testing.T, m offsets.Meta, records []any) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := offsets.NewWriter(&b, m)
	if err != nil {
		t.Fatalf("NewWriter refuses the meta line the reader accepted: %v", err)
	}
	if err := w.Append(records...); err != nil {
		t.Fatalf("Append refuses records the reader accepted: %v", err)
	}
	return b.Bytes()
}

func anys[T any](s []T) []any {
	out := make([]any, len(s))
	for i := range s {
		out[i] = s[i]
	}
	return out
}

// FuzzReadOffsets (issue 18) reads arbitrary bytes as offsets.jsonl and as
// rounds.jsonl (after the file's meta line when meta is set). Nothing may
// panic; an error must be a *LineError at a line of the input; what is
// accepted must be within the ranges the package states, with an Info that
// describes the input, and must round-trip: the package's Writer takes it,
// and the reader reads that back equal, and writing it again gives the
// same bytes.
func FuzzReadOffsets(f *testing.F) {
	offMeta := offsets.Meta{File: offsets.FileOffsets, RunID: "quickstart", Estimator: "minfilter", Mode: offsets.ModeWindows, Reference: 2}
	rndMeta := offsets.Meta{File: offsets.FileRounds, RunID: "r\u00e9", Estimator: "svm", Mode: offsets.ModeConsensus}
	residual := -12.5
	offs := fuzzFile(f, offMeta,
		offsets.Offset{RoundID: 1, WindowID: 1, WindowStartNS: 1e9, WindowEndNS: 2e9, NodeID: 0},
		offsets.Offset{RoundID: 1, WindowID: 1, WindowStartNS: 1e9, WindowEndNS: 2e9, NodeID: 1,
			OffsetNS: 41250.5, DriftPPM: -12.25, UncertaintyNS: 80, DriftUncertaintyPPM: 0.02,
			Steps: []offsets.Step{
				{AtNS: 1_600_000_000, AtUncertaintyNS: 500, SizeNS: 250000, SizeUncertaintyNS: 30},
				{AtNS: 1_700_000_000, SizeNS: -1e-3},
			}},
		offsets.Offset{RoundID: math.MaxUint64, WindowID: 7, WindowStartNS: math.MinInt64, WindowEndNS: math.MinInt64 + offsets.MaxWindowNS, NodeID: 3,
			OffsetNS: -offsets.MaxOffsetNS, DriftPPM: offsets.MaxDriftPPM, UncertaintyNS: 5e-324, DriftUncertaintyPPM: 1e300})
	rnds := fuzzFile(f, rndMeta,
		offsets.Edge{RoundID: 1, WindowID: 1, Src: 0, Dst: 1, Alpha: 1.2e-5, Beta: -3500.25, Sigma: 40, AsymSigma: 12,
			PairsCount: 64, LostCount: 2, Residual: &residual, StepDetected: true},
		offsets.Edge{RoundID: 1, WindowID: 1, Src: 1, Dst: 0, Alpha: -1.2e-5, Beta: 3500, Sigma: 41, Insufficient: true, Rejected: true},
		offsets.Round{RoundID: 1, WindowID: 1, SequenceNumber: 3, Reported: []int{0, 1}, Solved: 2,
			RMSResidualNS: 3.5, MaxResidualNS: -7, Rejected: 1, WindowNS: 1e9, GatherWaitNS: 2e6, EndToStartNS: -5,
			SequenceSkewNS: 12, Retries: 1, MessageBytes: 4096, Chi2: 1.5, Chi2DOF: 2, PValue: 0.47, BirgeRatio: 0.87,
			Inconsistent: true, Warning: "loop 0→1→0 \"off\" by 3σ"},
		offsets.Round{RoundID: 2, WindowID: 2, Missing: []int{1}, Error: "disconnected graph", PValue: 1})
	f.Add(false, offs)
	f.Add(false, rnds)
	// A torn tail, as a crash during an append leaves it.
	f.Add(false, append(bytes.Clone(offs), `{"type":"offset","round_id":2,"window_id":2,"window_start_ns":2000000000,"window_end_ns":30`...))
	// A schema 1 file, and the bare meta lines.
	f.Add(false, bytes.Replace(fuzzMeta(f, offsets.FileOffsets), []byte(`"schema":3`), []byte(`"schema":1`), 1))
	f.Add(false, fuzzMeta(f, offsets.FileRounds))
	f.Add(false, []byte{})
	// Record lines after the meta line of either kind of file.
	for _, line := range []string{
		`{"type":"offset","round_id":1,"window_id":1,"window_start_ns":0,"window_end_ns":1,"node_id":0,"offset_ns":1e3,"drift_ppm":-0,"uncertainty_ns":0.5,"drift_uncertainty_ppm":0,"steps":[]}` + "\n",
		`{"type":"offset","round_id":1,"window_id":1,"window_start_ns":0,"window_end_ns":10,"node_id":0,"offset_ns":1,"drift_ppm":0,"uncertainty_ns":0,"drift_uncertainty_ppm":0,"steps":[{"at_ns":5,"at_uncertainty_ns":1,"size_ns":2,"size_uncertainty_ns":0}]}` + "\r\n",
		`{"type":"edge","round_id":1,"window_id":1,"src":0,"dst":1,"alpha":0,"beta_ns":0,"sigma_ns":0,"pairs_count":0,"lost_count":0,"residual_ns":null}` + "\n",
		`{"type":"round","round_id":1,"window_id":1,"sequence_number":1,"reported":[],"missing":[],"solved_nodes":0,"rms_residual_ns":0,"max_residual_ns":0,"rejected_edges":0,"window_ns":0,"gather_wait_ns":0,"end_to_start_ns":0,"sequence_skew_ns":0,"retries":0,"message_bytes":0,"chi2":0,"chi2_dof":0,"p_value":0,"birge_ratio":0,"error":"\ud800"}` + "\n",
		`{"type":"offset","offset_ns":"abc"}` + "\n",
		`{"type":"edge","sigma_ns":-1}` + "\n\n",
	} {
		f.Add(true, []byte(line))
	}
	offLine, rndLine := fuzzMeta(f, offsets.FileOffsets), fuzzMeta(f, offsets.FileRounds)
	f.Fuzz(func(t *testing.T, meta bool, data []byte) {
		in := data
		if meta {
			in = slices.Concat(offLine, data)
		}
		if info, offs, err := offsets.DecodeOffsets(bytes.NewReader(in), "offsets.jsonl"); err != nil {
			checkLineError(t, in, "offsets.jsonl", err)
		} else {
			checkInfo(t, in, info, len(offs), offsets.FileOffsets)
			for i, o := range offs {
				checkOffset(t, i, o)
			}
			out := reencode(t, info.Meta, anys(offs))
			info2, offs2, err := offsets.DecodeOffsets(bytes.NewReader(out), "again.jsonl")
			if err != nil {
				t.Fatalf("the reader refuses what the Writer wrote of what it read: %v\n%s", err, out)
			}
			if info2.Meta != info.Meta || !reflect.DeepEqual(offs2, offs) {
				t.Fatalf("round trip:\n read %+v %+v\nagain %+v %+v", info.Meta, offs, info2.Meta, offs2)
			}
			if again := reencode(t, info2.Meta, anys(offs2)); !bytes.Equal(again, out) {
				t.Fatalf("written twice, differently:\n%s\n%s", out, again)
			}
		}

		in = data
		if meta {
			in = slices.Concat(rndLine, data)
		}
		if info, edges, rounds, err := offsets.DecodeRounds(bytes.NewReader(in), "rounds.jsonl"); err != nil {
			checkLineError(t, in, "rounds.jsonl", err)
		} else {
			checkInfo(t, in, info, len(edges)+len(rounds), offsets.FileRounds)
			for i, e := range edges {
				checkEdge(t, i, e)
			}
			for i, r := range rounds {
				checkRound(t, i, r)
			}
			out := reencode(t, info.Meta, slices.Concat(anys(edges), anys(rounds)))
			info2, edges2, rounds2, err := offsets.DecodeRounds(bytes.NewReader(out), "again.jsonl")
			if err != nil {
				t.Fatalf("the reader refuses what the Writer wrote of what it read: %v\n%s", err, out)
			}
			if info2.Meta != info.Meta || !reflect.DeepEqual(edges2, edges) || !reflect.DeepEqual(rounds2, rounds) {
				t.Fatalf("round trip:\n read %+v %+v %+v\nagain %+v %+v %+v", info.Meta, edges, rounds, info2.Meta, edges2, rounds2)
			}
			if again := reencode(t, info2.Meta, slices.Concat(anys(edges2), anys(rounds2))); !bytes.Equal(again, out) {
				t.Fatalf("written twice, differently:\n%s\n%s", out, again)
			}
		}
	})
}

// legacyLine is one line of the legacy form, decoded independently of the
// package with encoding/json.
type legacyLine struct {
	RoundID       uint64  `json:"round_id"`
	WindowID      uint64  `json:"window_id"`
	NodeID        int     `json:"node_id"`
	MidpointNS    int64   `json:"midpoint_ns"`
	OffsetNS      float64 `json:"offset_ns"`
	DriftPPM      float64 `json:"drift_ppm"`
	UncertaintyNS float64 `json:"uncertainty_ns"`
}

// FuzzDecodeLegacy (issue 18) reads arbitrary bytes in the legacy midpoint
// form. Nothing may panic; an error must be a *LineError at a line of the
// input. Accepted windows must each end after they start and carry finite
// values within the stated bounds, and must be what DecodeLegacy
// documents: one window per node and midpoint (the later line of two
// winning), ordered by node, then time, each holding its midpoint, a
// node's windows back to back, the model re-anchored at the window's
// start.
func FuzzDecodeLegacy(f *testing.F) {
	for _, s := range []string{
		`{"node_id":0,"midpoint_ns":1500000000,"offset_ns":0}` + "\n" +
			`{"node_id":1,"midpoint_ns":1500000000,"offset_ns":41250.5,"drift_ppm":-12.25,"uncertainty_ns":80}` + "\n" +
			`{"node_id":1,"midpoint_ns":2500000001,"offset_ns":41238.25,"drift_ppm":-12.25,"uncertainty_ns":79.5,"round_id":2,"window_id":2}` + "\n",
		// A lone record, a blank line, CRLF, no final newline.
		"\n{\"round_id\":7,\"window_id\":7,\"node_id\":3,\"midpoint_ns\":-5,\"offset_ns\":-1e3}\r\n  \n",
		`{"node_id":2,"midpoint_ns":10,"offset_ns":1}` + "\n" + `{"node_id":2,"midpoint_ns":10,"offset_ns":2}`,
		// The ends of the int64 range, and the limits of the values.
		`{"node_id":0,"midpoint_ns":9223372036854775806,"offset_ns":31557600000000000,"drift_ppm":1000}` + "\n" +
			`{"node_id":0,"midpoint_ns":-9223372036854775808,"offset_ns":-31557600000000000,"drift_ppm":-1000,"uncertainty_ns":1e300}` + "\n",
		`{"node_id":0,"midpoint_ns":9223372036854775807,"offset_ns":0}` + "\n",
		// Broken lines.
		`{"node_id":0,"midpoint_ns":1,"offset_ns":1e400}` + "\n",
		`{"node_id":-1,"midpoint_ns":1,"offset_ns":0}` + "\n",
		`{"node_id":0,"midpoint_ns":1,"offset_ns":0} {}` + "\n",
		`{"node_id":0,"midpoint_ns":1,"offset_ns":0,"extra":1}` + "\n",
		`[1, 2]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		offs, err := offsets.DecodeLegacy(bytes.NewReader(data), "legacy.json")
		if err != nil {
			checkLineError(t, data, "legacy.json", err)
			return
		}
		// What the windows must be: the last line of each node and
		// midpoint, in order.
		type key struct {
			node int
			mid  int64
		}
		last := map[key]legacyLine{}
		for line := range bytes.SplitSeq(data, []byte("\n")) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			var l legacyLine
			if err := json.Unmarshal(line, &l); err != nil {
				t.Fatalf("DecodeLegacy accepts a line encoding/json refuses (%v): %q", err, line)
			}
			last[key{l.NodeID, l.MidpointNS}] = l
		}
		var keys []key
		for k := range last {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b key) int { return cmp.Or(cmp.Compare(a.node, b.node), cmp.Compare(a.mid, b.mid)) })
		if len(offs) != len(keys) {
			t.Fatalf("%d windows for %d nodes and midpoints", len(offs), len(keys))
		}
		// Re-anchoring moves the offset by at most drift × the window's
		// reach, which is less than 2^64 ns.
		maxOffset := offsets.MaxOffsetNS + offsets.MaxDriftPPM*1e-6*math.Exp2(64)
		for i, o := range offs {
			k, l := keys[i], last[keys[i]]
			if o.WindowEndNS <= o.WindowStartNS {
				t.Fatalf("window %d [%d, %d) does not end after it starts", i, o.WindowStartNS, o.WindowEndNS)
			}
			if !finite(o.OffsetNS) || !finite(o.DriftPPM) || !finite(o.UncertaintyNS) || !finite(o.DriftUncertaintyPPM) ||
				math.Abs(o.OffsetNS) > maxOffset || math.Abs(o.DriftPPM) > offsets.MaxDriftPPM || o.UncertaintyNS < 0 {
				t.Fatalf("window %d: values out of range: %+v", i, o)
			}
			if o.Type != "offset" || o.NodeID != k.node || o.RoundID != l.RoundID || o.WindowID != l.WindowID ||
				o.DriftPPM != l.DriftPPM || o.UncertaintyNS != l.UncertaintyNS || o.DriftUncertaintyPPM != 0 || o.Steps != nil {
				t.Fatalf("window %d is not the record of node %d at %d: %+v, want %+v", i, k.node, k.mid, o, l)
			}
			// A window is [start, end), so one at the top of the range
			// cannot hold a midpoint of LegacyMaxNS (TestLegacyWindows
			// holds that window to [.., LegacyMaxNS)).
			if k.mid < o.WindowStartNS || k.mid >= o.WindowEndNS && (k.mid != offsets.LegacyMaxNS || o.WindowEndNS != offsets.LegacyMaxNS) {
				t.Fatalf("window %d [%d, %d) does not hold its midpoint %d", i, o.WindowStartNS, o.WindowEndNS, k.mid)
			}
			if i > 0 && offs[i-1].NodeID == o.NodeID && offs[i-1].WindowEndNS != o.WindowStartNS {
				t.Fatalf("windows %d and %d of node %d are not back to back: [%d, %d) and [%d, %d)", i-1, i, o.NodeID,
					offs[i-1].WindowStartNS, offs[i-1].WindowEndNS, o.WindowStartNS, o.WindowEndNS)
			}
			// The offset at the start is the one at the midpoint less the
			// drift over the distance between them.
			want := l.OffsetNS - l.DriftPPM*1e-6*float64(uint64(k.mid)-uint64(o.WindowStartNS))
			if math.Abs(o.OffsetNS-want) > 1e-9*max(1, math.Abs(want)) {
				t.Fatalf("window %d: offset_ns %g at its start %d, want %g (%g at midpoint %d, drift %g ppm)",
					i, o.OffsetNS, o.WindowStartNS, want, l.OffsetNS, k.mid, l.DriftPPM)
			}
		}
	})
}
