package rocm

import (
	"math"
	"testing"
)

func TestTicksToNanos(t *testing.T) {
	tests := []struct {
		name        string
		ticks, freq uint64
		want        int64
	}{
		{"zero", 0, 100_000_000, 0},
		{"1GHz identity", 123_456_789, 1_000_000_000, 123_456_789},
		{"100MHz", 1_000_000_007, 100_000_000, 10_000_000_070},
		{"25MHz rounds down", 3, 25_000_000, 120},
		{"odd frequency rounds down", 1, 3, 333_333_333},
		{"large ticks, no overflow", 1 << 62, 1 << 40, 4_194_304_000_000_000},
		{"ticks times 1e9 exceeds 64 bits", math.MaxUint64, 100_000_000_000, 184_467_440_737_095_516},
		{"saturates above int64", math.MaxUint64, 1_000_000_000, math.MaxInt64},
		{"saturates above uint64", math.MaxUint64, 1, math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ticksToNanos(tt.ticks, tt.freq); got != tt.want {
				t.Errorf("ticksToNanos(%d, %d) = %d, want %d", tt.ticks, tt.freq, got, tt.want)
			}
		})
	}
}

func TestStatusErrorMessage(t *testing.T) {
	e := &StatusError{Call: "hsa_init", Status: 0x1008, Name: "HSA_STATUS_ERROR_OUT_OF_RESOURCES", Detail: "ignored"}
	const want = "hsa_init: HSA_STATUS_ERROR_OUT_OF_RESOURCES (0x1008)"
	if got := e.Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
