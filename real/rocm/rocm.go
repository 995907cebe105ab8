//go:build rocm

package rocm

/*
#cgo LDFLAGS: -lhsa-runtime64
#include <stdint.h>
#include <hsa/hsa.h>

static hsa_status_t rocm_u64_info(hsa_system_info_t attr, uint64_t *v) {
	return hsa_system_get_info(attr, v);
}

static const char *rocm_status_string(hsa_status_t s) {
	const char *str = 0;
	if (hsa_status_string(s, &str) != HSA_STATUS_SUCCESS) {
		return 0;
	}
	return str;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"strings"
	"sync"
)

// Clock is the HSA system timestamp clock of an initialised HSA runtime.
// Its methods are safe for concurrent use.
type Clock struct {
	freq      uint64 // HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, in Hz
	closeOnce sync.Once
	closeErr  error
}

// Open initialises the HSA runtime (hsa_init) and reads the timestamp
// frequency. On a machine without a usable AMD GPU it fails at once with an
// error wrapping a *StatusError and ErrNoDevice. The caller must Close the
// Clock.
func Open() (*Clock, error) {
	if st := C.hsa_init(); st != C.HSA_STATUS_SUCCESS {
		return nil, fmt.Errorf("rocm: %w: %w", statusError("hsa_init", st), ErrNoDevice)
	}
	var freq C.uint64_t
	if st := C.rocm_u64_info(C.HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, &freq); st != C.HSA_STATUS_SUCCESS {
		err := statusError("hsa_system_get_info(TIMESTAMP_FREQUENCY)", st)
		C.hsa_shut_down()
		return nil, fmt.Errorf("rocm: %w: %s", err, err.Detail)
	}
	if freq == 0 {
		C.hsa_shut_down()
		return nil, errors.New("rocm: HSA reports a timestamp frequency of 0 Hz")
	}
	return &Clock{freq: uint64(freq)}, nil
}

// Now returns the HSA system timestamp in nanoseconds. It returns 0 if the
// runtime cannot read it, which happens only after Close.
func (c *Clock) Now() int64 {
	var ticks C.uint64_t
	if C.rocm_u64_info(C.HSA_SYSTEM_INFO_TIMESTAMP, &ticks) != C.HSA_STATUS_SUCCESS {
		return 0
	}
	return ticksToNanos(uint64(ticks), c.freq)
}

// Close shuts the HSA runtime down (hsa_shut_down). Calls after the first
// return the first call's result and do nothing else.
func (c *Clock) Close() error {
	c.closeOnce.Do(func() {
		if st := C.hsa_shut_down(); st != C.HSA_STATUS_SUCCESS {
			c.closeErr = fmt.Errorf("rocm: %w", statusError("hsa_shut_down", st))
		}
	})
	return c.closeErr
}

// statusError describes a failed call with the runtime's status string,
// which reads "NAME: description".
func statusError(call string, st C.hsa_status_t) *StatusError {
	e := &StatusError{Call: call, Status: uint32(st), Name: "HSA_STATUS_UNKNOWN"}
	if s := C.rocm_status_string(st); s != nil {
		name, detail, _ := strings.Cut(C.GoString(s), ": ")
		e.Name, e.Detail = name, detail
	}
	return e
}
