package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/chronosync/chronosync/infile"
)

// ManifestSchema is the version of manifest.json's layout.
const ManifestSchema = 1

// Manifest describes a run: what ran, with which seed and build, and the
// event-log hash that a replay must reproduce. It holds nothing that varies
// between two runs of the same scenario, seed and build (no wall-clock
// time), so that equal runs give equal bytes.
type Manifest struct {
	Schema       int    `json:"schema_version"`
	Chronosync   string `json:"chronosync_version"`
	Go           string `json:"go_version"`
	Backend      string `json:"backend"`
	Scenario     string `json:"scenario"`
	ScenarioFile string `json:"scenario_file"`
	Seed         uint64 `json:"seed"`
	Events       uint64 `json:"events"`
	EventHash    string `json:"event_hash"`
	// ScenarioAsRun is the scenario exactly as run, seed included: the
	// same text as scenario.yaml, kept here so that the record is whole.
	ScenarioAsRun string     `json:"scenario_as_run"`
	Files         []Artifact `json:"files"`
}

// The files of a run directory.
const (
	FileManifest    = "manifest.json"
	FileSummary     = "summary.json"
	FileScenario    = "scenario.yaml"
	FileLog         = "run.log"
	FileEvents      = "events.log.gz"
	FileCheckpoints = "events.ckpt"
)

// StagingDir creates an empty directory beside out in which a run is
// written; Commit renames it to out, so a failed run never leaves a half
// written run directory where a complete one was expected.
func StagingDir(out string) (string, error) {
	parent := filepath.Dir(out)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", parent, err)
	}
	dir, err := os.MkdirTemp(parent, "."+filepath.Base(out)+".tmp-")
	if err != nil {
		return "", fmt.Errorf("create staging directory for %s: %w", out, err)
	}
	return dir, nil
}

// CheckReplaceable fails unless out is absent, an empty directory, or an
// earlier run directory (one with a manifest.json), so that --out never
// deletes anything else.
func CheckReplaceable(out string) error {
	return checkRunDir(out, func(has func(string) bool) bool { return has(FileManifest) || has(FileFailure) },
		fmt.Sprintf("no %s); refusing to replace it", FileManifest))
}

// CheckContinuable fails unless out is absent, an empty directory, or a
// run directory (a manifest, a failure, or the scenario and log a run
// writes first: a node killed before its end has no manifest), so that a
// run until stopped never writes into anything else.
func CheckContinuable(out string) error {
	return checkRunDir(out, func(has func(string) bool) bool {
		return has(FileManifest) || has(FileFailure) || has(FileScenario) && has(FileLog)
	}, fmt.Sprintf("no %s, nor %s and %s); refusing to write into it", FileManifest, FileScenario, FileLog))
}

// checkRunDir returns nil when out is absent, an empty directory, or a
// directory isRun takes for a run directory (asking it which files out
// holds); else an error whose end, why, says what is missing and what is
// refused.
func checkRunDir(out string, isRun func(has func(name string) bool) bool, why string) error {
	entries, err := os.ReadDir(out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("run directory %s: %w", out, err)
	case len(entries) == 0:
		return nil
	}
	has := func(name string) bool { _, err := os.Stat(filepath.Join(out, name)); return err == nil }
	if isRun(has) {
		return nil
	}
	return fmt.Errorf("run directory %s exists and is not a chronosync run directory (%s", out, why)
}

// Commit replaces out with the staged directory, unless out is not a
// run directory or another cluster rank's (CheckOwner; rank is this run's,
// nil outside a cluster). The old directory is renamed aside first and
// removed only once the new one is in place, and renamed back if that
// fails: a crash in between leaves it beside out as
// .<name>.tmp-*.old.
func Commit(staged, out string, rank *int) error {
	if err := CheckReplaceable(out); err != nil {
		return err
	}
	if err := CheckOwner(out, rank); err != nil {
		return err
	}
	old := ""
	if _, err := os.Lstat(out); err == nil {
		old = staged + ".old"
		if err := os.Rename(out, old); err != nil {
			return fmt.Errorf("replace %s: move the old run directory aside: %w", out, err)
		}
	}
	if err := os.Rename(staged, out); err != nil {
		if old != "" {
			if rerr := os.Rename(old, out); rerr != nil {
				return fmt.Errorf("move run directory into place at %s: %w; the old one is at %s (putting it back: %v)", out, err, old, rerr)
			}
		}
		return fmt.Errorf("move run directory into place at %s: %w", out, err)
	}
	if old != "" {
		if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("remove the old run directory %s (replaced by the new %s): %w", old, out, err)
		}
	}
	return nil
}

// maxOwnerRead bounds what CheckOwner reads of an existing run
// directory's summary.json and run.log.
const maxOwnerRead = 16 << 20

// CheckOwner fails when out holds the run of another cluster rank than
// rank (nil: this run is no cluster node): its summary.json's rank, or for
// a failed run without one, its run.log's "cluster node N of M" line. A
// rank's results are never replaced by another rank's (or a single-host
// run's).
func CheckOwner(out string, rank *int) error {
	theirs, ok, err := runRank(out)
	if err != nil || !ok {
		return err
	}
	switch {
	case rank == nil:
		return fmt.Errorf("run directory %s holds cluster rank %d's run; refusing to replace it with a single-host run: give another --out", out, theirs)
	case *rank != theirs:
		return fmt.Errorf("run directory %s holds cluster rank %d's run, and this is rank %d: refusing to replace it (each rank writes its own directory: give each its own --out)", out, theirs, *rank)
	}
	return nil
}

// runRank returns the cluster rank whose run directory out is, if it is
// one (see CheckOwner).
func runRank(out string) (rank int, ok bool, err error) {
	b, err := ReadHead(filepath.Join(out, FileSummary))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return 0, false, fmt.Errorf("run directory %s: %w", out, err)
	default:
		var s struct {
			Real *struct {
				Rank *int `json:"rank"`
			} `json:"real"`
		}
		if err := json.Unmarshal(b, &s); err == nil {
			if s.Real == nil || s.Real.Rank == nil {
				return 0, false, nil
			}
			return *s.Real.Rank, true, nil
		}
		// A summary cut by maxOwnerRead or damaged: the log says.
	}
	b, err = ReadHead(filepath.Join(out, FileLog))
	if err != nil {
		return 0, false, nil // no summary and no log: no rank's
	}
	for line := range strings.Lines(string(b)) {
		var n, of int
		if _, err := fmt.Sscanf(line, "cluster node %d of %d", &n, &of); err == nil {
			return n, true, nil
		}
	}
	return 0, false, nil
}

// ReadHead reads at most maxOwnerRead bytes of a regular file.
func ReadHead(path string) ([]byte, error) {
	// infile.Open: regular files only, opened without blocking (a FIFO
	// put in the directory's place must not hang the run).
	f, err := infile.Open(path, infile.EventLog)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxOwnerRead))
}

// WriteJSON writes v, indented, to dir/name.
func WriteJSON(dir, name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	b = append(b, '\n')
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// ReadManifest reads dir/manifest.json.
func ReadManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, FileManifest)
	b, err := infile.ReadFile(path, infile.Manifest)
	if err != nil {
		return nil, fmt.Errorf("read run manifest: %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if m.Schema != ManifestSchema {
		return nil, fmt.Errorf("%s: schema_version %d, this build reads %d", path, m.Schema, ManifestSchema)
	}
	return &m, nil
}
