package harness

import (
	"fmt"

	"github.com/chronosync/chronosync/analysis/selfcheck"
	"github.com/chronosync/chronosync/harness/syncrun"
	"github.com/chronosync/chronosync/rounds"
)

// judgeUnsolved adds the condition that every node-round without a model
// is explained by a scheduled fault.
func judgeUnsolved(cs *conditions, s *Summary) {
	sy := s.Sync
	if sy == nil || sy.Mode == string(rounds.ModeConsensus) {
		return
	}
	total, unexplained := 0, 0
	for _, u := range sy.Unsolved {
		total += len(u.Nodes)
		if u.ExplainedBy == "" {
			unexplained += len(u.Nodes)
		}
	}
	cs.check("node-rounds without a model, no scheduled fault explaining them", float64(unexplained), 0, "",
		fmt.Sprintf("%s node-rounds without a model in %s rounds; each must be a crash, a partition, a flapping link or a slow node of the scenario's", Count(int64(total)), Count(int64(len(sy.Unsolved)))))
}

// judgeSelfCheck adds the condition that the run's self-check passes:
// its predictions beyond 3σ no more than honest uncertainties allow,
// overall and on every node (see package selfcheck).
func judgeSelfCheck(cs *conditions, s *Summary) {
	if s.Sync == nil || s.Sync.SelfCheck == nil || s.Sync.SelfCheck.Predictions == 0 {
		return // no share of no predictions
	}
	sc := s.Sync.SelfCheck
	why := fmt.Sprintf("%s of %s predictions of each round's models for the next window's edges, worst %.1f σ; honest σ leave 0.27 %% beyond 3σ",
		Count(sc.Predictions-sc.Within3Sigma), Count(sc.Predictions), sc.MaxSigma)
	if len(sc.Failing) > 0 {
		why += "; failing on node " + syncrun.JoinInts(sc.Failing)
	}
	c := Condition{Name: "self-check predictions beyond 3σ", Value: 1 - sc.Share(), Bound: selfcheck.Target, Unit: "share", Over: sc.Fails(), Why: why}
	*cs = append(*cs, c)
}
