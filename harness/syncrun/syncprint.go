package syncrun

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/chronosync/chronosync/analysis/groundtruth"
	"github.com/chronosync/chronosync/analysis/selfcheck"
	"github.com/chronosync/chronosync/harness/engine"
)

// Print writes a sync run's figures: what it exported, then est, every
// estimator on the same probe stream, in one table whose errors share one
// unit.
func (sy *SyncSummary) Print(w io.Writer, est []EstimateResult) {
	fmt.Fprintf(w, "sync: mode %s, estimator %s, %d rounds, reference node %d\n",
		sy.Mode, sy.Estimator, sy.Rounds, sy.Reference)
	pr := sy.Probes
	fmt.Fprintf(w, "  probes: %s pairs sent (%s probes), %s lost", engine.Count(pr.PairsSent), engine.Count(2*pr.PairsSent), engine.Count(pr.Lost))
	if pr.Lost > 0 {
		// probe.Prober.Close counts a probe lost when it has no reply
		// by its window's close.
		fmt.Fprint(w, ": no reply by their window's close (the request or the reply was lost on a link, among the network's lost datagrams, or the reply came late)")
	}
	fmt.Fprintln(w)
	if len(pr.Rejected) > 0 || pr.Malformed > 0 {
		fmt.Fprintf(w, "  probe datagrams dropped for their content, or repeated:")
		if pr.Malformed > 0 {
			fmt.Fprintf(w, " malformed %s", engine.Count(int64(pr.Malformed)))
		}
		for _, why := range slices.Sorted(maps.Keys(pr.Rejected)) {
			fmt.Fprintf(w, " %s %s", why, engine.Count(int64(pr.Rejected[why])))
		}
		fmt.Fprintln(w, " (malformed: not a probe; spoofed: from another address than the one probed; implausible: timestamps no exchange can have, from a clock step inside it or a forgery; advert: offset or drift out of bounds; bad_node: no such node; duplicate: a second reply to a probe already answered; replayed: a request answered already, answered again; the last two a datagram duplicated on a link or replayed)")
	}
	if pr.T3Kernel+pr.T3User > 0 {
		fmt.Fprintf(w, "  t3: %s probes from the reply's transmit timestamp, carried in the next reply, %s from the responder's user-space reading: each window's last probe per edge, lost follow-ups, late transmit timestamps\n",
			engine.Count(pr.T3Kernel), engine.Count(pr.T3User))
	}
	c := sy.Control
	if c.EndToStart.N > 0 {
		u := engine.UnitFor(c.EndToStart.P50, c.GatherWait.P50, c.SequenceSkew.P50)
		fmt.Fprintf(w, "  rounds, p50 in %s: ROUND_END→ROUND_START %s, gather wait %s, sequence skew %s; %d retries, %s bytes gathered per round\n",
			u.Name, u.Format(c.EndToStart.P50), u.Format(c.GatherWait.P50), u.Format(c.SequenceSkew.P50), c.Retries, engine.Count(int64(math.Round(c.MessageBytes.Mean))))
	}
	if len(c.Refused) > 0 {
		fmt.Fprintf(w, "  refused by the master:")
		for _, why := range slices.Sorted(maps.Keys(c.Refused)) {
			fmt.Fprintf(w, " %s %s", why, engine.Count(int64(c.Refused[why])))
		}
		fmt.Fprintln(w, " (report: a node's report refused whole, the node missing from its round; edge: one edge of a report dropped; record: a record left out of the run files; see the rounds' warnings and the master's log)")
	}
	rows := []accuracyRow{{name: "exported (" + sy.Estimator + ")", acc: sy.Online}}
	for _, e := range est {
		if e.Accuracy != nil {
			rows = append(rows, accuracyRow{name: e.Estimator, acc: *e.Accuracy, graphCalc: e.GraphCalc.P50, solved: true})
		}
	}
	printAccuracy(w, fmt.Sprintf("from round %d", sy.ConvergedFrom), rows)
	fmt.Fprintf(w, "  from round %d: the scenario's converged_from (earlier rounds are warm-up); converged at: the first round from which every round's worst |offset error| stays under %s\n",
		sy.ConvergedFrom, strings.Replace(engine.FormatNS(groundtruth.ConvergedBound), ".00 ", " ", 1))
	PrintCalibration(w, sy.Calibration)
	PrintSelfCheck(w, sy.SelfCheck)
	printSteps(w, sy.Steps)
	printWarnings(w, c.Warnings)
	printUnsolved(w, sy.Unsolved)
}

// accuracyRow is one line of the accuracy table: an estimator's errors
// and, when it was re-run offline (solved), GraphCalc's wall time per
// round.
type accuracyRow struct {
	name      string
	acc       groundtruth.Accuracy
	graphCalc float64 // ns
	solved    bool
}

