package kineto

import (
	"errors"
	"math"
)

// The errors of decimal: s is not a number; the result does not fit in an
// int64.
var (
	errSyntax = errors.New("not a number")
	errRange  = errors.New("out of the int64 range")
)

// parseDecimal is decimal with ok for a nil error.
func parseDecimal(s string, shift int) (v int64, exact, ok bool) {
	v, exact, err := decimal(s, shift)
	return v, exact, err == nil
}

// decimal parses s, a decimal number in JSON's syntax (a leading '+',
// digits on one side of the point only and a point without digits after it
// are accepted too), multiplies it by 10^shift and rounds it to the nearest
// integer, halves away from zero. It works on the digits, so the result is
// exact however many digits s has. exact reports that no rounding happened.
// The error is errSyntax when s is not a number, errRange when the result
// does not fit in an int64.
func decimal(s string, shift int) (v int64, exact bool, err error) {
	i := 0
	neg := false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	intStart := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	intEnd := i
	fracStart, fracEnd := i, i
	if i < len(s) && s[i] == '.' {
		i++
		fracStart = i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		fracEnd = i
	}
	if intEnd == intStart && fracEnd == fracStart {
		return 0, false, errSyntax
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			eneg = s[i] == '-'
			i++
		}
		start := i
		for i < len(s) && isDigit(s[i]) {
			if exp < 1_000_000 { // past this the value is 0 or too large anyway
				exp = exp*10 + int(s[i]-'0')
			}
			i++
		}
		if i == start {
			return 0, false, errSyntax
		}
		if eneg {
			exp = -exp
		}
	}
	if i != len(s) {
		return 0, false, errSyntax
	}

	// The digits, integer part then fraction, as one sequence; the point
	// sits after point of them once the exponent and shift are applied.
	nInt := intEnd - intStart
	n := nInt + fracEnd - fracStart
	digit := func(k int) int {
		if k < nInt {
			return int(s[intStart+k] - '0')
		}
		return int(s[fracStart+k-nInt] - '0')
	}
	z := 0 // the first non-zero digit
	for z < n && digit(z) == 0 {
		z++
	}
	if z == n {
		return 0, true, nil
	}
	point := nInt + exp + shift
	if point-z > 19 {
		return 0, false, errRange // at least 10^19 > MaxInt64
	}
	var u uint64
	for k := z; k < point; k++ {
		d := 0
		if k < n {
			d = digit(k)
		}
		u = u*10 + uint64(d)
	}
	exact = true
	for k := max(point, z); k < n; k++ {
		if digit(k) != 0 {
			exact = false
			break
		}
	}
	if point >= 0 && point < n && digit(point) >= 5 {
		u++
	}
	if u > math.MaxInt64 {
		return 0, false, errRange
	}
	v = int64(u)
	if neg {
		v = -v
	}
	return v, exact, nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
