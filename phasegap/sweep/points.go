package sweep

import (
	"fmt"
	"math"
	"math/bits"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/chronosync/chronosync/phasegap/params"
)

// Point is one run of a sweep: its parameters, the links' preset and the
// transport it runs on.
type Point struct {
	Sweep     string
	Transport string
	Params    params.Params
	Preset    string // the links' preset (sim, real and mpi-net); "none" for mpi
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
// then the values the matrix's base writes.
func (m *Matrix) base() params.Params {
	p := params.DefaultParams()
	m.Base.over(&p)
	return p
}

// transports are the transports sweep s runs on: its own, or, not
// written (nil), the matrix's.
func (m *Matrix) transports(s Sweep) []string {
	if s.Transports == nil {
		return m.Transports
	}
	return s.Transports
}

// axes are sweep i's axes: each one's name and length (an axis left out
// counts one, the base's value; split replaces ranks and threads).
func (m *Matrix) axes(i int) []axis {
	s := m.Sweeps[i]
	or1 := func(n int) int { return max(n, 1) }
	out := []axis{{"transports", len(m.transports(s))}}
	if len(s.Split) > 0 {
		out = append(out, axis{"split", len(s.Split)})
	} else {
		out = append(out, axis{"ranks", or1(len(s.Ranks))}, axis{"threads", or1(len(s.Threads))})
	}
	return append(out, axis{"halo", or1(len(s.Halo))}, axis{"flops_per_point", or1(len(s.Flops))},
		axis{"bytes_per_point", or1(len(s.Bytes))}, axis{"mode", or1(len(s.Modes))},
		axis{"preset", or1(len(s.Presets))}, axis{"progress", or1(len(s.Progress))})
}

// axis is one axis of a sweep and its length.
type axis struct {
	name string
	n    int
}

// count is the number of points of sweep i, the product of its axes'
// lengths, computed without expanding them; ok is false when it does not
// fit in a uint64.
func (m *Matrix) count(i int) (n uint64, ok bool) {
	n, ok = 1, true
	for _, a := range m.axes(i) {
		if a.n == 0 {
			return 0, true // no transport: no point, however long the rest
		}
		hi, lo := bits.Mul64(n, uint64(a.n))
		if hi != 0 {
			ok = false
		}
		n = lo
	}
	return n, ok
}

// Count is the number of points Plan returns, counted from the axes'
// lengths without expanding them (at most MaxPoints once Parse accepted
// the matrix; math.MaxInt where the count does not fit an int).
func (m *Matrix) Count() int {
	var total uint64
	for i := range m.Sweeps {
		n, ok := m.count(i)
		total += n
		if !ok || total < n || total > math.MaxInt {
			return math.MaxInt
		}
	}
	return int(total)
}

// checkCount refuses a matrix of more than MaxPoints points, at the line
// of its largest sweep, before any sweep is expanded.
func (m *Matrix) checkCount() error {
	var total uint64
	overflow := false
	largest, largestN, largestOK := 0, uint64(0), true
	for i := range m.Sweeps {
		n, ok := m.count(i)
		if !ok || total+n < total {
			overflow = true
		}
		total += n
		if !ok || (largestOK && n > largestN) {
			largest, largestN, largestOK = i, n, ok
		}
	}
	if !overflow && total <= MaxPoints {
		return nil
	}
	points := func(n uint64, ok bool) string {
		if !ok {
			return fmt.Sprintf("more than %d", uint64(math.MaxUint64))
		}
		return strconv.FormatUint(n, 10)
	}
	var factors []string
	for _, a := range m.axes(largest) {
		factors = append(factors, fmt.Sprintf("%d %s", a.n, a.name))
	}
	return m.errorf([]any{"sweeps", largest}, "%s points: more than %d (sweep.MaxPoints); sweep %q has %s (%s): expected shorter axes, or the sweeps split over several files",
		points(total, !overflow), MaxPoints, m.Sweeps[largest].Name, points(largestN, largestOK), strings.Join(factors, " × "))
}

// eachPoint calls f with sweep i's points, transport by transport, in a
// fixed order: transports, then (P, T), halo, flops, bytes, mode, preset,
// progress; it stops when f returns false.
func (m *Matrix) eachPoint(i int, f func(Point) bool) {
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
	for _, tr := range m.transports(s) {
		for _, pt := range pairs {
			for _, h := range orInts(s.Halo, base.Halo) {
				for _, fl := range orInts(s.Flops, base.Flops) {
					for _, by := range orInts(s.Bytes, base.Bytes) {
						for _, mode := range orStrs(s.Modes, base.Mode) {
							for _, preset := range orStrs(s.Presets, "none") {
								for _, prog := range orStrs(s.Progress, base.Progress) {
									p := base
									p.Ranks, p.Threads, p.Halo, p.Flops, p.Bytes, p.Mode, p.Progress = pt[0], pt[1], h, fl, by, mode, prog
									if !f(Point{Sweep: s.Name, Transport: tr, Params: p, Preset: preset}) {
										return
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

// points expands sweep i into its points, in eachPoint's order.
func (m *Matrix) points(i int) []Point {
	var out []Point
	m.eachPoint(i, func(p Point) bool {
		out = append(out, p)
		return true
	})
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
