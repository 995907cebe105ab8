package scenario

import (
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Dist says how a [Spec] value is chosen.
type Dist string

// The distributions of a Spec.
const (
	DistFixed   Dist = ""        // the value A
	DistUniform Dist = "uniform" // uniform in [A, B]
	DistNormal  Dist = "normal"  // normal with mean A and standard deviation B
)

// Spec is a value that is fixed or drawn when the scenario is resolved.
// It is written as a plain value, uniform(a, b) or normal(mean, sd).
type Spec[T float64 | time.Duration] struct {
	Dist Dist
	A, B T
}

// Fixed returns a Spec that is always v.
func Fixed[T float64 | time.Duration](v T) *Spec[T] { return &Spec[T]{A: v} }

// UniformOf returns a Spec drawn uniformly from [a, b].
func UniformOf[T float64 | time.Duration](a, b T) *Spec[T] {
	return &Spec[T]{Dist: DistUniform, A: a, B: b}
}

// NormalOf returns a Spec drawn from a normal distribution.
func NormalOf[T float64 | time.Duration](mean, sd T) *Spec[T] {
	return &Spec[T]{Dist: DistNormal, A: mean, B: sd}
}

// String formats the spec as it is written in a scenario file.
func (s Spec[T]) String() string {
	switch s.Dist {
	case DistUniform, DistNormal:
		return fmt.Sprintf("%s(%s, %s)", s.Dist, formatValue(s.A), formatValue(s.B))
	}
	return formatValue(s.A)
}

// Draw returns the spec's value, drawing from r if it is random: one
// uniform or normal draw, in whole nanoseconds for durations.
func (s Spec[T]) Draw(r *rand.Rand) T {
	switch s.Dist {
	case DistUniform:
		if s.A >= s.B {
			return s.A
		}
		if d, ok := any(s.A).(time.Duration); ok {
			span := uint64(any(s.B).(time.Duration)) - uint64(d) // B > A: no wrap
			var off uint64
			if span == math.MaxUint64 {
				off = r.Uint64()
			} else {
				off = r.Uint64N(span + 1)
			}
			return T(d + time.Duration(off))
		}
		return s.A + T(r.Float64()*float64(s.B-s.A))
	case DistNormal:
		v := float64(s.A) + float64(s.B)*r.NormFloat64()
		if _, ok := any(s.A).(time.Duration); ok {
			return T(math.Round(v))
		}
		return T(v)
	}
	return s.A
}

// formatValue formats a duration the way durations are written in scenario
// files (ASCII "us" for microseconds) and a number in the shortest form
// that parses back to the same float64.
func formatValue[T float64 | time.Duration](v T) string {
	if d, ok := any(v).(time.Duration); ok {
		return formatDuration(d)
	}
	return formatFloat(float64(v))
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

const durationHelp = "expected a duration like 50us, 2ms or 1s (units ns, us, µs, ms, s, m, h)"

// parseDuration parses Go duration syntax ("1.5ms", "50us", "-2ms", "0").
// A well-formed duration beyond what an int64 of nanoseconds holds (about
// 292 years) is "too large", not malformed.
func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		if tooLarge(strings.TrimSpace(s)) {
			return 0, fmt.Errorf("duration %q too large; expected at most %v", s, time.Duration(math.MaxInt64))
		}
		return 0, fmt.Errorf("malformed duration %q; %s", s, durationHelp)
	}
	return d, nil
}

// unitNS is a unit of Go duration syntax in ns.
func unitNS(u string) float64 {
	switch u {
	case "ns":
		return 1
	case "us", "µs", "μs":
		return 1e3
	case "ms":
		return 1e6
	case "s":
		return 1e9
	case "m":
		return 60e9
	}
	return 3600e9 // h
}

// tooLarge reports whether s is well-formed duration syntax whose value
// does not fit in a time.Duration.
func tooLarge(s string) bool {
	s = strings.TrimLeft(s, "+-")
	term := regexp.MustCompile(`^(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)`)
	var ns float64
	for s != "" {
		m := term.FindStringSubmatch(s)
		if m == nil {
			return false
		}
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			return false
		}
		ns += v * unitNS(m[2])
		s = s[len(m[0]):]
	}
	return ns > math.MaxInt64
}

// formatDuration writes d in the largest of s, ms, us and ns that holds it
// exactly ("90s", "1500us", "-2ms", "0s"), which parseDuration reads back
// to the same value.
func formatDuration(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	units := [...]struct {
		name string
		size time.Duration
	}{{"s", time.Second}, {"ms", time.Millisecond}, {"us", time.Microsecond}}
	for _, u := range units {
		if d%u.size == 0 {
			return strconv.FormatInt(int64(d/u.size), 10) + u.name
		}
	}
	return strconv.FormatInt(int64(d), 10) + "ns"
}

// parseNumber parses a finite float.
func parseNumber(s string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("malformed number %q; expected a finite number like 50 or -0.5", s)
	}
	return f, nil
}

const specHelp = "expected uniform(a, b) or normal(mean, sd)"

// isSpecCall reports whether s is written as a function call, as random
// specs are.
func isSpecCall(s string) bool {
	s = strings.TrimSpace(s)
	return strings.Contains(s, "(") || strings.HasSuffix(s, ")")
}

