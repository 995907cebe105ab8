package harness

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/analysis/groundtruth"
	"github.com/chronosync/chronosync/analysis/validate"
	"github.com/chronosync/chronosync/trace/kineto"
	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/workload/training"
)

// TestTracedKineto runs traced3 with kineto: true twice and once without:
// the Kineto traces decode with their rank and world size, every complete
// event carries its chronosync_event_id, every flow pairs a launch with its
// kernel at their times, a collective's record_param_comms sits on its
// launch with the same Seq and sizes on every node; the raw Kineto traces
// show violations, the combined one none, every event is aligned within
// its uncertainties; the same seed writes the same bytes; and the Kineto
// path leaves the run and its XSpace figures as they were.
func TestTracedKineto(t *testing.T) {
	yml := strings.Replace(traced3, "  snapshot_period: 1s\n", "  snapshot_period: 1s\n  kineto: true\n", 1)
	dirs := []string{filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")}
	res := runOnce(t, parse(t, yml), Options{Out: dirs[0], NoEventLog: true})
	runOnce(t, parse(t, yml), Options{Out: dirs[1], NoEventLog: true})
	plain := runOnce(t, parse(t, traced3), Options{NoEventLog: true})

	k := res.Summary.Trace.Kineto
	if k == nil || plain.Summary.Trace.Kineto != nil {
		t.Fatalf("kineto summaries %+v and %+v (without kineto); want one, nil", k, plain.Summary.Trace.Kineto)
	}
	t.Logf("kineto: %+v", *k)
	if k.Raw.Violations == 0 || k.Combined.Violations != 0 || k.Combined.Overlaps != 60 {
		t.Errorf("raw %+v, combined %+v; want violations raw, none combined (60 overlaps)", k.Raw, k.Combined)
	}
	// 3 nodes × 5 steps × (8 launches, 8 kernels, 2 × 4 collective ops).
	if k.Events != 3*5*24+3*5*8 || k.Flows != 3*5*12 || k.AlignedEvents != k.Events || !k.SnapshotCorrected {
		t.Errorf("%d events, %d flows, %d aligned, snapshot corrected %v; want 480, 180, all, true", k.Events, k.Flows, k.AlignedEvents, k.SnapshotCorrected)
	}
	if k.within() < groundtruth.Target || k.ErrorSigmas.Max > 6 {
		t.Errorf("%d of %d events within 3σ, worst %.2fσ; want ≥ %.0f %%, ≤ 6σ", k.Within3Sigma, k.AlignedEvents, k.ErrorSigmas.Max, 100*groundtruth.Target)
	}
	xs, pxs := *res.Summary.Trace, *plain.Summary.Trace
	xs.Kineto = nil
	if !reflect.DeepEqual(xs, pxs) || res.Summary.EventHash != plain.Summary.EventHash {
		t.Errorf("the XSpace path with kineto %+v (events %s); without %+v (events %s)", xs, res.Summary.EventHash, pxs, plain.Summary.EventHash)
	}

	var seqs []string // node 0's collectives by Seq
	for i := range 3 {
		name := fmt.Sprintf(fileNodeKineto, i)
		if a, b := sha256.Sum256(read(t, filepath.Join(dirs[0], name))), sha256.Sum256(read(t, filepath.Join(dirs[1], name))); a != b {
			t.Errorf("%s differs between two runs of one seed", name)
		}
		tr, err := kineto.ReadWith(filepath.Join(dirs[0], name), kineto.DecodeOptions{Raw: true}) // Raw: the flows' ids
		if err != nil {
			t.Fatal(err)
		}
		if tr.Rank != i || tr.WorldSize != 3 || tr.Backend != "nccl" {
			t.Errorf("%s: rank %d of %d, backend %q; want %d of 3, nccl", name, tr.Rank, tr.WorldSize, tr.Backend, i)
		}
		s := checkKinetoEvents(t, name, tr)
		if i == 0 {
			seqs = s
		} else if !slices.Equal(s, seqs) {
			t.Errorf("%s: collectives by Seq %q; node 0's %q", name, s, seqs)
		}
	}
	if len(seqs) != 5*4 {
		t.Errorf("%d collectives; want 20", len(seqs))
	}
	staging := []byte("." + filepath.Base(dirs[0]) + ".tmp-")
	for _, f := range []string{FileRawKinetoValidate, "combined-kineto.metadata.json", "combined-kineto.validate.json"} {
		if bytes.Contains(read(t, filepath.Join(dirs[0], f)), staging) {
			t.Errorf("%s names the staging directory", f)
		}
	}
	var rep validate.Report
	if err := json.Unmarshal(read(t, filepath.Join(dirs[0], FileRawKinetoValidate)), &rep); err != nil {
		t.Fatal(err)
	}
	for i, n := range rep.Nodes {
		if want := fmt.Sprintf(fileNodeKineto, i); n.Source != want {
			t.Errorf("%s: node %d's source %q, want %q", FileRawKinetoValidate, n.ID, n.Source, want)
		}
	}
}

// checkKinetoEvents checks one node's Kineto events (see TestTracedKineto)
// and returns its collectives by Seq, as "name in→out".
func checkKinetoEvents(t *testing.T, name string, tr *kineto.Trace) []string {
	t.Helper()
	type flow struct{ s, f []kineto.Event }
	flows := map[string]*flow{}
	launch, kernel, comms := map[string]kineto.Event{}, map[string]kineto.Event{}, map[string]kineto.Event{}
	var seqs []string
	for _, e := range tr.Events {
		switch e.Ph {
		case "M":
			continue
		case "s", "f":
			id := flowID(e)
			if flows[id] == nil {
				flows[id] = &flow{}
			}
			if e.Ph == "s" {
				flows[id].s = append(flows[id].s, e)
			} else {
				flows[id].f = append(flows[id].f, e)
			}
			continue
		}
		if _, ok := e.Args[statEventID]; !ok {
			t.Fatalf("%s: event %s %q has no %s", name, e.Cat, e.Name, statEventID)
		}
		switch e.Cat {
		case "cuda_runtime":
			launch[e.Args["correlation"]] = e
		case "kernel":
			kernel[e.Args["correlation"]] = e
		case "cpu_op":
			comms[e.Args["External id"]] = e
			if e.Args["Seq"] != fmt.Sprint(len(seqs)) {
				t.Errorf("%s: record_param_comms Seq %s, want %d (in order)", name, e.Args["Seq"], len(seqs))
			}
			seqs = append(seqs, e.Args["Collective name"]+" "+e.Args["In msg nelems"]+"→"+e.Args["Out msg nelems"])
		}
	}
	if len(flows) != len(kernel) {
		t.Errorf("%s: %d flows, %d kernels; want one flow per kernel", name, len(flows), len(kernel))
	}
	for id, fl := range flows {
		l, k := launch[id], kernel[id]
		if len(fl.s) != 1 || len(fl.f) != 1 || fl.s[0].TsNs != l.TsNs || fl.s[0].Pid != l.Pid ||
			fl.f[0].TsNs != k.TsNs || fl.f[0].Pid != "0" || fl.f[0].Tid != k.Tid {
			t.Errorf("%s: flow %q: %d starts, %d ends; want one start at its launch, one end at its kernel", name, id, len(fl.s), len(fl.f))
		}
	}
	for c, k := range kernel {
		op, ok := comms[c]
		if coll := strings.HasPrefix(k.Name, "nccl"); coll != ok || ok && (op.TsNs != launch[c].TsNs || op.Args[statEventID] != launch[c].Args[statEventID]) {
			t.Errorf("%s: kernel %q (correlation %s) with record_param_comms %v; want one on its launch for a collective", name, k.Name, c, ok)
		}
	}
	return seqs
}

// flowID is a flow event's id, from its raw text (kineto.Event keeps no
// id).
func flowID(e kineto.Event) string {
	var v struct {
		ID json.Number `json:"id"`
	}
	_ = json.Unmarshal(e.Raw, &v)
	return v.ID.String()
}

// TestLaunchSlots checks the layout of a step's launches against the
// workload's: compute kernels spread evenly before the collectives.
func TestLaunchSlots(t *testing.T) {
	for _, tc := range []struct {
		c, k int
		want []int
	}{
		{3, 4, []int{-1, 0, -1, 1, -1, -1, 2}},
		{3, 0, []int{0, 1, 2}},
		{2, 4, []int{-1, -1, 0, -1, -1, 1}},
	} {
		if got := launchSlots(training.Config{CollectivesPerStep: tc.c, ComputePerStep: tc.k}); !slices.Equal(got, tc.want) {
			t.Errorf("%d collectives, %d compute: %v; want %v", tc.c, tc.k, got, tc.want)
		}
	}
}

// TestStatInt: an event id stat is read whether int64 (a Kineto arg) or
// uint64 (the harness's XSpace).
func TestStatInt(t *testing.T) {
	for _, tc := range []struct {
		st   *xplanepb.XStat
		want int64
		ok   bool
	}{
		{&xplanepb.XStat{Value: &xplanepb.XStat_Int64Value{Int64Value: 7}}, 7, true},
		{&xplanepb.XStat{Value: &xplanepb.XStat_Uint64Value{Uint64Value: 7}}, 7, true},
		{&xplanepb.XStat{Value: &xplanepb.XStat_Uint64Value{Uint64Value: math.MaxUint64}}, 0, false},
		{&xplanepb.XStat{Value: &xplanepb.XStat_DoubleValue{DoubleValue: 7}}, 0, false},
		{&xplanepb.XStat{}, 0, false},
	} {
		if got, ok := statInt(tc.st); got != tc.want || ok != tc.ok {
			t.Errorf("statInt(%v) = %d, %v; want %d, %v", tc.st, got, ok, tc.want, tc.ok)
		}
	}
}

// TestKinetoGPUConversion: host events keep their host readings, and GPU
// events are converted by the offset at the node's first event, P = R − R0
// + S0, whatever the host clock did since.
func TestKinetoGPUConversion(t *testing.T) {
	cfg := training.Config{CollectivesPerStep: 1, ComputePerStep: 1, Streams: 2}
	n := &tracedNode{p: &tracedProtocol{train: cfg, nodes: make([]*tracedNode, 2)}, id: 1, events: []tracedEvent{
		{ev: training.Event{ID: 1, Plane: training.HostPlane, Name: training.LaunchName, Index: 0, Correlation: 1, StartR: 5000, EndR: 5005}, hostStart: 1000, hostEnd: 1005},
		{ev: training.Event{ID: 3, Plane: training.HostPlane, Name: training.LaunchName, Index: 1, Correlation: 2, StartR: 5020, EndR: 5025}, hostStart: 1030, hostEnd: 1036},
		{ev: training.Event{ID: 2, Plane: training.GPUPlane, Line: 0, Name: training.GEMMKernel, Correlation: 1, StartR: 5010, EndR: 5210}},
		{ev: training.Event{ID: 4, Plane: training.GPUPlane, Line: 1, Name: training.AllReduceKernel, Correlation: 2, StartR: 5030, EndR: 5000}},
	}}
	_, evs := n.kinetoEvents()
	type got struct {
		cat, name string
		ts, dur   int64
	}
	var gots []got
	for _, e := range evs {
		if e.Ph == "X" {
			gots = append(gots, got{e.Cat, e.Name, e.Ts, e.Dur})
		}
	}
	want := []got{
		{"cuda_runtime", training.LaunchName, 1000, 5},
		{"user_annotation", "nccl:all_reduce", 1030, 6},
		{"cpu_op", "record_param_comms", 1030, 6},
		{"cuda_runtime", training.LaunchName, 1030, 6},
		{"kernel", training.GEMMKernel, 1010, 200},    // 5010 − 5000 + 1000
		{"kernel", training.AllReduceKernel, 1030, 0}, // ended before it started on R
	}
	if !slices.Equal(gots, want) {
		t.Errorf("events %v\nwant %v", gots, want)
	}
}
