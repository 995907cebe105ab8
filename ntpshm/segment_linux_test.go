//go:build linux && (amd64 || arm64 || ppc64 || ppc64le || riscv64 || s390x || loong64 || mips64 || mips64le)

package ntpshm

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestLayout pins shmTime, the struct Write stores through, to the Off*
// constants and Size that the raw readers (and the C compiler, in
// TestLayoutC) use.
func TestLayout(t *testing.T) {
	var s shmTime
	for _, tc := range []struct {
		field     string
		got, want uintptr
	}{
		{"mode", unsafe.Offsetof(s.Mode), OffMode},
		{"count", unsafe.Offsetof(s.Count), OffCount},
		{"clockTimeStampSec", unsafe.Offsetof(s.ClockTimeStampSec), OffClockTimeStampSec},
		{"clockTimeStampUSec", unsafe.Offsetof(s.ClockTimeStampUSec), OffClockTimeStampUSec},
		{"receiveTimeStampSec", unsafe.Offsetof(s.ReceiveTimeStampSec), OffReceiveTimeStampSec},
		{"receiveTimeStampUSec", unsafe.Offsetof(s.ReceiveTimeStampUSec), OffReceiveTimeStampUSec},
		{"leap", unsafe.Offsetof(s.Leap), OffLeap},
		{"precision", unsafe.Offsetof(s.Precision), OffPrecision},
		{"nsamples", unsafe.Offsetof(s.NSamples), OffNSamples},
		{"valid", unsafe.Offsetof(s.Valid), OffValid},
		{"clockTimeStampNSec", unsafe.Offsetof(s.ClockTimeStampNSec), OffClockTimeStampNSec},
		{"receiveTimeStampNSec", unsafe.Offsetof(s.ReceiveTimeStampNSec), OffReceiveTimeStampNSec},
		{"dummy", unsafe.Offsetof(s.Dummy), OffDummy},
		{"sizeof", unsafe.Sizeof(s), Size},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: Go struct at %d, constant %d", tc.field, tc.got, tc.want)
		}
	}
}

// TestWriteReadBack writes samples and reads them back through a second
// attachment of the segment at the pinned offsets: seconds, µs and ns of
// both timestamps, leap, precision, mode 1 and valid set; chrony's reader
// takes each and gets the timestamps back to the nanosecond.
func TestWriteReadBack(t *testing.T) {
	s := newTestSegment(t)
	raw := rawAttach(t, s)
	for _, tc := range []struct {
		name string
		in   Sample
	}{
		{"global ahead 250 µs", Sample{
			ClockTime:   time.Unix(1_764_000_000, 123_706_789),
			ReceiveTime: time.Unix(1_764_000_000, 123_456_789),
			Precision:   -20, Leap: LeapNone}},
		{"across a second", Sample{
			ClockTime:   time.Unix(1_764_000_001, 999),
			ReceiveTime: time.Unix(1_764_000_000, 999_999_001),
			Precision:   -30, Leap: LeapInsert}},
		{"global behind, not in sync", Sample{
			ClockTime:   time.Unix(1_764_000_000, 0),
			ReceiveTime: time.Unix(1_764_000_000, 5_000),
			Precision:   0, Leap: LeapNotInSync}},
		{"before the epoch", Sample{
			ClockTime:   time.Unix(-2, 500_000_000),
			ReceiveTime: time.Unix(-2, 400_000_001),
			Precision:   -10, Leap: LeapDelete}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := s.Write(tc.in); err != nil {
				t.Fatal(err)
			}
			f := decodeRaw(raw)
			want := rawFields{
				Mode: 1, Count: f.Count,
				ClockSec: tc.in.ClockTime.Unix(), ClockUSec: int32(tc.in.ClockTime.Nanosecond() / 1000),
				ReceiveSec: tc.in.ReceiveTime.Unix(), ReceiveUSec: int32(tc.in.ReceiveTime.Nanosecond() / 1000),
				Leap: int32(tc.in.Leap), Precision: int32(tc.in.Precision), Val: 1,
				ClockNSec: uint32(tc.in.ClockTime.Nanosecond()), ReceiveNSec: uint32(tc.in.ReceiveTime.Nanosecond()),
			}
			if f != want {
				t.Fatalf("segment holds\n%+v\nwant\n%+v", f, want)
			}
			clock, receive, leap, ok := chronyPoll(raw, Size, nil)
			if !ok || !clock.Equal(tc.in.ClockTime) || !receive.Equal(tc.in.ReceiveTime) || leap != int32(tc.in.Leap) {
				t.Fatalf("chrony's reader: ok %v, clock %v, receive %v, leap %d; want %v, %v, %d",
					ok, clock, receive, leap, tc.in.ClockTime, tc.in.ReceiveTime, tc.in.Leap)
			}
			if got := receive.Sub(clock) * -1; got != tc.in.Offset() {
				t.Errorf("offset read %v, Sample.Offset %v", got, tc.in.Offset())
			}
			if _, _, _, ok := chronyPoll(raw, Size, nil); ok {
				t.Errorf("chrony's reader took the same sample twice: it clears valid")
			}
		})
	}
}

