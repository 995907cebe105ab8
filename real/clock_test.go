package real

import (
	"net/netip"
	"testing"
	"time"

	"github.com/chronosync/chronosync/model/clockmodel"
)

// TestSandwich checks that sandwich keeps its narrowest try and dates b's
// reading at the midpoint of the two a readings around it.
func TestSandwich(t *testing.T) {
	// a reads 100, 140 (width 40), then 200, 210 (width 10), 300, 330,
	// 400, 460; b reads 1, 2, 3, 4.
	as := []int64{100, 140, 200, 210, 300, 330, 400, 460}
	var ai, bi int
	a := func() int64 { ai++; return as[ai-1] }
	b := func() int64 { bi++; return int64(bi) }
	at, bt, width := sandwich(a, b)
	if at != 205 || bt != 2 || width != 10 {
		t.Errorf("sandwich = (%d, %d, width %d), want (205, 2, width 10): the second, narrowest try", at, bt, width)
	}
	if ai != 2*sandwichTries || bi != sandwichTries {
		t.Errorf("read a %d and b %d times, want %d and %d", ai, bi, 2*sandwichTries, sandwichTries)
	}
}

// TestTracerTrueTime reads a node's injected tracer clock (20 ms and
// 50 ppm off its host clock, which is 5 ms and 100 ppm off true time)
// between two readings of true time: the true time TracerTrueTime gives
// for the reading must lie between them, up to the µs that anchoring
// CLOCK_MONOTONIC_RAW to CLOCK_REALTIME may cost. A pair from ReadPair
// must date its two readings to the same true time, likewise.
func TestTracerTrueTime(t *testing.T) {
	const slack = 5 * time.Microsecond
	w, err := New(Config{Seed: 1, LogLevel: 8, Nodes: []NodeConfig{{
		Addr:   netip.MustParseAddr("127.0.0.1"),
		Clock:  clockmodel.Params{Offset: 5 * time.Millisecond, PPM: 100},
		Tracer: clockmodel.TracerParams{Offset: 20 * time.Millisecond, PPM: 50},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	n := w.nodes[0]
	for i := range 200 {
		before := w.base.now()
		r := int64(n.Tracer().Now())
		after := w.base.now()
		got, ok := w.TracerTrueTime(0, r)
		if !ok {
			t.Fatal("TracerTrueTime: not ok for the injected tracer model")
		}
		if got < before-int64(slack) || got > after+int64(slack) {
			t.Fatalf("read %d: tracer read %d between true times %d and %d; TracerTrueTime says %d", i, r, before, after, got)
		}
		s, r2 := n.ReadPair()
		ts, _ := w.TracerTrueTime(0, int64(r2))
		if hs := w.HostTrueTime(0, int64(s)); hs-ts > int64(slack) || ts-hs > int64(slack) {
			t.Fatalf("pair %d: host reading at true time %d, tracer reading at %d: want one instant", i, hs, ts)
		}
		time.Sleep(100 * time.Microsecond)
	}
}
