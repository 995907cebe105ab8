package kineto_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/chronosync/chronosync/trace/kineto"
)

func ExampleDecode() {
	const trace = `{
	  "schemaVersion": 1,
	  "distributedInfo": {"backend": "nccl", "rank": 1, "world_size": 2},
	  "traceEvents": [
	    {"ph": "X", "cat": "user_annotation", "name": "nccl:all_reduce", "pid": 4045, "tid": 4045,
	     "ts": 1682725898109008, "dur": 200.0},
	    {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
	     "pid": 1, "tid": 84, "ts": 1682725898109310.5, "dur": 30669.25, "args": {"stream": 84, "grid": [16, 1, 1]}}
	  ]
	}`
	t, err := kineto.Decode(strings.NewReader(trace), "rank-1.json")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("rank %d of %d, %d events\n", t.Rank, t.WorldSize, len(t.Events))
	for _, k := range kineto.Collectives(t) {
		fmt.Printf("%s on GPU %s stream %s: %d to %d ns, grid %s\n", k.Name[:10], k.Device, k.Stream, k.StartNs, k.EndNs, k.Args["grid"])
	}

	_, err = kineto.Decode(strings.NewReader(`{"traceEvents": [{"ts": "abc"}]}`), "bad.json")
	fmt.Println(err)
	// Output:
	// rank 1 of 2, 2 events
	// ncclKernel on GPU 1 stream 84: 1682725898109310500 to 1682725898139979750 ns, grid [16,1,1]
	// read bad.json: byte 24: traceEvents[0].ts: want a number, got "abc"
}
