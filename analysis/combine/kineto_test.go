package combine

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/analysis/validate"
	"github.com/chronosync/chronosync/trace/kineto"
	"github.com/chronosync/chronosync/trace/xspace"
)

var realdata = filepath.Join("..", "..", "testdata", "realdata")

// kinetoAsXSpace converts the Kineto trace at path to XSpace planes, as
// combine does, writes them to out and returns out.
func kinetoAsXSpace(t *testing.T, path, out string) string {
	t.Helper()
	tr, err := kineto.ReadWith(path, kineto.DecodeOptions{Raw: true})
	if err != nil {
		t.Fatal(err)
	}
	space, err := kineto.ToXSpace(tr)
	if err != nil {
		t.Fatal(err)
	}
	if err := xspace.Write(out, space); err != nil {
		t.Fatal(err)
	}
	return out
}

// kinetoRanks are the two real PyTorch ranks, with their node ids read as
// the CLI reads them, and the validate nodes of the raw files.
func kinetoRanks(t *testing.T) ([]Input, []validate.Node) {
	t.Helper()
	var in []Input
	var nodes []validate.Node
	for i, f := range []string{"sampled_rank-0.json.gz", "sampled_rank-1.json.gz"} {
		path := filepath.Join(realdata, f)
		n, err := NodeOfTrace(path, 7)
		if err != nil || n != i {
			t.Fatalf("NodeOfTrace(%s) = %d, %v; want rank %d", f, n, err, i)
		}
		in = append(in, Input{Node: n, Trace: path})
		tr, err := kineto.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, validate.FromKineto(tr.Rank, tr))
	}
	return in, nodes
}

// combinedOps reads a combined XSpace's collectives as validate does.
func combinedOps(t *testing.T, path string) []validate.Node {
	t.Helper()
	space, err := xspace.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return Collectives(space, 0, path)
}

func sortedOps(ops []validate.Op) []validate.Op {
	ops = slices.Clone(ops)
	slices.SortFunc(ops, func(a, b validate.Op) int {
		return cmp.Or(cmp.Compare(a.StartNs, b.StartNs), cmp.Compare(a.EndNs, b.EndNs), strings.Compare(a.Key, b.Key))
	})
	return ops
}

// TestCombineKineto combines the two real PyTorch ranks, as Kineto inputs
// and mixed with an XSpace converted from one of them, without correction:
// every event is kept, validate sees the same collectives (by their
// hlo_op, the collective's name) at the same Unix times as on the raw
// files, and so the same counts as the raw files' ops keyed alike, and the
// same node counts. (The raw files' own check also pairs by message size,
// which the combined XSpace's collectives do not carry to validate.)
func TestCombineKineto(t *testing.T) {
	in, raw := kinetoRanks(t)
	if rep := validate.Check(raw); rep.Violations != 0 || rep.Overlaps != 4 || rep.Warnings != 3 || rep.Coverage() != "Nodes: 2 of 128 declared; missing: 2-127" {
		t.Fatalf("raw Kineto files: %s, %s; want Violations: 0, Overlaps: 4, Warnings: 3, Nodes: 2 of 128 declared; missing: 2-127", rep.Summary(), rep.Coverage())
	}
	rawRep := validate.Check(raw)
	dir := t.TempDir()
	// Rank 1 converted and written as an XSpace, for the mixed case.
	x1 := kinetoAsXSpace(t, in[1].Trace, filepath.Join(dir, "node1.xplane.pb"))
	for _, tc := range []struct {
		name   string
		inputs []Input
	}{
		{"kineto", in},
		{"mixed", []Input{in[0], {Node: 1, Trace: x1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.name, "combined.xplane.pb")
			res, err := Combine(tc.inputs, Options{NoCorrection: true, Validate: true, Output: out})
			if err != nil {
				t.Fatal(err)
			}
			md := res.Metadata
			if md.Events != 4811+4676 || md.TimeBaseNS != 1682725897000000000 {
				t.Errorf("%d events from base %d, want 4811+4676 (all but the metadata events) from 1682725897000000000", md.Events, md.TimeBaseNS)
			}
			if n := md.Nodes[0]; n.Format != "kineto" || n.TracerClock == "" || n.MissingSnapshots != 0 {
				t.Errorf("node 0 metadata %+v", n)
			}
			for _, rep := range []*validate.Report{res.Report, validate.Check(combinedOps(t, out))} {
				if rep.Violations != rawRep.Violations || rep.Overlaps != rawRep.Overlaps || rep.Warnings != rawRep.Warnings || rep.Coverage() != rawRep.Coverage() {
					t.Errorf("combined: %s, %s; raw: %s, %s", rep.Summary(), rep.Coverage(), rawRep.Summary(), rawRep.Coverage())
				}
			}
			got := combinedOps(t, out)
			for i := range raw {
				if !slices.Equal(sortedOps(got[i].Ops), sortedOps(raw[i].Ops)) {
					t.Errorf("node %d: combined collectives differ from the raw file's", i)
				}
			}
			checkTraceJSON(t, filepath.Join(dir, tc.name, "combined.trace.json.gz"), 4811+4676)
			t.Logf("%s: %d planes, %d events; %s", tc.name, md.Planes, md.Events, res.Report.Summary())
		})
	}
}

