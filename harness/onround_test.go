package harness

import (
	"path/filepath"
	"testing"

	"github.com/chronosync/chronosync/rounds"
)

// TestOnRound: Options.OnRound, the hook a real master feeds its metrics
// through, gets each round the master gathered, once, in order, as
// rounds.jsonl records it (round id, window, who reported, who is
// missing, the solution's records); and a run with the hook is the run
// without it, event for event (the same event-log hash): the hook sends
// nothing.
func TestOnRound(t *testing.T) {
	hashes := map[bool]string{}
	for _, tc := range []struct {
		name string
		hook bool
	}{
		{"with the hook", true},
		{"without", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := rtParse(t, "onround", rtMesh4Scenario("onround", "2s", "  mode: rounds\n  rounds: 4\n"))
			dir := filepath.Join(t.TempDir(), "run")
			var got []rounds.RoundReport
			opts := Options{Out: dir}
			if tc.hook {
				opts.OnRound = func(r *rounds.RoundReport) { got = append(got, *r) }
			}
			res, err := Run(sc, opts)
			if err != nil {
				t.Fatal(err)
			}
			hashes[tc.hook] = res.Manifest.EventHash
			_, lines := rtRounds(t, dir)
			if !tc.hook {
				return
			}
			if len(got) != len(lines) || len(lines) != 4 {
				t.Fatalf("OnRound got %d rounds; rounds.jsonl has %d round lines, want 4", len(got), len(lines))
			}
			for i, l := range lines {
				r := got[i]
				if r.Round != l.RoundID || r.Window != l.WindowID || len(r.Nodes) != len(l.Reported) || len(r.Missing) != len(l.Missing) || len(r.Offsets) != l.Solved {
					t.Errorf("round %d: OnRound got round %d, window %d, %d reported, %d missing, %d records; rounds.jsonl: round %d, window %d, %d reported, %d missing, %d solved",
						i, r.Round, r.Window, len(r.Nodes), len(r.Missing), len(r.Offsets), l.RoundID, l.WindowID, len(l.Reported), len(l.Missing), l.Solved)
				}
			}
		})
	}
	if hashes[true] == "" || hashes[true] != hashes[false] {
		t.Errorf("event hash %q with the hook, %q without: want one run", hashes[true], hashes[false])
	}
}
