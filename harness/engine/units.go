package engine

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Unit is a unit of time in which printed figures are written. A table
// prints all its time figures in one Unit, chosen by UnitFor from its
// largest figure and named once in its header, so that no column mixes ns
// and µs.
type Unit struct {
	// Name is the unit's symbol: ns, µs, ms or s.
	Name string
	// NS is the number of nanoseconds in one unit.
	NS float64
	// Decimals is how many decimals a figure is rounded to: none in ns,
	// two in the larger units (0.76 µs, 13.02 µs).
	Decimals int
}

// The units of time, smallest first.
var (
	Nanoseconds  = Unit{Name: "ns", NS: 1, Decimals: 0}
	Microseconds = Unit{Name: "µs", NS: 1e3, Decimals: 2}
	Milliseconds = Unit{Name: "ms", NS: 1e6, Decimals: 2}
	Seconds      = Unit{Name: "s", NS: 1e9, Decimals: 2}
)

var units = [...]Unit{Nanoseconds, Microseconds, Milliseconds, Seconds}

// UnitFor returns the unit for figures whose largest magnitude, in ns, is
// among vs: the largest unit of which that figure, rounded as the next
// smaller unit prints it, is at least one (999.4 ns prints as 999 ns, 999.6
// ns as 1.00 µs, not 1000 ns); ns for figures under 1 µs, for no figures
// and for figures that are all 0. NaN and infinite figures are ignored.
func UnitFor(vs ...float64) Unit {
	largest := 0.0
	for _, v := range vs {
		if a := math.Abs(v); !math.IsNaN(a) && !math.IsInf(a, 0) && a > largest {
			largest = a
		}
	}
	u := Nanoseconds
	for i, c := range units[1:] {
		// Rounded as the smaller unit prints it, is the figure a whole
		// one of c?
		if prev := units[i]; round(largest/prev.NS, prev.Decimals)*prev.NS >= c.NS {
			u = c
		}
	}
	return u
}

// Format returns v, in ns, in the unit u without the unit's name, rounded
// half away from zero to u.Decimals (7.72 ns → "8"; 13015.4 ns in µs →
// "13.02"). Rounding, not truncation: a figure of 7.72 ns is never "7".
func (u Unit) Format(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	r := round(v/u.NS, u.Decimals)
	if r == 0 {
		r = 0 // no "-0"
	}
	return strconv.FormatFloat(r, 'f', u.Decimals, 64)
}

// Text returns v, in ns, in the unit u with its name: "8 ns", "13.02 µs".
func (u Unit) Text(v float64) string { return u.Format(v) + " " + u.Name }

// FormatNS returns one figure, in ns, in the unit that suits it, rounded:
// FormatNS(7.72) is "8 ns", FormatNS(1416) "1.42 µs", FormatNS(100078.4)
// "100.08 µs". For figures printed side by side use one UnitFor them all.
func FormatNS(v float64) string { return UnitFor(v).Text(v) }

// PadRight pads names with spaces to the width of the widest, so that a
// tabwriter that aligns its columns right (the figures) still shows them
// aligned left.
func PadRight(names []string) []string {
	width := 0
	for _, n := range names {
		width = max(width, utf8.RuneCountInString(n))
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n + strings.Repeat(" ", width-utf8.RuneCountInString(n))
	}
	return out
}

// round rounds v half away from zero to dec decimals.
func round(v float64, dec int) float64 {
	p := math.Pow10(dec)
	return math.Round(v*p) / p
}

// Count returns n with its thousands separated by commas: 11,170,204.
func Count[T ~int | ~int64 | ~uint64](n T) string {
	var s string
	if n < 0 {
		s = strconv.FormatInt(int64(n), 10)
	} else {
		s = strconv.FormatUint(uint64(n), 10)
	}
	digits := strings.TrimPrefix(s, "-")
	var b strings.Builder
	b.WriteString(s[:len(s)-len(digits)])
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
