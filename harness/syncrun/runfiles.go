package syncrun

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/harness/engine"
	"github.com/chronosync/chronosync/probe/probelog"
)

// A run until stopped (duration 0: chronosync node, run --backend=real)
// writes into its run directory in place from the start, not into a
// staging directory renamed at the end (Run), and a restart on the same
// directory continues it:
//
//   - offsets.jsonl and rounds.jsonl are appended a round at a time, each
//     Append one write(2) then fsync(2) (offsets.Writer): two fsyncs a
//     round, cheap at one round a second. A kill -9 loses at most the
//     round in progress.
//   - A restart repairs the pair (offsets.Repair: a torn tail, the lines of
//     the round in progress), logs what it cut, and appends after the
//     last whole round; the master numbers its rounds after it
//     (rounds.Config.LastRound). The meta lines, and so the run_id, stay:
//     a continued run is the same run. Each start is an incarnation,
//     one line of incarnations.jsonl.
//   - When offsets.jsonl reaches Options.RotateBytes (default
//     offsets.DefaultRotateBytes) after a round, the pair is rotated
//     (offsets.Rotate: offsets.N.jsonl and rounds.N.jsonl) and a fresh
//     pair started with the same meta lines.
//   - probes.bin is rotated at the same cap, on its own (every rank writes
//     one, the master's rounds drive offsets.jsonl): probes.N.bin, N the
//     next free. A restart moves the previous incarnation's probes.bin
//     and truth.jsonl aside the same way (probes.N.bin, truth.N.jsonl).

// FileIncarnations lists the starts of a run until stopped, one JSON
// object a line (Incarnation).
const FileIncarnations = "incarnations.jsonl"

// Incarnation is one start of a run until stopped on its run directory.
type Incarnation struct {
	Incarnation int    `json:"incarnation"` // 1 for the first start
	PID         int    `json:"pid"`
	Started     string `json:"started"` // RFC 3339, UTC
	Version     string `json:"chronosync_version"`
	// LastRound is the last whole round the run files held at the start
	// (the master's rounds continue after it).
	LastRound uint64 `json:"last_round"`
	// Repair says what the start cut from the run files: a torn tail and
	// the round in progress that a kill interrupted.
	Repair string `json:"repair,omitempty"`
	// OffsetsCut and RoundsCut are the bytes cut.
	OffsetsCut int64 `json:"offsets_cut_bytes,omitempty"`
	RoundsCut  int64 `json:"rounds_cut_bytes,omitempty"`
}

// runFiles are a sync run's offsets.jsonl and rounds.jsonl writers, with
// their rotation when the run goes on until stopped.
type runFiles struct {
	dir        string
	offMeta    offsets.Meta
	rndMeta    offsets.Meta
	offs, rnds *offsets.Writer
	rotate     int64 // rotate at this size of offsets.jsonl; 0 never
	rotations  int
	log        io.Writer
}