// printAccuracy writes the |offset error| table: every error in one unit,
// chosen from the largest, and GraphCalc's times (another quantity) in
// theirs, each named in the header. The tabwriter's padding indents the
// table by two spaces.
func printAccuracy(w io.Writer, from string, rows []accuracyRow) {
	var errs, times []float64
	for _, r := range rows {
		o := r.acc.OffsetError
		errs = append(errs, o.P50, o.P95, o.P99, o.Max)
		if r.solved {
			times = append(times, r.graphCalc)
		}
	}
	u, gu := engine.UnitFor(errs...), engine.UnitFor(times...)
	names := []string{fmt.Sprintf("|offset error| in %s, %s", u.Name, from)}
	for _, r := range rows {
		names = append(names, r.name)
	}
	names = engine.PadRight(names)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\tp50\tp95\tp99\tmax\tdrift p99 (ppm)\tconverged at\tGraphCalc p50 (%s)\t\n", names[0], gu.Name)
	for i, r := range rows {
		o := r.acc.OffsetError
		gc := "-" // the online run's solves are not timed
		if r.solved {
			gc = gu.Format(r.graphCalc)
		}
		if o.N == 0 {
			// No node but the reference has ground truth: its errors are
			// unknown, and zeros would read as a perfect result.
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\tno ground truth\t%s\t\n", names[i+1], gc)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.4f\t%s\t%s\t\n", names[i+1],
			u.Format(o.P50), u.Format(o.P95), u.Format(o.P99), u.Format(o.Max),
			r.acc.DriftError.P99, converged(r.acc.ConvergedRound), gc)
	}
	tw.Flush()
	if len(rows) > 0 && len(rows[0].acc.NoTruth) > 0 {
		fmt.Fprintf(w, "  no ground truth for node %s: not counted above; each rank of a cluster records its own truth (merge them: chronosync estimate MASTER_DIR RANK_DIR...)\n",
			JoinInts(rows[0].acc.NoTruth))
	}
}

// JoinInts writes v as "1, 2 and 3".
func JoinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
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

// converged names the round from which a run counts as converged.
func converged(r uint64) string {
	if r == 0 {
		return "never"
	}
	return fmt.Sprintf("round %d", r)
}

// selfCheckNodes is how many nodes' self-checks the summary lists in
// full; beyond it, the failing ones and the worst.
const selfCheckNodes = 16

// PrintSelfCheck writes the self-check (see package selfcheck): overall,
// and per node, naming the nodes that fail it; nothing without
// predictions.
func PrintSelfCheck(w io.Writer, s *selfcheck.Summary) {
	if s == nil || s.Predictions == 0 {
		return
	}
	fmt.Fprintf(w, "  self-check (no ground truth): %s of %s predictions within 3σ (%.1f %%), worst %.2f σ",
		engine.Count(s.Within3Sigma), engine.Count(s.Predictions), 100*s.Share(), s.MaxSigma)
	if s.Fails() {
		fmt.Fprint(w, ": FAILS, the σ this run reports understate its errors")
		if len(s.Failing) > 0 {
			fmt.Fprintf(w, " on node %s", JoinInts(s.Failing))
		}
	}
	fmt.Fprintln(w)
	nodes := s.Nodes
	label := "per node"
	if len(nodes) > selfCheckNodes {
		nodes = slices.Clone(nodes)
		slices.SortStableFunc(nodes, func(a, b selfcheck.Node) int { return cmp.Compare(a.Share(), b.Share()) })
		nodes = nodes[:selfCheckNodes/2]
		label = fmt.Sprintf("the %d nodes with the fewest within 3σ", len(nodes))
	}
	parts := make([]string, len(nodes))
	for i, n := range nodes {
		parts[i] = fmt.Sprintf("%d %d/%d", n.Node, n.Within3Sigma, n.Predictions)
	}
	fmt.Fprintf(w, "    %s: %s\n", label, strings.Join(parts, ", "))
}

// printSteps writes the clock steps the run recorded, each with its node,
// size and time (the node's clock before the step), each ± its
// uncertainty.
func printSteps(w io.Writer, steps []StepSeen) {
	for _, s := range steps {
		size := engine.FormatNS(s.SizeNS)
		if s.SizeNS > 0 {
			size = "+" + size
		}
		fmt.Fprintf(w, "  clock step: node %d by %s (± %s) at %.6f s on its clock (± %s), round %d\n",
			s.Node, size, engine.FormatNS(s.SizeUncertaintyNS), float64(s.AtNS)/1e9, engine.FormatNS(s.AtUncertaintyNS), s.Round)
	}
}

// PrintCalibration writes whether the exported uncertainties contain the
// errors (see groundtruth.Calibration), and says plainly when they do not;
// nothing for a calibration without points.
func PrintCalibration(w io.Writer, c *groundtruth.Calibration) {
	if c == nil || c.Points == 0 {
		return
	}
	fmt.Fprintf(w, "  reported σ: %s of %s node-round errors within 3σ (%.1f %%), worst %.2f σ",
		engine.Count(int64(math.Round(c.Within3*float64(c.Points)))), engine.Count(int64(c.Points)), 100*c.Within3, c.Sigmas.Max)
	if !c.Calibrated() {
		fmt.Fprintf(w, ": NOT CALIBRATED, want ≥ %.0f %%: the σ this run reports understate its errors", 100*groundtruth.Target)
	}
	fmt.Fprintln(w)
}
