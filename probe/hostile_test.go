package probe

import (
	"fmt"
	"math"
	"testing"

	"github.com/chronosync/chronosync/probe/probelog"
	"github.com/chronosync/chronosync/world"
	"github.com/chronosync/chronosync/world/worldtest"
)

// The tests here feed a prober datagrams no honest peer sends (issue 18
// item 5): replies from another address, with impossible timestamps or
// adverts, for windows or probes that are not open, and from node ids out
// of range. Each must be dropped and counted, and must not spoil the
// genuine replies around it.

// goodAdvert is the advert the responder of a hostileNet piggybacks.
var goodAdvert = Advert{Valid: true}

func init() {
	goodAdvert.Offset, goodAdvert.Drift, goodAdvert.Anchor = 1e6, 1e-5, 1e9
}

// hostile is a testNet of three nodes, node 0 probing node 1 (node 2
// probes and is probed by nobody), whose node 0 has window 1 open with one
// pair sent and both requests answered: the replies to probes 0/0 and 0/1
// are in flight, in that order, the second carrying the first's transmit
// timestamp, both with node 1's advert goodAdvert.
type hostile struct {
	*testNet
	p, q *Prober // node 0's, node 1's
}

func newHostile(t *testing.T) *hostile {
	t.Helper()
	n := newTestNet(t)
	n.AddNode()
	h := &hostile{testNet: n, p: n.prober(0), q: n.prober(1)}
	h.q.SetAdvert(goodAdvert)
	h.p.Open(1, 1)
	n.fire(0)
	n.deliverRequests()
	if len(n.Datagrams) != 2 || kindOf(n.Datagrams[0]) != kindReply || kindOf(n.Datagrams[1]) != kindReply {
		t.Fatalf("in flight: %d datagrams, want the two replies", len(n.Datagrams))
	}
	return h
}

// decoded returns the in-flight reply at index i, decoded.
func (h *hostile) decoded(i int) reply {
	h.t.Helper()
	r, err := parse(h.Datagrams[i].Data)
	if err != nil {
		h.t.Fatal(err)
	}
	return r
}

// forge returns a copy of the in-flight reply at index i, edited and
// coming from from.
func (h *hostile) forge(i int, from world.Addr, edit func(*reply)) worldtest.Datagram {
	h.t.Helper()
	r := h.decoded(i)
	if edit != nil {
		edit(&r)
	}
	d := h.Datagrams[i]
	d.From, d.Data = from, make([]byte, PacketSize)
	putReply(d.Data, r)
	return d
}

// finish delivers what is in flight and closes the window.
func (h *hostile) finish() probelog.Block {
	h.t.Helper()
	h.flush()
	blocks := h.p.Close()
	if len(blocks) != 1 {
		h.t.Fatalf("%d blocks, want 1", len(blocks))
	}
	return blocks[0]
}

// control is what node 0 hands over when no hostile datagram came.
func control(t *testing.T) (probelog.Block, Stats) {
	t.Helper()
	h := newHostile(t)
	b := h.finish()
	if len(b.Probes) != 2 {
		t.Fatalf("control: %d probes, want 2", len(b.Probes))
	}
	return b, h.p.Stats()
}

// sameBlock fails the test unless got hands over the control's probes.
func sameBlock(t *testing.T, got, want probelog.Block) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("block:\n got %+v\nwant %+v (as without the hostile worldtest.Datagram)", got.Probes, want.Probes)
	}
}

// TestReplyFromAnotherAddress (item 5a): a reply is taken only from the
// address its request went to, node 1's probe port. A copy from another
// port or node, verbatim or with the T2 = MaxInt64, T3 = MinInt64,
// arriving before the genuine reply, is dropped and counted as Spoofed, and
// the genuine reply is taken (not counted as a duplicate).
func TestReplyFromAnotherAddress(t *testing.T) {
	want, wantStats := control(t)
	extreme := func(r *reply) { r.t2, r.t3 = math.MaxInt64, math.MinInt64 }
	for _, tc := range []struct {
		name  string
		reply int // which in-flight reply is copied
		from  world.Addr
		edit  func(*reply)
	}{
		{"the probed node, another port, verbatim", 0, world.Addr{Node: 1, Port: 9999}, nil},
		{"the probed node, another port, extreme timestamps", 0, world.Addr{Node: 1, Port: 40000}, extreme},
		{"the probed node, another port, carrying a transmit timestamp", 1, world.Addr{Node: 1, Port: Port + 1}, nil},
		{"a node not probed, the probe port", 0, world.Addr{Node: 2, Port: Port}, nil},
		{"a node not probed, extreme timestamps", 0, world.Addr{Node: 2, Port: Port}, extreme},
		{"node 0 itself", 1, world.Addr{Node: 0, Port: Port}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHostile(t)
			h.DeliverCopy(h.forge(tc.reply, tc.from, tc.edit))
			if a := h.p.PeerAdvert(tc.from.Node); a.Valid {
				t.Errorf("the spoofed reply's advert was taken: %+v", a)
			}
			sameBlock(t, h.finish(), want)
			st := h.p.Stats()
			if st.Spoofed != 1 || st.Duplicate != 0 || st.T3Kernel != wantStats.T3Kernel {
				t.Errorf("Spoofed %d, Duplicate %d, T3Kernel %d; want 1, 0, %d", st.Spoofed, st.Duplicate, st.T3Kernel, wantStats.T3Kernel)
			}
		})
	}
}

