// Package selfcheck judges a run's self-check: how well each round's clock
// models predicted the next window's measured edges, in units of the
// predictions' σ (offsets.SelfCheck, which package rounds records in
// offsets.jsonl per node-round). It needs no ground truth, so it runs on
// every run, simulated or real; in the simulator it stands beside the
// truth-based calibration of package groundtruth.
//
// Where the reported σ are honest, 99.73 % of the predictions lie within
// 3σ. A node (or the whole run) fails the self-check when its predictions
// beyond 3σ are both more than 1 % of them (the project's calibration
// target) and more than honest σ would give but once in a thousand runs
// (the binomial tail at 0.27 %): a lone outlier among a handful of
// predictions is chance, a node with every edge of a round far off is not.
package selfcheck

import (
	"cmp"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/chronosync/chronosync/analysis/offsets"
)

const (
	// HonestBeyond is the share of predictions beyond 3σ that honest
	// Gaussian uncertainties give.
	HonestBeyond = 0.0027
	// Target is the share of predictions beyond 3σ a calibrated run may
	// have at most, as groundtruth.Target has it for errors.
	Target = 0.01
	// Significance is how improbable, for honest σ, the count of
	// predictions beyond 3σ must be to fail.
	Significance = 1e-3
	// Beyond is how many σ off one prediction fails on its own, however
	// few there are: Gaussian errors go so far once in 10²³, and any
	// distribution with that σ (Chebyshev) but once in a hundred.
	Beyond = 10
)

// Count is a self-check's figures over some node-rounds.
type Count struct {
	Predictions  int     `json:"predictions"`
	Within3Sigma int     `json:"within_3sigma"`
	MaxSigma     float64 `json:"max_sigma"`
}

// add adds one node-round's self-check.
func (c *Count) add(s offsets.SelfCheck) {
	c.Predictions += s.Predictions
	c.Within3Sigma += s.Within3Sigma
	c.MaxSigma = max(c.MaxSigma, s.MaxSigma)
}

// Share is the fraction of the predictions within 3σ (1 without any).
func (c Count) Share() float64 {
	if c.Predictions == 0 {
		return 1
	}
	return float64(c.Within3Sigma) / float64(c.Predictions)
}

// Fails reports whether the predictions beyond 3σ are more than Target of
// them and improbable (below Significance) for honest σ, or the worst is
// beyond Beyond σ.
func (c Count) Fails() bool {
	if c.MaxSigma > Beyond {
		return true
	}
	beyond := c.Predictions - c.Within3Sigma
	if beyond == 0 || float64(beyond) <= Target*float64(c.Predictions) {
		return false
	}
	tail := distuv.Binomial{N: float64(c.Predictions), P: HonestBeyond}.Survival(float64(beyond - 1))
	return tail < Significance
}

// Node is one node's self-check.
type Node struct {
	Node int `json:"node_id"`
	Count
}

// Summary is a run's self-check.
type Summary struct {
	// From is the first round whose predictions count: they test the
	// models of the round before.
	From uint64 `json:"from_round"`
	Count
	// Nodes are every node's figures, by node id.
	Nodes []Node `json:"nodes"`
	// Failing are the nodes that fail (see Count.Fails), worst share
	// first.
	Failing []int `json:"failing,omitempty"`
}

// Fails reports whether the run fails its self-check: overall, or on any
// node.
func (s Summary) Fails() bool { return s.Count.Fails() || len(s.Failing) > 0 }

// Summarize adds up the self-checks of the records of rounds from on.
// Each prediction (a link's) counts for both of its nodes, so the run's
// own figures are half the nodes' sums.
func Summarize(offs []offsets.Offset, from uint64) Summary {
	s := Summary{From: from}
	byNode := map[int]*Node{}
	for _, o := range offs {
		if o.SelfCheck == nil || o.RoundID < from {
			continue
		}
		s.Count.add(*o.SelfCheck)
		n := byNode[o.NodeID]
		if n == nil {
			n = &Node{Node: o.NodeID}
			byNode[o.NodeID] = n
		}
		n.add(*o.SelfCheck)
	}
	s.Predictions /= 2
	s.Within3Sigma /= 2
	for _, n := range byNode {
		s.Nodes = append(s.Nodes, *n)
	}
	slices.SortFunc(s.Nodes, func(a, b Node) int { return cmp.Compare(a.Node, b.Node) })
	var failing []Node
	for _, n := range s.Nodes {
		if n.Fails() {
			failing = append(failing, n)
		}
	}
	slices.SortStableFunc(failing, func(a, b Node) int { return cmp.Compare(a.Share(), b.Share()) })
	for _, n := range failing {
		s.Failing = append(s.Failing, n.Node)
	}
	return s
}
