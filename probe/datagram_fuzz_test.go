package probe

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/chronosync/chronosync/probe/probelog"
	"github.com/chronosync/chronosync/world"
	"github.com/chronosync/chronosync/world/worldtest"
)

// FuzzDatagram (issue 18) feeds a prober arbitrary datagrams, from
// arbitrary node ids and ports, at arbitrary receive times. The prober is
// node 0 of the hostile net of hostile_test.go: window 1 open, one pair
// sent to node 1, whose two genuine replies are in flight. The fuzzed
// datagram arrives before them (or, with mode bit 1, after them; with mode
// bit 2, after the window closed), once or (mode bit 0) twice.
//
// Properties, besides never panicking:
//
//   - every datagram is accounted for exactly once: it is Malformed, from
//     a BadNode, an answered request (ProbesAnswered), or a reply
//     (RepliesReceived) that is Spoofed, Implausible, Late, Malformed, a
//     Duplicate or completes a probe; no counter ever decreases, and
//     receiving moves none of the counters that only sending and Close
//     move;
//   - the classification agrees with the packet format and the rules,
//     read here from the bytes and not through parse: a datagram not of
//     72 bytes with magic "CS" and version 2 is Malformed and unanswered;
//     a request from a node in range is answered exactly once, to its
//     sender, with its window, pair and slot and t2 its receive time; a
//     reply is answered never, and taken only from node 1's probe port;
//   - a datagram dropped without effect (Malformed, BadNode, Spoofed,
//     Implausible, or a request) leaves node 0's block exactly what it
//     is without it;
//   - whatever arrives, the block Close hands over is window 1's edge 0→1
//     (node ids in range), with at most the two probes sent, each with
//     readings within MaxTimestamp and a plausible round trip; and an
//     advert the prober keeps has finite values within the bounds.
func FuzzDatagram(f *testing.F) {
	h := buildHostile()
	genuine := [2][]byte{h.Datagrams[0].Data, h.Datagrams[1].Data}
	request := make([]byte, PacketSize)
	putHeader(request, header{kind: kindRequest, window: 1, pair: 0, slot: 1})
	forged := func(i int, edit func(*reply)) []byte {
		r, err := parse(genuine[i])
		if err != nil {
			panic(err)
		}
		edit(&r)
		b := make([]byte, PacketSize)
		putReply(b, r)
		return b
	}
	const rx = hop // a datagram a hop after the genuine replies were sent
	p, one := int64(Port), int64(1)
	for _, s := range []struct {
		data     []byte
		from     int64
		port     int64
		rxDelta  int64
		mode     uint8
		describe string
	}{
		{genuine[0], one, p, rx, 0, "the genuine reply 0/0, early"},
		{genuine[1], one, p, rx, 1, "the genuine reply 0/1, twice"},
		{genuine[0], one, p, rx, 2, "the genuine reply 0/0 again, after the genuine ones"},
		{genuine[1], one, p, rx, 4, "the genuine reply 0/1 after the window closed"},
		{genuine[0], one, 9999, rx, 0, "from another port"},
		{genuine[0], 2, p, rx, 0, "from a node not probed"},
		{genuine[0], -1, p, rx, 0, "from node -1"},
		{genuine[0], 1 << 40, p, rx, 0, "from a node beyond range"},
		{request, 1, p, rx, 1, "a request from node 1's probe port, twice"},
		{request, 2, 40000, rx, 0, "a request from another port"},
		{request, -5, p, rx, 0, "a request from node -5"},
		{genuine[0][:PacketSize-1], one, p, rx, 0, "one byte short"},
		{append(slices.Clone(genuine[0]), 0), one, p, rx, 0, "one byte long"},
		{nil, one, p, rx, 0, "empty"},
		{forged(0, func(r *reply) { r.t2, r.t3 = math.MaxInt64, math.MinInt64 }), one, p, rx, 0, "extreme timestamps"},
		{forged(0, func(r *reply) { r.t2 -= 1e6 }), one, p, rx, 0, "a negative round trip"},
		{forged(1, func(r *reply) { r.prev.t3 += 10e6 }), one, p, rx, 0, "a carried timestamp 10 ms late"},
		{forged(0, func(r *reply) { r.advert.Offset, r.advert.Drift = math.NaN(), math.Inf(1) }), one, p, rx, 0, "a NaN advert"},
		{forged(0, func(r *reply) { r.window = 2 }), one, p, rx, 0, "another window"},
		{forged(0, func(r *reply) { r.pair = 5 }), one, p, rx, 0, "a probe never sent"},
		{forged(1, func(r *reply) { r.window = 2; r.prev.window = 1 }), one, p, rx, 0, "next window's reply carrying this one's timestamp"},
		{genuine[0], one, p, math.MaxInt64, 0, "received at MaxInt64"},
		{genuine[0], one, p, -2e9, 0, "received before it was sent"},
	} {
		f.Add(s.data, s.from, uint16(s.port), s.rxDelta, s.mode)
	}
	want := buildHostile()
	want.flush()
	control := want.p.Close()
	f.Fuzz(func(t *testing.T, data []byte, from int64, port uint16, rxDelta int64, mode uint8) {
		h := buildHostile()
		h.t = t
		var blocks []probelog.Block
		if mode&6 != 0 {
			h.flush()
		}
		if mode&4 != 0 {
			blocks = h.p.Close()
		}
		inert := true // every delivery dropped without effect
		for range 1 + int(mode&1) {
			pkt := world.Packet{From: world.Addr{Node: world.NodeID(from), Port: port}, To: world.Addr{Node: 0, Port: Port},
				Data: slices.Clone(data), RxTime: world.Time(h.Clock + rxDelta)}
			if !h.receiveFuzzed(t, pkt) {
				inert = false
			}
			if !bytes.Equal(pkt.Data, data) {
				t.Fatalf("the prober changed the datagram it was given")
			}
		}
		// Answers the prober sent go to whatever address the fuzzed
		// datagram came from: drop them, and deliver what is left of
		// the genuine replies.
		h.Datagrams = slices.DeleteFunc(h.Datagrams, func(d worldtest.Datagram) bool { return d.From.Node == 0 })
		h.flush()
		if mode&4 == 0 {
			blocks = h.p.Close()
		} else if b := h.p.Close(); b != nil {
			t.Fatalf("Close of a closed window handed over %d blocks", len(b))
		}
		checkBlocks(t, blocks, h.Len())
		if inert && fmt.Sprint(blocks) != fmt.Sprint(control) {
			t.Errorf("a datagram dropped without effect changed the block:\n got %+v\nwant %+v", blocks, control)
		}
		for id := range world.NodeID(h.Len()) {
			if a := h.p.PeerAdvert(id); a.Valid && !sane(a) {
				t.Errorf("node %d's advert kept: %+v", id, a)
			}
		}
	})
}

