package probe

import (
	"fmt"
	"testing"

	"github.com/chronosync/chronosync/estimate"
	"github.com/chronosync/chronosync/world"
)

// deliverRequests delivers every request in flight, in order, advancing the
// clock 1 µs before each; replies stay in flight.
func (n *testNet) deliverRequests() {
	for i := 0; i < len(n.Datagrams); {
		if kindOf(n.Datagrams[i]) != kindRequest {
			i++
			continue
		}
		n.Clock += hop
		n.Deliver(i)
	}
}

// want is one probe a window hands over: which, where its t3 came from, and
// t3 − t2 (the testNet's turnaround: txLag for a kernel timestamp, 0 for a
// user-space reading).
type want struct {
	pair uint32
	slot uint8
	src  estimate.T3Source
	turn int64
}

func (w want) String() string {
	return fmt.Sprintf("pair %d slot %d: t3 %v, t3−t2 %d", w.pair, w.slot, w.src, w.turn)
}

const (
	k = estimate.T3Kernel
	u = estimate.T3User
)

// TestInterleavedT3 drives a requester (node 0) and a responder (node 1) by
// hand: each reply carries the transmit timestamp of the responder's
// previous reply, and the requester puts it in place of that probe's
// user-space t3 where it can tell which probe it belongs to.
func TestInterleavedT3(t *testing.T) {
	tests := []struct {
		name string
		// sources are the sources the responder's SendSourced returns
		// in turn (TxKernel once they run out).
		sources []world.TxSource
		// plain makes the responder's endpoint a plain PacketConn, as
		// the simulator's.
		plain bool
		// script runs on an open window 1; it may close it and open
		// others.
		script func(n *testNet, p *Prober)
		want   []want // of the last window
		// stats: T3Kernel, T3User, T3Late, Duplicate.
		stats [4]int
	}{{
		name:   "the follow-up carries the first probe's timestamp; the last keeps its user-space t3",
		script: func(n *testNet, p *Prober) { n.fire(0); n.flush() },
		want:   []want{{0, 0, k, 30_000}, {0, 1, u, 0}},
		stats:  [4]int{1, 1, 0, 0},
	}, {
		name: "each reply completes its predecessor across pairs",
		script: func(n *testNet, p *Prober) {
			n.fire(0)
			n.fire(0)
			n.fire(0)
			n.flush()
		},
		want:  []want{{0, 0, k, 30_000}, {0, 1, k, 30_000}, {1, 0, k, 30_000}, {1, 1, k, 30_000}, {2, 0, k, 30_000}, {2, 1, u, 0}},
		stats: [4]int{5, 1, 0, 0},
	}, {
		name: "a lost follow-up leaves the user-space t3",
		script: func(n *testNet, p *Prober) {
			n.fire(0)
			n.fire(0)
			n.deliverRequests()
			n.Drop(1) // the reply to pair 0 slot 1, which carried pair 0 slot 0's timestamp
			n.flush()
		},
		want:  []want{{0, 0, u, 0}, {1, 0, k, 30_000}, {1, 1, u, 0}},
		stats: [4]int{1, 2, 0, 0},
	}, {
		name: "a timestamp that arrives before its own reply is kept for it",
		script: func(n *testNet, p *Prober) {
			n.fire(0)
			n.deliverRequests()
			n.Deliver(1)
			n.Deliver(0)
		},
		want:  []want{{0, 0, k, 30_000}, {0, 1, u, 0}},
		stats: [4]int{1, 1, 0, 0},
	}, {
		name: "a request duplicated back to back: the responder carries neither reply's timestamp",
		script: func(n *testNet, p *Prober) {
			n.fire(0)
			n.Clock += hop
			n.DeliverCopy(n.Datagrams[0])
			n.deliverRequests()
			n.Drop(0) // the first reply: the requester sees only the second
			n.fire(0)
			n.flush()
		},
		want:  []want{{0, 0, u, 0}, {0, 1, k, 30_000}, {1, 0, k, 30_000}, {1, 1, u, 0}},
		stats: [4]int{2, 2, 0, 0},
	}, {
		name: "a request duplicated later: the requester, with two different replies, uses neither timestamp",
		script: func(n *testNet, p *Prober) {
			n.fire(0)
			first := n.Datagrams[0]
			n.deliverRequests() // replies 0/0 and 0/1, which carries 0/0's timestamp
			n.Clock += hop
			n.DeliverCopy(first) // a second reply to 0/0, carrying 0/1's timestamp
			n.fire(0)
			n.flush() // pair 1's first reply carries the second 0/0 reply's timestamp
		},
		want:  []want{{0, 0, u, 0}, {0, 1, k, 30_000}, {1, 0, k, 30_000}, {1, 1, u, 0}},
		stats: [4]int{2, 2, 0, 1},
	}, {
		name: "a reply duplicated on its way back is still one reply",
		script: func(n *testNet, p *Prober) {
			n.fire(0)
			n.deliverRequests()
			n.DeliverCopy(n.Datagrams[0])
			n.flush()
		},
		want:  []want{{0, 0, k, 30_000}, {0, 1, u, 0}},
		stats: [4]int{1, 1, 0, 1},
	}, {
		name:    "a transmit timestamp that fell back to user space is recorded as such",
		sources: []world.TxSource{world.TxUser},
		script: func(n *testNet, p *Prober) {
			n.fire(0)
			n.fire(0)
			n.flush()
		},
		want:  []want{{0, 0, u, 0}, {0, 1, k, 30_000}, {1, 0, k, 30_000}, {1, 1, u, 0}},
		stats: [4]int{2, 2, 0, 0},
	}, {
		name:   "the simulator's endpoint has no send path: the reading before Send is the transmit time",
		plain:  true,
		script: func(n *testNet, p *Prober) { n.fire(0); n.fire(0); n.flush() },
		want:   []want{{0, 0, k, 0}, {0, 1, k, 0}, {1, 0, k, 0}, {1, 1, u, 0}},
		stats:  [4]int{3, 1, 0, 0},
	}, {
		name: "the last probe's timestamp comes in the next window, too late",
		script: func(n *testNet, p *Prober) {
			n.fire(0)
			n.flush()
			p.Close()
			p.Open(2, 2)
			n.fire(0)
			n.flush()
		},
		want:  []want{{0, 0, k, 30_000}, {0, 1, u, 0}},
		stats: [4]int{2, 2, 1, 0},
	}, {
		name: "a late reply of a closed window still completes the open one's probe",
		script: func(n *testNet, p *Prober) {
			n.fire(0)
			n.deliverRequests()
			stale := n.Datagrams[1] // window 1's reply to 0/1
			n.Drop(1)
			n.flush()
			p.Close()
			p.Open(2, 2)
			n.fire(0)
			n.deliverRequests()
			n.Deliver(0) // 0/0 of window 2
			// The responder's next reply, to a request of window 1
			// arriving late, carries window 2's 0/1 timestamp.
			n.Clock += hop
			n.Node(1).Receive(world.Packet{From: stale.To, To: stale.From, RxTime: 0,
				Data: requestBytes(t, 1, 0, 1)})
			n.flush()
		},
		want:  []want{{0, 0, k, 30_000}, {0, 1, k, 30_000}},
		stats: [4]int{2, 1, 1, 0},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := newTestNet(t)
			n.Node(1).Sources, n.Node(1).Sourced = tc.sources, !tc.plain
			p := n.prober(0)
			n.prober(1)
			p.Open(1, 1)
			tc.script(n, p)
			blocks := p.Close()
			if len(blocks) != 1 {
				t.Fatalf("%d blocks, want 1", len(blocks))
			}
			var got []want
			for _, pr := range blocks[0].Probes {
				got = append(got, want{pr.Pair, pr.Slot, pr.T3Source, pr.T3 - pr.T2})
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("probes:\n got %v\nwant %v", got, tc.want)
			}
			st := p.Stats()
			if s := [4]int{st.T3Kernel, st.T3User, st.T3Late, st.Duplicate}; s != tc.stats {
				t.Errorf("stats T3Kernel, T3User, T3Late, Duplicate = %v, want %v", s, tc.stats)
			}
		})
	}
}