// TestCountProtocol checks mode 1: each Write adds 2 to count, odd while
// the fields are being written; a reader that copies during a Write sees
// valid clear and drops the copy; a reader preempted mid-copy across a
// whole Write (old clock fields, new receive fields) sees the count move
// and drops it; a reader that copies between Writes takes the sample.
func TestCountProtocol(t *testing.T) {
	s := newTestSegment(t)
	raw := rawAttach(t, s)
	now := time.Unix(1_764_000_000, 0)
	sample := func(i int) Sample {
		r := now.Add(time.Duration(i) * time.Second)
		return Sample{ClockTime: r.Add(250 * time.Microsecond), ReceiveTime: r, Precision: -20}
	}
	if err := s.Write(sample(0)); err != nil {
		t.Fatal(err)
	}
	before := decodeRaw(raw).Count
	if before%2 != 0 {
		t.Fatalf("count %d after a Write, want even", before)
	}

	var mid rawFields
	var midTaken bool
	s.midWrite = func() {
		mid = decodeRaw(raw)
		_, _, _, midTaken = chronyPoll(raw, Size, nil)
	}
	if err := s.Write(sample(1)); err != nil {
		t.Fatal(err)
	}
	s.midWrite = nil
	after := decodeRaw(raw)
	switch {
	case mid.Count != before+1 || after.Count != before+2:
		t.Errorf("count %d before, %d during, %d after a Write; want %d, %d, %d", before, mid.Count, after.Count, before, before+1, before+2)
	case mid.Val != 0:
		t.Errorf("valid %d during a Write, want 0", mid.Val)
	case midTaken:
		t.Errorf("chrony's reader took a sample copied during a Write")
	case after.Val != 1 || after.Mode != 1:
		t.Errorf("after a Write: valid %d, mode %d; want 1, 1", after.Val, after.Mode)
	}

	// Preempted mid-copy: the clock fields of sample 1, then a whole
	// Write of sample 2, then the rest (valid set again, receive fields
	// of sample 2): torn, and only the count tells.
	_, _, _, ok := chronyPoll(raw, OffReceiveTimeStampSec, func() {
		if err := s.Write(sample(2)); err != nil {
			t.Fatal(err)
		}
	})
	if ok {
		t.Errorf("chrony's reader took a copy torn across a Write")
	}

	clock, receive, _, ok := chronyPoll(raw, Size, nil)
	if want := sample(2); !ok || !clock.Equal(want.ClockTime) || !receive.Equal(want.ReceiveTime) {
		t.Errorf("between Writes chrony's reader got ok %v, %v, %v; want %v, %v", ok, clock, receive, want.ClockTime, want.ReceiveTime)
	}
}

// TestOpenErrors: units out of range, a segment too small to be a struct
// shmTime, a sample out of range and a Write after Close are refused with
// what was expected.
func TestOpenErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(t *testing.T) error
		want string
	}{
		{"negative unit", func(*testing.T) error { _, err := Open(-1); return err }, "unit -1 outside [0, 255]"},
		{"unit too large", func(*testing.T) error { _, err := Open(MaxUnit + 1); return err }, "unit 256 outside [0, 255]"},
		{"segment too small", func(t *testing.T) error {
			_, err := Open(smallSegment(t))
			return err
		}, "the segment exists with fewer than 96 bytes"},
		{"precision out of range", func(t *testing.T) error {
			s := newTestSegment(t)
			return s.Write(Sample{ClockTime: time.Unix(1, 0), ReceiveTime: time.Unix(1, 0), Precision: -31})
		}, "precision -31 outside [-30, 0]"},
		{"leap out of range", func(t *testing.T) error {
			s := newTestSegment(t)
			return s.Write(Sample{ClockTime: time.Unix(1, 0), ReceiveTime: time.Unix(1, 0), Leap: 4})
		}, "leap 4 outside [0, 3]"},
		{"zero receive time", func(t *testing.T) error {
			s := newTestSegment(t)
			return s.Write(Sample{ClockTime: time.Unix(1, 0)})
		}, "ReceiveTime is zero"},
		{"write after close", func(t *testing.T) error {
			s := newTestSegment(t)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			err := s.Write(Sample{ClockTime: time.Unix(1, 0), ReceiveTime: time.Unix(1, 0)})
			if !errors.Is(err, ErrClosed) {
				t.Errorf("error %v is not ErrClosed", err)
			}
			return err
		}, "segment is closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run(t)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// smallSegment creates a 16-byte segment on a free test unit, removed at
// the end of the test, and returns the unit.
func smallSegment(t *testing.T) int {
	t.Helper()
	for u := testUnitLo; u <= testUnitHi; u++ {
		id, err := unix.SysvShmGet(KeyBase+u, 16, unix.IPC_CREAT|unix.IPC_EXCL|0o600)
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if _, err := unix.SysvShmCtl(id, unix.IPC_RMID, nil); err != nil {
				t.Errorf("cleanup: IPC_RMID: %v", err)
			}
		})
		return u
	}
	t.Fatal("no free test unit")
	return 0
}

