package harness

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"text/tabwriter"

	"github.com/chronosync/chronosync/analysis/groundtruth"
)

// printSync writes a sync run's figures: what it exported, then every
// estimator on the same probe stream.
func printSync(w io.Writer, sy *SyncSummary, est []EstimateResult) {
	fmt.Fprintf(w, "sync: mode %s, estimator %s, %d rounds, reference node %d; %d pairs sent, %d probes lost\n",
		sy.Mode, sy.Estimator, sy.Rounds, sy.Reference, sy.Probes.PairsSent, sy.Probes.Lost)
	c := sy.Control
	if c.EndToStart.N > 0 {
		fmt.Fprintf(w, "  rounds: ROUND_END→ROUND_START p50 %v, gather wait p50 %v, sequence skew p50 %v, %d retries, %.0f bytes gathered per round\n",
			ns(c.EndToStart.P50), ns(c.GatherWait.P50), ns(c.SequenceSkew.P50), c.Retries, c.MessageBytes.Mean)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  |offset error| from round %d\tp50\tp95\tp99\tmax\tdrift p99 (ppm)\tconverged at\tGraphCalc p50\t\n", sy.ConvergedFrom)
	row := func(name string, a groundtruth.Accuracy, gc string) {
		fmt.Fprintf(tw, "  %s\t%v\t%v\t%v\t%v\t%.4f\t%s\t%s\t\n", name,
			ns(a.OffsetError.P50), ns(a.OffsetError.P95), ns(a.OffsetError.P99), ns(a.OffsetError.Max),
			a.DriftError.P99, converged(a.ConvergedRound), gc)
	}
	row("exported ("+sy.Estimator+")", sy.Online, "")
	for _, e := range est {
		if e.Accuracy != nil {
			row(e.Estimator, *e.Accuracy, ns(e.GraphCalc.P50).String())
		}
	}
	tw.Flush()
	printWarnings(w, c.Warnings)
}

// printWarnings prints the rounds' warnings, in round order.
func printWarnings(w io.Writer, rounds map[string]string) {
	keys := slices.SortedFunc(maps.Keys(rounds), func(a, b string) int {
		return cmp.Or(cmp.Compare(len(a), len(b)), cmp.Compare(a, b))
	})
	for _, k := range keys {
		fmt.Fprintf(w, "  warning: round %s: %s\n", k, rounds[k])
	}
}

func converged(r uint64) string {
	if r == 0 {
		return "never"
	}
	return fmt.Sprintf("round %d", r)
}
