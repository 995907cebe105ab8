package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/chronosync/chronosync/phasegap"
	"github.com/chronosync/chronosync/phasegap/report"
	"github.com/chronosync/chronosync/workload/halo"
)

// Limits of what phasegap calibrate writes into the costs file's note:
// beyond them it says how many it left out.
const (
	calibrateNoteFiles = 50
	calibrateNoteRows  = 200
)

func newPhasegapCalibrateCmd() *cobra.Command {
	var out, kernel, forkNS string
	var includeDegraded bool
	cmd := &cobra.Command{
		Use:   "calibrate RUNS... -o COSTS.yaml",
		Short: "Fit the simulator's cost model (workload/halo Costs) to PhaseGap's MPI runs",
		Long: `Calibrate fits the costs of PhaseGap's model in the simulator (package
workload/halo: point_ns, flop_ns, byte_ns, fork_ns, mem_bytes_per_ns,
call_ns) to the results of MPI runs of chronosync phasegap, writes them to
the costs file -o (YAML, the fit in its leading comments), and prints the
fitted values, those kept at their defaults and why, and each run's
residual.

RUNS are run directories (--out-dir) holding results.csv, results CSV
files (an index written with --csv-mode append too), or directories
searched for results.csv files at any depth, in sorted order (hidden
directories, such as a run's staging directory, left out). Only the MPI
rows count: the interior fit takes the runs of phase_nb, phase_blk and
phase_persist (the modes that do not test during the interior) with a
static schedule or one thread and no progress thread, and not degraded
(--include-degraded keeps those); call_ns takes the
posts of every nonblocking run. Runs that vary N, --threads (1 and more),
--flops-per-point and --bytes-per-point (0 and more) determine every cost;
a cost the runs do not determine keeps its default. One kernel at a time
(--kernel picks one). It prints each fitted cost's standard error and says
which the runs determine. See docs/phasegap.md, "Calibration".

fork_ns is not fitted: --fork-ns auto (the default) measures the fork/join
of PhaseGap's own team of 2 threads here, as BenchmarkTeamFork does; a
number of ns takes that; fit fits it from the runs, which at one N cannot
tell a fork from a memory ceiling.

    chronosync phasegap calibrate runs/cal -o costs.yaml`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return fmt.Errorf("-o is required: the costs file to write (costs.yaml)")
			}
			files, err := report.FindResults(args)
			if err != nil {
				return err
			}
			var rows []report.Record
			for _, f := range files {
				recs, err := report.ReadCSVFile(f)
				if err != nil {
					return err
				}
				for _, r := range recs {
					if kernel == "" || r.Str("kernel") == kernel {
						rows = append(rows, r)
					}
				}
			}
			opt, err := forkOption(forkNS)
			if err != nil {
				return err
			}
			opt.IncludeDegraded = includeDegraded
			costs, fit, err := halo.CalibrateWith(rows, opt)
			if err != nil {
				return err
			}
			if err := halo.WriteCosts(out, costs, calibrateNote(files, fit, time.Now().UTC())); err != nil {
				return err
			}
			printCostsFit(cmd.OutOrStdout(), costs, fit)
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\n", out)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "the costs file to write (YAML)")
	cmd.Flags().StringVar(&kernel, "kernel", "", "calibrate the runs of this kernel only (stencil3, stencil5 or axpy)")
	cmd.Flags().BoolVar(&includeDegraded, "include-degraded", false, "fit the runs whose results say degraded (a loaded or oversubscribed machine) too; by default they are skipped")
	cmd.Flags().StringVar(&forkNS, "fork-ns", "auto", "fork_ns: auto (measure the team's fork/join of 2 threads here), a number of ns (BenchmarkTeamFork's), or fit (from the runs)")
	return cmd
}

// forkOption is --fork-ns's calibration option: auto measures the
// team's fork/join (phasegap.MeasureForkCost), a number is taken as
// given, fit leaves fork_ns to the fit.
func forkOption(v string) (halo.CalibrateOptions, error) {
	switch v {
	case "fit":
		return halo.CalibrateOptions{}, nil
	case "auto":
		fc, err := phasegap.MeasureForkCost(2, 20000, 20)
		if err != nil {
			return halo.CalibrateOptions{}, fmt.Errorf("--fork-ns auto: %w", err)
		}
		return halo.CalibrateOptions{ForkNS: float64(fc.Median.Nanoseconds()),
			ForkFrom: "measured by calibrate on this machine: " + fc.String()}, nil
	}
	ns, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(ns) || math.IsInf(ns, 0) || ns < 0 || ns > 1e12 {
		return halo.CalibrateOptions{}, fmt.Errorf("--fork-ns %q: expected auto, fit, or a number of ns from 0 to 1e12", v)
	}
	return halo.CalibrateOptions{ForkNS: ns, ForkFrom: "--fork-ns " + v}, nil
}

