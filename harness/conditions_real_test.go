//go:build linux

package harness

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/ci/needs"
	"github.com/chronosync/chronosync/real/netlab"
)

// busyOnoff is real2-onoff cut to four 1 s rounds.
const busyOnoff = `name: busy-onoff
seed: 1
duration: 6s
nodes: 2
clocks:
  nodes:
    - {node: 1, offset: 10ms, drift_ppm: 50}
topology: {kind: full_mesh}
links:
  default: {rate: {rate: 10mbit}}
  overrides:
    - {from: 0, to: 1, cross_traffic: {kind: onoff, load: 100%, packet_size: 1500, on: 20ms, off: 80ms}}
protocol: {kind: sync, mode: rounds, estimator: svm, cadence: 1ms, window: 1s, rounds: 4}
`

// TestRealDegradedWhenBusy makes the machine busy on purpose (two CPU-bound
// processes per CPU, started here and ended by their PIDs) and runs
// real2-onoff's link on the real backend: the run must say it is
// degraded, with a warning naming the condition, never read as clean.
func TestRealDegradedWhenBusy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a 6 s real run beside CPU hogs")
	}
	needs.Available(t, netlab.Available())
	for range 2 * runtime.NumCPU() {
		hog := exec.Command("sh", "-c", "while :; do :; done")
		if err := hog.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = hog.Process.Kill()
			_ = hog.Wait()
		})
	}
	sc := parse(t, busyOnoff)
	res, err := Run(sc, Options{Out: filepath.Join(t.TempDir(), "run"), Backend: "real"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res.Print(&out)
	t.Logf("%s", out.String())
	if res.Summary.Status != StatusDegraded {
		t.Fatalf("status %q beside %d CPU hogs, want %q; conditions %+v", res.Summary.Status, 2*runtime.NumCPU(), StatusDegraded, res.Summary.Conditions)
	}
	// The scenario's 6 s count from the nodes' boot, however slow the
	// busy machine made it.
	if ph := res.Summary.Real.Phases; ph.Run < 6*time.Second {
		t.Errorf("the protocol ran %v (boot %v, stop %v), want the scenario's 6s", ph.Run, ph.Start, ph.Stop)
	}
	var over []string
	for _, c := range res.Summary.Conditions {
		if c.Over {
			over = append(over, c.Name)
			if !strings.Contains(out.String(), "warning: "+c.Name+" ") {
				t.Errorf("printed summary lacks the warning for %q", c.Name)
			}
		}
	}
	if !strings.Contains(out.String(), "status: degraded\n") {
		t.Errorf("printed summary lacks \"status: degraded\"")
	}
	t.Logf("over their bounds: %s", fmt.Sprint(over))
}
