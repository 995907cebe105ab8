package output

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"

	"google.golang.org/protobuf/proto"

	"github.com/chronosync/chronosync/phasegap/params"
	"github.com/chronosync/chronosync/phasegap/report"
)

// The files of a run, in its directory.
const (
	FileResults  = "results.csv"
	FileManifest = "manifest.json"
	FileTrace    = "trace.json"
)

// FileXPlane is rank r's XSpace file.
func FileXPlane(rank int) string { return fmt.Sprintf("rank%d.xplane.pb", rank) }

// Launch is what a run's transport adds to its parameters in its
// report.Config: the MPI threading it asked for and got, binding, the
// outputs asked for, where the run ran.
type Launch struct {
	Transport                             string // sim, real, or the MPI run's --transport
	MPIThreadRequested, MPIThreadProvided string
	OMPBind                               bool
	OMPPlaces                             string
	Trace                                 bool
	TraceIters                            int
	TraceDetail                           string
	OutDir, RunID, CSV, CSVMode           string
	Manifest                              bool
	Hostname, GitSHA, Timestamp           string
	MPIImpl, MPIVersion                   string
	Impairment                            string // the links' preset; "none" on one machine's MPI
	// Checksum says the run computes the checksum (the MPI benchmark):
	// only then are check, check_every and poison_ghost recorded; a model
	// run records them zero.
	Checksum bool
}

// Config is the run's configuration as every transport records it:
// parameters p (with the normalized radius of d), derived d, and the
// transport's l.
func Config(p params.Params, d params.Derived, l Launch) report.Config {
	p.Radius = d.Radius
	if !l.Checksum {
		p.Check, p.CheckEvery, p.PoisonGhost = false, 0, false
	}
	return report.Config{
		Params: p, B: d.B,
		MPIThreadRequested: l.MPIThreadRequested, MPIThreadProvided: l.MPIThreadProvided,
		OMPBind: l.OMPBind, OMPPlaces: l.OMPPlaces, OMPNumThreads: p.Threads,
		Trace: l.Trace, TraceIters: l.TraceIters, TraceDetail: l.TraceDetail, Transport: l.Transport,
		OutDir: l.OutDir, RunID: l.RunID, CSV: l.CSV, CSVMode: l.CSVMode, Manifest: l.Manifest,
		Platform: runtime.GOOS + "/" + runtime.GOARCH, Hostname: l.Hostname, GitSHA: l.GitSHA,
		Timestamp: l.Timestamp, MPIImpl: l.MPIImpl, MPIVersion: l.MPIVersion,
		Impairment: l.Impairment, ElemSize: 8,
	}
}

// Run is what a finished run writes.
type Run struct {
	Config report.Config
	Row    report.Row    // report.Aggregate of the ranks' summaries
	Ranks  []report.Rank // every rank's iterations, for trace.json and the XPlanes
	// The manifest's parts beyond Config and Row.
	Build    report.BuildInfo
	Env      map[string]string
	Platform report.PlatformInfo
	Checksum uint64
	// XPlanes writes rank<i>.xplane.pb beside trace.json (every
	// transport sets it).
	XPlanes bool
}

// Write writes r's files into dir, which exists: results.csv; with
// Config.Manifest, manifest.json; with Config.Trace, trace.json (the last
// Config.TraceIters iterations) and, with XPlanes, rank<i>.xplane.pb.
// Each file is built in memory first; the caller stages dir when the
// files must appear together.
func Write(dir string, r Run) error {
	write := func(name string, f func(io.Writer) error) error {
		var b bytes.Buffer
		if err := f(&b); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		return nil
	}
	c := r.Config
	if err := write(FileResults, func(w io.Writer) error { return report.WriteCSV(w, []report.Row{r.Row}, true) }); err != nil {
		return err
	}
	if c.Manifest {
		m := report.Manifest{Config: c, Build: r.Build, Env: r.Env, Platform: r.Platform, Checksum: r.Checksum, Row: r.Row}
		if err := write(FileManifest, func(w io.Writer) error { return report.WriteManifest(w, m) }); err != nil {
			return err
		}
	}
	if !c.Trace {
		return nil
	}
	if err := write(FileTrace, func(w io.Writer) error {
		return report.WriteTrace(w, c, r.Ranks, c.TraceIters, c.TraceDetail)
	}); err != nil {
		return err
	}
	if !r.XPlanes {
		return nil
	}
	for _, rk := range r.Ranks {
		if err := write(FileXPlane(rk.Rank), func(w io.Writer) error {
			// Deterministic: the same run writes the same bytes (map fields).
			b, err := proto.MarshalOptions{Deterministic: true}.Marshal(report.RankXSpace(c, rk))
			if err != nil {
				return err
			}
			_, err = w.Write(b)
			return err
		}); err != nil {
			return err
		}
	}
	return nil
}
