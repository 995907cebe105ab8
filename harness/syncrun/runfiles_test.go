package syncrun

import (
	"os"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/analysis/offsets"
)

// TestOpenRunFilesOtherRun: a run until stopped does not continue the run
// files of another run (another run_id) in its --out.
func TestOpenRunFilesOtherRun(t *testing.T) {
	dir := t.TempDir()
	meta := func(id, file string) offsets.Meta {
		return offsetsMeta(offsets.Meta{RunID: id, Estimator: "svm", Mode: offsets.ModeRounds}, file)
	}
	rf, _, err := openRunFiles(dir, meta("a", "offsets"), meta("a", "rounds"), true, 0, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	if err := rf.close(); err != nil {
		t.Fatal(err)
	}
	_, _, err = openRunFiles(dir, meta("b", "offsets"), meta("b", "rounds"), true, 0, os.Stderr)
	if err == nil || !strings.Contains(err.Error(), `is of run_id "a"`) {
		t.Errorf("continuing run a's files as run b: %v", err)
	}
	rf, _, err = openRunFiles(dir, meta("a", "offsets"), meta("a", "rounds"), true, 0, os.Stderr)
	if err != nil {
		t.Fatalf("continuing run a's files as run a: %v", err)
	}
	rf.close()
}
