package xspace_test

import (
	"fmt"
	"log"
	"path/filepath"

	"github.com/chronosync/chronosync/trace/xspace"
)

func ExamplePlaneBuilder() {
	b := xspace.NewPlaneBuilder(1, "/device:GPU:0")
	stream := b.Line(7, "stream 7", 1_000_000) // offsets count from 1 ms
	stream.Add("gemm", 1_000_500, 200, xspace.Int("correlation_id", 42))
	stream.Add("all-reduce", 1_001_000, 300, xspace.Str("hlo_op", "all-reduce.1"))

	plane := b.Plane()
	line := plane.GetLines()[0]
	for _, ev := range line.GetEvents() {
		st := ev.GetStats()[0]
		fmt.Printf("%s: offset %d ps, [%d, %d) ps, %s=%s\n",
			plane.GetEventMetadata()[ev.GetMetadataId()].GetName(), ev.GetOffsetPs(),
			xspace.StartPs(line, ev), xspace.EndPs(line, ev),
			plane.GetStatMetadata()[st.GetMetadataId()].GetName(), xspace.StatString(plane, st))
	}
	// Output:
	// gemm: offset 500000 ps, [1000500000, 1000700000) ps, correlation_id=42
	// all-reduce: offset 1000000 ps, [1001000000, 1001300000) ps, hlo_op=all-reduce.1
}

func ExampleRead() {
	space, err := xspace.Read(filepath.Join("..", "..", "testdata", "realdata", "tpu_inference_2.xplane.pb"))
	if err != nil {
		log.Fatal(err)
	}
	for _, plane := range space.GetPlanes() {
		fmt.Printf("%q: %d lines\n", plane.GetName(), len(plane.GetLines()))
	}
	// Output:
	// "/device:TPU:0": 5 lines
	// "/device:TPU:1": 5 lines
	// "/device:TPU:2": 5 lines
	// "/device:TPU:3": 5 lines
	// "/host:metadata": 0 lines
	// "/host:CPU": 122 lines
	// "Task Environment": 0 lines
}
