package phasegaprun

import (
	"fmt"
	"io"
	"strings"

	"github.com/chronosync/chronosync/harness/engine"
)

// Summary is a phasegap run's outcome: how many ranks finished,
// and the cross-rank figures of phasegap/results.csv (times in µs).
type Summary struct {
	Ranks    int      `json:"ranks"`
	Finished int      `json:"finished"`
	Failed   []string `json:"failed,omitempty"` // what stopped each rank that did not finish
	Mode     string   `json:"mode"`
	Threads  int      `json:"threads"`
	Halo     int      `json:"halo"`
	// Impairment is the links' preset ("none", a preset's name, or
	// "custom" for link settings of no preset).
	Impairment   string  `json:"impairment"`
	Costs        string  `json:"costs"` // "defaults", or the costs file's sha256 prefix
	TIter        float64 `json:"t_iter_mean_us"`
	TInterior    float64 `json:"t_interior_mean_avg_us"`
	TWait        float64 `json:"t_wait_mean_avg_us"`
	TCommWindow  float64 `json:"t_comm_window_mean_avg_us"`
	WaitFrac     float64 `json:"wait_frac"`
	WaitSkew     float64 `json:"wait_skew"`
	OverlapRatio float64 `json:"overlap_ratio"`
	// TPureComm and HiddenFrac are the pure exchange's mean time and
	// the share of it the run hid (report.HiddenFrac); absent when the
	// run timed no pure exchange (PureComm 0).
	TPureComm  *float64 `json:"t_pure_comm_mean_us,omitempty"`
	HiddenFrac *float64 `json:"hidden_frac,omitempty"`
	// Ignored are the link settings a simulated run did not apply to
	// the halos (see streamless); the run is then degraded.
	Ignored []string `json:"ignored_link_settings,omitempty"`
}

// Judge adds a phasegap run's conditions (engine.Judge): every rank ran
// its iterations, and a simulated run applied every setting of its links.
func (pg *Summary) Judge(cs engine.Checker) {
	why := fmt.Sprintf("every rank runs its %s iterations within the scenario's duration", pg.Mode)
	if len(pg.Failed) > 0 {
		why += "; " + pg.Failed[0]
	}
	cs.Check("phasegap ranks that did not finish", float64(pg.Ranks-pg.Finished), 0, "", why)
	if len(pg.Ignored) > 0 {
		cs.Check("link settings the simulator's streams ignore", float64(len(pg.Ignored)), 0, "",
			strings.Join(pg.Ignored, ", ")+": the halos are stream messages, which take a link's delay and rate only (run it with --backend=real)")
	}
}

// Print writes a phasegap run's figures.
func (pg *Summary) Print(w io.Writer) {
	fmt.Fprintf(w, "phasegap: %d of %d ranks finished, %s, T=%d, H=%d, links %s, costs %s\n",
		pg.Finished, pg.Ranks, pg.Mode, pg.Threads, pg.Halo, pg.Impairment, pg.Costs)
	fmt.Fprintf(w, "  t_iter %.2f µs, interior %.2f µs, wait %.2f µs, comm window %.2f µs; wait_frac %.4f, wait_skew %.3f, overlap_ratio %.4f\n",
		pg.TIter, pg.TInterior, pg.TWait, pg.TCommWindow, pg.WaitFrac, pg.WaitSkew, pg.OverlapRatio)
	if pg.HiddenFrac != nil && pg.TPureComm != nil {
		fmt.Fprintf(w, "  hidden_frac %.4f = 1 − t_wait %.2f / t_pure_comm %.2f µs, clamped to [0, 1]\n", *pg.HiddenFrac, pg.TWait, *pg.TPureComm)
	}
	for _, f := range pg.Failed {
		fmt.Fprintf(w, "  %s\n", f)
	}
}