// openRunFiles opens dir's offsets.jsonl and rounds.jsonl with the meta
// lines offMeta and rndMeta. Without inPlace it creates them (a staged
// run). With inPlace it repairs what a previous incarnation left
// (offsets.Repair, logged to log) and appends to it, or creates them where
// absent, and records the incarnation; rotate (bytes, 0 for
// offsets.DefaultRotateBytes) is when the pair is rotated.
func openRunFiles(dir string, offMeta, rndMeta offsets.Meta, inPlace bool, rotate int64, log io.Writer) (*runFiles, offsets.Repaired, error) {
	rf := &runFiles{dir: dir, offMeta: offMeta, rndMeta: rndMeta, log: log}
	var rep offsets.Repaired
	if !inPlace {
		return rf, rep, rf.create()
	}
	if rotate <= 0 {
		rotate = offsets.DefaultRotateBytes
	}
	rf.rotate = rotate
	rep, err := offsets.Repair(dir)
	if err != nil {
		return nil, rep, fmt.Errorf("continue the run files in %s: %w", dir, err)
	}
	offPath, rndPath := filepath.Join(dir, FileOffsets), filepath.Join(dir, FileRounds)
	_, offErr := os.Lstat(offPath)
	_, rndErr := os.Lstat(rndPath)
	switch {
	case errors.Is(offErr, fs.ErrNotExist) && errors.Is(rndErr, fs.ErrNotExist):
		if err := rf.create(); err != nil {
			return nil, rep, err
		}
		if rep.LastRound == 0 {
			fmt.Fprintf(log, "run files: starting %s and %s in %s\n", FileOffsets, FileRounds, dir)
			return rf, rep, nil
		}
	case offErr == nil && rndErr == nil:
		if rep.Meta.RunID != offMeta.RunID || rep.Meta.Mode != offMeta.Mode || rep.Meta.Reference != offMeta.Reference {
			return nil, rep, fmt.Errorf("continue the run files in %s: %s is of run_id %q mode %q reference_node %d, and this run is %q mode %q reference_node %d: give this run another --out",
				dir, offPath, rep.Meta.RunID, rep.Meta.Mode, rep.Meta.Reference, offMeta.RunID, offMeta.Mode, offMeta.Reference)
		}
		if rf.offs, err = offsets.OpenAppend(offPath); err != nil {
			return nil, rep, fmt.Errorf("continue %s: %w", offPath, err)
		}
		if rf.rnds, err = offsets.OpenAppend(rndPath); err != nil {
			rf.offs.Close()
			return nil, rep, fmt.Errorf("continue %s: %w", rndPath, err)
		}
	default:
		return nil, rep, fmt.Errorf("continue the run files in %s: one of %s and %s is missing (after Repair); refusing to guess which rounds the other holds", dir, FileOffsets, FileRounds)
	}
	fmt.Fprintf(log, "run files: continuing %s in place: %s\n", dir, rep)
	return rf, rep, nil
}

// create creates a fresh pair.
func (rf *runFiles) create() error {
	var err error
	if rf.offs, err = offsets.Create(filepath.Join(rf.dir, FileOffsets), rf.offMeta); err != nil {
		return err
	}
	if rf.rnds, err = offsets.Create(filepath.Join(rf.dir, FileRounds), rf.rndMeta); err != nil {
		rf.offs.Close()
		return err
	}
	return nil
}

// afterRound rotates the pair once offsets.jsonl has reached the cap.
func (rf *runFiles) afterRound() error {
	if rf.rotate <= 0 || rf.offs.Size() < rf.rotate {
		return nil
	}
	if err := errors.Join(rf.offs.Close(), rf.rnds.Close()); err != nil {
		return fmt.Errorf("rotate the run files: %w", err)
	}
	n, err := offsets.Rotate(rf.dir)
	if err != nil {
		return err
	}
	rf.rotations++
	fmt.Fprintf(rf.log, "run files: %s reached %d bytes: rotated to %s and %s\n", FileOffsets, rf.rotate,
		offsets.SegmentName(FileOffsets, n), offsets.SegmentName(FileRounds, n))
	return rf.create()
}

// close closes both writers.
func (rf *runFiles) close() error {
	return errors.Join(rf.offs.Close(), rf.rnds.Close())
}

