package harness

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/analysis/combine"
	"github.com/chronosync/chronosync/harness/syncrun"
)

// TestTracedTensorBoard: a traced run lays each combined XSpace out for
// tensorboard --logdir RUN_DIR/tensorboard, one profile run per path, the
// same bytes as the combined trace, and nothing else in a run's directory.
func TestTracedTensorBoard(t *testing.T) {
	yml := strings.Replace(traced3, "  snapshot_period: 1s\n", "  snapshot_period: 1s\n  kineto: true\n", 1)
	dir := filepath.Join(t.TempDir(), "run")
	runOnce(t, parse(t, yml), Options{Out: dir})
	logdir := filepath.Join(dir, syncrun.DirTensorBoard)
	for _, file := range []string{syncrun.FileCombined, syncrun.FileCombinedKineto} {
		tb := combine.TensorBoardPath(logdir, combine.OutputBase(file), combine.DefaultTensorBoardHost)
		if !bytes.Equal(read(t, tb), read(t, filepath.Join(dir, file))) {
			t.Errorf("%s differs from %s", tb, file)
		}
		ents, err := os.ReadDir(filepath.Dir(tb))
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) != 1 {
			t.Errorf("%s holds %d files, want the XSpace alone", filepath.Dir(tb), len(ents))
		}
	}
	runs, err := os.ReadDir(filepath.Join(logdir, "plugins", "profile"))
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 {
		t.Errorf("%d profile runs, want 2 (combined, combined-kineto)", len(runs))
	}
}
