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
			OffsetNS: 41250.5, DriftPPM: -12.25, UncertaintyNS: 80},
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
	// {"type":"meta","schema":1,"file":"offsets","run_id":"quickstart","units":"ns","reference_node":0,"estimator":"minfilter","mode":"rounds","model":"global_ns = local_ns - offset_ns - drift_ppm*1e-6*(local_ns - window_start_ns)"}
	// {"type":"offset","round_id":1,"window_id":1,"window_start_ns":1000000000,"window_end_ns":2000000000,"node_id":0,"offset_ns":0,"drift_ppm":0,"uncertainty_ns":0}
	// {"type":"offset","round_id":1,"window_id":1,"window_start_ns":1000000000,"window_end_ns":2000000000,"node_id":1,"offset_ns":41250.5,"drift_ppm":-12.25,"uncertainty_ns":80}
}

func ExampleReadOffsets() {
	dir, _ := os.MkdirTemp("", "offsets")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "offsets.jsonl")
	content := `{"type":"meta","schema":1,"file":"offsets","run_id":"r","units":"ns","reference_node":0,"estimator":"minfilter","mode":"rounds","model":"global_ns = local_ns - offset_ns - drift_ppm*1e-6*(local_ns - window_start_ns)"}
{"type":"offset","round_id":1,"window_id":1,"window_start_ns":1000000000,"window_end_ns":2000000000,"node_id":1,"offset_ns":41250.5,"drift_ppm":-12.25,"uncertainty_ns":80}
{"type":"offset","round_id":2,"window_id":2,"window_start_ns":2000000000,"window_end_ns":30` // torn by a crash
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		panic(err)
	}

	info, offs, err := offsets.ReadOffsets(path)
	if err != nil {
		panic(err)
	}
	fmt.Printf("run %s, estimator %s: %d records, torn tail: %v\n", info.Meta.RunID, info.Meta.Estimator, len(offs), info.Torn)
	o, covered := offsets.Lookup(offs, 1, 1_500_000_000)
	fmt.Printf("node 1 at 1.5 s local (covered %v): %.2f ns global\n", covered, o.Global(1_500_000_000))
	// Output:
	// run r, estimator minfilter: 1 records, torn tail: true
	// node 1 at 1.5 s local (covered true): 1499964874.50 ns global
}
