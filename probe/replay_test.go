package probe

import "testing"

// TestReplayWindow: a responder counts a request it answered already
// (Stats.Replayed) within the latest window's last ReplayWindow slots;
// a request of a new window starts afresh, and one it cannot remember (an
// earlier window, or further back than the window) is not counted.
func TestReplayWindow(t *testing.T) {
	type req struct {
		window uint64
		pair   uint32
		slot   uint8
		again  bool
	}
	for _, tc := range []struct {
		name string
		reqs []req
	}{
		{"in order, then the same again", []req{{1, 0, 0, false}, {1, 0, 1, false}, {1, 1, 0, false}, {1, 1, 0, true}, {1, 0, 1, true}}},
		{"reordered slots are not replays", []req{{1, 0, 1, false}, {1, 0, 0, false}, {1, 0, 0, true}}},
		{"a new window starts afresh", []req{{1, 5, 0, false}, {2, 5, 0, false}, {2, 5, 0, true}}},
		{"an earlier window is not remembered", []req{{2, 0, 0, false}, {1, 0, 0, false}, {1, 0, 0, false}}},
		{"further back than the window is not remembered", []req{{1, 0, 0, false}, {1, ReplayWindow / 2, 0, false}, {1, 0, 0, false}}},
		{"just within the window", []req{{1, 0, 1, false}, {1, ReplayWindow / 2, 0, false}, {1, 0, 1, true}}},
		{"a jump clears what is remembered", []req{{1, 0, 0, false}, {1, 1000, 0, false}, {1, 999, 1, false}, {1, 999, 1, true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a answeredSet
			for i, r := range tc.reqs {
				if got := a.seen(r.window, r.pair, r.slot); got != r.again {
					t.Fatalf("request %d (window %d pair %d slot %d): answered already %v, want %v", i, r.window, r.pair, r.slot, got, r.again)
				}
			}
		})
	}
}
