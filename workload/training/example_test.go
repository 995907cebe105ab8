package training_test

import (
	"fmt"
	"time"

	"github.com/chronosync/chronosync/model/netem"
	"github.com/chronosync/chronosync/sim"
	"github.com/chronosync/chronosync/workload/training"
	"github.com/chronosync/chronosync/world"
)

// lastEnds keeps, per node, the name, hlo_op and tracer-clock end of the
// last collective that finished.
type lastEnds map[world.NodeID]training.Event

func (lastEnds) Started(world.NodeID, uint64) {}
func (l lastEnds) Finished(node world.NodeID, ev training.Event) {
	if ev.Kind == training.Collective {
		l[node] = ev
	}
}

// Three simulated nodes on 50µs links run five training steps: every node
// finishes all of them, and the last collective of a step is the same
// hlo_op everywhere.
func Example() {
	cfg := sim.Config{Seed: 1, DefaultLink: netem.Params{Delay: 50 * time.Microsecond}}
	cfg.Nodes = make([]sim.NodeConfig, 3)
	obs := lastEnds{}
	var nodes []*training.Node
	w, err := sim.New(cfg, func(world.NodeID) world.Program {
		n, err := training.New(training.Config{Steps: 5, CollectivesPerStep: 4}, obs)
		if err != nil {
			panic(err)
		}
		nodes = append(nodes, n)
		return n
	}, sim.Options{})
	if err != nil {
		panic(err)
	}
	w.Run(time.Second)
	for id, n := range nodes {
		st := n.Stats()
		last := obs[world.NodeID(id)]
		fmt.Printf("node %d done=%v events=%d collectives=%d last=%s %s\n", id, n.Done(), st.Events, st.Collectives, last.Name, last.HloOp)
	}
	// Output:
	// node 0 done=true events=120 collectives=20 last=ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*) all-reduce.3
	// node 1 done=true events=120 collectives=20 last=ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*) all-reduce.3
	// node 2 done=true events=120 collectives=20 last=ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*) all-reduce.3
}
