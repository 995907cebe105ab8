package netem

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestDuplicateAndCorrupt(t *testing.T) {
	const n = 500_000
	cases := []struct {
		name             string
		p                Params
		n0, n1, n2       float64 // P(N = 0, 1, 2)
		corruptPerCopy   float64
		wantDuplications float64 // Duplicated / Sent
	}{
		{"duplicate 10%", Params{Duplicate: 0.1}, 0, 0.9, 0.1, 0, 0.1},
		{"corrupt 5%", Params{Corrupt: 0.05}, 0, 1, 0, 0.05, 0},
		// Each copy draws its own corruption, the duplicate its own loss:
		// P(2) = d (1-q)^2, P(0) = (1-d) q.
		{"duplicate 20%, loss 10%, corrupt 5%", Params{Duplicate: 0.2, Corrupt: 0.05, Loss: Loss{Model: LossRandom, Probability: 0.1}},
			0.8 * 0.1, 1 - 0.8*0.1 - 0.2*0.81, 0.2 * 0.81, 0.05, 0.2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := mustNew(t, tc.p, 5)
			var counts [3]float64
			var copies, corrupt float64
			for i := range int64(n) {
				r := l.Send(i*1000, 100)
				counts[r.N]++
				for _, d := range r.Out[:r.N] {
					copies++
					corrupt += indicator(d.Corrupt)
				}
			}
			for k, want := range []float64{tc.n0, tc.n1, tc.n2} {
				within(t, "P(N="+string(rune('0'+k))+")", counts[k]/n, want, zTol*math.Sqrt(want*(1-want)/n)+1e-12)
			}
			cp := tc.corruptPerCopy
			within(t, "corrupt copies", corrupt/copies, cp, zTol*math.Sqrt(cp*(1-cp)/copies)+1e-12)
			s := l.Stats()
			d := tc.wantDuplications
			within(t, "Duplicated/Sent", float64(s.Duplicated)/n, d, zTol*math.Sqrt(d*(1-d)/n)+1e-12)
			if s.Sent+s.Duplicated != s.Delivered+s.Lost+s.QueueDropped {
				t.Errorf("stats %+v: Sent + Duplicated != Delivered + Lost + QueueDropped", s)
			}
			if float64(s.Corrupted) != corrupt || float64(s.Delivered) != copies {
				t.Errorf("stats %+v disagree with the results (%v copies, %v corrupt)", s, copies, corrupt)
			}
		})
	}
}

func TestReorderGapIsDeterministic(t *testing.T) {
	// "delay 10ms reorder 100% gap 5": every 5th packet goes at once.
	l := mustNew(t, Params{Delay: ms(10), Reorder: 1, ReorderGap: 5}, 1)
	for i := range int64(20) {
		now := i * int64(time.Millisecond)
		r := l.Send(now, 100)
		at, reordered := now+int64(ms(10)), false
		if (i+1)%5 == 0 {
			at, reordered = now, true
		}
		if r.N != 1 || r.Out[0].At != at || r.Out[0].Reordered != reordered {
			t.Errorf("packet %d: %+v, want At %v reordered %v", i+1, r.Out[0], at, reordered)
		}
	}
	if s := l.Stats(); s.Reordered != 4 {
		t.Errorf("Reordered = %d, want 4", s.Reordered)
	}
}

func TestReorderRate(t *testing.T) {
	const n = 400_000
	cases := []struct {
		name      string
		p, corr   float64
		gap       int
		want      float64
		corrCycle bool // draws are correlated: use batch means
	}{
		{"25%", 0.25, 0, 0, 0.25, false},
		// Correlated: P(x <= 1/4) = 5/72 for netem's generator at 50%.
		{"25% 50%", 0.25, 0.5, 0, 5.0 / 72, true},
		// After a reordered packet, gap-1 = 4 go the normal way, then each
		// is reordered with p: one in 4 + 1/p = 8.
		{"25% gap 5", 0.25, 0, 5, 1.0 / 8, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := mustNew(t, Params{Delay: ms(10), Reorder: tc.p, ReorderCorr: tc.corr, ReorderGap: tc.gap}, 9)
			xs := make([]float64, n)
			for i := range xs {
				now := int64(i) * 100_000
				r := l.Send(now, 100)
				if r.N != 1 {
					t.Fatalf("packet %d: %+v", i, r)
				}
				xs[i] = indicator(r.Out[0].Reordered)
				if r.Out[0].Reordered != (r.Out[0].At == now) {
					t.Fatalf("packet %d: %+v: a packet is released at once iff reordered", i, r.Out[0])
				}
			}
			got, se := batchMean(xs, 100)
			if !tc.corrCycle {
				se = math.Sqrt(tc.want * (1 - tc.want) / n)
			}
			within(t, "reordered fraction", got, tc.want, zTol*se)
		})
	}
}

