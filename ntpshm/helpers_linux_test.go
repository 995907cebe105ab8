//go:build linux && (amd64 || arm64 || ppc64 || ppc64le || riscv64 || s390x || loong64 || mips64 || mips64le)

package ntpshm

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// testUnits are the units the tests create segments on: high enough that
// no gpsd, ptp4l or chrony configuration of this host uses them, and each
// taken only if no segment has its key (openExclusive).
const testUnitLo, testUnitHi = 200, MaxUnit

// newTestSegment creates a segment on a unit no one else uses and removes
// it when the test ends, passed or failed.
func newTestSegment(t testing.TB) *Segment {
	t.Helper()
	for u := testUnitLo; u <= testUnitHi; u++ {
		s, err := openExclusive(u)
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		if errors.Is(err, unix.ENOSYS) {
			t.Skipf("SysV shared memory is not available here: %v", err)
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := s.Remove(); err != nil {
				t.Errorf("cleanup: %v", err)
			}
			if err := s.Close(); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		})
		return s
	}
	t.Fatalf("every unit in [%d, %d] has a segment already (ipcs -m)", testUnitLo, testUnitHi)
	return nil
}

// rawAttach attaches s's segment a second time, as another process would,
// and detaches it when the test ends.
func rawAttach(t *testing.T, s *Segment) []byte {
	t.Helper()
	id, err := unix.SysvShmGet(s.Key(), 0, 0)
	if err != nil {
		t.Fatalf("shmget key %#x: %v", s.Key(), err)
	}
	b, err := unix.SysvShmAttach(id, 0, 0)
	if err != nil {
		t.Fatalf("shmat id %d: %v", id, err)
	}
	t.Cleanup(func() {
		if err := unix.SysvShmDetach(b); err != nil {
			t.Errorf("cleanup: shmdt: %v", err)
		}
	})
	return b
}

// rawFields is struct shmTime decoded from the bytes at the Off* offsets.
type rawFields struct {
	Mode, Count                                 int32
	ClockSec                                    int64
	ClockUSec                                   int32
	ReceiveSec                                  int64
	ReceiveUSec, Leap, Precision, NSamples, Val int32
	ClockNSec, ReceiveNSec                      uint32
}

// decodeRaw decodes b at the pinned offsets, independently of shmTime.
func decodeRaw(b []byte) rawFields {
	ne := binary.NativeEndian
	i32 := func(off int) int32 { return int32(ne.Uint32(b[off:])) }
	return rawFields{
		Mode:        i32(OffMode),
		Count:       i32(OffCount),
		ClockSec:    int64(ne.Uint64(b[OffClockTimeStampSec:])),
		ClockUSec:   i32(OffClockTimeStampUSec),
		ReceiveSec:  int64(ne.Uint64(b[OffReceiveTimeStampSec:])),
		ReceiveUSec: i32(OffReceiveTimeStampUSec),
		Leap:        i32(OffLeap),
		Precision:   i32(OffPrecision),
		NSamples:    i32(OffNSamples),
		Val:         i32(OffValid),
		ClockNSec:   ne.Uint32(b[OffClockTimeStampNSec:]),
		ReceiveNSec: ne.Uint32(b[OffReceiveTimeStampNSec:]),
	}
}

// chronyPoll is chrony 4.3's shm_poll (refclock_shm.c) on raw segment
// bytes: copy the segment, drop the copy unless valid is set and, in mode
// 1, the count copied equals the count now, clear valid, and take the
// nanosecond fields where they agree with the microsecond ones. If between
// is not nil it runs after the first split bytes are copied and before the
// rest, as when a writer runs while the reader is preempted mid-copy.
func chronyPoll(b []byte, split int, between func()) (clock, receive time.Time, leap int32, ok bool) {
	copied := make([]byte, Size)
	copy(copied[:split], b[:split])
	if between != nil {
		between()
	}
	copy(copied[split:], b[split:Size])
	c := decodeRaw(copied)
	now := int32(binary.NativeEndian.Uint32(b[OffCount:]))
	if (c.Mode == 1 && c.Count != now) || !(c.Mode == 0 || c.Mode == 1) || c.Val == 0 {
		return time.Time{}, time.Time{}, 0, false
	}
	binary.NativeEndian.PutUint32(b[OffValid:], 0)
	cn, rn := int64(c.ClockUSec)*1000, int64(c.ReceiveUSec)*1000
	if int32(c.ClockNSec/1000) == c.ClockUSec && int32(c.ReceiveNSec/1000) == c.ReceiveUSec {
		cn, rn = int64(c.ClockNSec), int64(c.ReceiveNSec)
	}
	return time.Unix(c.ClockSec, cn), time.Unix(c.ReceiveSec, rn), c.Leap, true
}
