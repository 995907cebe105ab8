//go:build mpi

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/proto"

	"github.com/chronosync/chronosync/phasegap"
	"github.com/chronosync/chronosync/phasegap/report"
)

// phasegapConfig is the run's normalized configuration.
func phasegapConfig(o *phasegapOpts, d phasegap.Derived, provided, version string) report.Config {
	p := &o.p
	host, _ := os.Hostname()
	cfg := report.Config{
		Mode: p.Mode, Ranks: p.Ranks, Threads: p.Threads, N: p.N, Halo: p.Halo, Kernel: p.Kernel,
		Radius: d.Radius, Timesteps: p.Timesteps, B: d.B, PollEvery: p.PollEvery,
		MPIThreadRequested: o.mpiThread, MPIThreadProvided: provided, Progress: p.Progress,
		OMPSchedule: p.Schedule, OMPChunk: p.Chunk, OMPBind: o.bind, OMPPlaces: o.places, OMPNumThreads: p.Threads,
		FlopsPerPoint: p.Flops, BytesPerPoint: p.Bytes, Iters: p.Iters, Warmup: p.Warmup,
		Check: p.Check, CheckEvery: p.CheckEvery, PoisonGhost: p.PoisonGhost, Sync: p.Sync,
		Trace: o.trace, TraceIters: o.traceIters, TraceDetail: o.traceDetail, Transport: o.transport,
		OutDir: o.outDir, RunID: o.runID, CSV: o.csv, CSVMode: o.csvMode, Manifest: o.manifest,
		Platform: runtime.GOOS + "/" + runtime.GOARCH, Hostname: host, GitSHA: gitSHA(),
		Timestamp: time.Now().UTC().Format(time.RFC3339), MPIImpl: mpiImpl(version), MPIVersion: version,
		Impairment: "none", ElemSize: 8,
	}
	if cfg.RunID == "" {
		h := fnv.New32a()
		fmt.Fprintf(h, "%+v", cfg)
		cfg.RunID = fmt.Sprintf("%s-%08x", time.Now().UTC().Format("20060102T150405Z"), h.Sum32())
	}
	return cfg
}

// mpiImpl names the implementation from MPI_Get_library_version's text.
func mpiImpl(version string) string {
	for _, impl := range []string{"Open MPI", "MPICH", "Intel(R) MPI", "MVAPICH"} {
		if strings.Contains(version, impl) {
			return impl
		}
	}
	return "unknown"
}

// gitSHA is the VCS revision the binary was built from, if recorded.
func gitSHA() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}

// buildInfo is the binary's build: Go version, compiler, tags, revision.
func buildInfo() report.BuildInfo {
	b := report.BuildInfo{GoVersion: runtime.Version(), Compiler: runtime.Compiler, GitSHA: gitSHA()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "-tags":
				b.BuildTags = strings.Split(s.Value, ",")
			case "CGO_CFLAGS", "CGO_LDFLAGS", "-gcflags", "-ldflags":
				b.Flags = strings.TrimSpace(b.Flags + " " + s.Key + "=" + s.Value)
			}
		}
	}
	return b
}

// runEnv is the MPI, OpenMP and Go runtime environment of the process.
func runEnv() map[string]string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		for _, prefix := range []string{"OMPI_", "OMP_", "PMIX_", "PMI_", "MPI", "GOMAXPROCS", "GODEBUG", "GOGC", "SLURM_"} {
			if strings.HasPrefix(k, prefix) {
				env[k] = v
				break
			}
		}
	}
	return env
}

// platformInfo is uname and /proc/cpuinfo's model and core counts.
func platformInfo() report.PlatformInfo {
	var p report.PlatformInfo
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		str := func(b []byte) string { return string(bytes.TrimRight(b, "\x00")) }
		p.Sysname, p.Nodename, p.Release, p.Version, p.Machine = str(u.Sysname[:]), str(u.Nodename[:]), str(u.Release[:]), str(u.Version[:]), str(u.Machine[:])
		p.Uname = strings.Join([]string{p.Sysname, p.Nodename, p.Release, p.Version, p.Machine}, " ")
	}
	p.LogicalCPUs = runtime.NumCPU()
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return p
	}
	defer f.Close()
	cores, sockets := map[string]bool{}, map[string]bool{}
	var phys string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "model name":
			p.CPUModel = v
		case "physical id":
			phys = v
			sockets[v] = true
		case "core id":
			cores[phys+"/"+v] = true
		}
	}
	p.Sockets, p.PhysicalCores = len(sockets), len(cores)
	p.Topology = fmt.Sprintf("%d socket(s), %d core(s), %d logical CPU(s)", p.Sockets, p.PhysicalCores, p.LogicalCPUs)
	return p
}

