//go:build linux

package realbackend

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/scenario"
)

// checks records the conditions a judge adds, each as
// "NAME VALUE > BOUND UNIT (WHY)" with > or ≤ as the value is over its
// bound or not.
type checks []string

func (c *checks) Check(name string, value, bound float64, unit, why string) {
	rel := "≤"
	if value > bound {
		rel = ">"
	}
	*c = append(*c, fmt.Sprintf("%s %g %s %g %s (%s)", name, value, rel, bound, unit, why))
}

// TestJudgeOwnDrops: the run's own drops are a share of what they are
// counted against; with nothing to count them against, their count (over
// a bound of 0), never a percentage of zero; none with neither.
func TestJudgeOwnDrops(t *testing.T) {
	for _, tc := range []struct {
		d    ownDrops
		want string // "" for no condition
	}{
		{ownDrops{dropped: 0, of: 0, ofWhat: "received from the nodes"}, ""},
		{ownDrops{dropped: 693, of: 0, ofWhat: "received from the nodes"}, "datagrams dropped by our own processes 693 > 0  (none received from the nodes to compare with"},
		{ownDrops{dropped: 1, of: 10000, ofWhat: "sent on the links"}, "datagrams dropped by our own processes 0.0001 ≤ 0.001 share (1 of 10,000 sent on the links"},
		{ownDrops{dropped: 30, of: 10000, ofWhat: "received from the nodes"}, "datagrams dropped by our own processes 0.003 > 0.001 share (30 of 10,000 received from the nodes"},
	} {
		var cs checks
		judgeOwnDrops(&cs, tc.d)
		switch {
		case tc.want == "" && len(cs) != 0:
			t.Errorf("%+v: %v, want no condition", tc.d, cs)
		case tc.want != "" && (len(cs) != 1 || !strings.HasPrefix(cs[0], tc.want)):
			t.Errorf("%+v: %v\nwant %q", tc.d, cs, tc.want)
		}
	}
}

// TestSawNothing: a sync run that ran its duration and saw no round (on a
// cluster node other than the master's, naming the master's address), or
// sent no probe though it had edges to probe, failed; a run that was cut
// short, a run with rounds and probes, and a run that is not a sync run
// did not; a cluster node with no edge of its own need not probe.
func TestSawNothing(t *testing.T) {
	rank1 := 1
	addrs := []netip.Addr{netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")}
	sc := &scenario.Scenario{}
	edges := []scenario.ResolvedEdge{{From: 0, To: 1}}
	full := Phases{Run: 6 * time.Second}
	for _, tc := range []struct {
		name   string
		rank   *int
		phases Phases
		sync   *SyncFigures
		want   string
	}{
		{"not sync", nil, full, nil, ""},
		{"no round", nil, full, &SyncFigures{}, "no round started in 6s"},
		{"no round on rank 1", &rank1, full, &SyncFigures{}, "no round started in 6s (master unreachable? node 0 at 10.0.0.1)"},
		{"cut short", nil, Phases{Run: 3 * time.Second}, &SyncFigures{}, ""},
		{"no probe", nil, full, &SyncFigures{Rounds: 3, WindowsClosed: 6}, "no probe sent in 6s (6 windows closed)"},
		{"no own edge", &rank1, full, &SyncFigures{Rounds: 3, WindowsClosed: 6}, ""},
		{"measured", nil, full, &SyncFigures{Rounds: 3, WindowsClosed: 6, PairsSent: 100}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &Backend{duration: 6 * time.Second, phases: tc.phases, rank: tc.rank, addrs: addrs,
				sc: sc, resolved: &scenario.Resolved{Edges: edges}}
			if got := b.SawNothing(Measured{Sync: tc.sync}); got != tc.want {
				t.Errorf("SawNothing = %q, want %q", got, tc.want)
			}
		})
	}
}
