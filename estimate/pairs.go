package estimate

import (
	"cmp"
	"slices"
)

// pair holds the indices into the probe slice of a complete pair's two
// probes: a is Slot 0, b is Slot 1.
type pair struct{ a, b int32 }

// first is the index of the pair's earlier-sent probe.
func (p pair) first() int32 { return min(p.a, p.b) }

// completePairs returns the pairs whose two probes are both present, ordered
// by the send position of their earlier probe. When a (Pair, Slot) occurs
// more than once, its first occurrence is used; probes with a Slot other
// than 0 or 1 are ignored.
func completePairs(probes []Probe) []pair {
	if pairs, ok := adjacentPairs(probes); ok {
		return pairs
	}
	// The map only answers look-ups: the order comes from the probe slice.
	seen := make(map[uint32][2]int32, len(probes)/2+1)
	for i, p := range probes {
		if p.Slot > 1 {
			continue
		}
		e := seen[p.Pair]
		if e[p.Slot] == 0 {
			e[p.Slot] = int32(i) + 1
			seen[p.Pair] = e
		}
	}
	pairs := make([]pair, 0, len(probes)/2)
	for i, p := range probes {
		if p.Slot > 1 {
			continue
		}
		e := seen[p.Pair]
		if e[0] == 0 || e[1] == 0 || int32(i) != min(e[0], e[1])-1 {
			continue
		}
		pairs = append(pairs, pair{a: e[0] - 1, b: e[1] - 1})
	}
	return pairs
}

// adjacentPairs is completePairs' fast path for the usual input: the probes
// of a pair are adjacent, one each of Slot 0 and 1, and the Pair numbers of
// successive pairs strictly increase (so none repeats). ok is false when the
// input is not of that shape.
func adjacentPairs(probes []Probe) (pairs []pair, ok bool) {
	pairs = make([]pair, 0, len(probes)/2)
	for i := 0; i < len(probes); {
		p := probes[i]
		if p.Slot > 1 || (i > 0 && p.Pair <= probes[i-1].Pair) {
			return nil, false
		}
		if i+1 < len(probes) && probes[i+1].Pair == p.Pair {
			if probes[i+1].Slot != 1-p.Slot {
				return nil, false
			}
			a, b := int32(i), int32(i+1)
			if p.Slot == 1 {
				a, b = b, a
			}
			pairs = append(pairs, pair{a: a, b: b})
			i += 2
			continue
		}
		i++
	}
	return pairs, true
}

// sample is one used probe in the estimators' coordinates, x relative to
// Origin: the forward point (fx, fy) = (T1, T2−T1) lies above the line, the
// reverse point (rx, ry) = (T4, T3−T4) below it. pair is the index of the
// probe's pair in the slice given to buildSamples, idx the probe's index in
// the probe slice.
type sample struct {
	fx, fy, rx, ry int64
	pair, idx      int32
}

// midX is the probe's midpoint x, (T1+T4)/2 − Origin.
func (s *sample) midX() float64 { return float64(s.fx+s.rx) * 0.5 }

// midY is the probe's midpoint offset, ((T2−T1)+(T3−T4))/2.
func (s *sample) midY() float64 { return float64(s.fy+s.ry) * 0.5 }

// rtt is the round-trip delay (T4−T1) − (T3−T2), which equals fy − ry.
func (s *sample) rtt() int64 { return s.fy - s.ry }

// toSample converts one probe.
func toSample(p Probe, origin int64) sample {
	return sample{fx: p.T1 - origin, fy: p.T2 - p.T1, rx: p.T4 - origin, ry: p.T3 - p.T4}
}

// buildSamples converts the probes of the selected pairs, in send order.
func buildSamples(probes []Probe, sel []pair, origin int64) []sample {
	out := make([]sample, 0, 2*len(sel))
	sorted, last := true, int32(-1)
	for k, p := range sel {
		a, b := p.a, p.b
		if a > b {
			a, b = b, a
		}
		sa, sb := toSample(probes[a], origin), toSample(probes[b], origin)
		sa.pair, sa.idx = int32(k), a
		sb.pair, sb.idx = int32(k), b
		out = append(out, sa, sb)
		sorted = sorted && a > last
		last = b
	}
	// Pairs are in order of their first probe, so only interleaved pairs
	// leave anything to sort.
	if !sorted {
		slices.SortFunc(out, func(a, b sample) int { return cmp.Compare(a.idx, b.idx) })
	}
	return out
}

// countTrue counts the true values in b.
func countTrue(b []bool) int {
	n := 0
	for _, v := range b {
		if v {
			n++
		}
	}
	return n
}