// TestReopen: Open attaches a segment that exists (as chronyd leaves it)
// without creating it, sees what the first writer wrote, and Close leaves
// the segment in place for the next writer; Remove deletes it.
func TestReopen(t *testing.T) {
	first := newTestSegment(t)
	if !first.Created() {
		t.Errorf("the test segment's Created() is false")
	}
	in := Sample{ClockTime: time.Unix(1_764_000_000, 250_000), ReceiveTime: time.Unix(1_764_000_000, 0), Precision: -20}
	if err := first.Write(in); err != nil {
		t.Fatal(err)
	}
	second, err := Open(first.Unit())
	if err != nil {
		t.Fatal(err)
	}
	if second.Created() || second.ID() != first.ID() {
		t.Errorf("second Open: created %v, id %d; want false, %d", second.Created(), second.ID(), first.ID())
	}
	if n, err := second.Attached(); err != nil || n != 2 {
		t.Errorf("Attached() = %d, %v; want 2 attachments", n, err)
	}
	if err := second.Close(); err != nil {
		t.Fatal(err)
	}
	if err := second.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if n, err := first.Attached(); err != nil || n != 1 {
		t.Errorf("after Close, Attached() = %d, %v; want 1", n, err)
	}
	f := decodeRaw(first.data)
	if f.ClockSec != in.ClockTime.Unix() || f.ClockNSec != 250_000 || f.Val != 1 {
		t.Errorf("the segment lost the sample across the second writer's Close: %+v", f)
	}
	if _, err := unix.SysvShmGet(first.Key(), 0, 0); err != nil {
		t.Errorf("segment gone after a Close: %v", err)
	}
}

// cLayout is a C program that prints struct shmTime's size and offsets
// (as ntpd's refclock_shm.c and gpsd declare it), then reads the segment
// of the key in argv[1] as chrony's shm_poll does and prints the sample.
const cLayout = `#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/ipc.h>
#include <sys/shm.h>

struct shmTime {
	int mode;
	volatile int count;
	time_t clockTimeStampSec;
	int clockTimeStampUSec;
	time_t receiveTimeStampSec;
	int receiveTimeStampUSec;
	int leap;
	int precision;
	int nsamples;
	volatile int valid;
	unsigned clockTimeStampNSec;
	unsigned receiveTimeStampNSec;
	int dummy[8];
};

#define OFF(f) printf(#f " %zu\n", offsetof(struct shmTime, f))

int main(int argc, char **argv) {
	printf("sizeof %zu\n", sizeof(struct shmTime));
	OFF(mode); OFF(count); OFF(clockTimeStampSec); OFF(clockTimeStampUSec);
	OFF(receiveTimeStampSec); OFF(receiveTimeStampUSec); OFF(leap);
	OFF(precision); OFF(nsamples); OFF(valid); OFF(clockTimeStampNSec);
	OFF(receiveTimeStampNSec); OFF(dummy);
	int id = shmget((key_t)strtol(argv[1], NULL, 0), sizeof(struct shmTime), 0);
	if (id == -1) { perror("shmget"); return 1; }
	struct shmTime *shm = shmat(id, 0, 0);
	if ((long)shm == -1) { perror("shmat"); return 1; }
	struct shmTime t = *shm;
	if ((t.mode == 1 && t.count != shm->count) || !(t.mode == 0 || t.mode == 1) || !t.valid) {
		printf("ignored %d %d %d\n", t.mode, t.count, t.valid);
		return 0;
	}
	shm->valid = 0;
	struct timespec r, c;
	r.tv_sec = t.receiveTimeStampSec; c.tv_sec = t.clockTimeStampSec;
	if (t.clockTimeStampNSec / 1000 == t.clockTimeStampUSec && t.receiveTimeStampNSec / 1000 == t.receiveTimeStampUSec) {
		r.tv_nsec = t.receiveTimeStampNSec; c.tv_nsec = t.clockTimeStampNSec;
	} else {
		r.tv_nsec = 1000L * t.receiveTimeStampUSec; c.tv_nsec = 1000L * t.clockTimeStampUSec;
	}
	printf("sample %lld %ld %lld %ld %d %d\n", (long long)c.tv_sec, c.tv_nsec, (long long)r.tv_sec, r.tv_nsec, t.leap, t.precision);
	return 0;
}
`

