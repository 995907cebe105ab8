// Package bench holds whole-system benchmarks: the simulator running a
// scenario of the library end to end.
package bench

import (
	"io/fs"
	"runtime"
	"testing"
	"time"

	"github.com/chronosync/chronosync/harness"
	"github.com/chronosync/chronosync/scenario"
	"github.com/chronosync/chronosync/scenarios"
)

func load(b *testing.B, name string) *scenario.Scenario {
	b.Helper()
	data, err := fs.ReadFile(scenarios.FS(), name)
	if err != nil {
		b.Fatal(err)
	}
	sc, err := scenario.Parse("scenarios/"+name, data)
	if err != nil {
		b.Fatal(err)
	}
	return sc
}

// BenchmarkThousandNodes simulates scenarios/bench1000.yaml (1,000 nodes,
// random 4-regular topology, pinging every second) for one virtual minute
// and reports wall seconds, the virtual-to-wall speed-up, events per wall
// second and the peak live heap sampled 200 times during the run.
func BenchmarkThousandNodes(b *testing.B) {
	sc := load(b, "bench1000.yaml")
	for range b.N {
		var peak uint64
		var ms runtime.MemStats
		res, err := harness.Run(sc, harness.Options{
			Out: b.TempDir() + "/run",
			Observe: func(time.Duration) {
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapAlloc)
			},
		})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(res.Wall.Seconds(), "wall-s")
		b.ReportMetric(res.Summary.Virtual/res.Wall.Seconds(), "speedup")
		b.ReportMetric(float64(res.Summary.Events)/res.Wall.Seconds(), "events/s")
		b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	}
}
