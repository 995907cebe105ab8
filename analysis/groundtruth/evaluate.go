package groundtruth

import (
	"cmp"
	"math"
	"slices"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/analysis/stats"
)

// Accuracy is how well a set of clock models matched the truth.
type Accuracy struct {
	// OffsetError is |error| in ns at the start, middle and end of every
	// window of every node but the reference, over the rounds from
	// ConvergedFrom on.
	OffsetError stats.Summary `json:"offset_error_ns"`
	// DriftError is |error| of the drift in ppm: the slope of the offset
	// error across each window.
	DriftError stats.Summary `json:"drift_error_ppm"`
	// Unsolved counts node windows with truth but no model.
	Unsolved int `json:"unsolved"`
	// NoTruth lists the nodes with models but no ground truth at all (a
	// cluster's other ranks record their own): their errors are unknown,
	// not zero.
	NoTruth []int `json:"no_truth_nodes,omitempty"`
	// ConvergedRound is the first round from which every round's worst
	// offset error stays within ConvergedBound; 0 when none.
	ConvergedRound uint64          `json:"converged_round"`
	PerRound       []RoundAccuracy `json:"per_round"`
}

// RoundAccuracy is one round's figures.
type RoundAccuracy struct {
	Round       uint64  `json:"round_id"`
	Nodes       int     `json:"nodes"`
	Unsolved    int     `json:"unsolved"`
	OffsetP99NS float64 `json:"offset_p99_ns"`
	OffsetMaxNS float64 `json:"offset_max_ns"`
	DriftMaxPPM float64 `json:"drift_max_ppm"`
	WorstNode   int     `json:"worst_node"`
}

// ConvergedBound is the worst offset error, in ns, under which a round
// counts as converged.
const ConvergedBound = 1000

// Error is one node window's measured error.
type Error struct {
	Round    uint64
	Node     int
	Offset   []float64 // ns, one per truth point
	DriftPPM float64
}

// Errors compares each truth window with the offsets record of the same
// node and round, and with the reference's record of that round. Windows
// without both records come back as unsolved.
func Errors(offs []offsets.Offset, truth []Window, ref int) (errs []Error, unsolved []Window) {
	unsolved = eachSolved(offs, truth, ref, func(w Window, o, r offsets.Offset) {
		e := Error{Round: w.Round, Node: w.Node}
		for _, p := range w.Points {
			e.Offset = append(e.Offset, pointError(o, r, p))
		}
		first, last := w.Points[0], w.Points[len(w.Points)-1]
		if span := float64(last.Local - first.Local); span > 0 {
			e.DriftPPM = (e.Offset[len(e.Offset)-1] - e.Offset[0]) / span * 1e6
		}
		errs = append(errs, e)
	})
	return errs, unsolved
}

// Evaluate summarises Errors over the rounds from convergedFrom on and per
// round.
func Evaluate(offs []offsets.Offset, truth []Window, ref int, convergedFrom uint64) Accuracy {
	errs, unsolved := Errors(offs, truth, ref)
	var acc Accuracy
	var offAll, driftAll []float64
	per := map[uint64]*RoundAccuracy{}
	perOff := map[uint64][]float64{}
	for _, e := range errs {
		ra := per[e.Round]
		if ra == nil {
			ra = &RoundAccuracy{Round: e.Round, WorstNode: -1}
			per[e.Round] = ra
		}
		ra.Nodes++
		for _, v := range e.Offset {
			v = math.Abs(v)
			perOff[e.Round] = append(perOff[e.Round], v)
			if v > ra.OffsetMaxNS {
				ra.OffsetMaxNS, ra.WorstNode = v, e.Node
			}
			if e.Round >= convergedFrom {
				offAll = append(offAll, v)
			}
		}
		ra.DriftMaxPPM = math.Max(ra.DriftMaxPPM, math.Abs(e.DriftPPM))
		if e.Round >= convergedFrom {
			driftAll = append(driftAll, math.Abs(e.DriftPPM))
		}
	}
	for _, w := range unsolved {
		ra := per[w.Round]
		if ra == nil {
			ra = &RoundAccuracy{Round: w.Round, WorstNode: -1}
			per[w.Round] = ra
		}
		ra.Unsolved++
		if w.Round >= convergedFrom {
			acc.Unsolved++
		}
	}
	for r, ra := range per {
		ra.OffsetP99NS = stats.Summarize(perOff[r]).P99
		acc.PerRound = append(acc.PerRound, *ra)
	}
	slices.SortFunc(acc.PerRound, func(a, b RoundAccuracy) int { return cmp.Compare(a.Round, b.Round) })
	for i := len(acc.PerRound) - 1; i >= 0; i-- {
		ra := acc.PerRound[i]
		if ra.OffsetMaxNS > ConvergedBound || ra.Nodes == 0 {
			break
		}
		acc.ConvergedRound = ra.Round
	}
	acc.OffsetError = stats.Summarize(offAll)
	acc.DriftError = stats.Summarize(driftAll)
	acc.NoTruth = noTruth(offs, truth, ref, convergedFrom)
	return acc
}

// noTruth lists, in order, the nodes but the reference that have a model
// from round from on and no truth window at all: another process (a
// cluster's other ranks) recorded theirs.
func noTruth(offs []offsets.Offset, truth []Window, ref int, from uint64) []int {
	has := map[int]bool{}
	for _, w := range truth {
		has[w.Node] = true
	}
	var out []int
	for _, o := range offs {
		if o.NodeID != ref && o.RoundID >= from && !has[o.NodeID] && !slices.Contains(out, o.NodeID) {
			out = append(out, o.NodeID)
		}
	}
	slices.Sort(out)
	return out
}

// pointError is o.Global(p.Local) − r.Global(p.Ref), worked out from the
// readings' exact difference and the models' small corrections: clocks on
// the Unix epoch (a cluster's) are near 2^61 ns, where a float64 holds
// whole multiples of 256 ns only.
func pointError(o, r offsets.Offset, p Point) float64 {
	return float64(p.Local-p.Ref) - o.OffsetAfter(p.Local, o.StepsBefore(p.Local)) + r.OffsetAfter(p.Ref, r.StepsBefore(p.Ref))
}
