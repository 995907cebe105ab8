package estimate

import "fmt"

// Purity follows Huygens' coded probes: the two probes of a pair leave
// back-to-back, so when neither met queueing their spacing survives the trip.
// A pair is pure when, in both directions, the spacing at the receiver
// equals the spacing at the sender to within the threshold:
//
//	|(T2b−T2a) − (T1b−T1a)| ≤ threshold  and  |(T4b−T4a) − (T3b−T3a)| ≤ threshold
//
// Drift changes a spacing of a few µs by well under a ns, so the threshold
// (1µs by default) only has to absorb read noise.

// isPure reports whether the pair a (Slot 0), b (Slot 1) is pure.
func isPure(a, b Probe, threshold int64) bool {
	fwd := (b.T2 - a.T2) - (b.T1 - a.T1)
	rev := (b.T4 - a.T4) - (b.T3 - a.T3)
	return abs64(fwd) <= threshold && abs64(rev) <= threshold
}

// markPure reports purity for each pair.
func markPure(probes []Probe, pairs []pair, threshold int64) []bool {
	pure := make([]bool, len(pairs))
	for i, p := range pairs {
		pure[i] = isPure(probes[p.a], probes[p.b], threshold)
	}
	return pure
}

// selectPure applies the purity rule and the MinPairs floor to n pairs of
// which nPure are pure, and says whether only the pure ones are to be used:
//   - PurityOn uses only the pure pairs;
//   - PurityOff uses every pair;
//   - PurityAuto uses only the pure pairs when there are at least
//     max(MinPairs, ⌈25% of all pairs⌉) of them, otherwise every pair — a
//     handful of pure pairs is no better than many impure ones.
func selectPure(n, nPure int, c config) (bool, error) {
	usePure := false
	switch c.purity {
	case PurityOn:
		usePure = true
	case PurityAuto:
		usePure = nPure >= max(c.minPairs, (n+3)/4)
	}
	switch {
	case !usePure && n < c.minPairs:
		return false, fmt.Errorf("%w: %d complete pairs, need %d", ErrInsufficient, n, c.minPairs)
	case usePure && nPure < c.minPairs:
		return false, fmt.Errorf("%w: %d pure pairs (of %d complete), need %d", ErrInsufficient, nPure, n, c.minPairs)
	}
	return usePure, nil
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
