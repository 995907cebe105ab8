//go:build linux && (amd64 || arm64 || ppc64 || ppc64le || riscv64 || s390x || loong64 || mips64 || mips64le)

package ntpshm

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// shmTime is struct shmTime as a 64-bit Linux C compiler lays it out (see
// the package doc); the tests pin its offsets to the Off* constants and to
// gcc's.
type shmTime struct {
	Mode                 int32
	Count                int32
	ClockTimeStampSec    int64
	ClockTimeStampUSec   int32
	_                    int32
	ReceiveTimeStampSec  int64
	ReceiveTimeStampUSec int32
	Leap                 int32
	Precision            int32
	NSamples             int32
	Valid                int32
	ClockTimeStampNSec   uint32
	ReceiveTimeStampNSec uint32
	Dummy                [8]int32
	_                    int32
}

// perm is the mode Open creates a segment with: owner-only, chrony's
// default `perm` and ntpd's and gpsd's for units 0 and 1.
const perm = 0o600

// Segment is an attached NTP SHM segment, written by one process. Its
// methods are safe for concurrent use; Close waits for a Write in progress.
type Segment struct {
	unit    int
	id      int
	created bool

	mu   sync.Mutex
	data []byte   // the attachment; nil once closed
	t    *shmTime // &data[0]

	// midWrite, if set (tests only), runs between the two count
	// increments of a Write, with the clock fields written and the
	// receive fields not yet.
	midWrite func()
}

// Open attaches the segment of unit (0 to MaxUnit, key KeyBase + unit),
// creating it owner-only (0600) if it does not exist. chronyd creates the
// segment of each `refclock SHM` unit when it starts, owned by root with
// the refclock's `perm` (0600 by default); a process that is not root
// cannot attach that one (Open says so), so run the writer as root or
// start it before chronyd.
//
// The segment outlives the process: Close detaches it and leaves it in
// place, so that a restarted writer feeds the chronyd still attached to
// it. Remove deletes it.
func Open(unit int) (*Segment, error) {
	if unit < 0 || unit > MaxUnit {
		return nil, fmt.Errorf("ntpshm: unit %d outside [0, %d]", unit, MaxUnit)
	}
	key := KeyBase + unit
	created := true
	id, err := unix.SysvShmGet(key, Size, unix.IPC_CREAT|unix.IPC_EXCL|perm)
	if errors.Is(err, unix.EEXIST) {
		created = false
		id, err = unix.SysvShmGet(key, Size, perm) // asks for read and write
	}
	if err != nil {
		return nil, getError(unit, key, err)
	}
	return attach(unit, id, created)
}

// openExclusive creates the segment of unit, failing if it exists (tests:
// a segment no one else uses).
func openExclusive(unit int) (*Segment, error) {
	key := KeyBase + unit
	id, err := unix.SysvShmGet(key, Size, unix.IPC_CREAT|unix.IPC_EXCL|perm)
	if err != nil {
		return nil, getError(unit, key, err)
	}
	return attach(unit, id, true)
}

// getError explains a failed shmget of unit's segment.
func getError(unit, key int, err error) error {
	prefix := fmt.Sprintf("ntpshm: unit %d (key %#x): shmget", unit, key)
	switch {
	case errors.Is(err, unix.EACCES):
		return accessError(prefix, err)
	case errors.Is(err, unix.EINVAL):
		return fmt.Errorf("%s: %w: the segment exists with fewer than %d bytes, not a struct shmTime of a 64-bit host (ipcs -m shows it; ipcrm -M %#x removes it)", prefix, err, Size, key)
	}
	return fmt.Errorf("%s: %w", prefix, err)
}

// accessError explains EACCES on a segment that exists.
func accessError(prefix string, err error) error {
	return fmt.Errorf("%s: %w: the segment exists and this process (uid %d) may not write it: chronyd creates it at start, owned by root with the refclock's perm (0600 unless `perm` says otherwise); run the writer as root, or start it before chronyd", prefix, err, unix.Geteuid())
}

