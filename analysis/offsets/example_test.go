package offsets_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/chronosync/chronosync/analysis/offsets"
)

func ExampleCreate() {
	dir, _ := os.MkdirTemp("", "offsets")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "offsets.jsonl")

	w, err := offsets.Create(path, offsets.Meta{
		File: offsets.FileOffsets, RunID: "quickstart", Reference: 0, Estimator: "minfilter", Mode: offsets.ModeRounds,
	})
	if err != nil {
		panic(err)
	}
	// One call per round: the round's lines go out in one write.
	err = w.Append(
		offsets.Offset{RoundID: 1, WindowID: 1, WindowStartNS: 1e9, WindowEndNS: 2e9, NodeID: 0},
		offsets.Offset{RoundID: 1, WindowID: 1, WindowStartNS: 1e9, WindowEndNS: 2e9, NodeID: 1,
			OffsetNS: 41250.5, DriftPPM: -12.25, UncertaintyNS: 80, DriftUncertaintyPPM: 0.02,
			// The clock jumped 0.25 ms forward at about 1.6 s on its clock.
			Steps: []offsets.Step{{AtNS: 1_600_000_000, AtUncertaintyNS: 500, SizeNS: 250000, SizeUncertaintyNS: 30}}},
	)
	if err != nil {
		panic(err)
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	data, _ := os.ReadFile(path)
	fmt.Print(string(data))
	// Output:
	// {"type":"meta","schema":3,"file":"offsets","run_id":"quickstart","units":"ns","reference_node":0,"estimator":"minfilter","mode":"rounds","model":"global_ns = local_ns - offset_ns - drift_ppm*1e-6*(local_ns - window_start_ns) - (1 - drift_ppm*1e-6)*sum(size_ns of the steps the reading is after)","uncertainty":"sigma_ns = sqrt(uncertainty_ns^2 + (drift_uncertainty_ppm*1e-6*(local_ns - (window_start_ns + window_end_ns)/2))^2 + sum(size_uncertainty_ns^2 of the steps the reading is after) + sum(size_ns^2 of the steps it may lie on either side of: within at_uncertainty_ns of at_ns or of the span [at_ns + size_ns .. at_ns) a backward step reads twice))"}
	// {"type":"offset","round_id":1,"window_id":1,"window_start_ns":1000000000,"window_end_ns":2000000000,"node_id":0,"offset_ns":0,"drift_ppm":0,"uncertainty_ns":0,"drift_uncertainty_ppm":0}
	// {"type":"offset","round_id":1,"window_id":1,"window_start_ns":1000000000,"window_end_ns":2000000000,"node_id":1,"offset_ns":41250.5,"drift_ppm":-12.25,"uncertainty_ns":80,"drift_uncertainty_ppm":0.02,"steps":[{"at_ns":1600000000,"at_uncertainty_ns":500,"size_ns":250000,"size_uncertainty_ns":30}]}
}

func ExampleReadOffsets() {
	dir, _ := os.MkdirTemp("", "offsets")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "offsets.jsonl")
	content := `{"type":"meta","schema":2,"file":"offsets","run_id":"r","units":"ns","reference_node":0,"estimator":"minfilter","mode":"rounds","model":"global_ns = local_ns - offset_ns - drift_ppm*1e-6*(local_ns - window_start_ns) - (1 - drift_ppm*1e-6)*sum(size_ns of the steps the reading is after)","uncertainty":"sigma_ns = sqrt(uncertainty_ns^2 + (drift_uncertainty_ppm*1e-6*(local_ns - (window_start_ns + window_end_ns)/2))^2 + sum(size_uncertainty_ns^2 of the steps the reading is after) + sum(size_ns^2 of the steps it may lie on either side of: within at_uncertainty_ns of at_ns or of the span [at_ns + size_ns .. at_ns) a backward step reads twice))"}
{"type":"offset","round_id":1,"window_id":1,"window_start_ns":1000000000,"window_end_ns":2000000000,"node_id":1,"offset_ns":41250.5,"drift_ppm":-12.25,"uncertainty_ns":80,"drift_uncertainty_ppm":0.02,"steps":[{"at_ns":1600000000,"at_uncertainty_ns":500,"size_ns":250000,"size_uncertainty_ns":30}]}
{"type":"offset","round_id":2,"window_id":2,"window_start_ns":2000000000,"window_end_ns":30` // torn by a crash
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		panic(err)
	}

	info, offs, err := offsets.ReadOffsets(path)
	if err != nil {
		panic(err)
	}
	fmt.Printf("run %s, estimator %s: %d records, torn tail: %v\n", info.Meta.RunID, info.Meta.Estimator, len(offs), info.Torn)
	// Readings before the step, after it, and too near it to say which.
	for _, local := range []int64{1_500_000_000, 1_700_000_000, 1_600_000_100} {
		o, covered := offsets.Lookup(offs, 1, local)
		fmt.Printf("node 1 at %d local (covered %v, after %d steps): %.2f ns global ± %.2f\n",
			local, covered, o.StepsBefore(local), o.Global(local), o.SigmaAt(local))
	}
	// Output:
	// run r, estimator minfilter: 1 records, torn tail: true
	// node 1 at 1500000000 local (covered true, after 0 steps): 1499964874.50 ns global ± 80.00
	// node 1 at 1700000000 local (covered true, after 1 steps): 1699717321.44 ns global ± 85.53
	// node 1 at 1600000100 local (covered true, after 1 steps): 1599716196.44 ns global ± 250000.01
}
