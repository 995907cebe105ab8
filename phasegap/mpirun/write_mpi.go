//go:build mpi

package mpirun

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/chronosync/chronosync/phasegap"
	"github.com/chronosync/chronosync/phasegap/buildstamp"
	"github.com/chronosync/chronosync/phasegap/output"
	"github.com/chronosync/chronosync/phasegap/params"
	"github.com/chronosync/chronosync/phasegap/report"
)

// config is the run's configuration (output.Config) with the MPI run's
// launch: the threading asked for and provided, binding, outputs, this
// host and build; the run id, when none is given, is the time and a hash
// of the rest.
func config(o *Options, d params.Derived, provided, version string) report.Config {
	host, _ := os.Hostname()
	impairment := o.Impairment
	if impairment == "" {
		impairment = "none"
	}
	cfg := output.Config(o.Params, d, output.Launch{
		Transport: o.Transport, MPIThreadRequested: o.MPIThread, MPIThreadProvided: provided,
		OMPBind: o.Bind, OMPPlaces: o.Places, Trace: o.Trace, TraceIters: o.TraceIters, TraceDetail: o.TraceDetail,
		OutDir: o.OutDir, RunID: o.RunID, CSV: o.CSV, CSVMode: o.CSVMode, Manifest: o.Manifest,
		Hostname: host, GitSHA: buildstamp.Read().SHA, Timestamp: time.Now().UTC().Format(time.RFC3339),
		MPIImpl: mpiImpl(version), MPIVersion: version, Impairment: impairment, Checksum: true,
	})
	if cfg.RunID == "" {
		h := fnv.New32a()
		fmt.Fprintf(h, "%+v", cfg)
		cfg.RunID = fmt.Sprintf("%s-%08x", time.Now().UTC().Format("20060102T150405Z"), h.Sum32())
	}
	return cfg
}

// writeRun writes the run directory through output.Write, staged beside
// it and renamed into place, so that a failure leaves no half-written
// directory; then the --csv index, if any.
func writeRun(o *Options, cfg report.Config, g *phasegap.Gathered, checksum uint64, host report.Host) (report.Row, error) {
	row := report.Aggregate(cfg, g.Summaries, checksum)
	row.Host = host
	dir := filepath.Clean(o.OutDir)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return row, fmt.Errorf("run directory: %w", err)
	}
	stage, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return row, fmt.Errorf("run directory: %w", err)
	}
	defer os.RemoveAll(stage)
	err = output.Write(stage, output.Run{Config: cfg, Row: row, Ranks: g.Ranks,
		Build: buildInfo(), Env: runEnv(), Platform: platformInfo(), Checksum: checksum, XPlanes: true})
	if err != nil {
		return row, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return row, fmt.Errorf("replace %s: %w", dir, err)
	}
	if err := os.Rename(stage, dir); err != nil {
		return row, fmt.Errorf("run directory: %w", err)
	}
	if o.CSV == "" || filepath.Clean(o.CSV) == filepath.Join(dir, output.FileResults) {
		return row, nil
	}
	if o.CSVMode == "append" {
		return row, report.AppendCSV(o.CSV, row)
	}
	var b bytes.Buffer
	if err := report.WriteCSV(&b, []report.Row{row}, true); err != nil {
		return row, err
	}
	tmp := o.CSV + ".tmp"
	if err := os.WriteFile(tmp, b.Bytes(), 0o644); err != nil {
		return row, fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, o.CSV); err != nil {
		return row, fmt.Errorf("write %s: %w", o.CSV, err)
	}
	return row, nil
}

// printRun writes the run's headline figures.
func printRun(w io.Writer, cfg report.Config, row report.Row, dir string) {
	p := &cfg.Params
	fmt.Fprintf(w, "phasegap %s  P %d  T %d  N %d  H %d  kernel %s  B %d  MPI thread %s (asked %s)\n",
		p.Mode, p.Ranks, p.Threads, p.N, p.Halo, p.Kernel, cfg.B, cfg.MPIThreadProvided, cfg.MPIThreadRequested)
	fmt.Fprintf(w, "µs per iteration (mean over ranks, max rank): iter %.2f  post %.2f/%.2f  interior %.2f/%.2f  wait %.2f/%.2f  boundary %.2f/%.2f  comm window %.2f/%.2f\n",
		row.TIterMean, row.TPost.Avg, row.TPost.Max, row.TInterior.Avg, row.TInterior.Max, row.TWait.Avg, row.TWait.Max,
		row.TBoundary.Avg, row.TBoundary.Max, row.TCommWindow.Avg, row.TCommWindow.Max)
	fmt.Fprintln(w, row.PercentileLine())
	if !math.IsNaN(row.HiddenFrac) {
		fmt.Fprintf(w, "hidden_frac %.3f = 1 − t_wait %.2f / t_pure_comm %.2f, clamped to [0, 1] (overlap_ratio %.3f)\n",
			row.HiddenFrac, row.TWait.Avg, row.TPureCommMean, row.OverlapRatio)
	}
	if l := row.HostLine(); l != "" {
		fmt.Fprintln(w, l)
	}
	if !math.IsNaN(row.IMBNBCOverlapPct) {
		fmt.Fprintf(w, "IMB-NBC overlap %.2f %% = 100·(t_pure %.2f + t_CPU %.2f − t_ovrl %.2f)/max(t_pure, t_CPU), clamped; SMB availability %.2f %% = 100·(1 − (iter_t %.2f − work_t %.2f)/base_t %.2f); OSU overlap %.2f %%\n",
			row.IMBNBCOverlapPct, row.IMBTPure, row.IMBTCPU, row.IMBTOvrl, row.SMBAvailabilityPct, row.SMBIterT, row.SMBWorkT, row.SMBBaseT, row.OSUOverlapPct)
	}
	sum := "none (--check 0)"
	if p.Check {
		sum = report.FormatChecksum(row.Checksum64) + " (checked against a serial recomputation)"
	}
	fmt.Fprintf(w, "overlap_ratio %.3f  wait_frac %.3f  wait_skew %.2f  tests/iter %.1f  checksum %s\n",
		row.OverlapRatio, row.WaitFrac, row.WaitSkew, row.MPITestCallsMean, sum)
	fmt.Fprintf(w, "run directory: %s (%s)\n", dir, strings.Join(slices.DeleteFunc([]string{"results.csv",
		map[bool]string{true: "manifest.json"}[cfg.Manifest], map[bool]string{true: "trace.json, rank<N>.xplane.pb"}[cfg.Trace]}, func(s string) bool { return s == "" }), ", "))
}
