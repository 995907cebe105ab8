package estimate_test

import (
	"fmt"

	"github.com/chronosync/chronosync/estimate"
)

// ExampleEstimate fits one noise-free window of 1000 pairs over 0.8 s: dst
// runs 100 ppm fast and 2 ms ahead of src at the window start (an hour into
// src's clock). One-way delays are 25µs plus 0–30µs of jitter drawn from a
// fixed sequence; in every third pair both probes meet the same delays, so
// those pairs are pure, and with a third of the pairs pure the default
// purity rule (auto) fits only them.
func ExampleEstimate() {
	const (
		origin = int64(3_600_000_000_000) // src clock at the window start
		alpha  = 100e-6
		beta   = 2_000_000 // ns
	)
	dst := func(src int64) int64 { return src + int64(alpha*float64(src-origin)) + beta }
	state := uint64(1)
	jitter := func() int64 { // a fixed linear congruential sequence
		state = state*6364136223846793005 + 1442695040888963407
		return int64(state>>33) % 30_000
	}
	var probes []estimate.Probe
	for i := range 1000 {
		var df, dr int64
		for slot := range 2 {
			if slot == 0 || i%3 != 0 {
				df, dr = 25_000+jitter(), 25_000+jitter()
			}
			t1 := origin + int64(i)*800_000 + int64(slot)*5_000
			t2 := dst(t1 + df)
			t3 := t2 + 10_000
			t4 := t1 + df + 10_000 + dr
			probes = append(probes, estimate.Probe{T1: t1, T2: t2, T3: t3, T4: t4, Pair: uint32(i), Slot: uint8(slot)})
		}
	}
	for _, k := range estimate.Kinds() {
		f, err := estimate.Estimate(probes, estimate.Options{Kind: k, Origin: origin})
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%-10s alpha %6.2f ppm, beta %7.2f ± %.2f µs, %d of %d pairs pure, %d probes used\n",
			f.Kind, f.Alpha*1e6, f.Beta/1e3, f.Sigma/1e3, f.Pure, f.Pairs, f.Used)
	}
	_, err := estimate.Estimate(probes[:18], estimate.Options{Kind: estimate.SVM})
	fmt.Println(err)
	// Output:
	// regression alpha 102.29 ppm, beta 1998.79 ± 0.67 µs, 338 of 1000 pairs pure, 676 probes used
	// minfilter  alpha  99.47 ppm, beta 2000.63 ± 1.12 µs, 338 of 1000 pairs pure, 40 probes used
	// svm        alpha 100.16 ppm, beta 1999.96 ± 0.16 µs, 338 of 1000 pairs pure, 676 probes used
	// estimate: insufficient probe pairs: 9 complete pairs, need 10
}
