package netem

import (
	"math"
	"math/rand/v2"
)

// defaultCrossPacketSize is CrossTraffic.PacketSize's default, in bytes.
const defaultCrossPacketSize = 1500

// crossGen produces the arrival times of background packets, lazily and in
// order, from its own random stream.
//
// Poisson: exponential gaps of mean 8*PacketSize/(Load*rate) seconds, the
// first one after the start. On/off: periods alternate, with lengths drawn
// from exponential distributions of means On and Off; while on, a packet
// arrives at the period's start and every 8*PacketSize/(Load*rate) seconds
// after it while the period lasts, so a period of length D carries
// ceil(D/interval) packets. The first period is on with probability
// On/(On+Off) and, the exponential being memoryless, that makes the
// process stationary from its start.
type crossGen struct {
	kind    CrossKind
	rng     *rand.Rand
	size    int
	started bool
	next    int64 // time of the next arrival, once started

	gap float64 // Poisson: mean gap; on/off: interval while on (ns)

	on              bool
	meanOn, meanOff float64 // ns
	start, end      int64   // current period
	k               int64   // index of the next packet in the on period
}

func newCrossGen(c CrossTraffic, bitsPerSecond uint64, rng *rand.Rand) crossGen {
	g := crossGen{kind: c.Kind, rng: rng, size: c.PacketSize}
	if g.size == 0 {
		g.size = defaultCrossPacketSize
	}
	if c.Kind != CrossNone {
		g.gap = float64(g.size) * 8 * 1e9 / (c.Load * float64(bitsPerSecond))
	}
	g.meanOn, g.meanOff = float64(c.On), float64(c.Off)
	return g
}

// exp returns an exponential duration of the given mean, in whole ns.
func (g *crossGen) exp(mean float64) int64 {
	return int64(math.Round(g.rng.ExpFloat64() * mean))
}

// begin starts the process at t.
func (g *crossGen) begin(t int64) {
	g.started = true
	switch g.kind {
	case CrossPoisson:
		g.next = t + g.exp(g.gap)
	case CrossOnOff:
		g.on = g.rng.Float64()*(g.meanOn+g.meanOff) < g.meanOn
		g.start = t
		if g.on {
			g.end = t + g.exp(g.meanOn)
		} else {
			g.end = t + g.exp(g.meanOff)
		}
		g.k = 0
		g.schedule()
	}
}

// advance moves past the arrival at g.next.
func (g *crossGen) advance() {
	switch g.kind {
	case CrossPoisson:
		g.next += g.exp(g.gap)
	case CrossOnOff:
		g.k++
		g.schedule()
	}
}

// schedule sets g.next to the k-th packet of the current on period, or to
// the first packet of a later on period.
func (g *crossGen) schedule() {
	for {
		if g.on {
			t := g.start + int64(math.Round(float64(g.k)*g.gap))
			if t < g.end {
				g.next = t
				return
			}
			g.on = false
			g.start, g.end = g.end, g.end+g.exp(g.meanOff)
		} else {
			g.on = true
			g.start, g.end = g.end, g.end+g.exp(g.meanOn)
			g.k = 0
		}
	}
}
