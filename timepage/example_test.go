package timepage_test

import (
	"errors"
	"fmt"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/timepage"
)

// A node publishes its model after a round; a local reader converts its
// clock readings to global time with σ, and is told when the model is
// stale. A real node uses timepage.CreateFile(timepage.Path(cluster, id))
// instead of the virtual page, and readers timepage.OpenFile (or the C
// header, or tools/chronosync_time.py).
func Example() {
	page := timepage.NewVirtualPage()
	pub, err := timepage.NewPublisher(page, 0)
	if err != nil {
		panic(err)
	}
	rec := offsets.Offset{RoundID: 12, WindowID: 12, WindowStartNS: 1e9, WindowEndNS: 2e9, NodeID: 1,
		OffsetNS: 41250.5, DriftPPM: -12.25, UncertaintyNS: 80, DriftUncertaintyPPM: 0.02}
	// Published at 2.001 s on the node's clock, good for 30 s.
	if err := pub.Publish(timepage.FromOffset(rec, 0, 2_001_000_000, 32_001_000_000, timepage.StatusOK)); err != nil {
		panic(err)
	}

	r, err := timepage.NewReader(page)
	if err != nil {
		panic(err)
	}
	g, sigma, err := r.ToGlobal(2_500_000_000)
	fmt.Printf("%d ± %.1f ns, %v\n", g, sigma, err)
	g, sigma, err = r.ToGlobal(40_000_000_000) // no round for 38 s
	fmt.Printf("%d ± %.1f ns, stale: %v\n", g, sigma, errors.Is(err, timepage.ErrStale))
	// Output:
	// 2499977124 ± 82.5 ns, <nil>
	// 40000436500 ± 774.1 ns, stale: true
}