// parseSpec parses "uniform(a, b)" or "normal(mean, sd)", parsing each
// argument with arg.
func parseSpec[T float64 | time.Duration](s, unit string, arg func(string) (T, error)) (Spec[T], error) {
	t := strings.TrimSpace(s)
	open := strings.IndexByte(t, '(')
	if open >= 0 && !strings.Contains(t, ")") && !strings.Contains(t, ",") {
		return Spec[T]{}, fmt.Errorf("malformed random spec %q: no closing parenthesis; %s (inside {...} or [...] quote it, like %q, or YAML splits it at the comma)",
			s, specHelp, "uniform(-5ms, 5ms)")
	}
	if open < 0 || !strings.HasSuffix(t, ")") {
		return Spec[T]{}, fmt.Errorf("malformed random spec %q; %s with %s arguments", s, specHelp, unit)
	}
	var dist Dist
	switch name := strings.TrimSpace(t[:open]); name {
	case string(DistUniform):
		dist = DistUniform
	case string(DistNormal):
		dist = DistNormal
	default:
		return Spec[T]{}, fmt.Errorf("unknown random spec %q in %q; %s", name, s, specHelp)
	}
	args := strings.Split(t[open+1:len(t)-1], ",")
	if len(args) != 2 {
		return Spec[T]{}, fmt.Errorf("malformed random spec %q: %d arguments; %s with two %s arguments", s, len(args), specHelp, unit)
	}
	a, err := arg(args[0])
	if err != nil {
		return Spec[T]{}, fmt.Errorf("malformed random spec %q: %w", s, err)
	}
	b, err := arg(args[1])
	if err != nil {
		return Spec[T]{}, fmt.Errorf("malformed random spec %q: %w", s, err)
	}
	return Spec[T]{Dist: dist, A: a, B: b}, nil
}

const percentHelp = "expected a percentage like 25% (a bare 0 is also accepted)"

// parsePercent parses "25%", "0.5 %" or "0". A bare number other than 0 is
// refused: it is ambiguous between a fraction and a percentage.
func parsePercent(s string, bare bool) (Percent, error) {
	t := strings.TrimSpace(s)
	if bare {
		if f, err := strconv.ParseFloat(t, 64); err == nil && f == 0 {
			return 0, nil
		}
		return 0, fmt.Errorf("percentage %s needs a %% sign; %s", s, percentHelp)
	}
	num, ok := strings.CutSuffix(t, "%")
	if !ok {
		return 0, fmt.Errorf("percentage %q needs a %% sign; %s", s, percentHelp)
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("malformed percentage %q; %s", s, percentHelp)
	}
	return Percent(f), nil
}

// String formats the percentage as it is written in scenario files.
func (p Percent) String() string { return formatFloat(float64(p)) + "%" }

// fraction returns p as a probability.
func (p Percent) fraction() float64 { return float64(p) / 100 }

// rateUnitBits returns the bits per second of one tc rate unit.
func rateUnitBits(unit string) (float64, bool) {
	switch unit {
	case "bit":
		return 1, true
	case "kbit":
		return 1e3, true
	case "mbit":
		return 1e6, true
	case "gbit":
		return 1e9, true
	case "tbit":
		return 1e12, true
	case "bps":
		return 8, true
	case "kbps":
		return 8e3, true
	case "mbps":
		return 8e6, true
	case "gbps":
		return 8e9, true
	case "tbps":
		return 8e12, true
	}
	return 0, false
}

const rateHelp = "expected a rate with a unit like 1gbit or 100mbps (units bit, kbit, mbit, gbit, tbit, bps, kbps, mbps, gbps, tbps)"

// parseRate parses a tc rate such as "1gbit", "100 mbps" or "1.5Mbit".
// Units are case-insensitive and decimal (kbit = 1000 bit/s); "bps" units
// are bytes per second, as in tc.
func parseRate(s string) (uint64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	i := strings.IndexFunc(t, func(r rune) bool { return r >= 'a' && r <= 'z' })
	if i <= 0 {
		return 0, fmt.Errorf("malformed rate %q; %s", s, rateHelp)
	}
	num, unit := strings.TrimSpace(t[:i]), t[i:]
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("malformed rate %q; %s", s, rateHelp)
	}
	if per, ok := rateUnitBits(unit); ok {
		bits := math.Round(f * per)
		if bits < 0 {
			return 0, fmt.Errorf("negative rate %q; expected a rate >= 0", s)
		}
		if bits >= math.MaxUint64 {
			return 0, fmt.Errorf("rate %q is too large", s)
		}
		return uint64(bits), nil
	}
	return 0, fmt.Errorf("unknown rate unit %q in %q; %s", unit, s, rateHelp)
}

// formatRate formats bits per second with the largest bit unit that
// divides it exactly ("1gbit", "1500kbit").
func formatRate(bits uint64) string {
	units := [...]struct {
		name string
		bits uint64
	}{{"tbit", 1e12}, {"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}}
	for _, u := range units {
		if bits != 0 && bits%u.bits == 0 {
			return strconv.FormatUint(bits/u.bits, 10) + u.name
		}
	}
	return strconv.FormatUint(bits, 10) + "bit"
}
