//go:build !(linux && (amd64 || arm64 || ppc64 || ppc64le || riscv64 || s390x || loong64 || mips64 || mips64le))

package ntpshm

import (
	"errors"
	"fmt"
	"runtime"
)

// Segment is an attached NTP SHM segment; on this platform none can be
// opened.
type Segment struct{ unit int }

// errUnsupported says why Open fails here.
var errUnsupported = errors.New("ntpshm: the NTP SHM segment is supported on 64-bit Linux only")

// Open fails: the NTP SHM segment is supported on 64-bit Linux only.
func Open(unit int) (*Segment, error) {
	return nil, fmt.Errorf("%w (this is %s/%s); unit %d", errUnsupported, runtime.GOOS, runtime.GOARCH, unit)
}

// Unit returns the segment's unit.
func (s *Segment) Unit() int { return s.unit }

// Key returns the segment's SysV IPC key, KeyBase + Unit.
func (s *Segment) Key() int { return KeyBase + s.unit }

// ID returns -1: no segment is attached.
func (s *Segment) ID() int { return -1 }

// Created reports false.
func (s *Segment) Created() bool { return false }

// Write fails: no segment is attached.
func (s *Segment) Write(Sample) error { return errUnsupported }

// Attached fails: no segment is attached.
func (s *Segment) Attached() (int, error) { return 0, errUnsupported }

// Close does nothing.
func (s *Segment) Close() error { return nil }

// Remove fails: no segment is attached.
func (s *Segment) Remove() error { return errUnsupported }
