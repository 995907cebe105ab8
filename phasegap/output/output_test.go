package output

import (
	"os"
	"slices"
	"testing"

	"github.com/chronosync/chronosync/phasegap/params"
	"github.com/chronosync/chronosync/phasegap/report"
)

// TestConfig checks that the parameters and the launch land in their
// fields, and that only a run that computes the checksum records it.
func TestConfig(t *testing.T) {
	p := params.DefaultParams()
	p.PollEvery, p.Schedule = 77, "guided"
	d := params.Derived{Radius: 2, B: 6}
	for _, sum := range []bool{false, true} {
		c := Config(p, d, Launch{Transport: "sim", TraceIters: 9, MPIImpl: "model", Checksum: sum})
		if cp := c.Params; cp.PollEvery != 77 || cp.Schedule != "guided" || cp.Radius != 2 || c.B != 6 || c.Transport != "sim" ||
			c.TraceIters != 9 || c.MPIImpl != "model" || c.ElemSize != 8 || c.OMPNumThreads != p.Threads || cp.Sync != "none" {
			t.Errorf("checksum %v: config %+v", sum, c)
		}
		if c.Params.Check != sum || (c.Params.CheckEvery == p.CheckEvery) != sum {
			t.Errorf("checksum %v: check %v, check_every %d", sum, c.Params.Check, c.Params.CheckEvery)
		}
	}
}

// TestWrite checks which files Write writes for each setting.
func TestWrite(t *testing.T) {
	p := params.DefaultParams()
	p.Ranks = 2
	ranks := []report.Rank{{Rank: 0}, {Rank: 1}}
	tests := []struct {
		name            string
		manifest, trace bool
		xplanes         bool
		want            []string
	}{
		{"results only", false, false, true, []string{"results.csv"}},
		{"manifest", true, false, false, []string{"manifest.json", "results.csv"}},
		{"trace, no xplanes", true, true, false, []string{"manifest.json", "results.csv", "trace.json"}},
		{"trace and xplanes", false, true, true, []string{"rank0.xplane.pb", "rank1.xplane.pb", "results.csv", "trace.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			c := Config(p, params.Derived{Radius: 1, B: 1}, Launch{Manifest: tt.manifest, Trace: tt.trace, TraceIters: 5, TraceDetail: "rank"})
			if err := Write(dir, Run{Config: c, Ranks: ranks, Env: map[string]string{}, XPlanes: tt.xplanes}); err != nil {
				t.Fatal(err)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range entries {
				got = append(got, e.Name())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("files %v; want %v", got, tt.want)
			}
		})
	}
}
