package rounds

import (
	"fmt"
	"math"

	"github.com/chronosync/chronosync/estimate"
	"github.com/chronosync/chronosync/probe/probelog"
	"github.com/chronosync/chronosync/rounds/syncpb"
)

// FitReport fits every out-edge of one node's window with the estimator in
// o (its Origin is set to each block's FitOrigin) and returns the node's
// report. An edge with too few usable pairs is reported as insufficient,
// never as a zero fit.
//
// The report's ids and counts are int32 on the wire, and FitReport never
// truncates one: a node id or a block whose Src, Dst, SentPairs, Lost or
// probe count lies outside [0, math.MaxInt32], a block of another src than
// node and a block whose window ends before it starts are refused with an
// error naming the block (its index in blocks) and the field, e.g.
// "rounds: node 1: block 0: src 4294967297 out of range [0, 2147483647]",
// and no report.
func FitReport(node int, incarnation uint64, blocks []probelog.Block, o estimate.Options) (*syncpb.NodeWindowData, error) {
	if err := checkID("node", node); err != nil {
		return nil, fmt.Errorf("rounds: %w", err)
	}
	for i := range blocks {
		if err := checkBlock(node, &blocks[i]); err != nil {
			return nil, fmt.Errorf("rounds: node %d: block %d: %w", node, i, err)
		}
	}
	return fitWindow(node, incarnation, blocks, o), nil
}

// FitWindow is FitReport for callers that cannot take an error: it leaves
// out of the report every block FitReport would refuse (never truncating
// its ids into other nodes'), and a node id outside [0, math.MaxInt32]
// becomes NodeId −1, whose report the master rejects. FitReport says why.
func FitWindow(node int, incarnation uint64, blocks []probelog.Block, o estimate.Options) *syncpb.NodeWindowData {
	return fitWindowsKinds(node, incarnation, blocks, o, []estimate.Kind{o.Kind})[0]
}

// fitWindowsKinds is FitWindow for each estimator of kinds.
func fitWindowsKinds(node int, incarnation uint64, blocks []probelog.Block, o estimate.Options, kinds []estimate.Kind) []*syncpb.NodeWindowData {
	if checkID("node", node) != nil {
		out := make([]*syncpb.NodeWindowData, len(kinds))
		for i := range out {
			out[i] = &syncpb.NodeWindowData{NodeId: -1, Incarnation: incarnation}
		}
		return out
	}
	ok := make([]probelog.Block, 0, len(blocks))
	for i := range blocks {
		if checkBlock(node, &blocks[i]) == nil {
			ok = append(ok, blocks[i])
		}
	}
	return fitWindowKinds(node, incarnation, ok, o, kinds)
}

// fitWindow fits blocks, which checkBlock accepted, into node's report.
func fitWindow(node int, incarnation uint64, blocks []probelog.Block, o estimate.Options) *syncpb.NodeWindowData {
	return fitWindowKinds(node, incarnation, blocks, o, []estimate.Kind{o.Kind})[0]
}

// fitWindowKinds fits blocks, which checkBlock accepted, into node's
// report with each estimator of kinds. The node's own clock steps are
// looked for on all its out-edges at once (estimate.ScanSrcSteps), and
// every edge is cut at those it finds; the steps are found once for every
// estimator.
func fitWindowKinds(node int, incarnation uint64, blocks []probelog.Block, o estimate.Options, kinds []estimate.Kind) []*syncpb.NodeWindowData {
	out := make([]*syncpb.NodeWindowData, len(kinds))
	for i := range out {
		out[i] = &syncpb.NodeWindowData{NodeId: int32(node), Incarnation: incarnation}
	}
	if len(blocks) == 0 {
		return out
	}
	b0 := &blocks[0]
	windows := make([]*estimate.Window, len(blocks))
	for i := range blocks {
		b := &blocks[i]
		eo := o
		eo.Origin = FitOrigin(b.WindowStart, b.WindowEnd)
		w, err := estimate.NewWindow(b.Probes, eo)
		if err != nil {
			// Options the configuration checked: nothing to fit with.
			w, _ = estimate.NewWindow(nil, estimate.Options{})
		}
		windows[i] = w
	}
	src, miss := estimate.ScanSrcSteps(windows)
	for _, w := range windows {
		w.SetSrcSteps(src)
	}
	for k, kind := range kinds {
		d := out[k]
		d.WindowId, d.RoundId = b0.WindowID, b0.RoundID
		d.WindowStartNs, d.WindowEndNs = b0.WindowStart, b0.WindowEnd
		d.MissSigmaNs = miss
		eo := o
		eo.Kind = kind
		for i := range blocks {
			d.Edges = append(d.Edges, fitEdge(&blocks[i], windows[i], eo))
		}
	}
	return out
}

