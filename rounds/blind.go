package rounds

import "math"

// ownSteps is, for each node every one of whose edges to other nodes (two
// at least) saw a clock step in the window, the largest of those edges'
// summed step sizes: the node's own clock stepped. A step of a peer's
// clock moves one of a node's out-edges; a step of its own moves them
// all, and its scan of all its out-edges together (estimate.ScanSrcSteps)
// finds such steps when they are far too small for any one edge, and then
// cuts every out-edge there.
func ownSteps(edges []inEdge) map[int]float64 {
	type tally struct {
		out, stepped int
		size         float64
	}
	by := map[int]*tally{}
	for k := range edges {
		e := &edges[k]
		t := by[e.src]
		if t == nil {
			t = &tally{}
			by[e.src] = t
		}
		t.out++
		if len(e.steps) == 0 {
			continue
		}
		t.stepped++
		var sum float64
		for _, st := range e.steps {
			sum += st.size
		}
		t.size = max(t.size, math.Abs(sum))
	}
	own := map[int]float64{}
	for n, t := range by {
		if t.out >= 2 && t.stepped == t.out {
			own[n] = t.size
		}
	}
	return own
}

// widenBlind widens the lines of the edges into a node whose own clock
// stepped (ownSteps) that saw no step themselves: such an edge's prober
// could not tell the step from its jitter, so its line is fitted through
// the step and lies off the line after it by up to the step's size, while
// the node's out-edges are each cut there. The edge's σ takes the step's
// size in quadrature, so that the solve leans on the out-edges and an
// edge that missed a step is not rejected for it. The rounds.jsonl
// records keep the σ their prober reported.
func widenBlind(edges []inEdge) {
	own := ownSteps(edges)
	if len(own) == 0 {
		return
	}
	for k := range edges {
		e := &edges[k]
		s, ok := own[e.dst]
		if !ok || len(e.steps) > 0 {
			continue
		}
		for i := range e.lines {
			e.lines[i].sigma = math.Hypot(e.lines[i].sigma, s)
		}
	}
}
