package phasegap

// A rank's array holds its N owned points between two ghost zones of H
// points: owned point i is at index H+i. Kernels update dst from src over
// a range of array indices; they never allocate.

// Stencil weights: every kernel keeps the sum of the weights below 1, so
// that values stay bounded over any number of steps.
const (
	s3c0, s3c1       = 0.5, 0.25
	s5c0, s5c1, s5c2 = 0.4, 0.2, 0.1
	axA, axB         = 0.999, 0.001
)

// kernel is a stencil update with its intensity knobs.
type kernel struct {
	name  string
	flops int // extra arithmetic per point
	reads int // extra float64 reads per point from a side buffer (bytes_per_point / 8)
}

// sink holds what the intensity loops compute, so that no compiler can
// drop them; it never feeds back into the stencil values (the checksum
// does not depend on it).
type sink struct {
	acc  float64
	side []float64
	at   int
}

// update computes dst[lo:hi] from src with k, over array indices.
func (k *kernel) update(dst, src []float64, lo, hi int, s *sink) {
	if lo >= hi {
		return
	}
	switch k.name {
	case KernelStencil5:
		src := src[lo-2 : hi+2]
		dst := dst[lo:hi]
		for i := range dst {
			dst[i] = s5c0*src[i+2] + s5c1*(src[i+1]+src[i+3]) + s5c2*(src[i]+src[i+4])
		}
	case KernelAxpy:
		src := src[lo:hi]
		dst := dst[lo:hi]
		for i := range dst {
			dst[i] = axA*src[i] + axB
		}
	default:
		src := src[lo-1 : hi+1]
		dst := dst[lo:hi]
		for i := range dst {
			dst[i] = s3c0*src[i+1] + s3c1*(src[i]+src[i+2])
		}
	}
	if k.flops > 0 || k.reads > 0 {
		k.intensity(dst[lo:hi], s)
	}
}

// intensity runs the extra arithmetic and streaming reads per point.
func (k *kernel) intensity(vals []float64, s *sink) {
	acc := s.acc
	for _, v := range vals {
		t := v
		for range k.flops {
			t = t*0.999999 + 1e-9
		}
		acc += t
		for range k.reads {
			acc += s.side[s.at]
			if s.at++; s.at == len(s.side) {
				s.at = 0
			}
		}
	}
	s.acc = acc * 1e-300 // keeps the sum finite; still depends on every term
}
