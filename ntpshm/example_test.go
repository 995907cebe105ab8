package ntpshm_test

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/ntpshm"
)

// A node feeds chrony (`refclock SHM 0 refid CSYN` in chrony.conf) after
// each round: the round's model of this host's clock, evaluated at a fresh
// CLOCK_REALTIME reading, is written to unit 0. Not run: it needs SysV
// shared memory and, for chrony to use it, root.
func Example() {
	seg, err := ntpshm.Open(0)
	if err != nil {
		slog.Error("chrony feed disabled", "err", err)
		return
	}
	defer seg.Close() // the segment stays for chronyd; never Remove it here

	// The model the round produced for this host (from offsets.jsonl's
	// record of this node, or the node's own solver).
	model := offsets.Offset{
		RoundID: 42, NodeID: 3,
		WindowStartNS: time.Now().UnixNano(), WindowEndNS: time.Now().UnixNano() + 1e9,
		OffsetNS: -1200, DriftPPM: 0.8, UncertaintyNS: 40, DriftUncertaintyPPM: 0.01,
	}
	now := time.Now()
	sample, err := ntpshm.FromModel(model, now.UnixNano(), now) // S is CLOCK_REALTIME here
	if err != nil {
		slog.Error("chrony feed: no sample", "err", err)
		return
	}
	if err := seg.Write(sample); err != nil {
		slog.Error("chrony feed", "err", err)
	}
}

// FromModel evaluates a model at one instant: global time is 1.2 µs
// ahead of this host's clock, which chrony will read as an offset of
// −1.2 µs (local minus source).
func ExampleFromModel() {
	const t0 = int64(1_764_000_000_000_000_000)
	model := offsets.Offset{WindowStartNS: t0, WindowEndNS: t0 + 1e9, OffsetNS: -1200, UncertaintyNS: 40}
	now := time.Unix(0, t0+500_000_000)
	s, err := ntpshm.FromModel(model, now.UnixNano(), now)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("global − CLOCK_REALTIME:", s.Offset())
	fmt.Println("clock time:", s.ClockTime.UTC().Format(time.RFC3339Nano))
	fmt.Println("precision (log2 s):", s.Precision)
	// Output:
	// global − CLOCK_REALTIME: 1.2µs
	// clock time: 2025-11-24T16:00:00.5000012Z
	// precision (log2 s): -24
}
