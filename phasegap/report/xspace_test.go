package report

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/chronosync/chronosync/phasegap/params"
	"github.com/chronosync/chronosync/trace/xspace"
)

// TestRankXSpace: a rank's plane holds each iteration and its four phases
// on line 0, at their times, and each thread's interior on its own line;
// it marshals and reads back with the XSpace reader's checks.
func TestRankXSpace(t *testing.T) {
	r := Rank{Rank: 3, Samples: []Sample{
		{Iter: 7, Start: 1000, Total: 100, InteriorStart: 1010, WaitStart: 1080, BoundaryStart: 1095,
			Threads: []Span{{1010, 1070}, {1012, 1078}}},
		{Iter: 8, Start: 1100, Total: 90, InteriorStart: 1105, WaitStart: 1170, BoundaryStart: 1185,
			Threads: []Span{{1105, 1160}, {1106, 1169}}},
	}}
	space := RankXSpace(Config{Params: params.Params{Settings: params.Settings{Mode: "phase_nb",
		Threads: 2}}, RunID: "r1"}, r)
	b, err := proto.Marshal(space)
	if err != nil {
		t.Fatal(err)
	}
	if err := xspace.Unmarshal(b, space); err != nil {
		t.Fatal(err)
	}
	p := space.Planes[0]
	if p.Name != "/rank:3" || len(p.Lines) != 3 || len(p.Lines[0].Events) != 10 || len(p.Lines[2].Events) != 2 {
		t.Fatalf("plane %q: %d lines, %d events on line 0: want /rank:3, 3 lines, 10 events", p.Name, len(p.Lines), len(p.Lines[0].Events))
	}
	want := []struct {
		name       string
		start, dur int64
	}{{"iteration", 1000, 100}, {"comm_post", 1000, 10}, {"interior_compute", 1010, 70}, {"waitall", 1080, 15}, {"boundary_compute", 1095, 5}}
	l := p.Lines[0]
	for i, w := range want {
		ev := l.Events[i]
		if name := p.EventMetadata[ev.MetadataId].Name; name != w.name || xspace.StartPs(l, ev)/1000 != w.start || ev.DurationPs/1000 != w.dur {
			t.Errorf("event %d: %s at %d ns for %d ns, want %+v", i, name, xspace.StartPs(l, ev)/1000, ev.DurationPs/1000, w)
		}
	}
}