// writePhasegapRun writes the run directory: results.csv, manifest.json
// and trace.json, staged beside it and renamed into place, so that a
// failure leaves no half-written directory; then --csv's index, if any.
func writePhasegapRun(o *phasegapOpts, cfg report.Config, g *phasegap.Gathered, checksum uint64) (report.Row, error) {
	row := report.Aggregate(cfg, g.Summaries, checksum)
	dir := filepath.Clean(o.outDir)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return row, fmt.Errorf("run directory: %w", err)
	}
	stage, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return row, fmt.Errorf("run directory: %w", err)
	}
	defer os.RemoveAll(stage)
	write := func(name string, f func(io.Writer) error) error {
		var b bytes.Buffer
		if err := f(&b); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return os.WriteFile(filepath.Join(stage, name), b.Bytes(), 0o644)
	}
	index := o.csv != "" && filepath.Clean(o.csv) != filepath.Join(dir, "results.csv")
	if err := write("results.csv", func(w io.Writer) error { return report.WriteCSV(w, []report.Row{row}, true) }); err != nil {
		return row, err
	}
	if o.manifest {
		m := report.Manifest{Config: cfg, Build: buildInfo(), Env: runEnv(), Platform: platformInfo(), Checksum: checksum, Row: row}
		if err := write("manifest.json", func(w io.Writer) error { return report.WriteManifest(w, m) }); err != nil {
			return row, err
		}
	}
	if o.trace {
		if err := write("trace.json", func(w io.Writer) error {
			return report.WriteTrace(w, cfg, g.Ranks, o.traceIters, o.traceDetail)
		}); err != nil {
			return row, err
		}
	}
	if o.trace {
		for _, r := range g.Ranks {
			space := report.RankXSpace(cfg, r)
			if err := write(fmt.Sprintf("rank%d.xplane.pb", r.Rank), func(w io.Writer) error {
				b, err := proto.Marshal(space)
				if err != nil {
					return err
				}
				_, err = w.Write(b)
				return err
			}); err != nil {
				return row, err
			}
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return row, fmt.Errorf("replace %s: %w", dir, err)
	}
	if err := os.Rename(stage, dir); err != nil {
		return row, fmt.Errorf("run directory: %w", err)
	}
	if index {
		if o.csvMode == "append" {
			return row, report.AppendCSV(o.csv, row)
		}
		var b bytes.Buffer
		if err := report.WriteCSV(&b, []report.Row{row}, true); err != nil {
			return row, err
		}
		tmp := o.csv + ".tmp"
		if err := os.WriteFile(tmp, b.Bytes(), 0o644); err != nil {
			return row, err
		}
		return row, os.Rename(tmp, o.csv)
	}
	return row, nil
}

// printPhasegap writes the run's headline figures.
func printPhasegap(w io.Writer, cfg report.Config, row report.Row, dir string) {
	fmt.Fprintf(w, "phasegap %s  P %d  T %d  N %d  H %d  kernel %s  B %d  MPI thread %s (asked %s)\n",
		cfg.Mode, cfg.Ranks, cfg.Threads, cfg.N, cfg.Halo, cfg.Kernel, cfg.B, cfg.MPIThreadProvided, cfg.MPIThreadRequested)
	fmt.Fprintf(w, "µs per iteration (mean over ranks, max rank): iter %.2f  post %.2f/%.2f  interior %.2f/%.2f  wait %.2f/%.2f  boundary %.2f/%.2f  comm window %.2f/%.2f\n",
		row.TIterMean, row.TPost.Avg, row.TPost.Max, row.TInterior.Avg, row.TInterior.Max, row.TWait.Avg, row.TWait.Max,
		row.TBoundary.Avg, row.TBoundary.Max, row.TCommWindow.Avg, row.TCommWindow.Max)
	fmt.Fprintf(w, "overlap_ratio %.3f  wait_frac %.3f  wait_skew %.2f  tests/iter %.1f  checksum %s\n",
		row.OverlapRatio, row.WaitFrac, row.WaitSkew, row.MPITestCallsMean, report.FormatChecksum(row.Checksum64))
	fmt.Fprintf(w, "run directory: %s (%s)\n", dir, strings.Join(slices.DeleteFunc([]string{"results.csv",
		map[bool]string{true: "manifest.json"}[cfg.Manifest], map[bool]string{true: "trace.json, rank<N>.xplane.pb"}[cfg.Trace]}, func(s string) bool { return s == "" }), ", "))
}
