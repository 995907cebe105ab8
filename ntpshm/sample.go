package ntpshm

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/chronosync/chronosync/analysis/offsets"
)

// KeyBase is the SysV IPC key of unit 0: 0x4E545030, "NTP0". Unit u has
// key KeyBase + u, as in ntpd, gpsd and chrony.
const KeyBase = 0x4E545030

// MaxUnit is the largest unit Open takes (ntpd's 127.127.28.u has u ≤ 255).
const MaxUnit = 255

// Size is the size of struct shmTime on a 64-bit Linux host, in bytes.
const Size = 96

// Offsets of struct shmTime's fields on a 64-bit Linux host (time_t of 8
// bytes, aligned to 8; 4 bytes of padding after each *USec field that
// precedes a time_t, 4 at the end).
const (
	OffMode                 = 0
	OffCount                = 4
	OffClockTimeStampSec    = 8
	OffClockTimeStampUSec   = 16
	OffReceiveTimeStampSec  = 24
	OffReceiveTimeStampUSec = 32
	OffLeap                 = 36
	OffPrecision            = 40
	OffNSamples             = 44
	OffValid                = 48
	OffClockTimeStampNSec   = 52
	OffReceiveTimeStampNSec = 56
	OffDummy                = 60 // int dummy[8]
)

// Leap is the leap indicator of a sample, NTP's values.
type Leap int32

// The leap indicators. chrony takes the first three and drops a sample
// marked LeapNotInSync (a debug build of it logs "refclock sample ignored
// bad leap"), so writing LeapNotInSync tells it not to use the sample.
const (
	LeapNone      Leap = 0 // no leap second pending
	LeapInsert    Leap = 1 // the last minute of the day has 61 seconds
	LeapDelete    Leap = 2 // the last minute of the day has 59 seconds
	LeapNotInSync Leap = 3 // the reference is not synchronised
)

// Precision limits of a Sample, log2 seconds: 1 ns and 1 s.
const (
	MinPrecision = -30
	MaxPrecision = 0
)

// MaxOffset bounds |ClockTime − ReceiveTime| in FromModel: a model whose
// global time is further from CLOCK_REALTIME than this is not on the Unix
// epoch (a run whose clocks count from its start reads 1970 as global
// time), and feeding it to chrony would step the host by decades.
const MaxOffset = 24 * time.Hour

// ErrClosed is returned by Write on a closed Segment.
var ErrClosed = errors.New("ntpshm: segment is closed")

// Sample is one reading of the reference clock: at the instant the host's
// CLOCK_REALTIME read ReceiveTime, global time was ClockTime. chrony reads
// the last sample written once per refclock dpoll and drops it if
// ReceiveTime is then older than 2^(poll+1) s or in the future: write
// samples of fresh readings, at least once per dpoll.
type Sample struct {
	// ClockTime is the reference's time: global time (the cluster's
	// timeline) at the instant of ReceiveTime.
	ClockTime time.Time
	// ReceiveTime is the host's CLOCK_REALTIME at that instant
	// (time.Now's wall clock).
	ReceiveTime time.Time
	// Precision is the sample's precision, log2 seconds, in
	// [MinPrecision, MaxPrecision]: -20 is about 1 µs. ntpd uses it;
	// chrony does not (its refclock `precision` option stands instead).
	Precision int
	// Leap is the leap indicator.
	Leap Leap
}

// Offset is ClockTime − ReceiveTime: how far global time is ahead of the
// host's clock, the offset chrony measures for the sample.
func (s Sample) Offset() time.Duration { return s.ClockTime.Sub(s.ReceiveTime) }

// check reports what is wrong with s for Write, or nil.
func (s Sample) check() error {
	switch {
	case s.ClockTime.IsZero():
		return errors.New("ClockTime is zero")
	case s.ReceiveTime.IsZero():
		return errors.New("ReceiveTime is zero")
	case s.Precision < MinPrecision || s.Precision > MaxPrecision:
		return fmt.Errorf("precision %d outside [%d, %d] (log2 seconds)", s.Precision, MinPrecision, MaxPrecision)
	case s.Leap < LeapNone || s.Leap > LeapNotInSync:
		return fmt.Errorf("leap %d outside [0, 3]", s.Leap)
	}
	return nil
}

// FromModel turns a node's clock model and a reading of its clock into a
// Sample. local is a reading of the node's clock (the clock o maps, S:
// nanoseconds since the Unix epoch on a node run by `chronosync node`) and
// realtime the host's CLOCK_REALTIME at the same instant; on a host whose
// S is CLOCK_REALTIME itself, as in production, pass
// realtime.UnixNano() as local.
//
// ClockTime is global time at that instant, o.GlobalAfter(local, n) with n
// the steps local comes after, computed as local minus the model's small
// correction (o.OffsetAfter) so that no float64 of epoch magnitude rounds
// it (one holds multiples of 256 ns there), then carried to realtime's
// scale: ClockTime = realtime + (global − local). ReceiveTime is realtime.
// Precision is log2 of o.SigmaAt(local) in seconds, rounded up and
// clamped to [MinPrecision, MaxPrecision]; Leap is LeapNone.
//
// It fails when the correction is not finite or when |ClockTime −
// ReceiveTime| exceeds MaxOffset (a model not on the Unix epoch).
// Whether the model is still valid at local (no round within the node's
// deadline) is the caller's to decide: a node whose model is stale should
// stop writing, or write LeapNotInSync, rather than extrapolate.
func FromModel(o offsets.Offset, local int64, realtime time.Time) (Sample, error) {
	corr := o.OffsetAfter(local, o.StepsBefore(local)) // local − global, ns
	if math.IsNaN(corr) || math.IsInf(corr, 0) {
		return Sample{}, fmt.Errorf("ntpshm: node %d round %d: the model's correction at local %d ns is %v, expected a finite number", o.NodeID, o.RoundID, local, corr)
	}
	// global − realtime = (local − realtime) − corr, in ns.
	rt := realtime.UnixNano()
	d := local - rt
	if (local >= rt) != (d >= 0) { // overflowed: far beyond MaxOffset
		return Sample{}, fmt.Errorf("ntpshm: node %d round %d: local %d ns is too far from CLOCK_REALTIME %d ns, expected them within %v: the model's clock is not CLOCK_REALTIME since the Unix epoch", o.NodeID, o.RoundID, local, rt, MaxOffset)
	}
	ahead := float64(d) - corr
	if math.Abs(ahead) > float64(MaxOffset) {
		return Sample{}, fmt.Errorf("ntpshm: node %d round %d: global time at local %d ns is %.0f ns from CLOCK_REALTIME %d ns, more than the limit %v: the model's clock is not CLOCK_REALTIME since the Unix epoch", o.NodeID, o.RoundID, local, ahead, rt, MaxOffset)
	}
	return Sample{
		ClockTime:   realtime.Add(time.Duration(math.Round(ahead))),
		ReceiveTime: realtime,
		Precision:   PrecisionOf(o.SigmaAt(local) * 1e-9),
		Leap:        LeapNone,
	}, nil
}

// PrecisionOf returns NTP's precision for an uncertainty of sigma
// seconds: ⌈log2 sigma⌉ clamped to [MinPrecision, MaxPrecision] (a σ of
// zero gives MinPrecision; an infinite one, or not a number, MaxPrecision).
func PrecisionOf(sigma float64) int {
	switch {
	case math.IsNaN(sigma) || math.IsInf(sigma, 1):
		return MaxPrecision
	case sigma <= 0:
		return MinPrecision
	}
	p := math.Ceil(math.Log2(sigma))
	return int(max(MinPrecision, min(MaxPrecision, p)))
}