// TestRequestFromAnotherPort (item 5a, the responder's side): a request
// from another port than the probe port is answered, but takes no part in
// the interleaved transmit timestamps. One naming a probe of node 0's
// window (a forgery, or a stray tool) must neither take the timestamp of
// node 0's last reply, nor make node 0's genuine request look like a
// duplicate whose reply may carry none.
func TestRequestFromAnotherPort(t *testing.T) {
	run := func(t *testing.T, forge bool) (probelog.Block, *testNet) {
		n := newTestNet(t)
		p := n.prober(0)
		n.prober(1)
		p.Open(1, 1)
		n.fire(0)
		n.Clock += hop
		n.Deliver(0) // the request 0/0; its reply waits behind the request 0/1
		if forge {
			n.Node(1).Receive(world.Packet{From: world.Addr{Node: 0, Port: 9999}, To: world.Addr{Node: 1, Port: Port},
				RxTime: world.Time(n.Clock + n.Node(1).Offset), Data: requestBytes(t, 1, 0, 1)})
			last := len(n.Datagrams) - 1
			if d := n.Datagrams[last]; d.To != (world.Addr{Node: 0, Port: 9999}) {
				t.Fatalf("the forged request was answered to %v, want n0:9999", d.To)
			}
			n.Drop(last) // no prober listens on that port
		}
		n.flush()
		b := p.Close()
		if len(b) != 1 {
			t.Fatalf("%d blocks, want 1", len(b))
		}
		return b[0], n
	}
	want, _ := run(t, false)
	got, _ := run(t, true)
	sameBlock(t, got, want)
	if k, _, _ := got.T3Sources(); k != 1 {
		t.Errorf("%d probes with the kernel's t3, want 1 (0/0's, carried by the reply to 0/1)", k)
	}
}

// TestImplausibleReply (item 5b): a reply from the right address whose
// timestamps cannot be a probe's is dropped and counted as Implausible,
// and leaves its probe's slot open: the genuine reply, arriving after it,
// is taken.
func TestImplausibleReply(t *testing.T) {
	want, _ := control(t)
	for _, tc := range []struct {
		name  string
		reply int // which in-flight reply is forged
		edit  func(*reply)
	}{
		{"the issue's: t2 MaxInt64, t3 MinInt64", 0, func(r *reply) { r.t2, r.t3 = math.MaxInt64, math.MinInt64 }},
		{"t3 before t2", 0, func(r *reply) { r.t3 = r.t2 - 1 }},
		{"t2 and t3 at MaxInt64", 0, func(r *reply) { r.t2, r.t3 = math.MaxInt64, math.MaxInt64 }},
		{"t2 and t3 at MinInt64", 0, func(r *reply) { r.t2, r.t3 = math.MinInt64, math.MinInt64 }},
		{"t2 beyond MaxTimestamp", 0, func(r *reply) { r.t2, r.t3 = MaxTimestamp+1, MaxTimestamp+1 }},
		{"a negative round trip: a turnaround of 1 ms", 0, func(r *reply) { r.t2 -= 1e6 }},
		{"the follow-up, t3 at MinInt64", 1, func(r *reply) { r.t3 = math.MinInt64 }},
		{"a carried transmit timestamp at MaxInt64", 1, func(r *reply) { r.prev.t3 = math.MaxInt64 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHostile(t)
			h.DeliverCopy(h.forge(tc.reply, world.Addr{Node: 1, Port: Port}, tc.edit))
			if h.p.PeerAdvert(1).Valid {
				t.Error("the implausible reply's advert was taken")
			}
			sameBlock(t, h.finish(), want)
			st := h.p.Stats()
			if st.Implausible != 1 || st.Duplicate != 0 {
				t.Errorf("Implausible %d, Duplicate %d; want 1, 0", st.Implausible, st.Duplicate)
			}
		})
	}
}

