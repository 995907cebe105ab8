package netem

import (
	"slices"
	"testing"
	"time"
)

func TestPacketTime(t *testing.T) {
	cases := []struct {
		name string
		rate Rate
		size int
		want int64 // ns
	}{
		{"1000 B at 8 Mbit/s", Rate{BitsPerSecond: 8e6}, 1000, 1e6},
		{"packet overhead", Rate{BitsPerSecond: 8e6, PacketOverhead: 24}, 1000, 1_024_000},
		// 100 + 14 = 114 bytes: 3 cells of 48 (114 > 96), each 48 + 5.
		{"cells", Rate{BitsPerSecond: 8e6, PacketOverhead: 14, CellSize: 48, CellOverhead: 5}, 100, 159_000},
		{"whole cells", Rate{BitsPerSecond: 8e6, CellSize: 48}, 96, 96_000},
		{"negative overhead", Rate{BitsPerSecond: 8e6, PacketOverhead: -4}, 1004, 1e6},
		{"overhead beyond the packet", Rate{BitsPerSecond: 8e6, PacketOverhead: -2000}, 1000, 0},
		// netem's rate is whole bytes per second: 1001 bit/s is 125 B/s.
		{"byte rate", Rate{BitsPerSecond: 1001}, 125, 1e9},
		{"rounds down", Rate{BitsPerSecond: 3 * 8}, 1, 333_333_333},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := mustNew(t, Params{Rate: tc.rate}, 1)
			if got := l.packetTime(tc.size); got != tc.want {
				t.Errorf("packetTime(%d) = %d, want %d", tc.size, got, tc.want)
			}
		})
	}
}

func TestBackToBackBurst(t *testing.T) {
	// 1250 B at 10 Mbit/s is 1 ms. netem: the first packet leaves at
	// delay + packet time; each next one uses the last as its reference,
	// its delay absorbed by the wait: t_k = 5ms + (k+1) ms.
	l := mustNew(t, Params{Delay: ms(5), Rate: Rate{BitsPerSecond: 10e6}}, 1)
	for k := range int64(100) {
		r := l.Send(0, 1250)
		if want := int64(ms(6)) + k*int64(time.Millisecond); r.N != 1 || r.Out[0].At != want {
			t.Fatalf("packet %d: %+v, want At %d", k, r, want)
		}
	}
	if got := l.QueueLen(0); got != 100 {
		t.Errorf("QueueLen = %d, want 100", got)
	}
	if got := l.QueueLen(int64(ms(55.5))); got != 50 {
		t.Errorf("QueueLen(55.5ms) = %d, want 50", got)
	}
}

func TestSaturatedLinkDeliversAtRate(t *testing.T) {
	// Offer 1.5 times the rate for 10 s: once the queue has formed, it
	// never empties, and deliveries are exactly one packet time apart.
	const pt = int64(time.Millisecond) // 1250 B at 10 Mbit/s
	l := mustNew(t, Params{Delay: ms(3), Rate: Rate{BitsPerSecond: 10e6}, Limit: 100}, 1)
	var ats []int64
	for now := int64(0); now < 10e9; now += 2 * pt / 3 {
		if r := l.Send(now, 1250); r.N == 1 {
			ats = append(ats, r.Out[0].At)
		} else if r.Drop != DropQueue {
			t.Fatalf("dropped for %v", r.Drop)
		}
	}
	if !slices.IsSorted(ats) {
		t.Fatal("deliveries out of order without jitter")
	}
	for i := 1; i < len(ats); i++ {
		if d := ats[i] - ats[i-1]; d != pt {
			t.Fatalf("delivery %d: %d ns after the previous, want %d", i, d, pt)
		}
	}
	// The queue stays at the limit; throughput is the rate: 1 packet per ms.
	s := l.Stats()
	span := ats[len(ats)-1] - ats[0] + pt
	if got := float64(len(ats)) * 1250 * 8 / (float64(span) / 1e9); got != 10e6 {
		t.Errorf("throughput %v bit/s, want exactly 10e6", got)
	}
	if s.QueueDropped == 0 || s.Delivered+s.QueueDropped != s.Sent {
		t.Errorf("stats %+v: want drops at the limit and every packet accounted for", s)
	}
}

