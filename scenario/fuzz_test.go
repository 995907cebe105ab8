package scenario

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that Parse never panics, that every scenario it accepts
// survives a Marshal round trip, and that a small one resolves without
// panicking. The corpus starts from the library and testdata files and a few
// small scenarios.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../scenarios/*.yaml")
	files = append(files, "testdata/full.yaml", "testdata/sync.yaml", "testdata/training.yaml", "testdata/phasegap.yaml")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(withHead("faults:", "  - {at: 1s, kind: partition, groups: [[0, 1], [1, 2]]}")))
	f.Add([]byte(withHead("links:", "  default: &d {delay: 1ms}", "  overrides:", "    - {from: 0, to: 1, <<: *d}")))
	f.Add([]byte(withHead("protocol: {kind: sync, interval: 1s, adaptive_window: {min: 1s, max: 8s}}")))
	f.Add([]byte(withHead("protocol: {kind: sync, mode: consensus, rounds: 2, window: 5s, consensus_gain: 1}")))
	f.Add([]byte(trainHead("  collectives_per_step: 3", "  spread: 0", "  start_delay: 9s", "  port: 7101")))
	f.Add([]byte(withHead("workload: {kind: none, steps: 1}")))
	f.Add([]byte(withHead("links:", "  default: {delay: 2ms, preset: jitter_5ms_2ms}", "  overrides:", "    - {from: 0, to: 1, preset: loss_0.1}")))
	f.Add([]byte(withHead("topology: {kind: ring}", "workload: {kind: phasegap, halo: 4, timesteps: 4, N: 8}", "protocol: {kind: none}")))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", data)
		if err != nil {
			return
		}
		roundTrip(t, s)
		if s.Nodes <= 64 {
			_, _ = s.Resolve(s.Seed)
		}
	})
}
