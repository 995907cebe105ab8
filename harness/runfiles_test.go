package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/scenario"
)

// TestRunUntilStoppedRefusals: a scenario of duration 0 runs until stopped
// on the real backend's sync protocol only, and only into a directory that
// is absent, empty or a run directory; each refusal says why and writes
// nothing.
func TestRunUntilStoppedRefusals(t *testing.T) {
	parse := func(protocol string) *scenario.Scenario {
		sc, err := scenario.ParseDataUntilStopped("t.yaml", []byte("name: t\nduration: 0s\nnodes: 2\nprotocol: "+protocol+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	for _, tc := range []struct {
		name     string
		sc       *scenario.Scenario
		backend  string
		stray    bool // out holds a file that is no run's
		wantErrs []string
	}{
		{"simulator", parse("{kind: sync, mode: rounds, estimator: svm, cadence: 2ms, window: 1s}"), "sim", false,
			[]string{"duration 0 (until stopped) runs on the real backend only", "the simulator needs a duration > 0"}},
		{"ping", parse("{kind: ping}"), "real", false, []string{"runs the sync protocol only"}},
		{"not a run directory", parse("{kind: sync, mode: rounds, estimator: svm, cadence: 2ms, window: 1s}"), "real", true,
			[]string{"is not a chronosync run directory", "refusing to write into it"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			if tc.stray {
				if err := os.MkdirAll(out, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(out, "notes.txt"), []byte("mine"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Run(tc.sc, Options{Out: out, Backend: tc.backend})
			for _, want := range tc.wantErrs {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("Run: %v; want an error with %q", err, want)
				}
			}
			entries, _ := os.ReadDir(out)
			if want := map[bool]int{false: 0, true: 1}[tc.stray]; len(entries) != want {
				t.Errorf("out holds %d entries after the refusal, want %d", len(entries), want)
			}
		})
	}
	// Load (not LoadUntilStopped) still refuses duration 0.
	if _, err := scenario.Parse("t.yaml", []byte("name: t\nduration: 0s\nnodes: 2\n")); err == nil {
		t.Error("scenario.Parse took duration 0")
	}
}