func TestQueueLimit(t *testing.T) {
	t.Run("delay only", func(t *testing.T) {
		// 25 packets at once into "delay 10ms limit 10": 10 queued, 15 dropped.
		l := mustNew(t, Params{Delay: ms(10), Limit: 10}, 1)
		var delivered, dropped int
		for range 25 {
			r := l.Send(0, 100)
			delivered += r.N
			if r.N == 0 {
				if r.Drop != DropQueue {
					t.Fatalf("drop reason %v, want %v", r.Drop, DropQueue)
				}
				dropped++
			}
		}
		if delivered != 10 || dropped != 15 {
			t.Errorf("delivered %d, dropped %d, want 10 and 15", delivered, dropped)
		}
		if got := l.QueueLen(int64(ms(10)) - 1); got != 10 {
			t.Errorf("QueueLen just before release = %d, want 10", got)
		}
		if got := l.QueueLen(int64(ms(10))); got != 0 {
			t.Errorf("QueueLen at release = %d, want 0", got)
		}
		if s := l.Stats(); s.QueueDropped != 15 || s.Delivered != 10 {
			t.Errorf("stats %+v", s)
		}
	})
	t.Run("rate", func(t *testing.T) {
		// 1000 B at 8 Mbit/s is 1 ms; limit 5.
		l := mustNew(t, Params{Rate: Rate{BitsPerSecond: 8e6}, Limit: 5}, 1)
		var got []int64
		for range 8 {
			if r := l.Send(0, 1000); r.N == 1 {
				got = append(got, r.Out[0].At)
			}
		}
		// At 2.5 ms two have left: room for two more, after the last.
		for range 4 {
			if r := l.Send(2_500_000, 1000); r.N == 1 {
				got = append(got, r.Out[0].At)
			}
		}
		want := []int64{1e6, 2e6, 3e6, 4e6, 5e6, 6e6, 7e6}
		if !slices.Equal(got, want) {
			t.Errorf("deliveries at %v, want %v", got, want)
		}
		if s := l.Stats(); s.QueueDropped != 5 {
			t.Errorf("QueueDropped = %d, want 5", s.QueueDropped)
		}
	})
	t.Run("duplicate", func(t *testing.T) {
		// A duplicate passes the limit check with its original: the queue
		// can hold limit+1; a packet dropped at the limit takes its
		// duplicate with it.
		l := mustNew(t, Params{Delay: ms(10), Duplicate: 1, Limit: 3}, 1)
		for i, want := range []int{2, 2, 0} {
			if r := l.Send(0, 100); r.N != want {
				t.Errorf("packet %d: %d deliveries, want %d", i, r.N, want)
			}
		}
		if got := l.QueueLen(0); got != 4 {
			t.Errorf("QueueLen = %d, want 4", got)
		}
		if s := l.Stats(); s.QueueDropped != 2 || s.Duplicated != 3 {
			t.Errorf("stats %+v, want 2 queue drops of 3 duplicated packets", s)
		}
	})
	t.Run("default", func(t *testing.T) {
		l := mustNew(t, Params{Delay: ms(10)}, 1)
		n := 0
		for range DefaultLimit + 10 {
			n += l.Send(0, 100).N
		}
		if n != DefaultLimit {
			t.Errorf("%d packets queued, want netem's default limit %d", n, DefaultLimit)
		}
	})
}

func TestJitterReordersLikeTfifo(t *testing.T) {
	// Without a rate, each packet leaves at now + its own delay: a packet
	// may overtake an earlier one, as in netem's tfifo.
	const n = 100_000
	l := mustNew(t, Params{Delay: ms(10), Jitter: ms(5)}, 3)
	xs := make([]float64, n)
	prev := int64(0)
	for i := range xs {
		now := int64(i) * int64(time.Millisecond)
		at := l.Send(now, 100).Out[0].At
		if at < now+int64(ms(5)) || at >= now+int64(ms(15)) {
			t.Fatalf("packet %d leaves %d ns after being sent, want [5ms, 15ms)", i, at-now)
		}
		xs[i] = indicator(at < prev)
		prev = at
	}
	// Delays uniform on [5, 15) ms sent 1 ms apart: P(d_i < d_{i-1} - 1ms)
	// = (1 - 1/10)^2 / 2 = 0.405.
	got, se := batchMean(xs, 100)
	within(t, "fraction overtaking its predecessor", got, 0.405, zTol*se)
}
