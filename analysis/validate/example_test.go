package validate_test

import (
	"fmt"

	"github.com/chronosync/chronosync/analysis/validate"
)

func ExampleCheck() {
	// Two ranks, three all-reduces each, on a common timeline (ns). Rank 1's
	// clock runs 40 µs behind, more than the last all-reduce lasts.
	nodes := []validate.Node{
		{ID: 0, Source: "rank0.json", Ops: []validate.Op{
			{Key: "allreduce", StartNs: 0, EndNs: 100_000},
			{Key: "allreduce", StartNs: 200_000, EndNs: 300_000},
			{Key: "allreduce", StartNs: 400_000, EndNs: 430_000},
			{Key: "broadcast", StartNs: 500_000, EndNs: 510_000},
		}},
		{ID: 1, Source: "rank1.json", Ops: []validate.Op{
			{Key: "allreduce", StartNs: -40_000, EndNs: 60_000},
			{Key: "allreduce", StartNs: 160_000, EndNs: 260_000},
			{Key: "allreduce", StartNs: 360_000, EndNs: 390_000},
		}},
	}
	r := validate.Check(nodes)
	fmt.Println(r.Summary())
	fmt.Println(r.Pairing())
	for _, v := range r.Examples {
		fmt.Printf("%s #%d: node %d ended %d ns before the other started\n", v.Key, v.Index, v.First, v.GapNs)
	}
	for _, w := range r.WarningsText {
		fmt.Println(w)
	}
	// Output:
	// Violations: 1, Overlaps: 2, Warnings: 1
	// pairing: 3 pairs by name, message size and order within the process group; 1 invocation without a counterpart
	// allreduce #2: node 1 ended 10000 ns before the other started
	// op "broadcast": node 1 has no invocations (1 of 2 nodes have some)
}
