package harness

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/chronosync/chronosync/infile"
	"github.com/chronosync/chronosync/scenario"
	"github.com/chronosync/chronosync/sim/eventlog"
)

// ErrDiverged is returned (wrapped, with the first differing event) when a
// replay does not reproduce the recorded event log.
var ErrDiverged = errors.New("replay diverged from the recorded run")

// ReplayResult is the outcome of a replay that matched.
type ReplayResult struct {
	Manifest Manifest
	Events   uint64
	Hash     string
}

// ReplayOptions are what a replay shows and writes beside its verdict.
type ReplayOptions struct {
	// Progress gets a bar (a terminal), ProgressLines a line at each
	// tenth of the run's virtual time (Options.ProgressLines); either may
	// be nil.
	Progress, ProgressLines io.Writer
	// TraceEvents, if not "", receives the replay's whole event log, one
	// line per event (run's --trace-events): the log on demand, for a run
	// that kept only its checkpoints.
	TraceEvents string
}

// Replay re-runs the run recorded in dir from its scenario and seed, and
// checks that the event log is the same. When it is not, the error names
// the first differing event: exactly, with both lines, if the run kept
// events.log.gz (run with Options.EventLog), else the block of events in
// which the logs diverge, with the replay's events of that block when
// opts.TraceEvents is set.
func Replay(dir string, opts ReplayOptions) (*ReplayResult, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	if m.Backend != "sim" {
		return nil, fmt.Errorf("replay %s: backend %q runs cannot be replayed, only sim runs (real clocks and sockets do not repeat); run its scenario again with chronosync run %s --backend=sim to get a replayable run", dir, m.Backend, filepath.Join(dir, FileScenario))
	}
	sc, err := scenario.Load(filepath.Join(dir, FileScenario))
	if err != nil {
		return nil, fmt.Errorf("replay %s: %w", dir, err)
	}
	sc.Seed = m.Seed
	ckpt, err := readCheckpoints(filepath.Join(dir, FileCheckpoints))
	if err != nil {
		return nil, fmt.Errorf("replay %s: %w", dir, err)
	}
	recordedLog := filepath.Join(dir, FileEvents)
	_, statErr := os.Stat(recordedLog)
	haveLog := statErr == nil

	tmp, err := os.MkdirTemp("", "chronosync-replay-")
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	defer os.RemoveAll(tmp)
	res, err := runIn(sc, tmp, Options{EventLog: haveLog, TraceEvents: opts.TraceEvents, Progress: opts.Progress, ProgressLines: opts.ProgressLines, ScenarioFile: m.ScenarioFile})
	if err != nil {
		return nil, fmt.Errorf("replay %s: %w", dir, err)
	}
	got, err := readCheckpoints(filepath.Join(tmp, FileCheckpoints))
	if err != nil {
		return nil, fmt.Errorf("replay %s: %w", dir, err)
	}
	d := eventlog.Diverge(ckpt, got)
	if d.Upto == 0 {
		return &ReplayResult{Manifest: *m, Events: got.Count, Hash: res.Manifest.EventHash}, nil
	}
	version := ""
	if m.Chronosync != res.Manifest.Chronosync || m.Go != res.Manifest.Go {
		version = fmt.Sprintf(" (recorded with chronosync %s, %s; replayed with %s, %s)", m.Chronosync, m.Go, res.Manifest.Chronosync, res.Manifest.Go)
	}
	if edited, err := infile.ReadFile(filepath.Join(dir, FileScenario), infile.Scenario); err == nil && string(edited) != m.ScenarioAsRun {
		version += fmt.Sprintf(" (%s differs from the scenario recorded in %s)", FileScenario, FileManifest)
	}
	head := fmt.Sprintf("replay %s: %d events hash %016x recorded, %d events hash %016x replayed%s", dir, ckpt.Count, ckpt.Hash, got.Count, got.Hash, version)
	if !haveLog {
		hint := fmt.Sprintf("the run kept no %s to name it: record the run with --event-log to have it; replay --trace-events FILE writes the replayed events", FileEvents)
		if opts.TraceEvents != "" {
			hint = fmt.Sprintf("the run kept no %s to name it; the replayed events of that block are lines %d to %d of %s", FileEvents, d.After+1, d.Upto, opts.TraceEvents)
		}
		return nil, fmt.Errorf("%s: %w: the first differing event is one of #%d..#%d (%s)", head, ErrDiverged, d.After+1, d.Upto, hint)
	}
	seq, want, have, err := firstDifference(recordedLog, filepath.Join(tmp, FileEvents))
	if err != nil {
		return nil, fmt.Errorf("%s: %w; comparing event logs: %v", head, ErrDiverged, err)
	}
	return nil, fmt.Errorf("%s: %w at event #%d:\n  recorded: %s\n  replayed: %s", head, ErrDiverged, seq, want, have)
}

func readCheckpoints(path string) (eventlog.Summary, error) {
	f, err := infile.Open(path, infile.EventLog)
	if err != nil {
		return eventlog.Summary{}, err
	}
	defer f.Close()
	return eventlog.ReadSummary(path, f)
}

// firstDifference returns the first line that differs between two gzipped
// event logs; a missing line reads as "(end of log)".
func firstDifference(a, b string) (uint64, string, string, error) {
	ra, err := openLog(a)
	if err != nil {
		return 0, "", "", err
	}
	defer ra.Close()
	rb, err := openLog(b)
	if err != nil {
		return 0, "", "", err
	}
	defer rb.Close()
	sa, sb := bufio.NewScanner(ra), bufio.NewScanner(rb)
	for n := uint64(1); ; n++ {
		okA, okB := sa.Scan(), sb.Scan()
		if !okA && !okB {
			if err := errors.Join(sa.Err(), sb.Err()); err != nil {
				return 0, "", "", err
			}
			return 0, "", "", errors.New("the logs are equal line by line")
		}
		la, lb := "(end of log)", "(end of log)"
		if okA {
			la = sa.Text()
		}
		if okB {
			lb = sb.Text()
		}
		if la != lb {
			return n, la, lb, nil
		}
	}
}

type gzFile struct {
	*gzip.Reader
	f *infile.File
}

func (g gzFile) Close() error { return errors.Join(g.Reader.Close(), g.f.Close()) }

func openLog(path string) (io.ReadCloser, error) {
	f, err := infile.Open(path, infile.EventLog)
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return gzFile{zr, f}, nil
}
