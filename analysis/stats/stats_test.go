package stats

import (
	"math"
	"testing"
)

func TestSummarize(t *testing.T) {
	var hundred []float64
	for i := 100; i >= 1; i-- {
		hundred = append(hundred, float64(i))
	}
	tests := []struct {
		name string
		in   []float64
		want Summary
	}{
		{"empty", nil, Summary{}},
		{"one", []float64{3}, Summary{N: 1, Mean: 3, Min: 3, P50: 3, P95: 3, P99: 3, Max: 3}},
		{"1..100 reversed", hundred, Summary{N: 100, Mean: 50.5, Std: math.Sqrt(841.6666666666666), Min: 1, P50: 50, P95: 95, P99: 99, Max: 100}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Summarize(tc.in)
			if math.Abs(got.Std-tc.want.Std) > 1e-9 {
				t.Fatalf("std = %v, want %v", got.Std, tc.want.Std)
			}
			got.Std = tc.want.Std
			if got != tc.want {
				t.Fatalf("Summarize = %+v, want %+v", got, tc.want)
			}
		})
	}
	if hundred[0] != 100 {
		t.Fatal("Summarize modified its input")
	}
}

func TestAbs(t *testing.T) {
	got := Abs([]float64{-2, 0, 3})
	if got[0] != 2 || got[1] != 0 || got[2] != 3 {
		t.Fatalf("Abs = %v", got)
	}
}
