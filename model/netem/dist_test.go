package netem

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The tables iproute2 6.1 installs (/usr/lib/x86_64-linux-gnu/tc/*.dist),
// identified by the FNV-64a hash of their entries as little-endian int16s,
// and the mean and standard deviation of their entries in units of 8192.
var iproute2Tables = []struct {
	dist     Distribution
	hash     uint64
	mean, sd float64
}{
	{Normal, 0x3f198b6014c3b3b8, -0.00078, 1.00005},
	{Pareto, 0x209e1d3c861819fa, -0.03349, 0.81968},
	{ParetoNormal, 0x468ce9c962a5ecf9, -0.02530, 0.83394},
}

func TestTablesMatchIproute2(t *testing.T) {
	for _, tc := range iproute2Tables {
		t.Run(string(tc.dist), func(t *testing.T) {
			tab := distTable(tc.dist)
			if len(tab) != distTableSize {
				t.Fatalf("%d entries, want %d", len(tab), distTableSize)
			}
			h := fnv.New64a()
			var s, s2 float64
			for _, v := range tab {
				h.Write(binary.LittleEndian.AppendUint16(nil, uint16(v)))
				s += float64(v) / distScale
				s2 += float64(v) * float64(v) / distScale / distScale
			}
			if got := h.Sum64(); got != tc.hash {
				t.Errorf("table hash %#x, want %#x", got, tc.hash)
			}
			mean := s / distTableSize
			within(t, "table mean", mean, tc.mean, 5e-6)
			within(t, "table sd", math.Sqrt(s2/distTableSize-mean*mean), tc.sd, 5e-6)

			// Where iproute2 is installed, compare entry by entry.
			for _, dir := range []string{"/usr/lib/x86_64-linux-gnu/tc", "/usr/lib/tc", "/usr/lib64/tc"} {
				b, err := os.ReadFile(filepath.Join(dir, string(tc.dist)+".dist"))
				if err != nil {
					continue
				}
				var want []int16
				for line := range strings.Lines(string(b)) {
					if strings.HasPrefix(line, "#") {
						continue
					}
					for _, f := range strings.Fields(line) {
						v, err := strconv.Atoi(f)
						if err != nil {
							t.Fatalf("%s: %v", dir, err)
						}
						want = append(want, int16(v))
					}
				}
				if len(want) != len(tab) {
					t.Fatalf("%s: %d entries, want %d", dir, len(want), len(tab))
				}
				for i := range want {
					if tab[i] != want[i] {
						t.Errorf("%s: entry %d = %d, iproute2 has %d", dir, i, tab[i], want[i])
					}
				}
				t.Logf("identical to %s/%s.dist", dir, tc.dist)
				break
			}
		})
	}
}

// moments are a delay distribution's exact mean, variance and fourth
// central moment, in ns.
type moments struct{ mean, variance, mu4 float64 }

// exactMoments returns the moments of tabledist(mu, sigma) for a uniform
// 32-bit random number: with a table, each of its 4096 entries (4096
// divides 2^32); without, rnd % (2*sigma), whose values below 2^32 mod
// 2*sigma are one count more likely than the others.
func exactMoments(mu time.Duration, sigma int32, table []int16) moments {
	if table != nil {
		var m moments
		for i := range table {
			m.mean += float64(distValue(int64(mu), sigma, uint32(i), table))
		}
		m.mean /= float64(len(table))
		for i := range table {
			d := float64(distValue(int64(mu), sigma, uint32(i), table)) - m.mean
			m.variance += d * d
			m.mu4 += d * d * d * d
		}
		m.variance /= float64(len(table))
		m.mu4 /= float64(len(table))
		return m
	}
	w := float64(2 * uint64(sigma))
	q := math.Floor(1 << 32 / w)
	rem := 1<<32 - q*w
	s1 := q*w*(w-1)/2 + rem*(rem-1)/2
	s2 := q*(w-1)*w*(2*w-1)/6 + (rem-1)*rem*(2*rem-1)/6
	mean := s1 / (1 << 32)
	return moments{
		mean:     float64(mu) - float64(sigma) + mean,
		variance: s2/(1<<32) - mean*mean,
		mu4:      w * w * w * w / 80,
	}
}

func TestDelayDistribution(t *testing.T) {
	const n = 200_000
	cases := []struct {
		name  string
		dist  Distribution
		sigma time.Duration
		// nominal is sd/Jitter by the closed form of the distribution
		// netem means, checked to tolerance nomTol.
		nominal, nomTol float64
	}{
		{"uniform 2^20ns", Uniform, 1 << 20, 1 / math.Sqrt(3), 1e-6},
		// 2^32 mod 2e7 values are one count in 214 more likely: the
		// modulo bias moves sd/Jitter by 4.4e-4.
		{"uniform 10ms", "", ms(10), 1 / math.Sqrt(3), 1e-3},
		{"normal", Normal, ms(10), 1, 1e-3},
		{"pareto", Pareto, ms(10), 0.8197, 1e-3},
		{"paretonormal", ParetoNormal, ms(10), 0.8339, 1e-3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := Params{Delay: ms(100), Jitter: tc.sigma, Distribution: tc.dist}
			l := mustNew(t, p, 1)
			xs := make([]float64, n)
			for i := range xs {
				now := int64(i) * int64(time.Millisecond)
				r := l.Send(now, 100)
				xs[i] = float64(r.Out[0].At - now)
			}
			want := exactMoments(p.Delay, int32(tc.sigma), distTable(tc.dist))
			mean, variance := meanVar(xs)
			within(t, "mean delay (ns)", mean, want.mean, zTol*math.Sqrt(want.variance/n))
			sdTol := zTol * math.Sqrt((want.mu4-want.variance*want.variance)/n) / (2 * math.Sqrt(want.variance))
			within(t, "delay sd (ns)", math.Sqrt(variance), math.Sqrt(want.variance), sdTol)
			within(t, "exact sd / Jitter", math.Sqrt(want.variance)/float64(tc.sigma), tc.nominal, tc.nomTol)
		})
	}
}

func TestZeroJitterIsExactAndDrawsNothing(t *testing.T) {
	p := Params{Delay: ms(42), DelayCorr: 0.5, Distribution: Normal}
	r1, r2 := newRand(7), newRand(7)
	l, err := New(p, r1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(p, r2); err != nil {
		t.Fatal(err)
	}
	for i := range int64(10_000) {
		now := i * 100_000
		r := l.Send(now, 1500)
		if r.N != 1 || r.Out[0].At != now+int64(ms(42)) {
			t.Fatalf("packet %d: %+v, want one delivery at now + 42ms", i, r)
		}
	}
	if a, b := r1.Uint64(), r2.Uint64(); a != b {
		t.Error("Send drew random numbers with jitter 0 and nothing random")
	}
}

func TestCrandomStationary(t *testing.T) {
	const n = 1_000_000
	for _, r := range []float64{0.25, 0.5, 0.9} {
		t.Run(strconv.FormatFloat(r, 'g', -1, 64), func(t *testing.T) {
			rng := newRand(3)
			c := newCrandom(fraction(r), rng)
			xs := make([]float64, n)
			below := make([]float64, n)
			for i := range xs {
				v := c.next(rng)
				xs[i] = float64(v) / (1 << 32)
				below[i] = indicator(v <= fraction(0.25))
			}
			reff := (float64(fraction(r)) + 1) / (1 << 32)
			mean, se := batchMean(xs, 100)
			within(t, "mean", mean, 0.5, zTol*se)
			sq := make([]float64, n)
			for i, x := range xs {
				sq[i] = (x - mean) * (x - mean)
			}
			v, se := batchMean(sq, 100)
			within(t, "variance", v, (1-reff)/(12*(1+reff)), zTol*se)
			within(t, "lag-1 autocorrelation", lag1(xs), reff, zTol*math.Sqrt((1-reff*reff)/n))
			if r == 0.5 {
				// X = sum 2^-(k+1) V_k has the Fabius function as its CDF,
				// whose value at 1/4 is 5/72.
				p, se := batchMean(below, 100)
				within(t, "P(x <= 25%)", p, 5.0/72, zTol*se)
			}
		})
	}
}

func TestDelayCorrelation(t *testing.T) {
	const n = 100_000
	cases := []struct {
		name   string
		jitter time.Duration
		corr   float64
	}{
		{"max jitter, 0%", MaxJitter, 0},
		{"max jitter, 50%", MaxJitter, 0.5},
		{"max jitter, 90%", MaxJitter, 0.9},
		{"10ms jitter, 50%", ms(10), 0.5},
		{"10ms jitter, 90%", ms(10), 0.9},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := Params{Delay: 3 * time.Second, Jitter: tc.jitter, DelayCorr: tc.corr, Limit: 100_000}
			l := mustNew(t, p, 2)
			xs := make([]float64, n)
			for i := range xs {
				now := int64(i) * int64(time.Millisecond)
				xs[i] = float64(l.Send(now, 100).Out[0].At - now)
			}
			reff := 0.0
			if tc.corr > 0 {
				reff = (float64(fraction(tc.corr)) + 1) / (1 << 32)
			}
			if tc.jitter == MaxJitter {
				// rnd % (2^32 - 2) is rnd itself but for 2 values in 2^32:
				// the delay is the AR(1) process, shifted.
				within(t, "lag-1 autocorrelation", lag1(xs), reff, zTol*math.Sqrt((1-reff*reff)/n))
				_, v := meanVar(xs)
				sd := math.Sqrt((math.Exp2(64) / 12) * (1 - reff) / (1 + reff))
				within(t, "sd (ns)", math.Sqrt(v), sd, zTol*sd*math.Sqrt((1+reff*reff)/(1-reff*reff)/n))
				return
			}
			// Given the previous value, the next is spread over
			// L = (1-r) 2^32 consecutive values, and its residue modulo
			// m = 2*jitter is uniform but for a fraction m/L: the lag-1
			// autocorrelation is at most 3m/L in magnitude.
			m := 2 * float64(tc.jitter)
			bound := 3 * m / ((1 - reff) * (1 << 32))
			within(t, "lag-1 autocorrelation", lag1(xs), 0, bound+zTol/math.Sqrt(n))
		})
	}
}
