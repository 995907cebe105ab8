package combine

import (
	"fmt"
	"math"
)

// Picosecond arithmetic. XSpace times are int64 ps, which reach only ±106
// days (±maxPsNs ns) around their zero; an event's time in ps is its line's
// timestamp_ns·1000 plus its offset_ps, and aligning it adds a clock
// model's correction. A large correction (a clock model far out, up to the
// year offsets.jsonl allows) or a large input time would wrap around the
// int64 range and come out as a time on the other side of it, so every
// conversion and sum on the way is checked: these return false where the
// result does not fit, and the caller reports the event.

// maxPsNs is the most ns an int64 of ps holds: 9223372036854775.
const maxPsNs = math.MaxInt64 / 1000

// mulPs returns ns in ps, ns·1000, and whether it fits an int64.
func mulPs(ns int64) (int64, bool) {
	if ns > maxPsNs || ns < -maxPsNs {
		return 0, false
	}
	return ns * 1000, true
}

// addPs returns a + b and whether the sum fits an int64.
func addPs(a, b int64) (int64, bool) {
	s := a + b
	return s, (s > a) == (b > 0)
}

// subPs returns a − b and whether the difference fits an int64.
func subPs(a, b int64) (int64, bool) {
	d := a - b
	return d, (d < a) == (b > 0)
}

// psFrom is global (ns) in ps from outBase (ns), plus frac ps (0 ≤ frac <
// 1000), and whether that fits an int64. Small enough to be inlined: it
// runs twice for every event.
func psFrom(global, outBase, frac int64) (int64, bool) {
	d, ok := subPs(global, outBase)
	// Within one ns of either end, frac decides; past it, the sum wraps
	// to the other sign.
	s := d*1000 + frac
	return s, ok && d >= -maxPsNs-1 && d <= maxPsNs && (s < 0) == (d < 0)
}

// psFromError is the error of an aligned time (what: "start" or "end")
// psFrom refused.
func psFromError(what string, global, outBase int64) error {
	return fmt.Errorf("aligned %s %d ns lies beyond the ±%d ns around the combined trace's time base (%d ns) that int64 picoseconds reach (is the node's clock model out of range?)",
		what, global, int64(maxPsNs), outBase)
}

// eventError names the event e of line lineID of the plane being
// rewritten, with what went wrong.
func (pj *planeJob) eventError(lineID int64, e *wireEvent, err error) error {
	name := ""
	if m := pj.p.meta[e.meta]; m != nil {
		name = m.name
	}
	return fmt.Errorf("combine: node %d (%s): plane %s line %d: event %q at offset_ps %d: %w",
		pj.node, pj.path, pj.p.name, lineID, name, e.offset, err)
}
