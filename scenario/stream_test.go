package scenario

import (
	"testing"

	"github.com/chronosync/chronosync/model/rng"
)

// TestStreamMatchesSimulator pins Stream to the simulator's derivation, so
// that a stream name means the same draws in both packages.
func TestStreamMatchesSimulator(t *testing.T) {
	for _, name := range []string{"", "scenario/clock/3/offset", "link/3/7"} {
		for _, seed := range []uint64{0, 1, 1 << 63} {
			a, b := Stream(seed, name), rng.Stream(seed, name)
			for i := range 4 {
				if x, y := a.Uint64(), b.Uint64(); x != y {
					t.Fatalf("Stream(%d, %q) draw %d = %d; model/rng gives %d", seed, name, i, x, y)
				}
			}
		}
	}
}

func TestStreamNamesDiffer(t *testing.T) {
	if Stream(1, "a").Uint64() == Stream(1, "b").Uint64() || Stream(1, "a").Uint64() == Stream(2, "a").Uint64() {
		t.Fatal("different names or seeds gave the same first draw")
	}
}
