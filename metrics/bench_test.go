package metrics

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/graphcalc"
	"github.com/chronosync/chronosync/rounds"
	"github.com/chronosync/chronosync/rounds/syncpb"
)

// meshRound is round of a full mesh of n nodes, all solved.
func meshRound(round uint64, n int) *rounds.RoundReport {
	r := &rounds.RoundReport{Round: round, Window: round,
		Summary: &graphcalc.RoundSummary{Round: round, RMSResidual: 10, Consistency: graphcalc.Consistency{Birge: 1, Consistent: true}},
		Figures: rounds.Figures{EndToStart: 200 * time.Microsecond, Window: 2 * time.Second}}
	res := 3.0
	for i := range n {
		var dsts []int
		for j := range n {
			if j != i {
				dsts = append(dsts, j)
				r.Edges = append(r.Edges, offsets.Edge{RoundID: round, Src: i, Dst: j, Beta: 1000, Sigma: 5, Residual: &res})
			}
		}
		r.Nodes = append(r.Nodes, data(round, i, dsts...))
		r.Offsets = append(r.Offsets, nodeModel(round, i, 100, 0.1, n-1, n-1, 0.5))
	}
	return r
}

// BenchmarkObserveRound is the master's cost per round of an 8-node full
// mesh (56 edges): what ObserveRound adds to its event loop.
func BenchmarkObserveRound(b *testing.B) {
	m := NewWithOptions(0, true, Options{NoRuntime: true})
	reps := []*rounds.RoundReport{meshRound(1, 8), meshRound(2, 8)}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m.ObserveRound(reps[i%2])
	}
}

// BenchmarkScrape is one scrape of that master's metrics (the text
// exposition, without the runtime's collectors), served in memory.
func BenchmarkScrape(b *testing.B) {
	m := NewWithOptions(0, true, Options{NoRuntime: true})
	m.ObserveRound(meshRound(1, 8))
	m.ObserveWindow(0, nil, &syncpb.NodeWindowData{})
	h := m.Handler()
	b.ReportAllocs()
	var n int
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		n = rec.Body.Len()
	}
	b.ReportMetric(float64(n), "bytes/scrape")
}
