package netem

import "math/rand/v2"

// States of the loss models, with netem's numbering.
const (
	// 4-state model (Salsano et al., "GI" model).
	txInGap   = 1 // transmitted, within a gap period
	txInBurst = 2 // transmitted, within a burst period
	lostBurst = 3 // lost, within a burst period
	lostInGap = 4 // isolated loss within a gap period

	// Gilbert-Elliott model.
	geGood = 1
	geBad  = 2
)

// lossGen decides losses like netem's loss_event: random loss through the
// correlated generator, loss_4state or loss_gilb_ell. Probabilities are
// netem's 32-bit fixed point.
type lossGen struct {
	model LossModel
	state uint8

	// random
	p   uint32
	cor crandom

	// a1..a5 as in netem's struct clgstate:
	// 4-state: a1 = p13, a2 = p31, a3 = p32, a4 = p14, a5 = p23;
	// gemodel: a1 = p, a2 = r, a3 = h (NOT 1-h), a4 = 1-k.
	a1, a2, a3, a4, a5 uint32
}

// newLossGen sets up the loss generator for l; cor is the random model's
// correlated generator (netem's loss_cor).
func newLossGen(l Loss, cor crandom) lossGen {
	g := lossGen{model: l.Model, cor: cor}
	switch l.Model {
	case LossRandom:
		g.p = fraction(l.Probability)
	case LossState:
		g.state = txInGap
		g.a1, g.a2, g.a3 = fraction(l.P13), fraction(l.P31), fraction(l.P32)
		g.a4, g.a5 = fraction(l.P14), fraction(l.P23)
	case LossGEModel:
		g.state = geGood
		g.a1, g.a2 = fraction(l.P), fraction(l.R)
		// tc takes 1-h and hands the kernel h = 0xffffffff - (1-h).
		g.a3 = maxFraction - fraction(l.OneMinusH)
		g.a4 = fraction(l.OneMinusK)
	}
	return g
}

// lost reports whether the next packet is lost, drawing from r as netem
// does: random loss draws one correlated number, and only when its
// probability is not 0; the 4-state model draws one number; the
// Gilbert-Elliott model draws two (transition, then loss).
func (g *lossGen) lost(r *rand.Rand) bool {
	switch g.model {
	case LossRandom:
		return g.p != 0 && g.p >= g.cor.next(r)
	case LossState:
		return g.fourState(r)
	case LossGEModel:
		return g.gilbertElliott(r)
	}
	return false
}

// fourState is netem's loss_4state. The packet's fate is that of the
// state the chain moves to: from 1, to 4 with p14 or to 3 with p13 (lost),
// else stay (sent); from 2, to 3 with p23 (lost) else stay; from 3, to 2
// with p32 or to 1 with p31 (sent), else stay (lost); from 4, to 1 (sent).
// Sums are formed in 64 bits, where netem's 32-bit sums could wrap when
// the probabilities add up to 1.
func (g *lossGen) fourState(r *rand.Rand) bool {
	rnd := uint64(r.Uint32())
	switch g.state {
	case txInGap:
		if rnd < uint64(g.a4) {
			g.state = lostInGap
			return true
		} else if rnd < uint64(g.a1)+uint64(g.a4) {
			g.state = lostBurst
			return true
		}
	case txInBurst:
		if rnd < uint64(g.a5) {
			g.state = lostBurst
			return true
		}
	case lostBurst:
		if rnd < uint64(g.a3) {
			g.state = txInBurst
		} else if rnd < uint64(g.a2)+uint64(g.a3) {
			g.state = txInGap
		} else {
			return true
		}
	case lostInGap:
		g.state = txInGap
	}
	return false
}

// gilbertElliott is netem's loss_gilb_ell: first the transition (good to
// bad with p, bad to good with r), then the loss, decided with the loss
// probability of the state the packet found (1-k in good, 1-h in bad).
func (g *lossGen) gilbertElliott(r *rand.Rand) bool {
	switch g.state {
	case geGood:
		if r.Uint32() < g.a1 {
			g.state = geBad
		}
		return r.Uint32() < g.a4
	case geBad:
		if r.Uint32() < g.a2 {
			g.state = geGood
		}
		return r.Uint32() > g.a3
	}
	return false
}