// checkID says why v, the field what of a report, does not fit the wire's
// int32 as a non-negative value, or nil.
func checkID(what string, v int) error {
	if v < 0 || v > math.MaxInt32 {
		return fmt.Errorf("%s %d out of range [0, %d]", what, v, math.MaxInt32)
	}
	return nil
}

// checkBlock says why b cannot be one of node's report's edges, or nil.
func checkBlock(node int, b *probelog.Block) error {
	for _, f := range []struct {
		what string
		v    int
	}{{"src", b.Src}, {"dst", b.Dst}, {"sent pairs", b.SentPairs}, {"lost", b.Lost}, {"probe count", len(b.Probes)}} {
		if err := checkID(f.what, f.v); err != nil {
			return err
		}
	}
	switch {
	case b.Src != node:
		return fmt.Errorf("src %d is not the reporting node %d", b.Src, node)
	case b.WindowEnd < b.WindowStart:
		return fmt.Errorf("window end %d before window start %d", b.WindowEnd, b.WindowStart)
	}
	return nil
}

// FitOrigin is the x origin of every edge fit of a window [start, end) of
// the src clock: its middle, where the fitted offset's error is least and
// least correlated with the drift's. Beta and its sigma are at FitOrigin.
func FitOrigin(start, end int64) int64 { return start + (end-start)/2 }

// FitEdge fits one edge's window, with Beta at FitOrigin. b's ids and
// counts must fit the report's int32 fields, as FitReport checks.
func FitEdge(b *probelog.Block, o estimate.Options) *syncpb.EdgeAlphaBeta {
	eo := o
	eo.Origin = FitOrigin(b.WindowStart, b.WindowEnd)
	w, err := estimate.NewWindow(b.Probes, eo)
	if err != nil {
		w, _ = estimate.NewWindow(nil, estimate.Options{})
	}
	return fitEdge(b, w, o)
}

// fitEdge fits b, prepared as w, with o's estimator.
func fitEdge(b *probelog.Block, w *estimate.Window, o estimate.Options) *syncpb.EdgeAlphaBeta {
	e := &syncpb.EdgeAlphaBeta{
		SrcNodeId: int32(b.Src), DstNodeId: int32(b.Dst),
		LostCount: int32(b.Lost), SentPairs: int32(b.SentPairs),
		Estimator: string(o.Kind),
	}
	f, err := w.Fit(o.Kind)
	e.PairsCount, e.PurePairs = int32(f.Pairs), int32(f.Pure)
	if err != nil {
		// Report how many complete pairs there were: why it is insufficient.
		e.Insufficient = true
		e.PairsCount = int32(completePairs(b.Probes))
		return e
	}
	e.Alpha, e.Beta, e.SigmaNs, e.AlphaSigma = f.Alpha, f.Beta, f.Sigma, f.AlphaSigma
	e.StepDetected, e.MarginNs, e.AsymSigmaNs, e.MissSigmaNs = f.Step, f.Margin, f.AsymSigma, f.MissSigma
	for _, st := range f.Steps {
		es := &syncpb.EdgeStep{AfterNs: st.After, AtNs: st.At, SizeNs: st.Size}
		if p := st.Before; p.Pairs > 0 {
			es.Before = &syncpb.EdgeFit{Alpha: p.Alpha, Beta: p.Beta, SigmaNs: p.Sigma, AlphaSigma: p.AlphaSigma,
				PairsCount: int32(p.Pairs), AsymSigmaNs: p.AsymSigma, MissSigmaNs: p.MissSigma}
		}
		e.Steps = append(e.Steps, es)
	}
	if floor := timestampFloor(b, o); floor > 0 {
		e.SigmaNs, e.AsymSigmaNs = math.Hypot(e.SigmaNs, floor), math.Hypot(e.AsymSigmaNs, floor)
		for _, st := range e.Steps {
			if p := st.Before; p != nil {
				p.SigmaNs, p.AsymSigmaNs = math.Hypot(p.SigmaNs, floor), math.Hypot(p.AsymSigmaNs, floor)
			}
		}
	}
	return e
}

// timestampFloor is the systematic σ the window's timestamps carry that
// its probes cannot show, ns (see estimate.Options.TimestampSigma): the
// timestamps' own, and the user-space t3 readings' in proportion to how
// many probes have one.
func timestampFloor(b *probelog.Block, o estimate.Options) float64 {
	floor := float64(o.TimestampSigma)
	if o.UserT3Sigma > 0 && len(b.Probes) > 0 {
		_, user, _ := b.T3Sources()
		floor = math.Hypot(floor, float64(o.UserT3Sigma)*float64(user)/float64(len(b.Probes)))
	}
	return floor
}

// completePairs counts the pairs of which both probes were answered.
func completePairs(probes []estimate.Probe) int {
	n := 0
	for i := 1; i < len(probes); i++ {
		if probes[i].Pair == probes[i-1].Pair && probes[i].Slot != probes[i-1].Slot {
			n++
		}
	}
	return n
}