// calibrateNote is the costs file's leading comment: what it was
// calibrated from, when, and the fit.
func calibrateNote(files []string, fit halo.Fit, when time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Costs of PhaseGap's model in the simulator (workload/halo), in ns and bytes.\n")
	fmt.Fprintf(&b, "Calibrated by chronosync phasegap calibrate on %s from %d results files:\n", when.Format(time.RFC3339), len(files))
	for i, f := range files {
		if i == calibrateNoteFiles {
			fmt.Fprintf(&b, "  (and %d more)\n", len(files)-i)
			break
		}
		fmt.Fprintf(&b, "  %s\n", f)
	}
	b.WriteString(fit.String())
	for i, r := range fit.Rows {
		if i == calibrateNoteRows {
			fmt.Fprintf(&b, "  (and %d more runs)\n", len(fit.Rows)-i)
			break
		}
		fmt.Fprintf(&b, "  %s\n", r)
	}
	return b.String()
}

// printCostsFit prints the costs with how each was set, then each run's
// residual and the rows skipped.
func printCostsFit(w io.Writer, c halo.Costs, fit halo.Fit) {
	how := map[string]string{}
	for _, f := range fit.Fitted {
		how[f] = "fitted"
	}
	for _, k := range fit.Kept {
		name, why, _ := strings.Cut(k, " (")
		how[name] = "kept default: " + strings.TrimSuffix(why, ")")
	}
	for _, n := range fit.Notes {
		name, _, _ := strings.Cut(n, " ")
		if how[name] == "" {
			how[name] = n
		}
	}
	for _, f := range fit.Fixed {
		name, _, _ := strings.Cut(f, " ")
		how[name] = "fixed: " + f
	}
	fmt.Fprintf(w, "kernel %s: %d runs fitted (t_interior), %d posts (call_ns), %d rows skipped\n", fit.Kernel, len(fit.Rows), len(fit.CallRows), len(fit.Skipped))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "cost\tvalue\t")
	for _, kv := range []struct {
		name string
		v    string
	}{
		{"point_ns", fmtCost(c.PointNS)}, {"flop_ns", fmtCost(c.FlopNS)}, {"byte_ns", fmtCost(c.ByteNS)},
		{"fork_ns", fmtCost(c.ForkNS)}, {"mem_bytes_per_ns", fmtCost(c.MemBytesPerNS)}, {"point_bytes", fmtCost(c.PointBytes)},
		{"call_ns", fmtCost(c.CallNS)}, {"eager_limit", strconv.Itoa(c.EagerLimit)},
	} {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", kv.name, kv.v, how[kv.name])
	}
	tw.Flush()
	fmt.Fprintf(w, "\nhow closely the runs determine each fitted cost (standard error; determined: within %.0f%%):\n", 100*halo.DeterminedWithin)
	for _, d := range fit.Determined {
		fmt.Fprintf(w, "  %s\n", d)
	}
	for _, n := range fit.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	fmt.Fprintf(w, "\nt_interior, measured and model: median |residual| %.2f%%, worst %.2f%% (%s)\n", 100*fit.MedianResidual, 100*fit.WorstResidual, fit.Worst)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tmode\tT\tN\tR\tS\tF\tB\tmeasured µs\tmodel µs\tresidual\tbranch\t")
	for _, r := range fit.Rows {
		branch := "arithmetic"
		if r.MemoryBound {
			branch = "memory"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%.2f\t%.2f\t%+.2f%%\t%s\t\n", r.Where, r.Mode, r.Threads, r.N, r.Radius, r.Steps, r.Flops, r.Bytes,
			r.MeasuredNS/1e3, r.ModelNS/1e3, 100*r.Residual, branch)
	}
	tw.Flush()
	if len(fit.Skipped) > 0 {
		fmt.Fprintf(w, "\nskipped:\n")
		for _, s := range fit.Skipped {
			fmt.Fprintf(w, "  %s\n", s)
		}
	}
}

// fmtCost writes a cost with 4 significant digits, or to the unit from
// 1000 on (the file has every digit).
func fmtCost(v float64) string {
	if v >= 1000 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
