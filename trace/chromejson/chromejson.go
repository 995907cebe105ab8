package chromejson

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// Unit is the unit of an integer time given to [AppendMicros].
type Unit uint8

// The units of an integer time.
const (
	// Nanoseconds: three decimals of a microsecond.
	Nanoseconds Unit = iota
	// Picoseconds: six decimals of a microsecond.
	Picoseconds
)

// Decimals is how [AppendMicros] writes a time's fraction of a microsecond.
type Decimals uint8

// The layouts of a time's fraction.
const (
	// Trim writes the shortest exact decimal: trailing zeros cut, and no
	// point at all for a whole number of µs ("1.5", "2"), as a float
	// formatter would for times it holds exactly.
	Trim Decimals = iota
	// Fixed writes every decimal of the unit ("1.500", "2.000" for ns), as
	// Kineto does.
	Fixed
	// FixedOrWhole writes every decimal of the unit, or none for a whole
	// number of µs ("1.500", "2").
	FixedOrWhole
)

// AppendMicros appends the time t, counted in unit, as microseconds,
// exactly (every int64 included), its fraction laid out as dec says.
func AppendMicros(b []byte, t int64, unit Unit, dec Decimals) []byte {
	u := uint64(t)
	if t < 0 {
		b = append(b, '-')
		u = -u
	}
	var whole, frac uint64
	digits := 3
	if unit == Picoseconds {
		whole, frac, digits = u/1_000_000, u%1_000_000, 6
	} else {
		whole, frac = u/1000, u%1000
	}
	b = strconv.AppendUint(b, whole, 10)
	if frac == 0 && dec != Fixed {
		return b
	}
	var d [7]byte // '.' and the digits, leading zeros kept
	d[0] = '.'
	for i := digits; i > 0; i-- {
		d[i] = byte('0' + frac%10)
		frac /= 10
	}
	n := digits + 1
	if dec == Trim {
		for d[n-1] == '0' { // the fraction is not 0: a digit is not
			n--
		}
	}
	return append(b, d[:n]...)
}

// AppendFloat appends f as a JSON number, in the shortest form that reads
// back exactly; NaN and ±Inf, which JSON has no numbers for, as the strings
// "NaN", "+Inf" and "-Inf".
func AppendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		b = append(b, '"')
		b = strconv.AppendFloat(b, f, 'g', -1, 64)
		return append(b, '"')
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

// AppendString appends s as a JSON string: '"' and '\' escaped, control
// characters as \u00XX, invalid UTF-8 as \ufffd, everything else as it is
// (no HTML escaping: Kineto and XLA write '<' and '&' in kernel names as
// they are).
func AppendString[S ~string | ~[]byte](b []byte, s S) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := decodeRune(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}

// decodeRune is utf8.DecodeRuneInString or utf8.DecodeRune, by s's type.
func decodeRune[S ~string | ~[]byte](s S) (rune, int) {
	switch v := any(s).(type) {
	case string:
		return utf8.DecodeRuneInString(v)
	case []byte:
		return utf8.DecodeRune(v)
	}
	return utf8.DecodeRuneInString(string(s))
}
