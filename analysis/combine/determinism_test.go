package combine

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestOutputDeterministic: the outputs' bytes do not depend on GOMAXPROCS
// or on the number of line goroutines, for XSpace and Kineto inputs, with
// and without correction.
func TestOutputDeterministic(t *testing.T) {
	dir := t.TempDir()
	synth, offs := writeSynth(t, dir, synthClocks, 40)
	kin, _ := kinetoRanks(t)
	for _, tc := range []struct {
		name string
		in   []Input
		o    Options
	}{
		{"synthetic", synth, Options{Offsets: offs, Validate: true}},
		{"kineto", kin, Options{NoCorrection: true, Validate: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want string
			for _, run := range []struct{ procs, workers int }{{1, 0}, {2, 0}, {2, 1}, {4, 3}} {
				prev := runtime.GOMAXPROCS(run.procs)
				o := tc.o
				o.Workers = run.workers
				o.Output = filepath.Join(dir, fmt.Sprintf("%s-%d-%d", tc.name, run.procs, run.workers), "combined.xplane.pb")
				res, err := Combine(tc.in, o)
				runtime.GOMAXPROCS(prev)
				if err != nil {
					t.Fatal(err)
				}
				h := sha256.New()
				for _, f := range res.Files {
					b, err := os.ReadFile(f)
					if err != nil {
						t.Fatal(err)
					}
					fmt.Fprintf(h, "%s %d\n", filepath.Base(f), len(b))
					h.Write(b)
				}
				got := fmt.Sprintf("%x", h.Sum(nil))
				t.Logf("GOMAXPROCS %d, workers %d: %d files, sha256 %s", run.procs, run.workers, len(res.Files), got[:16])
				if want == "" {
					want = got
				} else if got != want {
					t.Errorf("GOMAXPROCS %d, workers %d: outputs differ from GOMAXPROCS 1's", run.procs, run.workers)
				}
			}
		})
	}
}