// requestBytes encodes a request.
func requestBytes(t *testing.T, window uint64, pair uint32, slot uint8) []byte {
	t.Helper()
	b := make([]byte, PacketSize)
	putHeader(b, header{kind: kindRequest, window: window, pair: pair, slot: slot})
	return b
}

// TestReplyEncoding round-trips replies with and without the previous
// reply's transmit timestamp, whose window travels as an int8 difference.
func TestReplyEncoding(t *testing.T) {
	base := reply{header: header{kind: kindReply, window: 1000, pair: 7, slot: 1}, t2: -5, t3: 1 << 62,
		advert: Advert{Valid: true}}
	base.advert.Offset, base.advert.Drift, base.advert.Anchor = 1.5, -2e-6, 99
	tests := []struct {
		name     string
		prev     txStamp
		wantPrev txStamp // what parse returns
	}{
		{"none", txStamp{}, txStamp{}},
		{"same window, kernel", txStamp{valid: true, kernel: true, window: 1000, pair: 6, slot: 1, t3: -3},
			txStamp{valid: true, kernel: true, window: 1000, pair: 6, slot: 1, t3: -3}},
		{"previous window, user", txStamp{valid: true, window: 999, pair: 1 << 31, t3: 42},
			txStamp{valid: true, window: 999, pair: 1 << 31, t3: 42}},
		{"a later window (a stale request's reply)", txStamp{valid: true, kernel: true, window: 1128, slot: 1},
			txStamp{valid: true, kernel: true, window: 1128, slot: 1}},
		{"127 windows back", txStamp{valid: true, window: 873}, txStamp{valid: true, window: 873}},
		{"too far back: left out", txStamp{valid: true, window: 872}, txStamp{}},
		{"too far ahead: left out", txStamp{valid: true, window: 1129}, txStamp{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := base
			r.prev = tc.prev
			var b [PacketSize]byte
			putReply(b[:], r)
			got, err := parse(b[:])
			if err != nil {
				t.Fatal(err)
			}
			want := base
			want.prev = tc.wantPrev
			if got != want {
				t.Errorf("parse(putReply(r)) =\n %+v\nwant\n %+v", got, want)
			}
		})
	}
	t.Run("unknown flags", func(t *testing.T) {
		var b [PacketSize]byte
		putReply(b[:], base)
		b[17] |= 0x80
		if _, err := parse(b[:]); err == nil {
			t.Error("a reply with an unknown flag parsed")
		}
	})
	t.Run("version 1", func(t *testing.T) {
		var b [PacketSize]byte
		putReply(b[:], base)
		b[2] = 1
		if _, err := parse(b[:]); err == nil {
			t.Error("a version 1 reply parsed")
		}
	})
}
