package harness

import (
	"testing"

	"github.com/chronosync/chronosync/harness/pingrun"

	"github.com/chronosync/chronosync/harness/phasegaprun"
)

// TestSummaryPut: each section lands in its own field, and a type the
// summary has no field of panics.
func TestSummaryPut(t *testing.T) {
	var s Summary
	pg, p := &phasegaprun.Summary{Ranks: 3}, &pingrun.Summary{Sent: 2}
	s.Put(pg)
	s.Put(p)
	if s.Phasegap != pg || s.Ping != p || s.Sync != nil || s.Trace != nil {
		t.Fatalf("summary after Put: %+v", s)
	}
	defer func() {
		if recover() == nil {
			t.Error("Put of a type with no field did not panic")
		}
	}()
	s.Put(&struct{}{})
}

// TestJudgeSections: a section that judges itself adds its conditions; an
// absent one adds none.
func TestJudgeSections(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    Summary
		want []string
	}{
		{"no phasegap", Summary{Ping: &pingrun.Summary{}}, nil},
		{"phasegap finished", Summary{Phasegap: &phasegaprun.Summary{Ranks: 2, Finished: 2}}, []string{"phasegap ranks that did not finish"}},
		{"phasegap with ignored links", Summary{Phasegap: &phasegaprun.Summary{Ranks: 2, Finished: 1, Ignored: []string{"jitter"}}},
			[]string{"phasegap ranks that did not finish", "link settings the simulator's streams ignore"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cs conditions
			judgeSections(&cs, &tc.s)
			if len(cs) != len(tc.want) {
				t.Fatalf("conditions %v, want %v", cs, tc.want)
			}
			for i, c := range cs {
				if c.Name != tc.want[i] {
					t.Errorf("condition %d %q, want %q", i, c.Name, tc.want[i])
				}
			}
		})
	}
}
