package kineto

import (
	"fmt"
	"math"
	"strconv"
)

// The limits of a trace's times, all in one place. Decode refuses a trace
// beyond them with an *Error naming the field, its value and the limit;
// [Trace.Check] (which [ToXSpace] applies) does the same for a Trace built
// otherwise. Within them every time this package computes from a trace
// fits an int64: an event's end TsNs + DurNs, its Unix start BaseTimeNs +
// TsNs and end BaseTimeNs + TsNs + DurNs, the XSpace time base and the
// offsets and durations in ps counted from it.
const (
	// MaxTimeNs bounds the magnitude, in ns, of baseTimeNanoseconds, of
	// every event's ts and dur, and of the sums ts + dur,
	// baseTimeNanoseconds + ts and baseTimeNanoseconds + ts + dur: 4e18 ns,
	// about 126 years either side of the Unix epoch (up to the year 2096).
	// Two values within it add up without overflow, so each sum is checked
	// before the next term is added.
	MaxTimeNs = 4_000_000_000_000_000_000

	// maxSpanNs bounds |time − time base| and |dur| of an event ToXSpace
	// converts, so that offsets and ends in ps fit an int64 with room to
	// spare: about 26 days.
	maxSpanNs = math.MaxInt64 / 1000 / 4
)

// MaxTopKeys bounds the members of a trace's top-level object, whose
// keys Decode keeps to refuse a second of one (every other object is in
// memory whole while its keys are checked): Kineto writes about ten
// (schemaVersion, deviceProperties, distributedInfo, traceEvents,
// traceName, baseTimeNanoseconds, ...).
const MaxTopKeys = 4096

// maxTimeUs is MaxTimeNs in µs, the unit of ts and dur in the file.
const maxTimeUs = MaxTimeNs / 1000

// inRange reports |v| ≤ MaxTimeNs.
func inRange(v int64) bool { return -MaxTimeNs <= v && v <= MaxTimeNs }

// outOfRange is the error of a value beyond its limit: "VALUE is out of
// range (|EXPR| ≤ LIMIT)".
func outOfRange(expr, value, limit string) error {
	return fmt.Errorf("%s is out of range (|%s| ≤ %s)", value, expr, limit)
}

// sumOutOfRange is the error of a sum of terms beyond MaxTimeNs.
func sumOutOfRange(expr string, terms ...int64) error {
	v := ""
	for i, t := range terms {
		if i > 0 {
			v += " + "
		}
		v += strconv.FormatInt(t, 10)
	}
	return outOfRange(expr, expr+" = "+v+" ns", strconv.FormatInt(MaxTimeNs, 10)+" ns")
}

// checkEvent checks an event's times, in ns, against MaxTimeNs: ts and dur
// alone, ts + dur, and, with the trace's base, base + ts and base + ts +
// dur; base must be within it. It returns the key at fault ("ts" or "dur")
// and why, or "", nil. No sum overflows: each is taken of values already
// found within the limit.
func checkEvent(base, ts, dur int64) (key string, err error) {
	limit := strconv.FormatInt(MaxTimeNs, 10) + " ns"
	switch {
	case !inRange(ts):
		return "ts", outOfRange("ts", strconv.FormatInt(ts, 10)+" ns", limit)
	case !inRange(dur):
		return "dur", outOfRange("dur", strconv.FormatInt(dur, 10)+" ns", limit)
	case !inRange(ts + dur):
		return "dur", sumOutOfRange("ts + dur", ts, dur)
	case !inRange(base + ts):
		return "ts", sumOutOfRange("baseTimeNanoseconds + ts", base, ts)
	case !inRange(base + ts + dur):
		return "dur", sumOutOfRange("baseTimeNanoseconds + ts + dur", base, ts, dur)
	}
	return "", nil
}

// checkBase checks baseTimeNanoseconds against MaxTimeNs.
func checkBase(base int64) error {
	if !inRange(base) {
		return outOfRange("baseTimeNanoseconds", strconv.FormatInt(base, 10)+" ns", strconv.FormatInt(MaxTimeNs, 10)+" ns")
	}
	return nil
}

// Check reports the first time of t beyond the limits (see MaxTimeNs):
// BaseTimeNs, then each event's TsNs, DurNs and their sums, as an error
// naming the trace, the event and the field; nil when all are within them.
// A trace from Decode always passes.
func (t *Trace) Check() error {
	if err := checkBase(t.BaseTimeNs); err != nil {
		return fmt.Errorf("kineto: %s: baseTimeNanoseconds: %w", t.Name, err)
	}
	for i := range t.Events {
		e := &t.Events[i]
		if key, err := checkEvent(t.BaseTimeNs, e.TsNs, e.DurNs); err != nil {
			return fmt.Errorf("kineto: %s: event %d (%q): %s: %w", t.Name, i, e.Name, key, err)
		}
	}
	return nil
}

// addSat is a + b, saturated at the ends of the int64 range instead of
// wrapping around.
func addSat(a, b int64) int64 {
	s := a + b
	switch {
	case a > 0 && b > 0 && s < 0:
		return math.MaxInt64
	case a < 0 && b < 0 && s >= 0:
		return math.MinInt64
	}
	return s
}
