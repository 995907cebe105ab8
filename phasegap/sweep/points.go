package sweep

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/chronosync/chronosync/phasegap"
)

// Point is one run of a sweep: its parameters, the links' preset and the
// transport it runs on.
type Point struct {
	Sweep     string
	Transport string
	Params    phasegap.Params
	Preset    string // the links' preset (sim and real); "none" for MPI
}

// ID names the point within its sweep and transport: the axes' values,
// "P4-T2-H256-F0-B0-phase_nb-none" (and "-pt" with a progress thread).
func (p Point) ID() string {
	q := p.Params
	id := fmt.Sprintf("P%d-T%d-H%d-F%d-B%d-%s-%s", q.Ranks, q.Threads, q.Halo, q.Flops, q.Bytes, q.Mode, p.Preset)
	if q.Progress == "progress_thread" {
		id += "-pt"
	}
	return id
}

// Dir is the point's run directory under a sweep's output directory.
func (p Point) Dir(out string) string {
	return filepath.Join(out, "runs", p.Sweep, p.Transport, p.ID())
}

// base is the parameters every point starts from: phasegap's defaults,
// then the matrix's base.
func (m *Matrix) base() phasegap.Params {
	p := phasegap.DefaultParams()
	b := m.Base
	setStr := func(to *string, v string) {
		if v != "" {
			*to = v
		}
	}
	setInt := func(to *int, v int) {
		if v != 0 {
			*to = v
		}
	}
	setStr(&p.Mode, b.Mode)
	setStr(&p.Kernel, b.Kernel)
	setStr(&p.Schedule, b.Schedule)
	setStr(&p.Progress, b.Progress)
	for _, f := range []struct {
		to *int
		v  int
	}{{&p.Ranks, b.Ranks}, {&p.Threads, b.Threads}, {&p.N, b.N}, {&p.Halo, b.Halo}, {&p.Radius, b.Radius},
		{&p.Timesteps, b.Timesteps}, {&p.Flops, b.Flops}, {&p.Bytes, b.Bytes}, {&p.Iters, b.Iters},
		{&p.Warmup, b.Warmup}, {&p.PollEvery, b.PollEvery}, {&p.Chunk, b.Chunk}} {
		setInt(f.to, f.v)
	}
	return p
}

// points expands sweep i into its points, transport by transport, in a
// fixed order: transports, then (P, T), halo, flops, bytes, mode, preset,
// progress.
func (m *Matrix) points(i int) []Point {
	s := m.Sweeps[i]
	base := m.base()
	orInts := func(axis []int, v int) []int {
		if len(axis) == 0 {
			return []int{v}
		}
		return axis
	}
	orStrs := func(axis []string, v string) []string {
		if len(axis) == 0 {
			return []string{v}
		}
		return axis
	}
	pairs := s.Split
	if len(pairs) == 0 {
		for _, r := range orInts(s.Ranks, base.Ranks) {
			for _, t := range orInts(s.Threads, base.Threads) {
				pairs = append(pairs, [2]int{r, t})
			}
		}
	}
	transports := s.Transports
	if transports == nil { // not written: the matrix's
		transports = m.Transports
	}
	var out []Point
	for _, tr := range transports {
		for _, pt := range pairs {
			for _, h := range orInts(s.Halo, base.Halo) {
				for _, f := range orInts(s.Flops, base.Flops) {
					for _, by := range orInts(s.Bytes, base.Bytes) {
						for _, mode := range orStrs(s.Modes, base.Mode) {
							for _, preset := range orStrs(s.Presets, "none") {
								for _, prog := range orStrs(s.Progress, base.Progress) {
									p := base
									p.Ranks, p.Threads, p.Halo, p.Flops, p.Bytes, p.Mode, p.Progress = pt[0], pt[1], h, f, by, mode, prog
									out = append(out, Point{Sweep: s.Name, Transport: tr, Params: p, Preset: preset})
								}
							}
						}
					}
				}
			}
		}
	}
	return out
}

// Keep restricts every sweep to those of its transports that are in
// transports (a sweep left with none runs nothing); a name that is not a
// transport is an error.
func (m *Matrix) Keep(transports []string) error {
	for _, t := range transports {
		if !slices.Contains(Transports(), t) {
			return fmt.Errorf("%q is not a transport; expected a list of %v", t, Transports())
		}
	}
	keep := func(own []string) []string {
		out := []string{} // not nil: a sweep's nil means the matrix's
		for _, t := range own {
			if slices.Contains(transports, t) {
				out = append(out, t)
			}
		}
		return out
	}
	for i := range m.Sweeps {
		if m.Sweeps[i].Transports == nil {
			m.Sweeps[i].Transports = m.Transports
		}
		m.Sweeps[i].Transports = keep(m.Sweeps[i].Transports)
	}
	m.Transports = keep(m.Transports)
	return nil
}

// Plan is every point of every sweep, in the order they run.
func (m *Matrix) Plan() []Point {
	var out []Point
	for i := range m.Sweeps {
		out = append(out, m.points(i)...)
	}
	return out
}
