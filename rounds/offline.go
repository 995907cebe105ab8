package rounds

import (
	"cmp"
	"errors"
	"fmt"
	"io"
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
	open := func() (BlockReader, error) { return &sliceReader{blocks: blocks}, nil }
	out, _ := ReportsKindsStream(open, eo, kinds, nil) // a slice reads without error
	return out
}

// BlockReader yields a probe stream's blocks in order, and io.EOF after
// the last; [probelog.Reader] is one. Each block it returns is the
// caller's to keep.
type BlockReader interface {
	Next() (*probelog.Block, error)
}

// sliceReader reads blocks held in memory.
type sliceReader struct {
	blocks []probelog.Block
	next   int
}

func (r *sliceReader) Next() (*probelog.Block, error) {
	if r.next == len(r.blocks) {
		return nil, io.EOF
	}
	r.next++
	return &r.blocks[r.next-1], nil
}

// windowKey names one node's window of one round in a probe stream.
type windowKey struct {
	round  uint64
	src    int
	window uint64
}

// ReportsKindsStream is [ReportsKinds] over a probe stream read twice
// instead of held whole: open must return a reader of the same stream from
// its start each time it is called. The first pass indexes the blocks (and
// hands each to visit, when not nil); the second fits each window as soon
// as its last block has been read and drops its probes, so that only the
// windows being read are held (one at a time in a stream the nodes wrote
// window by window). The reports are those ReportsKinds makes of the same
// blocks. An error reading the stream stops the first pass there: the
// blocks before it are fitted, and the error returned with them.
func ReportsKindsStream(open func() (BlockReader, error), eo estimate.Options, kinds []estimate.Kind, visit func(*probelog.Block)) ([][]OfflineRound, error) {
	r, err := open()
	if err != nil {
		return nil, err
	}
	var order []windowKey
	last := map[windowKey]int{} // a window's last block, counting from 0
	n := 0
	var readErr error
	for ; ; n++ {
		b, err := r.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				readErr = err
			}
			break
		}
		if visit != nil {
			visit(b)
		}
		k := windowKey{b.RoundID, b.Src, b.WindowID}
		if _, ok := last[k]; !ok {
			order = append(order, k)
		}
		last[k] = n
	}
	// Latest window per (round, src), then by round and node.
	latest := map[[2]uint64]windowKey{}
	for _, k := range order {
		latest[[2]uint64{k.round, uint64(k.src)}] = k
	}
	keys := make([]windowKey, 0, len(latest))
	for _, k := range latest {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b windowKey) int {
		return cmp.Or(cmp.Compare(a.round, b.round), cmp.Compare(a.src, b.src))
	})
	fits, err := fitStream(open, n, last, keys, eo, kinds)
	if err != nil {
		return nil, err
	}
	out := make([][]OfflineRound, len(kinds))
	for i := 0; i < len(keys); {
		j := i
		rs := make([]OfflineRound, len(kinds))
		for ; j < len(keys) && keys[j].round == keys[i].round; j++ {
			k := keys[j]
			for n, d := range fits[k] {
				rs[n].Round = k.round
				rs[n].Reports = append(rs[n].Reports, d)
			}
		}
		for n := range kinds {
			out[n] = append(out[n], rs[n])
		}
		i = j
	}
	return out, readErr
}

// fitStream is ReportsKindsStream's second pass: it reads the first n
// blocks of the stream again and fits each window of keys once its last
// block (last) has been read, then lets its blocks go.
func fitStream(open func() (BlockReader, error), n int, last map[windowKey]int, keys []windowKey, eo estimate.Options, kinds []estimate.Kind) (map[windowKey][]*syncpb.NodeWindowData, error) {
	want := make(map[windowKey]bool, len(keys))
	for _, k := range keys {
		want[k] = true
	}
	fits := make(map[windowKey][]*syncpb.NodeWindowData, len(keys))
	if len(keys) == 0 {
		return fits, nil
	}
	r, err := open()
	if err != nil {
		return nil, err
	}
	held := map[windowKey][]probelog.Block{}
	for i := range n {
		b, err := r.Next()
		if err != nil {
			return nil, fmt.Errorf("probe stream changed between its two reads: block %d: %w", i, err)
		}
		k := windowKey{b.RoundID, b.Src, b.WindowID}
		if !want[k] {
			continue
		}
		held[k] = append(held[k], *b)
		if last[k] == i {
			fits[k] = fitWindowsKinds(k.src, 0, held[k], eo, kinds)
			delete(held, k)
		}
	}
	return fits, nil
}
