package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/harness/simbackend"
)

// TestRunTooLarge: a simulated run whose world would not fit the memory
// available is refused with both figures before anything is written (a
// run that ran out of memory left an empty staging directory behind);
// one that fits runs.
func TestRunTooLarge(t *testing.T) {
	sc := parse(t, small)
	parent := t.TempDir()
	need := simbackend.Memory(sc)
	_, err := Run(sc, Options{Out: filepath.Join(parent, "run"), memAvailable: func() (int64, error) { return need - 1, nil }})
	if err == nil || !strings.Contains(err.Error(), "too large for this machine") || !strings.Contains(err.Error(), "(MemAvailable)") {
		t.Fatalf("err = %v, want a refusal naming the memory needed and available", err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("the refused run left %v behind", entries)
	}
	if _, err := Run(sc, Options{Out: filepath.Join(parent, "run"), memAvailable: func() (int64, error) { return need, nil }}); err != nil {
		t.Errorf("a run that fits: %v", err)
	}
}