// TestLayoutC compiles cLayout with gcc and checks that the C compiler
// lays struct shmTime out as the Off* constants say (96 bytes on amd64),
// and that chrony's reading of the segment, in C, gets back what Write
// wrote, to the nanosecond.
func TestLayoutC(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found: the C layout is not checked (TestLayout still pins the Go one)")
	}
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "layout.c"), filepath.Join(dir, "layout")
	if err := os.WriteFile(src, []byte(cLayout), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(gcc, "-O2", "-Wall", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	s := newTestSegment(t)
	in := Sample{ClockTime: time.Unix(1_764_000_000, 987_904_321), ReceiveTime: time.Unix(1_764_000_000, 987_654_321), Precision: -23, Leap: LeapInsert}
	if err := s.Write(in); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, strconv.Itoa(s.Key())).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, out)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, _ := strings.Cut(line, " ")
		got[k] = v
	}
	for _, tc := range []struct {
		field string
		want  int
	}{
		{"sizeof", Size}, {"mode", OffMode}, {"count", OffCount},
		{"clockTimeStampSec", OffClockTimeStampSec}, {"clockTimeStampUSec", OffClockTimeStampUSec},
		{"receiveTimeStampSec", OffReceiveTimeStampSec}, {"receiveTimeStampUSec", OffReceiveTimeStampUSec},
		{"leap", OffLeap}, {"precision", OffPrecision}, {"nsamples", OffNSamples}, {"valid", OffValid},
		{"clockTimeStampNSec", OffClockTimeStampNSec}, {"receiveTimeStampNSec", OffReceiveTimeStampNSec},
		{"dummy", OffDummy},
	} {
		if got[tc.field] != strconv.Itoa(tc.want) {
			t.Errorf("%s: gcc says %q, the constant %d", tc.field, got[tc.field], tc.want)
		}
	}
	if want := "1764000000 987904321 1764000000 987654321 1 -23"; got["sample"] != want {
		t.Errorf("chrony's reader in C read %q (ignored: %q), want %q", got["sample"], got["ignored"], want)
	}
	t.Logf("gcc: sizeof(struct shmTime) = %s; C reader: %s", got["sizeof"], got["sample"])
}

// TestOpenNotOwner: a writer that is not root cannot attach the segment
// root created owner-only (as chronyd does at start), and Open says why
// and what to do. The writer is this test binary run again as nobody.
func TestOpenNotOwner(t *testing.T) {
	if u := os.Getenv("NTPSHM_TEST_UNIT"); u != "" {
		unit, _ := strconv.Atoi(u)
		_, err := Open(unit)
		fmt.Printf("open as uid %d: %v\n", os.Geteuid(), err)
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root, to create a root-owned segment and run a writer as nobody")
	}
	s := newTestSegment(t)
	// go test's build directory is root's alone: copy the binary where
	// nobody can run it.
	dir, err := os.MkdirTemp("", "ntpshm-nobody")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "ntpshm.test")
	b, err := os.ReadFile(os.Args[0])
	if err == nil {
		err = os.WriteFile(bin, b, 0o755)
	}
	if err == nil {
		err = os.Chmod(dir, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestOpenNotOwner$", "-test.v")
	cmd.Env = append(os.Environ(), "NTPSHM_TEST_UNIT="+strconv.Itoa(s.Unit()))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil && !strings.Contains(string(out), "open as uid") {
		t.Skipf("nobody cannot run the test binary %s here (a noexec /tmp?): %v\n%s", bin, err, out)
	}
	if err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, out)
	}
	want := fmt.Sprintf("open as uid 65534: ntpshm: unit %d (key %#x): shmget: permission denied: the segment exists and this process (uid 65534) may not write it", s.Unit(), s.Key())
	if !strings.Contains(string(out), want) {
		t.Fatalf("as nobody:\n%s\nwant a line containing %q", out, want)
	}
}
