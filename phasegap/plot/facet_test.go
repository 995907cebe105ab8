package plot

import (
	"slices"
	"testing"
)

func TestGroup(t *testing.T) {
	nb := func(transport, imp string, p, tt int, wait float64) run {
		return run{mode: "phase_nb", transport: transport, impairment: imp, h: 256, flops: 64, p: p, t: tt, wait: wait, interior: 100}
	}
	type panelWant struct {
		title  string
		series []string
	}
	for _, tc := range []struct {
		name string
		runs []run
		want []panelWant
	}{
		{"one P: no P in the names; transports ordered mpi, real, sim",
			[]run{nb("sim", "none", 2, 1, 1), nb("shm", "none", 2, 1, 1), nb("real", "", 2, 2, 1)},
			[]panelWant{{"H=256 F=64 B=0 phase_nb", []string{"mpi", "real", "sim"}}}},
		{"several P: P in every name, ordered by P",
			[]run{nb("sim", "none", 4, 1, 1), nb("sim", "none", 16, 2, 1), nb("sim", "none", 2, 4, 1)},
			[]panelWant{{"H=256 F=64 B=0 phase_nb", []string{"sim P=2", "sim P=4", "sim P=16"}}}},
		{"a constant P·T: one line named by its budget",
			[]run{nb("sim", "none", 1, 2, 1), nb("sim", "none", 2, 1, 1), nb("sim", "lat_1ms", 2, 1, 1)},
			[]panelWant{{"H=256 F=64 B=0 phase_nb", []string{"sim P·T=2", "sim lat_1ms"}}}},
		{"impairment in the name unless none; MPI over tcp named so",
			[]run{nb("sim", "lat_1ms", 2, 1, 1), nb("sim", "none", 2, 1, 1), nb("tcp", "loss_1pct", 2, 1, 1)},
			[]panelWant{{"H=256 F=64 B=0 phase_nb", []string{"mpi tcp loss_1pct", "sim", "sim lat_1ms"}}}},
		{"facets by H, intensity, mode",
			[]run{
				{mode: "phase_nb", transport: "sim", h: 512, p: 2, t: 1},
				{mode: "phase_blk", transport: "sim", h: 256, flops: 64, p: 2, t: 1},
				{mode: "phase_nb", transport: "sim", h: 256, flops: 64, p: 2, t: 1},
				{mode: "phase_nb", transport: "sim", h: 256, p: 2, t: 1},
			},
			[]panelWant{{"H=256 F=0 B=0 phase_nb", []string{"sim"}}, {"H=256 F=64 B=0 phase_blk", []string{"sim"}},
				{"H=256 F=64 B=0 phase_nb", []string{"sim"}}, {"H=512 F=0 B=0 phase_nb", []string{"sim"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			panels, err := Group(records(t, tc.runs...))
			if err != nil {
				t.Fatal(err)
			}
			var got []panelWant
			for _, pn := range panels {
				w := panelWant{title: pn.Facet.Title()}
				for _, s := range pn.Series {
					w.series = append(w.series, s.Name)
				}
				got = append(got, w)
			}
			if !slices.EqualFunc(got, tc.want, func(a, b panelWant) bool {
				return a.title == b.title && slices.Equal(a.series, b.series)
			}) {
				t.Errorf("panels = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestGroupAverages(t *testing.T) {
	r := func(tt int, wait float64) run {
		return run{mode: "phase_nb", transport: "sim", h: 256, p: 2, t: tt, wait: wait, interior: 100}
	}
	panels, err := Group(records(t, r(2, 30), r(1, 10), r(2, 50), r(1, 20)))
	if err != nil {
		t.Fatal(err)
	}
	if len(panels) != 1 || len(panels[0].Series) != 1 {
		t.Fatalf("panels = %+v, want one panel of one series", panels)
	}
	got := panels[0].Series[0].Points
	if len(got) != 2 || got[0].T != 1 || got[1].T != 2 || got[0].TWait != 15 || got[1].TWait != 40 ||
		got[0].Runs != 2 || got[1].Runs != 2 {
		t.Errorf("points = %+v, want T 1 (t_wait 15) and T 2 (t_wait 40), 2 runs each", got)
	}
}
