package clockmodel

import (
	"math"
	"math/rand/v2"
)

// checkpointEvery is the number of wander steps between checkpoints.
const checkpointEvery = 256

// wander is a random walk of the frequency, drawn lazily from its own PCG
// stream. A head cursor follows the furthest step reached; every
// checkpointEvery steps it saves its state, and queries behind the head
// replay the walk from the nearest checkpoint on a second cursor. Replays do
// the same float operations in the same order, so values are bit-identical
// whatever the order of queries.
type wander struct {
	sigma float64 // ppm per step
	limit float64 // reflection bound, ppm
	step  int64   // ns of true time per step

	head, back  cursor
	checkpoints []checkpoint // checkpoints[i] is the state at step i·checkpointEvery
}

// checkpoint is a saved cursor state.
type checkpoint struct {
	src   rand.PCG
	phase float64
	freq  float64
}

// cursor is a position on the walk: step k starts at phase (ns) and has
// frequency freq (ppm); src is positioned to draw step k+1.
type cursor struct {
	src   *rand.PCG
	rng   *rand.Rand
	k     int64
	phase float64
	freq  float64
}

func newWander(p Params, seed *rand.Rand) wander {
	w := wander{sigma: p.WanderPPM, limit: p.wanderLimit(), step: p.wanderStep()}
	if w.sigma == 0 {
		return w
	}
	start := checkpoint{src: *rand.NewPCG(seed.Uint64(), seed.Uint64())}
	w.checkpoints = []checkpoint{start}
	w.head = newCursor(start)
	w.back = newCursor(start)
	return w
}

func newCursor(cp checkpoint) cursor {
	src := cp.src
	return cursor{src: &src, rng: rand.New(&src), phase: cp.phase, freq: cp.freq}
}

// at returns the phase (ns) the walk has added by true time t and its
// frequency (ppm) at t. The walk is zero before true time 0.
func (w *wander) at(t int64) (phase, ppm float64) {
	if w.sigma == 0 || t < 0 {
		return 0, 0
	}
	k := t / w.step
	c := &w.head
	if k < w.head.k {
		c = &w.back
		cp := k / checkpointEvery
		if c.k > k || c.k < cp*checkpointEvery {
			c.restore(cp*checkpointEvery, w.checkpoints[cp])
		}
	}
	for c.k < k {
		w.advance(c)
	}
	return c.phase + c.freq*float64(t%w.step)/1e6, c.freq
}

// advance moves c one step on, saving a checkpoint when the head reaches a
// new one.
func (w *wander) advance(c *cursor) {
	c.phase += c.freq * float64(w.step) / 1e6
	c.freq = reflect(c.freq+w.sigma*c.rng.NormFloat64(), w.limit)
	c.k++
	if c == &w.head && c.k%checkpointEvery == 0 {
		w.checkpoints = append(w.checkpoints, checkpoint{src: *c.src, phase: c.phase, freq: c.freq})
	}
}

// restore puts c at step k with the state of cp.
func (c *cursor) restore(k int64, cp checkpoint) {
	*c.src = cp.src
	c.k, c.phase, c.freq = k, cp.phase, cp.freq
}

// reflect folds x into [−l, l] as a walk reflected at both bounds; l <= 0
// gives 0.
func reflect(x, l float64) float64 {
	if l <= 0 {
		return 0
	}
	if x >= -l && x <= l {
		return x
	}
	u := math.Mod(x+l, 4*l)
	if u < 0 {
		u += 4 * l
	}
	if u > 2*l {
		u = 4*l - u
	}
	return u - l
}