// TestCombineKinetoOffsets aligns the PyTorch ranks with offsets on their
// host clocks (Unix time): no snapshot files are needed, and rank 1's
// collectives move by exactly its offset.
func TestCombineKinetoOffsets(t *testing.T) {
	in, raw := kinetoRanks(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "offsets.jsonl")
	w, err := offsets.Create(path, offsets.Meta{File: offsets.FileOffsets, RunID: "kineto", Estimator: "svm", Mode: offsets.ModeRounds})
	if err != nil {
		t.Fatal(err)
	}
	const start, offset = int64(1682725890e9), 5e6 // node 1's clock is 5 ms ahead
	for n := range 2 {
		if err := w.Append(offsets.Offset{NodeID: n, RoundID: 1, WindowID: 1, WindowStartNS: start, WindowEndNS: start + 20e9,
			OffsetNS: float64(n) * offset, UncertaintyNS: 10}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "combined.xplane.pb")
	res, err := Combine(in, Options{Offsets: path, Validate: true, Output: out, NoTraceJSON: true})
	if err != nil {
		t.Fatal(err)
	}
	got := combinedOps(t, out)
	want := slices.Clone(raw[1].Ops)
	for i := range want {
		want[i].StartNs -= int64(offset)
		want[i].EndNs -= int64(offset)
	}
	if !slices.Equal(sortedOps(got[1].Ops), sortedOps(want)) || !slices.Equal(sortedOps(got[0].Ops), sortedOps(raw[0].Ops)) {
		t.Errorf("aligned collectives are not the raw ones moved by the offsets")
	}
	if n := res.Metadata.Nodes[1]; n.MaxCorrectionNS != int64(offset) || n.ClockSkewNS != -int64(offset) || n.OutsideWindowEvents != 0 {
		t.Errorf("node 1: max correction %d, skew %d, outside windows %d; want %d, %d, 0", n.MaxCorrectionNS, n.ClockSkewNS, n.OutsideWindowEvents, int64(offset), -int64(offset))
	}
	t.Logf("%s", res.Report.Summary())
}

// TestCombineKinetoErrors: a bad Kineto file, a snapshot file for one that
// cannot be read, a rank that is not the node given, a trace with no rank and no node<i>
// name, and an XSpace on another clock all fail naming the file.
func TestCombineKinetoErrors(t *testing.T) {
	dir := t.TempDir()
	rank0 := filepath.Join(realdata, "sampled_rank-0.json.gz")
	data, err := os.ReadFile(rank0)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.json.gz")
	badJSON := filepath.Join(dir, "bad.json")
	mi250 := filepath.Join(realdata, "mi250_minitoy_train_ROCm6_2_kineto.json.gz")
	for path, b := range map[string][]byte{truncated: data[:len(data)/2], badJSON: []byte(`{"traceEvents": [{"ph": "X", "ts": "soon"}]}`)} {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "out", "combined.xplane.pb")
	for _, tc := range []struct {
		name   string
		inputs []Input
		want   []string
	}{
		{"truncated", []Input{{Node: 0, Trace: truncated}}, []string{truncated, "gzip: unexpected EOF"}},
		{"bad JSON", []Input{{Node: 0, Trace: badJSON}}, []string{badJSON, "traceEvents[0].ts"}},
		{"snapshots", []Input{{Node: 0, Trace: rank0, Snapshots: "s.pb"}}, []string{"s.pb", "no such file"}},
		{"rank", []Input{{Node: 3, Trace: rank0}}, []string{rank0, "rank 0", "node 3"}},
		{"clocks", []Input{{Node: 0, Trace: filepath.Join(realdata, "gpu_worker.xplane.pb")}, {Node: 1, Trace: mi250}}, []string{mi250, "unrelated clocks"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Combine(tc.inputs, Options{Output: out})
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("%s left behind", out)
			}
		})
	}
	for _, path := range []string{truncated, mi250} {
		if _, err := NodeOfTrace(path, 0); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("NodeOfTrace(%s): %v, want an error naming the file", path, err)
		}
	}
	named := filepath.Join(dir, "node5.pt.trace.json.gz")
	if err := os.WriteFile(named, []byte(`{"traceEvents": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := NodeOfTrace(named, 0); err != nil || n != 5 {
		t.Errorf("NodeOfTrace(%s) = %d, %v; want 5", named, n, err)
	}
}
