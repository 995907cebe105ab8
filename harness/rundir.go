package harness

import (
	"runtime"

	"github.com/chronosync/chronosync/harness/engine"
	"github.com/chronosync/chronosync/sim/eventlog"
)

// ManifestSchema is the version of manifest.json's layout
// (engine.ManifestSchema).
const ManifestSchema = engine.ManifestSchema

// Manifest describes a run (engine.Manifest): what ran, with which seed
// and build, and the event-log hash that a replay must reproduce.
type Manifest = engine.Manifest

// Artifact is one file of a run directory (engine.Artifact: adapters list
// theirs).
type Artifact = engine.Artifact

// The files of a run directory (engine.File*).
const (
	FileManifest    = engine.FileManifest
	FileSummary     = engine.FileSummary
	FileScenario    = engine.FileScenario
	FileLog         = engine.FileLog
	FileEvents      = engine.FileEvents
	FileCheckpoints = engine.FileCheckpoints
)

// Version returns the chronosync version of this build (engine.Version):
// the module version if it was built from a tagged module, else the VCS
// revision, else "devel".
func Version() string { return engine.Version() }

func goVersion() string { return runtime.Version() }

// ReadManifest reads dir/manifest.json (engine.ReadManifest).
func ReadManifest(dir string) (*Manifest, error) { return engine.ReadManifest(dir) }

// EventLegend is the event log's legend: what each field of a line of
// events.log.gz means (docs/event-log.md).
func EventLegend() string { return eventlog.Legend() }

// The run directory's lifecycle is engine's: staging, the checks before a
// directory is replaced, the commit.
func stagingDir(out string) (string, error)      { return engine.StagingDir(out) }
func checkReplaceable(out string) error          { return engine.CheckReplaceable(out) }
func commit(staged, out string, rank *int) error { return engine.Commit(staged, out, rank) }
func checkOwner(out string, rank *int) error     { return engine.CheckOwner(out, rank) }
func writeJSON(dir, name string, v any) error    { return engine.WriteJSON(dir, name, v) }
