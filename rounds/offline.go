package rounds

import (
	"cmp"
	"slices"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/estimate"
	"github.com/chronosync/chronosync/graphcalc"
	"github.com/chronosync/chronosync/probe/probelog"
	"github.com/chronosync/chronosync/rounds/syncpb"
)

// OfflineRound is one round re-estimated from a recorded probe stream.
type OfflineRound struct {
	Round   uint64
	Reports []*syncpb.NodeWindowData // by node, ascending
	Summary *graphcalc.RoundSummary  // nil when unsolved
	Offsets []offsets.Offset
	Edges   []offsets.Edge
	Err     error
}

// Offline re-runs an estimator and GraphCalc over a recorded probe stream,
// round by round, exactly as the master would have with every node's
// report. It is [Reports] followed by [OfflineRound.Solve] on each round.
func Offline(blocks []probelog.Block, nodes []int, ref int, eo estimate.Options, gc graphcalc.Options) []OfflineRound {
	out := Reports(blocks, eo)
	s := NewSolver(nodes, ref, gc, eo.StepThreshold)
	for i := range out {
		out[i].Solve(s)
	}
	return out
}

// Solve runs GraphCalc over the round's reports with s, which must see the
// rounds in order.
func (r *OfflineRound) Solve(s *Solver) {
	r.Summary, r.Offsets, r.Edges, r.Err = s.Solve(r.Round, r.Reports)
}

// Reports fits a recorded probe stream with one estimator and groups the
// fits into rounds of node reports, unsolved: the blocks of one node's window (consecutive blocks with the same
// source, round and window) become that node's report. When a node has
// several windows in one round (it restarted), the last one counts. Rounds
// come out in ascending order.
func Reports(blocks []probelog.Block, eo estimate.Options) []OfflineRound {
	return ReportsKinds(blocks, eo, []estimate.Kind{eo.Kind})[0]
}

// ReportsKinds is Reports for each estimator of kinds (eo.Kind is not
// used), the i-th result kinds[i]'s: the probes of each window are
// prepared, and their steps found, once for all of them.
func ReportsKinds(blocks []probelog.Block, eo estimate.Options, kinds []estimate.Kind) [][]OfflineRound {
	type key struct {
		round  uint64
		src    int
		window uint64
	}
	var order []key
	groups := map[key][]probelog.Block{}
	for _, b := range blocks {
		k := key{b.RoundID, b.Src, b.WindowID}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], b)
	}
	// Latest window per (round, src), then by round and node.
	latest := map[[2]uint64]key{}
	for _, k := range order {
		latest[[2]uint64{k.round, uint64(k.src)}] = k
	}
	keys := make([]key, 0, len(latest))
	for _, k := range latest {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.round, b.round), cmp.Compare(a.src, b.src))
	})
	out := make([][]OfflineRound, len(kinds))
	for i := 0; i < len(keys); {
		j := i
		rs := make([]OfflineRound, len(kinds))
		for ; j < len(keys) && keys[j].round == keys[i].round; j++ {
			k := keys[j]
			for n, d := range fitWindowsKinds(k.src, 0, groups[k], eo, kinds) {
				rs[n].Round = k.round
				rs[n].Reports = append(rs[n].Reports, d)
			}
		}
		for n := range kinds {
			out[n] = append(out[n], rs[n])
		}
		i = j
	}
	return out
}