// TestImplausibleTransmitTimestamp (item 5b): a carried transmit timestamp
// that would make its probe's round trip negative is not put in place of
// the probe's t3: the probe keeps the responder's user-space reading, and
// the timestamp is counted as Implausible.
func TestImplausibleTransmitTimestamp(t *testing.T) {
	for _, tc := range []struct {
		name    string
		shift   int64 // added to the carried timestamp
		kernel  int   // probes handed over with the kernel's t3
		implaus int
	}{
		{"as carried", 0, 1, 0},
		{"10 ms late: a negative round trip", 10e6, 0, 1},
		{"before the probe's t2", -10e6, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHostile(t)
			first := h.decoded(0)
			h.Datagrams[1] = h.forge(1, world.Addr{Node: 1, Port: Port}, func(r *reply) { r.prev.t3 += tc.shift })
			b := h.finish()
			if len(b.Probes) != 2 {
				t.Fatalf("%d probes, want 2", len(b.Probes))
			}
			if k, _, _ := b.T3Sources(); k != tc.kernel {
				t.Errorf("%d probes with the kernel's t3, want %d", k, tc.kernel)
			}
			if tc.kernel == 0 && b.Probes[0].T3 != first.t3 {
				t.Errorf("probe 0/0: t3 %d, want the user-space reading %d", b.Probes[0].T3, first.t3)
			}
			if st := h.p.Stats(); st.Implausible != tc.implaus {
				t.Errorf("Implausible %d, want %d", st.Implausible, tc.implaus)
			}
		})
	}
}

// TestPlausibleProbe (item 5b): the bounds of the round-trip check, at
// their edges.
func TestPlausibleProbe(t *testing.T) {
	const t1, t2 = 1_000_000_000, 5_000_000_000 // the two clocks 4 s apart
	tol := int64(RoundTripTolerance)
	for _, tc := range []struct {
		name           string
		t1, t2, t3, t4 int64
		want           bool
	}{
		{"a 100 µs round trip", t1, t2, t2 + 1000, t1 + 101_000, true},
		{"t3 = t2, t4 = t1", t1, t2, t2, t1, true},
		{"a round trip of −tolerance", t1, t2, t2 + 1000, t1 + 1000 - tol, true},
		{"just below −tolerance", t1, t2, t2 + 1000, t1 + 1000 - tol - 1, false},
		{"t3 one ns before t2", t1, t2, t2 - 1, t1 + 100_000, false},
		{"t4 − t1 = MaxRoundTrip", t1, t2, t2, t1 + int64(MaxRoundTrip), true},
		{"t4 − t1 beyond MaxRoundTrip", t1, t2, t2, t1 + int64(MaxRoundTrip) + 1, false},
		{"negative readings", -t1, -t2, -t2 + 10, -t1 + 100, true},
		{"t2 at MinInt64, t3 at MaxInt64 (overflows t3 − t2)", t1, math.MinInt64, math.MaxInt64, t1 + 100, false},
		{"t1 beyond −MaxTimestamp", -MaxTimestamp - 1, t2, t2, -MaxTimestamp + 100, false},
		{"t4 at MaxTimestamp", MaxTimestamp - 100, t2, t2, MaxTimestamp, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := plausibleProbe(tc.t1, tc.t2, tc.t3, tc.t4); got != tc.want {
				t.Errorf("plausibleProbe(%d, %d, %d, %d) = %v, want %v", tc.t1, tc.t2, tc.t3, tc.t4, got, tc.want)
			}
		})
	}
}

