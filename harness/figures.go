package harness

import "github.com/chronosync/chronosync/harness/engine"

// Unit is a unit of time in which printed figures are written
// (engine.Unit): a table prints all its time figures in one Unit.
type Unit = engine.Unit

// The units of time, smallest first (engine's).
var (
	Nanoseconds  = engine.Nanoseconds
	Microseconds = engine.Microseconds
	Milliseconds = engine.Milliseconds
	Seconds      = engine.Seconds
)

// UnitFor returns the unit for figures whose largest magnitude, in ns, is
// among vs (engine.UnitFor).
func UnitFor(vs ...float64) Unit { return engine.UnitFor(vs...) }

// FormatNS returns one figure, in ns, in the unit that suits it, rounded
// (engine.FormatNS).
func FormatNS(v float64) string { return engine.FormatNS(v) }

// Count returns n with its thousands separated by commas (engine.Count).
func Count[T ~int | ~int64 | ~uint64](n T) string { return engine.Count(n) }
