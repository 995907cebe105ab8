package combine_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/chronosync/chronosync/analysis/combine"
	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/trace/snapshotpb"
	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// ExampleCombine aligns two nodes' traces: node 1's tracer clock runs 3 ms
// ahead of its host clock, which runs 2 ms ahead of global time (node 0's
// clock). The same all-reduce, at global time 1 s on both nodes, looks
// 5 ms apart in the raw traces and lines up once combined.
func ExampleCombine() {
	dir, err := os.MkdirTemp("", "combine-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	offs, _ := offsets.Create(filepath.Join(dir, "offsets.jsonl"), offsets.Meta{File: "offsets", RunID: "example", Estimator: "svm", Mode: "rounds"})
	var inputs []combine.Input
	for node, ahead := range []int64{0, 2_000_000} { // host clock − global, ns
		tracerAhead := int64(node) * 3_000_000 // tracer clock − host clock, ns
		_ = offs.Append(offsets.Offset{NodeID: node, RoundID: 1, WindowID: 1, WindowStartNS: ahead, WindowEndNS: ahead + 10e9, OffsetNS: float64(ahead)})
		gpu := xspace.NewPlaneBuilder(1, "/device:GPU:0")
		start := 1_000_000_000 + ahead + tracerAhead
		gpu.Line(1, "stream 1", start).Add("rcclAllReduceKernel_sum_f32", start, 100_000, xspace.Str("hlo_op", "all-reduce.0"))
		trace := filepath.Join(dir, fmt.Sprintf("node%d.xplane.pb", node))
		_ = xspace.Write(trace, &xplanepb.XSpace{Planes: []*xplanepb.XPlane{gpu.Plane()}})
		sp := &snapshotpb.SnapshotPairs{NodeId: int64(node), RunId: "example"}
		for _, s := range []int64{0, 4e9, 8e9} {
			sp.Pairs = append(sp.Pairs, &snapshotpb.SnapshotPair{SysClockNs: s, TracerClockNs: s + tracerAhead})
		}
		snap := filepath.Join(dir, fmt.Sprintf("node%d.snapshots.pb", node))
		_ = xspace.Write(snap, sp)
		inputs = append(inputs, combine.Input{Node: node, Trace: trace, Snapshots: snap})
	}
	_ = offs.Close()
	res, err := combine.Combine(inputs, combine.Options{Offsets: filepath.Join(dir, "offsets.jsonl"),
		Output: filepath.Join(dir, "combined.xplane.pb"), Validate: true, NoTraceJSON: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, n := range res.Metadata.Nodes {
		fmt.Printf("node %d: corrected by %d ns, planes %v\n", n.ID, n.MaxCorrectionNS, n.Planes)
	}
	fmt.Println(res.Report.Summary())
	// Output:
	// node 0: corrected by 0 ns, planes [{/device:GPU:0 /device:GPU:0}]
	// node 1: corrected by 5000000 ns, planes [{/device:GPU:0 /device:GPU:64}]
	// Violations: 0, Overlaps: 1, Warnings: 0
}