// buildHostile is newHostile without a *testing.T, so that FuzzDatagram
// can take its seeds from it; the fuzz function sets t.
func buildHostile() *hostile {
	n := newTestNet(nil)
	n.AddNode()
	h := &hostile{testNet: n, p: n.prober(0), q: n.prober(1)}
	h.q.SetAdvert(goodAdvert)
	h.p.Open(1, 1)
	n.fire(0)
	n.deliverRequests()
	if len(n.Datagrams) != 2 || kindOf(n.Datagrams[0]) != kindReply || kindOf(n.Datagrams[1]) != kindReply {
		panic(fmt.Sprintf("in flight: %d datagrams, want the two replies", len(n.Datagrams)))
	}
	return h
}

// answered counts the probe slots of node 0's open window that have a
// reply.
func (h *hostile) answered() int {
	n := 0
	for _, e := range h.p.edges {
		for i := range e.pairs {
			// get, not the packed pair: a pair held wide keeps its
			// counts in the edge's wide map.
			for _, k := range e.get(i).n {
				if k == 4 {
					n++
				}
			}
		}
	}
	return n
}

// receiveFuzzed hands pkt to node 0's prober and checks that it is
// accounted for once, as the bytes say it must be. It reports whether the
// datagram was dropped without effect on node 0's window.
func (h *hostile) receiveFuzzed(t *testing.T, pkt world.Packet) (inert bool) {
	t.Helper()
	before, answeredBefore, sent := h.p.Stats(), h.answered(), len(h.Datagrams)
	h.Node(0).Receive(pkt)
	after := h.p.Stats()
	d := statsDelta(t, before, after)
	taken := h.answered() - answeredBefore
	answers := h.Datagrams[sent:]

	if taken < 0 || taken > 1 {
		t.Fatalf("%d probe slots completed by one datagram", taken)
	}
	if d.PairsSent|d.T3Kernel|d.T3User|d.PairsMissed != 0 {
		t.Fatalf("receiving moved a sending or Close counter: %+v", d)
	}
	parseMalformed := 0
	if d.RepliesReceived == 0 {
		parseMalformed = d.Malformed
	}
	if top := parseMalformed + d.BadNode + d.ProbesAnswered + d.RepliesReceived; top != 1 {
		t.Fatalf("datagram counted %d times (Malformed, BadNode, ProbesAnswered, RepliesReceived): %+v", top, d)
	}
	if d.RepliesReceived == 1 {
		if fate := d.Spoofed + d.Implausible + d.Late + d.Malformed + d.Duplicate + taken; fate != 1 {
			t.Fatalf("reply given %d fates (Spoofed, Implausible, Late, Malformed, Duplicate, taken %d): %+v", fate, taken, d)
		}
	} else if d.Spoofed|d.Implausible|d.Late|d.Duplicate|d.AdvertsRejected|d.T3Late != 0 || taken != 0 {
		t.Fatalf("a datagram that is no reply moved a reply's counters: %+v, taken %d", d, taken)
	}
	if d.AdvertsRejected > 0 && taken == 0 && d.Duplicate == 0 {
		t.Fatalf("an advert rejected on a reply that was dropped: %+v", d)
	}
	if d.AdvertsRejected > 1 || d.T3Late > 1 {
		t.Fatalf("one reply counted more than once: %+v", d)
	}

	// The same, from the bytes.
	b := pkt.Data
	wellFormed := len(b) == PacketSize && binary.BigEndian.Uint16(b) == 0x4353 && b[2] == 2
	from := pkt.From.Node
	inRange := from >= 0 && int(from) < h.Len()
	switch {
	case !wellFormed:
		if parseMalformed != 1 {
			t.Fatalf("a datagram of %d bytes, % x..., was not counted Malformed: %+v", len(b), b[:min(len(b), 4)], d)
		}
	case parseMalformed == 1:
		// Well framed, but a kind, slot or flags the format does not have.
		if (b[3] == 1 || b[3] == 2) && b[16] <= 1 && (b[3] == 1 || b[17]&^0xf == 0) {
			t.Fatalf("a well-formed datagram (kind %d, slot %d, flags %#x) counted Malformed", b[3], b[16], b[17])
		}
	case !inRange:
		if d.BadNode != 1 {
			t.Fatalf("a datagram from node %d was not counted BadNode: %+v", from, d)
		}
	case b[3] == kindRequest:
		if d.ProbesAnswered != 1 || len(answers) != 1 {
			t.Fatalf("a request from %v: ProbesAnswered +%d, %d answers; want one", pkt.From, d.ProbesAnswered, len(answers))
		}
		a := answers[0]
		if a.To != pkt.From || len(a.Data) != PacketSize || a.Data[3] != kindReply || !bytes.Equal(a.Data[4:17], b[4:17]) ||
			int64(binary.BigEndian.Uint64(a.Data[20:])) != int64(pkt.RxTime) {
			t.Fatalf("request %x from %v answered to %v with %x", b, pkt.From, a.To, a.Data)
		}
		return true
	case b[3] == kindReply:
		if d.RepliesReceived != 1 {
			t.Fatalf("a reply from %v not counted as received: %+v", pkt.From, d)
		}
		if (pkt.From.Port != Port || from != 1) != (d.Spoofed == 1) {
			t.Fatalf("a reply from %v: Spoofed +%d", pkt.From, d.Spoofed)
		}
	}
	if len(answers) != 0 {
		t.Fatalf("%d answers to a datagram that is no request", len(answers))
	}
	return taken == 0 && d.Duplicate == 0 && d.Late == 0
}

