package sweep

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// FuzzSweepMatrix: whatever Parse accepts plans at most MaxPoints points
// and expands to exactly the number Count gave before expanding; Parse
// allocates at most 8 MiB plus 1 KiB an input byte, whatever the input's
// aliases and axes ask for (a node of an expanded alias costs about 30 B,
// and a document may expand to max(AliasAllowance, MaxAliasExpansion × its
// nodes)).
func FuzzSweepMatrix(f *testing.F) {
	f.Add([]byte(matrixYAML))
	f.Add([]byte(aliasBomb()))
	f.Add([]byte(laughs("x")))
	f.Add([]byte("sweeps: &s [{name: a}, *s]\n"))
	f.Add([]byte("sweeps:\n  - {name: a, halo: &h [16, 32]}\n  - {name: b, halo: *h, threads: *h}\n"))
	f.Add([]byte("sweeps:\n  - name: a\n    transports: []\n    ranks: &a [1, 2, 3]\n    threads: *a\n"))
	f.Add([]byte("sweeps:\n  - name: a\n    split: &p [[1, 2], [2, 1]]\n  - {name: b, split: *p, mode: [phase_nb, phase_blk]}\n"))
	shipped, _ := filepath.Glob(filepath.Join("..", "..", "sweeps", "*.yaml"))
	for _, p := range shipped {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		m, err := Parse(data, "f.yaml")
		runtime.ReadMemStats(&after)
		if bound := 8<<20 + 1024*uint64(len(data)); after.TotalAlloc-before.TotalAlloc > bound {
			t.Fatalf("Parse of %d bytes allocated %d bytes, more than %d (err %v)", len(data), after.TotalAlloc-before.TotalAlloc, bound, err)
		}
		if err != nil {
			return
		}
		n := m.Count()
		if n > MaxPoints {
			t.Fatalf("accepted %d points, more than MaxPoints", n)
		}
		if plan := m.Plan(); len(plan) != n {
			t.Fatalf("Count %d, Plan %d points", n, len(plan))
		}
	})
}