// TestAdverts (item 5c): an advert is taken only from a reply that
// answers a probe of the open window, from the probed node's probe port,
// and only with finite values within MaxAdvertOffset, MaxAdvertDrift and
// MaxTimestamp. Anything else is dropped and counted, and the peer's
// advert stays what it was (here: none yet).
func TestAdverts(t *testing.T) {
	set := func(f func(a *Advert)) func(*reply) {
		return func(r *reply) { r.advert.Valid = true; f(&r.advert) }
	}
	inf := math.Inf(1)
	for _, tc := range []struct {
		name string
		from world.Addr // zero: node 1's probe port
		edit func(*reply)
		// closed closes node 0's window before the reply arrives.
		closed bool
		taken  bool // the advert is taken
		// counts: AdvertsRejected, Late, Spoofed, Malformed.
		counts [4]int
	}{
		{name: "a genuine reply's advert is taken", taken: true},
		{name: "NaN offset", edit: set(func(a *Advert) { a.Offset = math.NaN() }), counts: [4]int{1, 0, 0, 0}},
		{name: "NaN drift", edit: set(func(a *Advert) { a.Drift = math.NaN() }), counts: [4]int{1, 0, 0, 0}},
		{name: "+Inf drift", edit: set(func(a *Advert) { a.Drift = inf }), counts: [4]int{1, 0, 0, 0}},
		{name: "−Inf offset", edit: set(func(a *Advert) { a.Offset = -inf }), counts: [4]int{1, 0, 0, 0}},
		{name: "offset beyond MaxAdvertOffset", edit: set(func(a *Advert) { a.Offset = float64(MaxAdvertOffset) * 1.01 }), counts: [4]int{1, 0, 0, 0}},
		{name: "offset at −MaxAdvertOffset", edit: set(func(a *Advert) { a.Offset = -float64(MaxAdvertOffset) }), taken: true},
		{name: "drift beyond MaxAdvertDrift", edit: set(func(a *Advert) { a.Drift = -2 * MaxAdvertDrift }), counts: [4]int{1, 0, 0, 0}},
		{name: "anchor at MaxInt64", edit: set(func(a *Advert) { a.Anchor = math.MaxInt64 }), counts: [4]int{1, 0, 0, 0}},
		{name: "a window that is not open, NaN offset, +Inf drift", edit: func(r *reply) {
			r.window = 7
			r.advert.Offset, r.advert.Drift = math.NaN(), inf
		}, counts: [4]int{0, 1, 0, 0}},
		{name: "a genuine reply after the window closed", closed: true, counts: [4]int{0, 1, 0, 0}},
		{name: "a probe never sent", edit: func(r *reply) { r.pair = 5 }, counts: [4]int{0, 0, 0, 1}},
		{name: "another port", from: world.Addr{Node: 1, Port: 9999}, counts: [4]int{0, 0, 1, 0}},
		{name: "a node not probed", from: world.Addr{Node: 2, Port: Port}, counts: [4]int{0, 0, 1, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHostile(t)
			from := tc.from
			if from == (world.Addr{}) {
				from = world.Addr{Node: 1, Port: Port}
			}
			d := h.forge(0, from, tc.edit)
			if tc.closed {
				h.p.Close()
			}
			h.DeliverCopy(d)
			got := h.p.PeerAdvert(from.Node)
			switch {
			case tc.taken && got != advertOf(t, d):
				t.Errorf("advert %+v, want the reply's %+v", got, advertOf(t, d))
			case !tc.taken && got.Valid:
				t.Errorf("advert %+v taken, want none", got)
			}
			st := h.p.Stats()
			if c := [4]int{st.AdvertsRejected, st.Late, st.Spoofed, st.Malformed}; c != tc.counts {
				t.Errorf("AdvertsRejected, Late, Spoofed, Malformed = %v, want %v", c, tc.counts)
			}
		})
	}
}

// advert returns the advert a reply datagram carries.
func advertOf(t *testing.T, d worldtest.Datagram) Advert {
	t.Helper()
	r, err := parse(d.Data)
	if err != nil {
		t.Fatal(err)
	}
	return r.advert
}

// TestSenderOutOfRange (item 5d): a datagram from a node id out of range
// (negative, or not below Env.Nodes) is dropped and counted as BadNode:
// never a panic, never an answer.
func TestSenderOutOfRange(t *testing.T) {
	for _, id := range []world.NodeID{-1, -2, math.MinInt, 3, 1 << 40} {
		for _, kind := range []string{"reply", "request"} {
			t.Run(fmt.Sprintf("%s from node %d", kind, id), func(t *testing.T) {
				h := newHostile(t)
				pkt := world.Packet{From: world.Addr{Node: id, Port: Port}, To: world.Addr{Node: 0, Port: Port},
					RxTime: world.Time(h.Clock), Data: h.Datagrams[0].Data}
				if kind == "request" {
					pkt.Data = requestBytes(t, 1, 0, 0)
				}
				before := len(h.Datagrams)
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Fatalf("panic: %v", r)
						}
					}()
					h.Node(0).Receive(pkt)
				}()
				if len(h.Datagrams) != before {
					t.Errorf("%d datagrams sent in answer, want none", len(h.Datagrams)-before)
				}
				st := h.p.Stats()
				if st.BadNode != 1 || st.RepliesReceived != 0 || st.ProbesAnswered != 0 {
					t.Errorf("BadNode %d, RepliesReceived %d, ProbesAnswered %d; want 1, 0, 0", st.BadNode, st.RepliesReceived, st.ProbesAnswered)
				}
			})
		}
	}
}
