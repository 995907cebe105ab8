package combine

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/trace/kineto"
	"github.com/chronosync/chronosync/trace/snapshotpb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// members decodes an event's JSON text into its members, less ts and dur.
func members(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "ts")
	delete(m, "dur")
	return m
}

// checkSameEvents reads the aligned copy of a Kineto trace back with our
// own reader and checks that it keeps every event, with every member but
// ts and dur (names, args, ids, flow ids and bindings) as it was, and the
// trace's distributed info (a rank added where it had none) and time base
// (the traces these tests combine share one); it returns both traces.
func checkSameEvents(t *testing.T, rawPath, outPath string) (raw, out *kineto.Trace) {
	t.Helper()
	raw, err := kineto.ReadWith(rawPath, kineto.DecodeOptions{Raw: true})
	if err != nil {
		t.Fatal(err)
	}
	out, err = kineto.ReadWith(outPath, kineto.DecodeOptions{Raw: true})
	if err != nil {
		t.Fatalf("our own reader cannot read the aligned copy: %v", err)
	}
	if len(out.Events) != len(raw.Events) {
		t.Fatalf("%s: %d events, want %d", outPath, len(out.Events), len(raw.Events))
	}
	wantRank := raw.Rank
	if wantRank < 0 {
		wantRank = out.Rank // given its rank, as HTA needs one (TestKinetoSharedBase checks which)
	}
	if out.Rank != wantRank || out.Rank < 0 || out.WorldSize != raw.WorldSize || out.Backend != raw.Backend || out.BaseTimeNs != raw.BaseTimeNs {
		t.Errorf("%s: rank %d/%d %q base %d, want %d/%d %q base %d", outPath, out.Rank, out.WorldSize, out.Backend, out.BaseTimeNs,
			raw.Rank, raw.WorldSize, raw.Backend, raw.BaseTimeNs)
	}
	flows := 0
	for i := range raw.Events {
		a, b := &raw.Events[i], &out.Events[i]
		if a.Ph == "s" || a.Ph == "f" {
			flows++
		}
		if !reflect.DeepEqual(members(t, a.Raw), members(t, b.Raw)) {
			t.Fatalf("event %d changed beyond ts and dur:\n%s\n%s", i, a.Raw, b.Raw)
		}
	}
	t.Logf("%s: %d events (%d flow ends) kept", filepath.Base(outPath), len(out.Events), flows)
	return raw, out
}

