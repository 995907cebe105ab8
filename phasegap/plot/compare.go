package plot

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/chronosync/chronosync/analysis/stats"
	"github.com/chronosync/chronosync/phasegap/params"
	"github.com/chronosync/chronosync/phasegap/report"
)

// ComparedFigures are the columns Compare sets side by side, model
// against measurement.
func ComparedFigures() []string {
	return []string{"t_interior_mean_avg", "t_wait_mean_avg", "wait_frac", "overlap_ratio", "hidden_frac", "t_iter_mean"}
}

// Pair is one configuration measured on MPI and predicted by the
// simulator's model.
type Pair struct {
	Config   string    // P, T, H, F, B, mode
	Measured []float64 // in the order of ComparedFigures
	Model    []float64
	// RelErr is (model − measured) / measured per figure; NaN where the
	// measurement is 0.
	RelErr []float64
}

// Comparison is the model against MPI over every configuration both ran.
type Comparison struct {
	Pairs []Pair
	// Median and Worst are over the pairs, of |RelErr|, per figure; Worst
	// names its configuration.
	Median    []float64
	Worst     []float64
	WorstAt   []string
	Unmatched int // MPI runs the model did not run
	// Repeat is, per figure, the median over the MPI runs of a
	// configuration measured more than once of |run − the mean of its
	// runs| / that mean: how well the measurement repeats itself, the
	// floor under any model's error. RepeatRuns counts those runs.
	Repeat     []float64
	RepeatRuns int
}

// configColumns are the results' columns that identify a configuration
// across transports: the parameters of params.Fields a sweep varies,
// those the figures' labels name first, then the others in the table's
// order, less the ones a configuration is compared across (radius and
// the OpenMP schedule and chunk).
func configColumns() []string {
	cols := []string{"P", "T", "H", "flops_per_point", "bytes_per_point", "mode", "progress"}
	across := []string{"radius", "omp_schedule", "omp_chunk"}
	for _, f := range params.Fields() {
		if f.Sweep && !slices.Contains(cols, f.Col()) && !slices.Contains(across, f.Key) {
			cols = append(cols, f.Col())
		}
	}
	return cols
}

// configKey identifies a configuration across transports.
func configKey(r report.Record, cols []string) string {
	var b strings.Builder
	for _, c := range cols {
		b.WriteString(r.Str(c) + "|")
	}
	return b.String()
}

// Compare pairs the MPI runs on shared memory (not those over TCP, nor
// any impaired run) with the simulator's runs of the same configuration (several runs of one configuration on one side are
// averaged) and measures the model's relative error.
func Compare(records []report.Record) (Comparison, error) {
	compared, cols := ComparedFigures(), configColumns()
	type side struct {
		label string
		sum   []float64
		runs  [][]float64 // each run's figures
		n     int
	}
	sides := map[string]map[string]*side{report.WorldMPI: {}, report.WorldSim: {}}
	for _, r := range records {
		m, ok := sides[r.Transport()]
		// The model is calibrated against MPI on one machine's shared
		// memory: MPI over TCP between namespaces (mpi-net) is another
		// configuration, which the plots set beside the model's.
		if !ok || r.Str("impairment") != "none" || (r.Transport() == report.WorldMPI && r.Str("transport") == "tcp") {
			continue
		}
		k := configKey(r, cols)
		s := m[k]
		if s == nil {
			s = &side{label: fmt.Sprintf("P=%s T=%s H=%s F=%s %s", r.Str("P"), r.Str("T"), r.Str("H"), r.Str("flops_per_point"), r.Str("mode")),
				sum: make([]float64, len(compared))}
			m[k] = s
		}
		run := make([]float64, len(compared))
		for i, c := range compared {
			var v float64
			var err error
			if c == "hidden_frac" {
				v, err = hiddenFrac(r)
			} else {
				v, err = r.Float(c)
			}
			if err != nil {
				return Comparison{}, err
			}
			s.sum[i] += v
			run[i] = v
		}
		s.runs = append(s.runs, run)
		s.n++
	}
	var c Comparison
	keys := make([]string, 0, len(sides[report.WorldMPI]))
	for k := range sides[report.WorldMPI] {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		meas, model := sides[report.WorldMPI][k], sides[report.WorldSim][k]
		if model == nil {
			c.Unmatched++
			continue
		}
		p := Pair{Config: meas.label}
		for i := range compared {
			a, b := meas.sum[i]/float64(meas.n), model.sum[i]/float64(model.n)
			p.Measured, p.Model = append(p.Measured, a), append(p.Model, b)
			e := math.NaN()
			if a != 0 {
				e = (b - a) / a
			}
			p.RelErr = append(p.RelErr, e)
		}
		c.Pairs = append(c.Pairs, p)
	}
	slices.SortStableFunc(c.Pairs, func(a, b Pair) int { return cmp.Compare(a.Config, b.Config) })
	devs := make([][]float64, len(compared))
	for _, k := range keys {
		s := sides[report.WorldMPI][k]
		if s.n < 2 {
			continue
		}
		c.RepeatRuns += s.n
		for i := range compared {
			mean := s.sum[i] / float64(s.n)
			for _, run := range s.runs {
				if mean != 0 {
					devs[i] = append(devs[i], math.Abs(run[i]-mean)/math.Abs(mean))
				}
			}
		}
	}
	for i := range compared {
		c.Repeat = append(c.Repeat, stats.Median(slices.Clone(devs[i])))
	}
	for i := range compared {
		var errs []float64
		worst, at := math.NaN(), ""
		for _, p := range c.Pairs {
			if e := math.Abs(p.RelErr[i]); !math.IsNaN(e) {
				errs = append(errs, e)
				if math.IsNaN(worst) || e > worst {
					worst, at = e, p.Config
				}
			}
		}
		c.Median, c.Worst, c.WorstAt = append(c.Median, stats.Median(slices.Clone(errs))), append(c.Worst, worst), append(c.WorstAt, at)
	}
	return c, nil
}

// Markdown writes the comparison as a table (measured / model / error per
// figure) and the medians and worst cases.
func (c Comparison) Markdown() string {
	compared := ComparedFigures()
	var b strings.Builder
	b.WriteString("| configuration |")
	for _, f := range compared {
		fmt.Fprintf(&b, " %s MPI | model | error |", f)
	}
	b.WriteString("\n|---|")
	b.WriteString(strings.Repeat("---:|---:|---:|", len(compared)))
	b.WriteString("\n")
	for _, p := range c.Pairs {
		fmt.Fprintf(&b, "| %s |", p.Config)
		for i := range compared {
			fmt.Fprintf(&b, " %s | %s | %s |", figure(p.Measured[i]), figure(p.Model[i]), pct(p.RelErr[i]))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	for i, f := range compared {
		fmt.Fprintf(&b, "- %s: median |error| %.0f %%, worst %.0f %% (%s)", f, 100*c.Median[i], 100*c.Worst[i], c.WorstAt[i])
		if c.RepeatRuns > 0 {
			fmt.Fprintf(&b, "; repeated measurements differ from their mean by a median %.0f %%", 100*c.Repeat[i])
		}
		b.WriteString("\n")
	}
	if c.RepeatRuns > 0 {
		fmt.Fprintf(&b, "- repeats: the median over the %d MPI runs of configurations measured more than once of |run − the mean of its repeats| / that mean\n", c.RepeatRuns)
	}
	if c.Unmatched > 0 {
		fmt.Fprintf(&b, "- %d MPI configurations had no simulated run\n", c.Unmatched)
	}
	return b.String()
}

func figure(v float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 1:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.3f", v)
}

func pct(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf("%+.0f %%", 100*v)
}
