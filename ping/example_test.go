package ping_test

import (
	"fmt"
	"time"

	"github.com/chronosync/chronosync/model/clockmodel"
	"github.com/chronosync/chronosync/model/netem"
	"github.com/chronosync/chronosync/ping"
	"github.com/chronosync/chronosync/sim"
	"github.com/chronosync/chronosync/world"
)

// Two simulated nodes, the second 250µs ahead, on 40µs links: the ping
// exchange recovers the offset.
func Example() {
	cfg := sim.Config{
		Seed: 1,
		Nodes: []sim.NodeConfig{
			{},
			{Clock: clockmodel.Params{Offset: 250 * time.Microsecond}},
		},
		Links: []sim.LinkConfig{
			{From: 0, To: 1, Params: netem.Params{Delay: 40 * time.Microsecond}},
			{From: 1, To: 0, Params: netem.Params{Delay: 40 * time.Microsecond}},
		},
	}
	var last ping.Exchange
	w, err := sim.New(cfg, func(id world.NodeID) world.Program {
		p, _ := ping.New(ping.Config{Interval: 100 * time.Millisecond, Payload: 64}, func(e ping.Exchange) {
			if id == 0 {
				last = e
			}
		})
		return p
	}, sim.Options{})
	if err != nil {
		panic(err)
	}
	w.Run(time.Second)
	fmt.Println("offset:", last.Offset(), "delay:", last.Delay())
	// Output: offset: 250µs delay: 80µs
}
