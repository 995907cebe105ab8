package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/chronosync/chronosync/harness"
	"github.com/chronosync/chronosync/phasegap/mpirun"
	"github.com/chronosync/chronosync/phasegap/params"
	"github.com/chronosync/chronosync/phasegap/report"
	"github.com/chronosync/chronosync/phasegap/sweep"
)

// maxRealRanks is the most ranks a real phasegap run gets: one namespace
// and loop each on this machine's CPUs.
const maxRealRanks = 8

func newPhasegapSweepCmd() *cobra.Command {
	var out, transports string
	var oversubscribe bool
	cmd := &cobra.Command{
		Use:   "sweep MATRIX.yaml [--out DIR]",
		Short: "Run PhaseGap's sweeps over the simulator, the real backend and MPI; resumable",
		Long: `sweep runs every point of the sweep file's sweeps on its transports: sim (the
model of workload/halo in virtual time), real (the same model over the real
backend's TCP streams between network namespaces, impaired by the shaper;
needs root), mpi (the MPI benchmark under mpirun on this machine's shared
memory; needs a chronosync built with -tags mpi) and mpi-net (the MPI
benchmark with a rank per network namespace, OpenMPI's TCP transport over
the real backend's links, impaired by the shaper; needs root and the MPI
build). Each run gets a directory under DIR/runs, and DIR/index.csv a
line, rewritten after every run.

A point that cannot run here is skipped with its reason (mpi with a link
preset, or MPI with more ranks × threads than CPUs: --oversubscribe runs
those, each marked degraded). SIGINT stops the sweep after
the run in progress is abandoned; running the same command again resumes it:
finished runs are kept, failed ones are retried. See docs/phasegap.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := sweep.Load(args[0])
			if err != nil {
				return err
			}
			if transports != "" {
				if err := m.Keep(strings.Split(transports, ",")); err != nil {
					return fmt.Errorf("--transports %q: %w", transports, err)
				}
			}
			if out == "" {
				out = filepath.Join("runs", "sweep-"+m.Name)
			}
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			r := &sweepRunner{m: m, exe: exe, cpus: runtime.NumCPU(), root: os.Geteuid() == 0, oversubscribe: oversubscribe}
			o, err := sweep.Run(ctx, m, out, r, terminal(cmd.ErrOrStderr()), cmd.ErrOrStderr())
			if err != nil && o.Entries == nil {
				return err // refused before planning (a bad costs file): no point to count
			}
			counts := map[string]int{}
			for _, e := range o.Entries {
				counts[e.Status]++
			}
			fmt.Fprintf(cmd.OutOrStdout(), "sweep %s: %d points: %d run now, %d kept from before; ok %d, degraded %d, skipped %d, failed %d, pending %d\nindex: %s\n",
				m.Name, len(o.Entries), o.Ran, o.Kept, counts["ok"], counts[harness.StatusDegraded], counts[sweep.StatusSkipped],
				counts[sweep.StatusFailed], counts[sweep.StatusPending], filepath.Join(out, sweep.IndexFile))
			printSkipped(cmd.OutOrStdout(), o.Entries)
			if errors.Is(err, sweep.ErrInterrupted) {
				return &codedError{code: 130, err: err}
			}
			if err == nil && counts[sweep.StatusFailed] > 0 {
				return fmt.Errorf("%d runs failed (index.csv's reason column; their directories end in .failed); run the same command again to retry them", counts[sweep.StatusFailed])
			}
			return err
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "the sweep's directory (default runs/sweep-<name>)")
	cmd.Flags().StringVar(&transports, "transports", "", "run only these of the file's transports, comma-separated (sim, real, mpi, mpi-net)")
	cmd.Flags().BoolVar(&oversubscribe, "oversubscribe", false, "run the MPI points with more ranks × threads than CPUs too (each marked degraded by its own run)")
	return cmd
}

// sweepRunner runs a sweep's points: sim and real through the harness, MPI
// through mpirun and this executable.
type sweepRunner struct {
	m    *sweep.Matrix
	exe  string
	cpus int
	root bool
	// oversubscribe runs MPI points with P×T above cpus.
	oversubscribe bool
}

// Skip says why a point cannot run on this machine.
func (r *sweepRunner) Skip(pt sweep.Point) string {
	q := pt.Params
	switch pt.Transport {
	case sweep.TransportReal:
		if !r.root {
			return "the real backend needs root (network namespaces)"
		}
		if q.Ranks > maxRealRanks {
			return fmt.Sprintf("%d ranks: the real backend runs at most %d here (use sim beyond)", q.Ranks, maxRealRanks)
		}
	case sweep.TransportMPI, sweep.TransportMPINet:
		// What the machine cannot run first, then what this build lacks.
		if pt.Transport == sweep.TransportMPI && pt.Preset != "none" {
			return fmt.Sprintf("link preset %s: MPI runs on this machine's shared memory, which no preset shapes (use mpi-net, sim or real)", pt.Preset)
		}
		if pt.Transport == sweep.TransportMPINet {
			if !r.root {
				return "mpi-net needs root (network namespaces)"
			}
			if q.Ranks > maxRealRanks {
				return fmt.Sprintf("%d ranks: mpi-net runs at most %d namespaces here", q.Ranks, maxRealRanks)
			}
			if _, err := exec.LookPath("ip"); err != nil {
				return "no ip on PATH (apt-get install iproute2)"
			}
		}
		if q.Ranks*q.Threads > r.cpus && !r.oversubscribe {
			return fmt.Sprintf("P×T = %d×%d = %d > %d CPUs: it would oversubscribe (this machine runs MPI up to P×T = %d; --oversubscribe runs it, marked degraded)", q.Ranks, q.Threads, q.Ranks*q.Threads, r.cpus, r.cpus)
		}
		if !mpirun.Built {
			return "this chronosync was built without MPI (make build-mpi)"
		}
		if _, err := exec.LookPath("mpirun"); err != nil {
			return "no mpirun on PATH (apt-get install openmpi-bin)"
		}
	}
	return ""
}

// Run runs pt into a directory beside dir and renames it to dir once it
// completed; a failed run is kept as dir.failed, an interrupted one
// removed.
func (r *sweepRunner) Run(ctx context.Context, pt sweep.Point, dir string) (string, error) {
	tmp, failed := dir+".partial", dir+".failed"
	for _, d := range []string{tmp, failed} {
		if err := os.RemoveAll(d); err != nil {
			return "", err
		}
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	var status string
	var err error
	switch pt.Transport {
	case sweep.TransportMPI:
		status, err = r.runMPI(ctx, pt, tmp)
	case sweep.TransportMPINet:
		status, err = r.runMPINet(ctx, pt, tmp)
	default:
		status, err = r.runHarness(ctx, pt, tmp)
	}
	switch {
	case ctx.Err() != nil:
		os.RemoveAll(tmp)
		return "", ctx.Err()
	case err != nil:
		if _, serr := os.Stat(tmp); serr == nil {
			if rerr := os.Rename(tmp, failed); rerr != nil {
				os.RemoveAll(tmp)
			}
		}
		return "", err
	}
	return status, os.Rename(tmp, dir)
}

// runHarness runs pt as a phasegap scenario on the simulator or the real
// backend.
func (r *sweepRunner) runHarness(ctx context.Context, pt sweep.Point, out string) (string, error) {
	sc, err := r.m.Scenario(pt)
	if err != nil {
		return "", err
	}
	res, err := harness.Run(sc, harness.Options{Out: out, Backend: pt.Transport, Context: ctx})
	if err != nil {
		return "", err
	}
	if pg := res.Summary.Phasegap; pg != nil && pg.Finished < pg.Ranks {
		return "", fmt.Errorf("%d of %d ranks finished: %s", pg.Finished, pg.Ranks, strings.Join(pg.Failed, "; "))
	}
	return res.Summary.Status, nil
}

// runMPI runs pt under mpirun with this executable on this machine's
// shared memory; mpirun's output goes to mpirun.log in the run directory.
func (r *sweepRunner) runMPI(ctx context.Context, pt sweep.Point, out string) (string, error) {
	args := []string{"-np", strconv.Itoa(pt.Params.Ranks), "--bind-to", "none"}
	if r.root {
		args = append(args, "--allow-run-as-root")
	}
	return r.mpirun(ctx, "mpirun", append(args, r.phasegapArgs(pt, out)...), out, nil)
}

// phasegapArgs is the rank's command line for pt: this executable's
// phasegap with every parameter a sweep sets and the flags extra,
// writing the run directory out (the last two arguments).
func (r *sweepRunner) phasegapArgs(pt sweep.Point, out string, extra ...string) []string {
	q := pt.Params
	args := []string{r.exe, "phasegap"}
	for _, f := range params.Fields() {
		switch {
		case !f.Sweep:
		case f.Int != nil:
			args = append(args, "--"+f.Flag(), strconv.Itoa(*f.Int(&q)))
		case f.Str != nil:
			args = append(args, "--"+f.Flag(), *f.Str(&q))
		}
	}
	args = append(args, extra...)
	return append(args, "--trace", "1", "--run-id", r.m.Name+"-"+pt.Sweep+"-"+pt.ID(), "--out-dir", out)
}

// mpirun runs the launcher name with args; its output goes to mpirun.log
// in the run directory out, after the lines of pre. The run's status is
// the one it judged its machine to have (load, oversubscription, CPU
// pressure and steal: results.csv's status), as the real backend's runs
// do.
func (r *sweepRunner) mpirun(ctx context.Context, name string, args []string, out string, pre []byte) (string, error) {
	c := exec.CommandContext(ctx, name, args...)
	// SIGINT reached mpirun with the sweep's own (same process group);
	// should it linger, end it, by its PID, and give it time to end its
	// ranks.
	c.Cancel = func() error { return c.Process.Signal(syscall.SIGTERM) }
	c.WaitDelay = 10 * time.Second
	outb, err := c.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", name, strings.Join(args[:len(args)-2], " "), err, lastLine(string(outb)))
	}
	if err := os.WriteFile(filepath.Join(out, "mpirun.log"), append(pre, outb...), 0o644); err != nil {
		return "", err
	}
	recs, err := report.ReadCSVFile(filepath.Join(out, report.ResultsFile))
	if err != nil {
		return "", err
	}
	if len(recs) == 1 && recs[0].Str("status") == report.StatusDegraded {
		return harness.StatusDegraded, nil
	}
	return harness.StatusOK, nil
}

// printSkipped lists why points could not run here, each reason once
// with its count, per transport, in the order first met (index.csv has
// every point's line).
func printSkipped(w io.Writer, entries []sweep.Entry) {
	type reason struct{ transport, why string }
	var order []reason
	count := map[reason]int{}
	for _, e := range entries {
		if e.Status != sweep.StatusSkipped {
			continue
		}
		k := reason{e.Transport, e.Reason}
		if count[k] == 0 {
			order = append(order, k)
		}
		count[k]++
	}
	if len(order) == 0 {
		return
	}
	fmt.Fprintf(w, "not run here (skipped; index.csv names each point):\n")
	for _, k := range order {
		fmt.Fprintf(w, "  %s: %d points: %s\n", k.transport, count[k], k.why)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
