package snapshots_test

import (
	"fmt"
	"time"

	"github.com/chronosync/chronosync/model/clockmodel"
	"github.com/chronosync/chronosync/sim"
	"github.com/chronosync/chronosync/workload/snapshots"
	"github.com/chronosync/chronosync/world"
)

// A node whose tracer clock runs 5s ahead of its host clock and 100ppm
// fast, sampled every second for 3.5s, two pairs 1ms apart per sample: a
// sample at start, one per period, and a pair at Stop.
func Example() {
	smp, err := snapshots.New(snapshots.Config{Period: time.Second, Burst: 2})
	if err != nil {
		panic(err)
	}
	w, err := sim.New(sim.Config{
		Nodes: []sim.NodeConfig{{Tracer: clockmodel.TracerParams{Offset: 5 * time.Second, PPM: 100}}},
	}, func(world.NodeID) world.Program { return smp }, sim.Options{})
	if err != nil {
		panic(err)
	}
	w.Run(3500 * time.Millisecond)
	smp.Stop()
	for _, p := range smp.Pairs() {
		fmt.Printf("S=%v R=%v\n", time.Duration(p.Sys), time.Duration(p.Tracer))
	}
	fmt.Printf("%+v\n", smp.Stats())
	// Output:
	// S=0s R=5s
	// S=1ms R=5.0010001s
	// S=1s R=6.0001s
	// S=1.001s R=6.0011001s
	// S=2s R=7.0002s
	// S=2.001s R=7.0012001s
	// S=3s R=8.0003s
	// S=3.001s R=8.0013001s
	// S=3.5s R=8.50035s
	// {SnapshotsTaken:9 MissedDeadline:0 Dropped:0}
}