// TestKinetoOutKeepsEvents: combining the two real ranks writes each one's
// copy under its own name, with every event, flow and id kept; without
// correction, every time too.
func TestKinetoOutKeepsEvents(t *testing.T) {
	in, _ := kinetoRanks(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "combined.xplane.pb")
	res, err := Combine(in, Options{NoCorrection: true, Output: out, NoTraceJSON: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range res.Metadata.Nodes {
		want := filepath.Join("combined.kineto", filepath.Base(in[i].Trace))
		if n.Corrected != want {
			t.Errorf("node %d: corrected copy %q, want %q", n.ID, n.Corrected, want)
		}
		raw, got := checkSameEvents(t, in[i].Trace, filepath.Join(dir, want))
		for j := range raw.Events {
			if raw.Events[j].TsNs != got.Events[j].TsNs || raw.Events[j].DurNs != got.Events[j].DurNs {
				t.Fatalf("event %d moved without correction", j)
			}
		}
	}
}

// TestKinetoOutKeepsFlows: the ROCm trace's flows (launch to kernel) and
// ids come through an aligned copy unchanged.
func TestKinetoOutKeepsFlows(t *testing.T) {
	dir := t.TempDir()
	in := []Input{{Node: 0, Trace: filepath.Join(realdata, "mi250_minitoy_train_ROCm6_2_kineto.json.gz")}}
	offs := writeConstantOffsets(t, dir, 0, []float64{3e6})
	if _, err := Combine(in, Options{Offsets: offs, Output: filepath.Join(dir, "c.xplane.pb"), NoTraceJSON: true}); err != nil {
		t.Fatal(err)
	}
	raw, got := checkSameEvents(t, in[0].Trace, filepath.Join(dir, "c.kineto", filepath.Base(in[0].Trace)))
	flows := 0
	for i := range raw.Events {
		if raw.Events[i].Ph == "s" || raw.Events[i].Ph == "f" {
			flows++
		}
		if raw.Events[i].Ph != "M" && got.Events[i].TsNs == raw.Events[i].TsNs {
			t.Fatalf("event %d did not move by the 3 ms offset", i)
		}
	}
	if flows == 0 {
		t.Fatal("the ROCm trace has no flow events: the test checks nothing about flows")
	}
}

// TestKinetoOutOffsets: with node 1's clock 5 ms ahead, its copy's events
// all move back by 5 ms and node 0's stay; and the copies' collectives are
// the combined XSpace's.
func TestKinetoOutOffsets(t *testing.T) {
	in, _ := kinetoRanks(t)
	dir := t.TempDir()
	offs := writeConstantOffsets(t, dir, 1682725890e9, []float64{0, 5e6})
	out := filepath.Join(dir, "combined.xplane.pb")
	kdir := filepath.Join(dir, "aligned")
	if _, err := Combine(in, Options{Offsets: offs, Output: out, NoTraceJSON: true, KinetoDir: kdir}); err != nil {
		t.Fatal(err)
	}
	combined := combinedOps(t, out)
	for i, shift := range []int64{0, 5e6} {
		raw, got := checkSameEvents(t, in[i].Trace, filepath.Join(kdir, filepath.Base(in[i].Trace)))
		for j := range raw.Events {
			if got.Events[j].TsNs != raw.Events[j].TsNs-shift || got.Events[j].DurNs != raw.Events[j].DurNs {
				t.Fatalf("node %d event %d: ts %d dur %d, want %d %d", i, j, got.Events[j].TsNs, got.Events[j].DurNs,
					raw.Events[j].TsNs-shift, raw.Events[j].DurNs)
			}
		}
		ks := kineto.Collectives(got)
		if len(ks) != len(combined[i].Ops) {
			t.Fatalf("node %d: %d collectives in the copy, %d combined", i, len(ks), len(combined[i].Ops))
		}
		for j, k := range ks {
			if op := sortedOps(combined[i].Ops)[j]; got.UnixNs(k.StartNs) != op.StartNs || got.UnixNs(k.EndNs) != op.EndNs {
				t.Errorf("node %d collective %d: copy %d..%d, combined %d..%d", i, j, got.UnixNs(k.StartNs), got.UnixNs(k.EndNs), op.StartNs, op.EndNs)
			}
		}
	}
}

// writeConstantOffsets writes an offsets file with one window per node
// from start for 20 s, node i's clock off[i] ns ahead.
func writeConstantOffsets(t *testing.T, dir string, start int64, off []float64) string {
	t.Helper()
	path := filepath.Join(dir, "offsets.jsonl")
	w, err := offsets.Create(path, offsets.Meta{File: offsets.FileOffsets, RunID: "kineto", Estimator: "svm", Mode: offsets.ModeRounds})
	if err != nil {
		t.Fatal(err)
	}
	for n, o := range off {
		if err := w.Append(offsets.Offset{NodeID: n, RoundID: 1, WindowID: 1, WindowStartNS: start, WindowEndNS: start + 20e9,
			OffsetNS: o, UncertaintyNS: 10}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestKinetoOutAtomic: when a later input fails, neither the combined
// outputs nor any aligned copy is left behind, nor the directory made for
// them.
func TestKinetoOutAtomic(t *testing.T) {
	in, _ := kinetoRanks(t)
	dir := t.TempDir()
	b, err := readKinetoText(in[1].Trace)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "rank-1.json")
	if err := os.WriteFile(cut, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out", "combined.xplane.pb")
	_, err = Combine([]Input{in[0], {Node: 1, Trace: cut}}, Options{NoCorrection: true, Output: out})
	if err == nil || !strings.Contains(err.Error(), cut) {
		t.Fatalf("Combine with a truncated rank: %v; want an error naming %s", err, cut)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "out", "*"))
	if len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestKinetoGPUCorrection: a GPU clock 100 ppm fast, converted by the
// profiler with the offset it had at its start, is corrected by snapshot
// pairs to the true host times, in the combined XSpace and in the aligned
// copy, and the metadata says by how much.
func TestKinetoGPUCorrection(t *testing.T) {
	dir := t.TempDir()
	const h0 = int64(1000e9) // the profiler's start, host ns
	gpu := func(s int64) int64 { return s + s/10000 + 7e9 }
	c := h0 - gpu(h0) // the profiler's offset
	var evs []string
	evs = append(evs, fmt.Sprintf(`{"ph":"X","cat":"cpu_op","name":"step","pid":100,"tid":100,"ts":%d,"dur":5000000}`, h0/1000))
	var truth []int64
	for k := range 5 {
		s := h0 + int64(k)*1e9 + 1e6
		truth = append(truth, s)
		evs = append(evs, fmt.Sprintf(`{"ph":"X","cat":"kernel","name":"k%d","pid":0,"tid":7,"ts":%d,"dur":10,"args":{"device":0,"stream":7}}`, k, (gpu(s)+c)/1000))
	}
	trace := filepath.Join(dir, "rank-0.json")
	text := `{"distributedInfo":{"rank":0,"world_size":1},"traceEvents":[` + strings.Join(evs, ",") + `]}`
	if err := os.WriteFile(trace, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	sp := &snapshotpb.SnapshotPairs{NodeId: 0, SamplingPeriodNs: 1e9}
	for s := h0 - 2e9; s <= h0+8e9; s += 1e9 {
		sp.Pairs = append(sp.Pairs, &snapshotpb.SnapshotPair{SysClockNs: s, TracerClockNs: gpu(s)})
	}
	snaps := filepath.Join(dir, "node0.snapshots.pb")
	if err := xspace.Write(snaps, sp); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "combined.xplane.pb")
	res, err := Combine([]Input{{Node: 0, Trace: trace, Snapshots: snaps}}, Options{Output: out, NoTraceJSON: true})
	if err != nil {
		t.Fatal(err)
	}
	md := res.Metadata.Nodes[0]
	// The last kernel, 4 s after the start, was 400 µs off.
	if d := md.GPUConversionCorrectionMaxNS; math.Abs(float64(d)-400e3) > 2e3 {
		t.Errorf("GPU conversion correction %d ns, want about 400 µs", d)
	}
	got, err := kineto.Read(filepath.Join(dir, "combined.kineto", "rank-0.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Events[0].TsNs != h0 {
		t.Errorf("host event moved: %d, want %d", got.Events[0].TsNs, h0)
	}
	for k, s := range truth {
		if d := got.Events[1+k].TsNs - s; d < -1000 || d > 1000 {
			t.Errorf("kernel %d: aligned %d, true %d (%+d ns); raw was %+d ns", k, got.Events[1+k].TsNs, s, d, gpu(s)+c-s)
		}
	}
	space, err := xspace.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range space.Planes {
		if !strings.HasPrefix(p.Name, gpuPrefix) {
			continue
		}
		base, _ := xspace.TimeBase(p)
		for _, l := range p.Lines {
			for k, ev := range l.Events {
				if d := base + xspace.StartPs(l, ev)/1000 - truth[k]; d < -1000 || d > 1000 {
					t.Errorf("combined kernel %d off by %d ns", k, d)
				}
			}
		}
	}
}

// TestKinetoRanksShareNode: with both real ranks placed on node 1, both
// go through node 1's clock model (5 ms ahead), keep their rank in the
// outputs, and a rank the map leaves out is an error.
func TestKinetoRanksShareNode(t *testing.T) {
	in, _ := kinetoRanks(t)
	dir := t.TempDir()
	offs := writeConstantOffsets(t, dir, 1682725890e9, []float64{0, 5e6})
	out := filepath.Join(dir, "combined.xplane.pb")
	res, err := Combine(in, Options{Offsets: offs, Output: out, NoTraceJSON: true, RankNodes: map[int]int{0: 1, 1: 1}})
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range res.Metadata.Nodes {
		if n.ID != i || n.ClockNode != 1 || n.MaxCorrectionNS != 5e6 {
			t.Errorf("rank %d: id %d, clock node %d, max correction %d; want %d, 1, 5 ms", i, n.ID, n.ClockNode, n.MaxCorrectionNS, i)
		}
		raw, got := checkSameEvents(t, in[i].Trace, filepath.Join(dir, "combined.kineto", filepath.Base(in[i].Trace)))
		if got.Events[0].TsNs != raw.Events[0].TsNs-5e6 {
			t.Errorf("rank %d: first event at %d, want %d", i, got.Events[0].TsNs, raw.Events[0].TsNs-5e6)
		}
	}
	_, err = Combine(in, Options{Offsets: offs, Output: out, RankNodes: map[int]int{0: 0}})
	if err == nil || !strings.Contains(err.Error(), "rank 1, which the rank-to-node map does not place") {
		t.Errorf("a rank left out of the map: %v", err)
	}
}