// attach attaches segment id of unit.
func attach(unit, id int, created bool) (*Segment, error) {
	data, err := unix.SysvShmAttach(id, 0, 0)
	if err != nil {
		prefix := fmt.Sprintf("ntpshm: unit %d (key %#x): shmat id %d", unit, KeyBase+unit, id)
		if errors.Is(err, unix.EACCES) {
			return nil, accessError(prefix, err)
		}
		return nil, fmt.Errorf("%s: %w", prefix, err)
	}
	if len(data) < Size {
		err := fmt.Errorf("ntpshm: unit %d (key %#x): the segment has %d bytes, expected at least %d (struct shmTime)", unit, KeyBase+unit, len(data), Size)
		return nil, errors.Join(err, unix.SysvShmDetach(data))
	}
	return &Segment{
		unit: unit, id: id, created: created,
		data: data, t: (*shmTime)(unsafe.Pointer(&data[0])),
	}, nil
}

// Unit returns the segment's unit.
func (s *Segment) Unit() int { return s.unit }

// Key returns the segment's SysV IPC key, KeyBase + Unit.
func (s *Segment) Key() int { return KeyBase + s.unit }

// ID returns the segment's SysV shared-memory id (ipcs -m's shmid).
func (s *Segment) ID() int { return s.id }

// Created reports whether Open created the segment (no chronyd had).
func (s *Segment) Created() bool { return s.created }

// Write publishes sample with the mode-1 protocol: mode 1, valid cleared,
// count incremented, the fields, count incremented, valid set, every
// store atomic, so that a reader never takes a half-written sample. It
// fails on a closed segment (ErrClosed) or a sample out of range.
func (s *Segment) Write(sample Sample) error {
	if err := sample.check(); err != nil {
		return fmt.Errorf("ntpshm: unit %d: sample: %w", s.unit, err)
	}
	cSec, cNSec := sample.ClockTime.Unix(), int32(sample.ClockTime.Nanosecond())
	rSec, rNSec := sample.ReceiveTime.Unix(), int32(sample.ReceiveTime.Nanosecond())

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.data == nil {
		return fmt.Errorf("ntpshm: unit %d: write: %w", s.unit, ErrClosed)
	}
	t := s.t
	atomic.StoreInt32(&t.Mode, 1)
	atomic.StoreInt32(&t.Valid, 0)
	atomic.AddInt32(&t.Count, 1)
	atomic.StoreInt64(&t.ClockTimeStampSec, cSec)
	atomic.StoreInt32(&t.ClockTimeStampUSec, cNSec/1000)
	atomic.StoreUint32(&t.ClockTimeStampNSec, uint32(cNSec))
	if s.midWrite != nil {
		s.midWrite()
	}
	atomic.StoreInt64(&t.ReceiveTimeStampSec, rSec)
	atomic.StoreInt32(&t.ReceiveTimeStampUSec, rNSec/1000)
	atomic.StoreUint32(&t.ReceiveTimeStampNSec, uint32(rNSec))
	atomic.StoreInt32(&t.Leap, int32(sample.Leap))
	atomic.StoreInt32(&t.Precision, int32(sample.Precision))
	atomic.AddInt32(&t.Count, 1)
	atomic.StoreInt32(&t.Valid, 1)
	return nil
}

// Attached returns how many processes have the segment attached (ipcs
// -m's nattch), this one included: 2 or more while a chronyd reads it.
func (s *Segment) Attached() (int, error) {
	var d unix.SysvShmDesc
	if _, err := unix.SysvShmCtl(s.id, unix.IPC_STAT, &d); err != nil {
		return 0, fmt.Errorf("ntpshm: unit %d (shmid %d): shmctl IPC_STAT: %w", s.unit, s.id, err)
	}
	return int(d.Nattch), nil
}

// Close detaches the segment, which stays in place for the readers
// attached to it and for the next writer. Closing twice is a no-op.
func (s *Segment) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.data == nil {
		return nil
	}
	data := s.data
	s.data, s.t = nil, nil
	if err := unix.SysvShmDetach(data); err != nil {
		return fmt.Errorf("ntpshm: unit %d (shmid %d): shmdt: %w", s.unit, s.id, err)
	}
	return nil
}

// Remove marks the segment for deletion (IPC_RMID): the kernel frees it
// when the last process detaches, and the key names a new segment from
// then on; a chronyd attached to it keeps reading the old one and sees no
// new samples until it restarts. For tests and an operator's cleanup, not
// for a node's shutdown.
func (s *Segment) Remove() error {
	if _, err := unix.SysvShmCtl(s.id, unix.IPC_RMID, nil); err != nil {
		return fmt.Errorf("ntpshm: unit %d (shmid %d): shmctl IPC_RMID: %w", s.unit, s.id, err)
	}
	return nil
}
