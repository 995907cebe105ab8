package netem

import (
	"fmt"
	"math"
	"testing"
	"time"
)

const (
	crossRate  = 100e6   // bit/s
	crossSvcNs = 120_000 // 1500 B at 100 Mbit/s
)

func TestMD1QueueingDelay(t *testing.T) {
	// Poisson cross traffic of 1500 B packets at load rho makes the link an
	// M/D/1 queue. Zero-byte probes at Poisson times (PASTA) take no
	// service and measure its virtual waiting time, whose mean is
	// Pollaczek-Khinchine's rho S / (2 (1 - rho)) and whose probability
	// of being 0 is 1 - rho.
	const n = 100_000
	for _, rho := range []float64{0.3, 0.6, 0.8} {
		t.Run(fmt.Sprint(rho), func(t *testing.T) {
			l := mustNew(t, Params{
				Rate:  Rate{BitsPerSecond: crossRate},
				Cross: CrossTraffic{Kind: CrossPoisson, Load: rho},
				Limit: 10_000,
			}, 21)
			if got := l.packetTime(defaultCrossPacketSize); got != crossSvcNs {
				t.Fatalf("service time %d ns, want %d", got, crossSvcNs)
			}
			l.QueueLen(0) // start the cross traffic; warm up for 1 s
			probe := newRand(4)
			now := int64(time.Second)
			waits := make([]float64, n)
			idle := make([]float64, n)
			for i := range waits {
				now += int64(probe.ExpFloat64() * 1e6)
				r := l.Send(now, 0)
				waits[i] = float64(r.Out[0].At - now)
				idle[i] = indicator(r.Out[0].At == now)
			}
			w, se := batchMean(waits, 50)
			within(t, "mean wait (ns)", w, rho*crossSvcNs/(2*(1-rho)), zTol*se)
			p0, se := batchMean(idle, 50)
			within(t, "P(wait = 0)", p0, 1-rho, zTol*se)
		})
	}
}

func TestCrossArrivals(t *testing.T) {
	const windows = 100
	interval := 8 * 1500 / (0.8 * crossRate) * 1e9 // ns between on/off packets
	on, off := ms(10), ms(30)
	cases := []struct {
		name  string
		cross CrossTraffic
		limit int
		// perSecond is the mean arrival rate; dropped the fraction of
		// arrivals dropped at the limit.
		perSecond, dropped float64
	}{
		{"poisson", CrossTraffic{Kind: CrossPoisson, Load: 0.5}, 0, 0.5 * crossRate / (8 * 1500), 0},
		// An on period of length D ~ Exp(On) carries ceil(D/I) packets,
		// 1/(1 - exp(-I/On)) on average, per cycle of On + Off.
		{"onoff", CrossTraffic{Kind: CrossOnOff, Load: 0.8, On: on, Off: off}, 0,
			1 / (1 - math.Exp(-interval/float64(on))) / (on + off).Seconds(), 0},
		// Overload: the link serves one packet per service time, the rest
		// overflow the 50 packets of queue.
		{"poisson overload", CrossTraffic{Kind: CrossPoisson, Load: 2}, 50, 2 * crossRate / (8 * 1500), 0.5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := mustNew(t, Params{Rate: Rate{BitsPerSecond: crossRate}, Cross: tc.cross, Limit: tc.limit}, 8)
			l.QueueLen(0)
			counts := make([]float64, windows)
			drops := make([]float64, windows)
			var prev Stats
			for w := range counts {
				q := l.QueueLen(int64(w+1) * int64(time.Second))
				if tc.limit > 0 && q > tc.limit {
					t.Fatalf("queue holds %d, above the limit %d", q, tc.limit)
				}
				s := l.Stats()
				counts[w] = float64(s.CrossSent - prev.CrossSent)
				drops[w] = float64(s.CrossDropped-prev.CrossDropped) / counts[w]
				prev = s
			}
			m, se := batchMean(counts, 20)
			within(t, "arrivals per second", m, tc.perSecond, zTol*se)
			d, se := batchMean(drops[1:], 19)
			within(t, "fraction dropped", d, tc.dropped, zTol*se+1e-12)
		})
	}
}

func TestCrossTrafficDoesNotShiftDraws(t *testing.T) {
	// The link's own draws (here, its losses) are the same with or without
	// cross traffic: the cross traffic has its own stream.
	p := Params{
		Delay: ms(1), Jitter: ms(0.5),
		Loss:  Loss{Model: LossRandom, Probability: 0.1},
		Rate:  Rate{BitsPerSecond: crossRate},
		Limit: 100_000,
	}
	q := p
	q.Cross = CrossTraffic{Kind: CrossPoisson, Load: 0.7}
	a, b := mustNew(t, p, 17), mustNew(t, q, 17)
	delayed := 0
	for i := range int64(50_000) {
		now := i * 100_000
		ra, rb := a.Send(now, 100), b.Send(now, 100)
		if ra.N != rb.N || ra.Drop != rb.Drop {
			t.Fatalf("packet %d: %+v without cross traffic, %+v with", i, ra, rb)
		}
		if rb.N == 1 && rb.Out[0].At > ra.Out[0].At {
			delayed++
		}
	}
	if s := b.Stats(); s.CrossSent == 0 || delayed == 0 {
		t.Errorf("cross traffic had no effect: %+v, %d packets delayed", s, delayed)
	}
}
