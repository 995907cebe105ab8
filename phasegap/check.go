package phasegap

import (
	"errors"
	"fmt"
	"math"
)

// ErrPeerFailed is Run's error on a rank whose own check passed while
// another rank's failed: that rank says why (a CheckError).
var ErrPeerFailed = errors.New("another rank's check failed")

// CheckError is a failed check (--check, --poison_ghost): the rank, the
// iteration (counting the warmup, as every iteration error does), the
// cell and what it held.
type CheckError struct {
	Rank, Iter int
	// Cell is the owned point's global index in the ring (point i of rank
	// r is r×N+i), or for a ghost cell its array index.
	Cell     int
	Ghost    bool    // a ghost cell read before its halo arrived (NaN)
	Expected float64 // the serial recomputation's value (NaN for a ghost)
	Got      float64
	Kind     string // "mismatch" or "NaN read"
}

func (e *CheckError) Error() string {
	if e.Kind == "NaN read" {
		where := fmt.Sprintf("owned cell %d", e.Cell)
		if e.Ghost {
			where = fmt.Sprintf("ghost cell %d (array index)", e.Cell)
		}
		return fmt.Sprintf("check failed: rank %d, iteration %d: NaN read: %s is NaN (--poison_ghost: read before its halo arrived)",
			e.Rank, e.Iter, where)
	}
	return fmt.Sprintf("check failed: rank %d, iteration %d: cell %d: expected %v (%#016x), got %v (%#016x) (serial recomputation)",
		e.Rank, e.Iter, e.Cell, e.Expected, math.Float64bits(e.Expected), e.Got, math.Float64bits(e.Got))
}

// initial is the closed-form initial value of the ring's global point g.
func initial(g int) float64 { return float64(g*7919%1000) / 1000 }

// serialRef is one rank's serial recomputation of its owned points,
// independent of the exchange: it starts from the ring's closed-form
// initial values and steps, point by point with the kernel's formula, the
// cone of points the owned points depend on until the run's last
// timestep (N + 2×R×(remaining steps) points, or the whole periodic ring
// when that is smaller). Every step shrinks the cone by R at each end.
type serialRef struct {
	kernel     string
	radius     int
	ring       int // P×N
	base, n    int // global index of owned point 0, N
	whole      bool
	lo         int // global index of vals[0] (window mode)
	vals, next []float64
	steps      int // timesteps done
}

// newReference sets up the recomputation of rank's owned points for a
// run of total timesteps.
func newSerialRef(kernel string, radius, rank, size, n, total int) *serialRef {
	f := &serialRef{kernel: kernel, radius: radius, ring: size * n, base: rank * n, n: n}
	w := n + 2*radius*total
	if radius == 0 {
		w = n
	}
	if w >= f.ring || total*radius >= f.ring {
		f.whole, w, f.lo = true, f.ring, 0
	} else {
		f.lo = f.base - radius*total
	}
	f.vals, f.next = make([]float64, w), make([]float64, w)
	for i := range f.vals {
		f.vals[i] = initial(((f.lo+i)%f.ring + f.ring) % f.ring)
	}
	return f
}

// step advances the recomputation by one timestep, with the formulas of
// kernel.update (the same operations in the same order: bit for bit).
func (f *serialRef) step() {
	r, v := f.radius, f.vals
	w := len(v)
	at := func(i int) float64 {
		if f.whole {
			return v[(i%w+w)%w]
		}
		return v[i]
	}
	lo, hi := r, w-r // window: the points whose stencil lies inside
	if f.whole {
		lo, hi = 0, w
	}
	out := f.next[:w]
	for i := lo; i < hi; i++ {
		switch f.kernel {
		case KernelStencil5:
			out[i] = s5c0*at(i) + s5c1*(at(i-1)+at(i+1)) + s5c2*(at(i-2)+at(i+2))
		case KernelAxpy:
			out[i] = axA*at(i) + axB
		default:
			out[i] = s3c0*at(i) + s3c1*(at(i-1)+at(i+1))
		}
	}
	if f.whole {
		f.vals, f.next = out, v
	} else {
		// The cone shrinks by R at each end.
		f.vals, f.next = out[lo:hi], v[:w-2*r]
		f.lo += r
	}
	f.steps++
}

// owned returns the recomputed value of owned point i.
func (f *serialRef) owned(i int) float64 {
	if f.whole {
		return f.vals[f.base+i]
	}
	return f.vals[f.base+i-f.lo]
}

// compare returns the first owned point of got (the rank's N owned
// values) that differs, bit for bit, from the recomputation, or -1.
func (f *serialRef) compare(got []float64) int {
	for i, v := range got {
		if math.Float64bits(v) != math.Float64bits(f.owned(i)) {
			return i
		}
	}
	return -1
}

// firstNaN returns the index in vals of the first NaN, or -1.
func firstNaN(vals []float64) int {
	for i, v := range vals {
		if v != v {
			return i
		}
	}
	return -1
}

// advance steps the recomputation by steps timesteps. Safe on a nil
// reference (no --check).
func (f *serialRef) advance(steps int) {
	if f == nil {
		return
	}
	for range steps {
		f.step()
	}
}
