// Package rocm reads the GPU tracer clock of AMD's ROCm runtime: the HSA
// system timestamp.
//
// The clock is what ROCm's tracers (rocprof, roctracer) stamp GPU activity
// with, so aligning it with the host clocks lets GPU traces join the others.
// The real implementation needs cgo, Debian's libhsa-runtime-dev and the
// build tag rocm; without the tag, Open returns ErrNotBuilt, and on a machine
// without a usable AMD GPU it returns an error wrapping ErrNoDevice. Callers
// fall back to another clock in both cases.
package rocm

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// ErrNotBuilt is returned by Open in a binary built without the rocm tag.
var ErrNotBuilt = errors.New("rocm: built without -tags rocm; rebuild with -tags rocm and libhsa-runtime-dev")

// ErrNoDevice is wrapped by Open's error when the HSA runtime cannot start,
// which is what it does on a machine without a usable AMD GPU.
var ErrNoDevice = errors.New("no usable AMD GPU (is the amdgpu driver loaded and /dev/kfd accessible?)")

// StatusError is a failed HSA runtime call.
type StatusError struct {
	Call   string // the HSA function, e.g. "hsa_init"
	Status uint32 // its hsa_status_t, e.g. 0x1008
	Name   string // the status's name, e.g. "HSA_STATUS_ERROR_OUT_OF_RESOURCES"
	Detail string // the runtime's description of the status, possibly empty
}

// Error names the call and the status, without the runtime's description.
func (e *StatusError) Error() string {
	return fmt.Sprintf("%s: %s (%#x)", e.Call, e.Name, e.Status)
}

// ticksToNanos converts a tick count of a clock running at freq Hz to
// nanoseconds, rounding down, without intermediate overflow. It saturates at
// math.MaxInt64 (more than 292 years). freq must not be zero.
func ticksToNanos(ticks, freq uint64) int64 {
	const nsPerSec = 1_000_000_000
	hi, lo := bits.Mul64(ticks, nsPerSec)
	if hi >= freq { // the quotient does not fit in 64 bits
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, freq)
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}