// statsDelta returns after − before, field by field, failing if any
// counter went down.
func statsDelta(t *testing.T, before, after Stats) Stats {
	t.Helper()
	b, a := statsFields(&before), statsFields(&after)
	var d Stats
	dd := statsFields(&d)
	for i := range b {
		if *a[i] < *b[i] {
			t.Fatalf("a counter went down: %+v → %+v", before, after)
		}
		*dd[i] = *a[i] - *b[i]
	}
	return d
}

// statsFields lists every counter of s.
func statsFields(s *Stats) []*int {
	return []*int{&s.PairsSent, &s.ProbesAnswered, &s.RepliesReceived, &s.Late, &s.Duplicate, &s.Malformed,
		&s.T3Kernel, &s.T3User, &s.T3Late, &s.PairsMissed, &s.Spoofed, &s.Implausible, &s.AdvertsRejected, &s.BadNode}
}

// checkBlocks fails unless blocks are window 1's one block of edge 0→1,
// with at most the one pair's two probes, each a plausible probe.
func checkBlocks(t *testing.T, blocks []probelog.Block, nodes int) {
	t.Helper()
	if len(blocks) != 1 {
		t.Fatalf("%d blocks, want 1", len(blocks))
	}
	b := blocks[0]
	if b.Src != 0 || b.Dst != 1 || b.Src >= nodes || b.Dst >= nodes || b.RoundID != 1 || b.WindowID != 1 || b.SentPairs != 1 {
		t.Fatalf("block %d→%d round %d window %d, %d pairs; want 0→1, round and window 1, 1 pair", b.Src, b.Dst, b.RoundID, b.WindowID, b.SentPairs)
	}
	if b.WindowEnd < b.WindowStart || b.Lost < 0 || b.Lost+len(b.Probes) > 2*b.SentPairs {
		t.Fatalf("block: window [%d, %d], %d lost, %d probes of %d pairs", b.WindowStart, b.WindowEnd, b.Lost, len(b.Probes), b.SentPairs)
	}
	var seen [2]bool
	for _, pr := range b.Probes {
		if int(pr.Pair) >= b.SentPairs || pr.Slot > 1 || seen[pr.Slot] {
			t.Fatalf("probe %d/%d handed over (twice?) of %d pairs", pr.Pair, pr.Slot, b.SentPairs)
		}
		seen[pr.Slot] = true
		for _, v := range []int64{pr.T1, pr.T2, pr.T3, pr.T4} {
			if v < -MaxTimestamp || v > MaxTimestamp {
				t.Fatalf("probe %+v: a reading beyond MaxTimestamp", pr)
			}
		}
		out, turn := pr.T4-pr.T1, pr.T3-pr.T2
		if turn < 0 || out > int64(MaxRoundTrip) || out-turn < -int64(RoundTripTolerance) {
			t.Fatalf("probe %+v: turnaround %d, round trip %d: not a probe", pr, turn, out-turn)
		}
	}
}

// sane reports whether an advert's values are finite and within the
// bounds the package states.
func sane(a Advert) bool {
	return !math.IsNaN(a.Offset) && !math.IsInf(a.Offset, 0) && math.Abs(a.Offset) <= float64(MaxAdvertOffset) &&
		!math.IsNaN(a.Drift) && !math.IsInf(a.Drift, 0) && math.Abs(a.Drift) <= MaxAdvertDrift &&
		a.Anchor >= -MaxTimestamp && a.Anchor <= MaxTimestamp
}