func TestSendClampsTimeGoingBackwards(t *testing.T) {
	l := mustNew(t, Params{Delay: ms(1)}, 1)
	l.Send(1000, 10)
	if r := l.Send(500, 10); r.Out[0].At != 1000+int64(ms(1)) {
		t.Errorf("At = %d, want the previous now + 1ms", r.Out[0].At)
	}
}

func TestDeterministic(t *testing.T) {
	p := Params{
		Delay: ms(5), Jitter: ms(2), DelayCorr: 0.3, Distribution: ParetoNormal,
		Loss:      Loss{Model: LossGEModel, P: 0.02, R: 0.3, OneMinusH: 0.8, OneMinusK: 0.001},
		Duplicate: 0.01, Corrupt: 0.01, Reorder: 0.05, ReorderGap: 3,
		Rate:  Rate{BitsPerSecond: 50e6},
		Cross: CrossTraffic{Kind: CrossOnOff, Load: 0.9, On: ms(20), Off: ms(50)},
	}
	a, b := mustNew(t, p, 99), mustNew(t, p, 99)
	a.QueueLen(0)
	b.QueueLen(0)
	probe := newRand(1)
	now := int64(0)
	for i := range 100_000 {
		now += int64(probe.ExpFloat64() * 200_000)
		if probe.IntN(3) == 0 {
			// Looking at the queue changes nothing.
			b.QueueLen(now - int64(probe.IntN(1000)))
		}
		ra, rb := a.Send(now, 200), b.Send(now, 200)
		if ra != rb {
			t.Fatalf("packet %d: %+v != %+v", i, ra, rb)
		}
	}
	if a.Stats() != b.Stats() {
		t.Errorf("stats differ: %+v, %+v", a.Stats(), b.Stats())
	}
	s := a.Stats()
	if s.Sent+s.Duplicated != s.Delivered+s.Lost+s.QueueDropped {
		t.Errorf("stats %+v: Sent + Duplicated != Delivered + Lost + QueueDropped", s)
	}
	if a.Params() != p {
		t.Errorf("Params() = %+v, want %+v", a.Params(), p)
	}
}

