package harness

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/analysis/groundtruth"
	"github.com/chronosync/chronosync/analysis/validate"
	"github.com/chronosync/chronosync/harness/syncrun"
	"github.com/chronosync/chronosync/trace/kineto"
)

// A traced run's names that the adapter keeps to itself (harness/syncrun):
// each node's Kineto trace, and the argument that carries an event's id.
const (
	fileNodeKineto = "node%d.pt.trace.json.gz"
	statEventID    = "chronosync_event_id"
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
	res := runOnce(t, parse(t, yml), Options{Out: dirs[0]})
	runOnce(t, parse(t, yml), Options{Out: dirs[1]})
	plain := runOnce(t, parse(t, traced3), Options{})

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
	if k.Within() < groundtruth.Target || k.ErrorSigmas.Max > 6 {
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
	for _, f := range []string{syncrun.FileRawKinetoValidate, "combined-kineto.metadata.json", "combined-kineto.validate.json"} {
		if bytes.Contains(read(t, filepath.Join(dirs[0], f)), staging) {
			t.Errorf("%s names the staging directory", f)
		}
	}
	var rep validate.Report
	if err := json.Unmarshal(read(t, filepath.Join(dirs[0], syncrun.FileRawKinetoValidate)), &rep); err != nil {
		t.Fatal(err)
	}
	for i, n := range rep.Nodes {
		if want := fmt.Sprintf(fileNodeKineto, i); n.Source != want {
			t.Errorf("%s: node %d's source %q, want %q", syncrun.FileRawKinetoValidate, n.ID, n.Source, want)
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
