package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"

	"github.com/chronosync/chronosync/sim/eventlog"
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

// Artifact is one file of a run directory.
type Artifact struct {
	Name string `json:"name"`
	What string `json:"what"`
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

// Version returns the chronosync version of this build: the module version
// if it was built from a tagged module, else the VCS revision, else "devel".
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return "devel-" + rev
}

func goVersion() string { return runtime.Version() }

// stagingDir creates an empty directory beside out in which a run is
// written; commit renames it to out, so a failed run never leaves a half
// written run directory where a complete one was expected.
func stagingDir(out string) (string, error) {
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

// checkReplaceable fails unless out is absent, an empty directory, or an
// earlier run directory (one with a manifest.json), so that --out never
// deletes anything else.
func checkReplaceable(out string) error {
	entries, err := os.ReadDir(out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("run directory %s: %w", out, err)
	case len(entries) == 0:
		return nil
	}
	for _, marker := range []string{FileManifest, FileFailure} {
		if _, err := os.Stat(filepath.Join(out, marker)); err == nil {
			return nil
		}
	}
	return fmt.Errorf("run directory %s exists and is not a chronosync run directory (no %s); refusing to replace it", out, FileManifest)
}

// commit replaces out with the staged directory.
func commit(staged, out string) error {
	if err := checkReplaceable(out); err != nil {
		return err
	}
	if err := os.RemoveAll(out); err != nil {
		return fmt.Errorf("replace %s: %w", out, err)
	}
	if err := os.Rename(staged, out); err != nil {
		return fmt.Errorf("move run directory into place at %s: %w", out, err)
	}
	return nil
}

// writeJSON writes v, indented, to dir/name.
func writeJSON(dir, name string, v any) error {
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
	b, err := os.ReadFile(path)
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

// EventLegend is the event log's legend: what each field of a line of
// events.log.gz means (docs/event-log.md).
func EventLegend() string { return eventlog.Legend() }