func TestValidate(t *testing.T) {
	ok := []Params{
		{},
		{Delay: ms(10), Jitter: MaxJitter, DelayCorr: 1, Distribution: Pareto},
		{Loss: Loss{Model: LossState, P13: 0.5, P14: 0.5, P31: 0.3, P32: 0.7, P23: 1}},
		{Reorder: 0.25},
		{Rate: Rate{BitsPerSecond: 8, PacketOverhead: -20, CellSize: 53, CellOverhead: -5}},
		{Rate: Rate{BitsPerSecond: 1e9}, Cross: CrossTraffic{Kind: CrossOnOff, Load: 1.5, On: ms(1), Off: ms(1)}},
	}
	for _, p := range ok {
		if err := p.Validate(); err != nil {
			t.Errorf("Validate(%+v) = %v, want nil", p, err)
		}
	}
	bad := []struct {
		p    Params
		want string
	}{
		{Params{Delay: -1}, "Delay = -1ns: negative"},
		{Params{Jitter: -ms(1)}, "Jitter = -1ms: negative"},
		{Params{Jitter: MaxJitter + 1}, "exceeds netem's maximum"},
		{Params{DelayCorr: 1.5}, "DelayCorr = 1.5: a probability"},
		{Params{Duplicate: math.NaN()}, "Duplicate = NaN"},
		{Params{Corrupt: -0.1}, "Corrupt = -0.1"},
		{Params{Distribution: "gauss"}, `Distribution = "gauss"`},
		{Params{Loss: Loss{Probability: 0.1}}, `Loss.Probability/Correlation set, but Model is ""`},
		{Params{Loss: Loss{Model: "bursty"}}, `Loss.Model = "bursty"`},
		{Params{Loss: Loss{Model: LossRandom, Probability: 2}}, "Loss.Probability = 2"},
		{Params{Loss: Loss{Model: LossRandom, Probability: 0.1, P: 0.1}}, "Loss.P/R/OneMinusH/OneMinusK set"},
		{Params{Loss: Loss{Model: LossState, P13: 0.6, P14: 0.6}}, "Loss.P13 + P14"},
		{Params{Loss: Loss{Model: LossState, P31: 0.6, P32: 0.6}}, "Loss.P31 + P32"},
		{Params{Loss: Loss{Model: LossGEModel, OneMinusH: 1.1}}, "Loss.OneMinusH = 1.1"},
		{Params{ReorderGap: 5}, "without a Reorder probability"},
		{Params{Reorder: 0.1, ReorderGap: -1}, "ReorderGap = -1"},
		{Params{Rate: Rate{BitsPerSecond: 7}}, "BitsPerSecond = 7"},
		{Params{Rate: Rate{CellSize: 48}}, "set without BitsPerSecond"},
		{Params{Rate: Rate{BitsPerSecond: 1e6, CellSize: -1}}, "CellSize = -1"},
		{Params{Limit: -1}, "Limit = -1"},
		{Params{Cross: CrossTraffic{Kind: CrossPoisson, Load: 0.5}}, "needs Rate.BitsPerSecond"},
		{Params{Rate: Rate{BitsPerSecond: 1e6}, Cross: CrossTraffic{Kind: CrossPoisson}}, "Cross.Load = 0"},
		{Params{Rate: Rate{BitsPerSecond: 1e6}, Cross: CrossTraffic{Kind: CrossOnOff, Load: 0.5}}, "both mean periods > 0"},
		{Params{Rate: Rate{BitsPerSecond: 1e6}, Cross: CrossTraffic{Kind: CrossPoisson, Load: 0.5, On: 1}}, "only for Kind"},
		{Params{Rate: Rate{BitsPerSecond: 1e6}, Cross: CrossTraffic{Kind: "cbr", Load: 0.5}}, `Cross.Kind = "cbr"`},
		{Params{Cross: CrossTraffic{Load: 0.5}}, "but Kind is none"},
		{Params{Rate: Rate{BitsPerSecond: 1e6}, Cross: CrossTraffic{Kind: CrossPoisson, Load: 0.5, PacketSize: -1}}, "PacketSize = -1"},
	}
	for _, tc := range bad {
		err := tc.p.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%+v) = %v, want an error containing %q", tc.p, err, tc.want)
		}
		if _, err := New(tc.p, newRand(1)); err == nil {
			t.Errorf("New(%+v) accepted invalid parameters", tc.p)
		}
	}
	// Every problem is reported.
	err := Params{Delay: -1, Limit: -1}.Validate()
	if err == nil || !strings.Contains(err.Error(), "Delay") || !strings.Contains(err.Error(), "Limit") {
		t.Errorf("Validate reported %v, want both Delay and Limit", err)
	}
	if _, err := New(Params{}, nil); err == nil {
		t.Error("New accepted a nil *rand.Rand")
	}
}

func TestSendDoesNotAllocate(t *testing.T) {
	l := benchLink(t)
	now := int64(0)
	allocs := testing.AllocsPerRun(10_000, func() {
		now += 100_000
		l.Send(now, 1000)
	})
	if allocs != 0 {
		t.Errorf("Send allocates %v times per call, want 0", allocs)
	}
}

// benchLink is a link with every feature on, its queue warmed up.
func benchLink(t testing.TB) *Link {
	l := mustNew(t, Params{
		Delay: ms(20), Jitter: ms(5), DelayCorr: 0.25, Distribution: Normal,
		Loss:      Loss{Model: LossRandom, Probability: 0.01, Correlation: 0.25},
		Duplicate: 0.01, Corrupt: 0.001, Reorder: 0.01,
		Rate:  Rate{BitsPerSecond: 100e6, PacketOverhead: 38},
		Cross: CrossTraffic{Kind: CrossPoisson, Load: 0.5},
	}, 1)
	for i := range int64(100_000) {
		l.Send(i*100_000, 1000)
	}
	return l
}

func BenchmarkSend(b *testing.B) {
	l := benchLink(b)
	now := int64(100_000 * 100_000)
	b.ReportAllocs()
	for b.Loop() {
		now += 100_000
		l.Send(now, 1000)
	}
}