// moveAside renames dir/name (probes.bin, truth.jsonl) to the next free
// segment name, probes.N.bin or truth.N.jsonl (N from 1), and returns it.
func moveAside(dir, name string) (string, error) {
	ext := filepath.Ext(name)
	base := name[:len(name)-len(ext)]
	for n := 1; ; n++ {
		to := filepath.Join(dir, fmt.Sprintf("%s.%d%s", base, n, ext))
		if _, err := os.Lstat(to); err == nil {
			continue
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if err := os.Rename(filepath.Join(dir, name), to); err != nil {
			return "", err
		}
		return to, nil
	}
}

// rotateProbes moves probes.bin aside (moveAside) once it has reached the
// rotation cap and starts a fresh one with the same meta: a node running
// until stopped records every answered probe, some kB a second per edge.
// Only a run until stopped rotates.
func (p *syncProtocol) rotateProbes() error {
	if !p.inPlace || p.probeFile == nil || p.files == nil || p.files.rotate <= 0 {
		return nil
	}
	st, err := p.probeFile.Stat()
	if err != nil {
		return fmt.Errorf("rotate %s: %w", FileProbes, err)
	}
	if st.Size() < p.files.rotate {
		return nil
	}
	if err := p.probeFile.Close(); err != nil {
		return fmt.Errorf("rotate %s: %w", FileProbes, err)
	}
	// The summary reads probes.bin, the segment open at the stop; it adds
	// what the rotated ones held.
	addProbes(&p.rotatedProbes, p.segmentProbes)
	p.segmentProbes = ProbeSummary{}
	to, err := moveAside(p.dir, FileProbes)
	if err != nil {
		return fmt.Errorf("rotate %s: %w", FileProbes, err)
	}
	if p.probeFile, err = os.Create(filepath.Join(p.dir, FileProbes)); err != nil {
		return err
	}
	if p.probes, err = probelog.NewWriter(p.probeFile, p.probeMeta); err != nil {
		return err
	}
	fmt.Fprintf(p.files.log, "run files: %s reached %d bytes: rotated to %s\n", FileProbes, st.Size(), filepath.Base(to))
	return nil
}

// countProbes adds the probe counts of blocks to *s, as the summary counts
// those of probes.bin.
func countProbes(s *ProbeSummary, blocks []probelog.Block) {
	for _, b := range blocks {
		s.Blocks++
		s.PairsSent += b.SentPairs
		s.Answered += len(b.Probes)
		s.Lost += b.Lost
		kernel, user, _ := b.T3Sources()
		s.T3Kernel += kernel
		s.T3User += user
	}
}

// addProbes adds the block counts of b to *s.
func addProbes(s *ProbeSummary, b ProbeSummary) {
	s.Blocks += b.Blocks
	s.PairsSent += b.PairsSent
	s.Answered += b.Answered
	s.Lost += b.Lost
	s.T3Kernel += b.T3Kernel
	s.T3User += b.T3User
}

// startIncarnation records this start of a run until stopped in dir's
// incarnations.jsonl (fsynced) and returns its number. The files of the
// previous incarnation that a start would replace (probes.bin,
// truth.jsonl) are moved aside first (moveAside).
func startIncarnation(dir string, rep offsets.Repaired) (int, error) {
	path := filepath.Join(dir, FileIncarnations)
	n := 1
	if b, err := engine.ReadHead(path); err == nil {
		for _, c := range b {
			if c == '\n' {
				n++
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	if n > 1 {
		for _, name := range []string{FileProbes, FileTruth} {
			if _, err := os.Lstat(filepath.Join(dir, name)); err != nil {
				continue
			}
			if _, err := moveAside(dir, name); err != nil {
				return 0, fmt.Errorf("keep incarnation %d's %s: %w", n-1, name, err)
			}
		}
	}
	inc := Incarnation{Incarnation: n, PID: os.Getpid(), Started: time.Now().UTC().Format(time.RFC3339Nano), Version: engine.Version(),
		LastRound: rep.LastRound, OffsetsCut: rep.OffsetsCut, RoundsCut: rep.RoundsCut}
	if rep.Cut() || rep.Rotation > 0 {
		inc.Repair = rep.String()
	}
	b, err := json.Marshal(inc)
	if err != nil {
		return 0, fmt.Errorf("encode incarnation: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return 0, fmt.Errorf("record incarnation %d: %w", n, err)
	}
	_, werr := f.Write(append(b, '\n'))
	if werr == nil {
		werr = f.Sync()
	}
	if err := errors.Join(werr, f.Close()); err != nil {
		return 0, fmt.Errorf("record incarnation %d in %s: %w", n, path, err)
	}
	return n, nil
}
