package offsets

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// TestBoundsInMessages holds the bounds the messages state to the
// constants.
func TestBoundsInMessages(t *testing.T) {
	if MaxOffsetNS != 365.25*24*60*60*1e9 || int64(MaxOffsetNS) != 31_557_600_000_000_000 {
		t.Errorf("MaxOffsetNS %v is not one year of 365.25 days", float64(MaxOffsetNS))
	}
	if !strings.Contains(wantOffset, strconv.FormatInt(int64(MaxOffsetNS), 10)) {
		t.Errorf("%q does not state MaxOffsetNS", wantOffset)
	}
	if !strings.Contains(wantStepSize, strconv.FormatInt(int64(MaxOffsetNS), 10)) {
		t.Errorf("%q does not state MaxOffsetNS", wantStepSize)
	}
	if !strings.HasSuffix(wantDrift, " "+strconv.Itoa(MaxDriftPPM)) {
		t.Errorf("%q does not state MaxDriftPPM", wantDrift)
	}
}

// TestReadOutOfRange: the strict readers refuse a value out of range with
// a *LineError naming the file, the line and the field; values at the
// bounds read.
func TestReadOutOfRange(t *testing.T) {
	om, rm := metaLine(FileOffsets), metaLine(FileRounds)
	const year = "expected |offset_ns| ≤ 31557600000000000 (one year)"
	offsetCases := []struct{ name, field, value, err string }{
		{"offset 1e300", "offset_ns", "1e300", "offset_ns: 1e+300 is out of range; " + year},
		{"offset -1e300", "offset_ns", "-1e300", "offset_ns: -1e+300 is out of range; " + year},
		{"offset 1e18", "offset_ns", "1e18", "offset_ns: 1e+18 is out of range; " + year},
		{"offset just over a year", "offset_ns", "-31557600000000004", "offset_ns: -3.1557600000000004e+16 is out of range; " + year},
		{"drift 1e300", "drift_ppm", "1e300", "drift_ppm: 1e+300 is out of range; expected |drift_ppm| ≤ 1000"},
		{"drift 1000.5", "drift_ppm", "-1000.5", "drift_ppm: -1000.5 is out of range; expected |drift_ppm| ≤ 1000"},
		{"uncertainty -5", "uncertainty_ns", "-5", "uncertainty_ns: -5 is out of range; expected a finite uncertainty_ns ≥ 0"},
		{"uncertainty 1e999", "uncertainty_ns", "1e999", "uncertainty_ns: expected a number, got 1e999"},
		{"empty window", "window_end_ns", "-5", "window_end_ns: -5 is not after window_start_ns -5; expected window_end_ns > window_start_ns"},
		{"window backwards", "window_end_ns", "-6", "window_end_ns: -6 is not after window_start_ns -5; expected window_end_ns > window_start_ns"},
		{"drift uncertainty -1", "drift_uncertainty_ppm", "-1", "drift_uncertainty_ppm: -1 is out of range; expected a finite drift_uncertainty_ppm ≥ 0"},
		{"drift uncertainty 1e999", "drift_uncertainty_ppm", "1e999", "drift_uncertainty_ppm: expected a number, got 1e999"},
	}
	for _, tc := range offsetCases {
		in := lines(om, goodOffset, with(goodOffset, tc.field, tc.value), goodOffset)
		_, _, err := DecodeOffsets(strings.NewReader(in), "offsets.jsonl")
		check(t, tc.name, err, "offsets.jsonl:3: "+tc.err)
	}
	for _, v := range [][2]string{
		{"offset_ns", "31557600000000000"}, {"offset_ns", "-31557600000000000"}, {"offset_ns", "-0"},
		{"drift_ppm", "1000"}, {"drift_ppm", "-1000"}, {"uncertainty_ns", "0"}, {"window_end_ns", "-4"},
		{"drift_uncertainty_ppm", "0"}, {"drift_uncertainty_ppm", "1e300"},
	} {
		in := lines(om, with(goodOffset, v[0], v[1]))
		if _, offs, err := DecodeOffsets(strings.NewReader(in), "offsets.jsonl"); err != nil || len(offs) != 1 {
			t.Errorf("%s %s at the bound: %v", v[0], v[1], err)
		}
	}
	roundCases := []struct{ name, in, err string }{
		{"sigma -1", lines(rm, with(goodEdge, "sigma_ns", "-1")), "rounds.jsonl:2: sigma_ns: -1 is out of range; expected a finite sigma_ns ≥ 0"},
		{"beta 1e999", lines(rm, with(goodEdge, "beta_ns", "1e999")), "rounds.jsonl:2: beta_ns: expected a number, got 1e999"},
		{"chi2 -1", lines(rm, with(goodRound, "chi2", "-1")), "rounds.jsonl:2: chi2: -1 is out of range; expected a finite chi2 ≥ 0"},
		{"p_value 1.5", lines(rm, with(goodRound, "p_value", "1.5")), "rounds.jsonl:2: p_value: 1.5 is out of range; expected 0 ≤ p_value ≤ 1"},
		{"p_value -0.01", lines(rm, with(goodRound, "p_value", "-0.01")), "rounds.jsonl:2: p_value: -0.01 is out of range; expected 0 ≤ p_value ≤ 1"},
		{"birge -2", lines(rm, with(goodRound, "birge_ratio", "-2")), "rounds.jsonl:2: birge_ratio: -2 is out of range; expected a finite birge_ratio ≥ 0"},
		{"chi2_dof -1", lines(rm, with(goodRound, "chi2_dof", "-1")), "rounds.jsonl:2: chi2_dof: expected a non-negative integer, got -1"},
	}
	for _, tc := range roundCases {
		_, _, _, err := DecodeRounds(strings.NewReader(tc.in), "rounds.jsonl")
		check(t, tc.name, err, tc.err)
	}
	for _, v := range [][2]string{{"p_value", "0"}, {"p_value", "1"}, {"chi2", "0"}, {"birge_ratio", "0"}, {"chi2_dof", "0"}} {
		in := lines(rm, with(goodRound, v[0], v[1]))
		if _, _, rounds, err := DecodeRounds(strings.NewReader(in), "rounds.jsonl"); err != nil || len(rounds) != 1 {
			t.Errorf("%s %s at the bound: %v", v[0], v[1], err)
		}
	}
}

// TestReadStepsOutOfRange: each step's numbers have ranges, at_ns lies
// in the window [window_start_ns, window_end_ns] = [-5, 9] and after the
// previous step's; messages name the step and the field.
func TestReadStepsOutOfRange(t *testing.T) {
	const size = `{"at_ns":0,"at_uncertainty_ns":1,"size_ns":%s,"size_uncertainty_ns":3}`
	const atSigma = `{"at_ns":0,"at_uncertainty_ns":%s,"size_ns":2,"size_uncertainty_ns":3}`
	const sizeSigma = `{"at_ns":0,"at_uncertainty_ns":1,"size_ns":2,"size_uncertainty_ns":%s}`
	const year = "expected |size_ns| ≤ 31557600000000000 (one year)"
	f := func(format, v string) string { return strings.Replace(format, "%s", v, 1) }
	for _, tc := range []struct{ name, steps, err string }{
		{"before the window", "[" + step("-6") + "]", "steps[0].at_ns: -6 is outside the window [-5, 9]; expected window_start_ns ≤ at_ns ≤ window_end_ns"},
		{"after the window", "[" + step("0") + "," + step("10") + "]", "steps[1].at_ns: 10 is outside the window [-5, 9]; expected window_start_ns ≤ at_ns ≤ window_end_ns"},
		{"same at", "[" + step("4") + "," + step("4") + "]", "steps[1].at_ns: 4 is not after steps[0].at_ns 4; expected the steps in increasing at_ns order"},
		{"out of order", "[" + step("-1") + "," + step("4") + "," + step("2") + "]", "steps[2].at_ns: 2 is not after steps[1].at_ns 4; expected the steps in increasing at_ns order"},
		{"size 1e300", "[" + f(size, "1e300") + "]", "steps[0].size_ns: 1e+300 is out of range; " + year},
		{"size just over a year", "[" + f(size, "-31557600000000004") + "]", "steps[0].size_ns: -3.1557600000000004e+16 is out of range; " + year},
		{"size uncertainty -1", "[" + step("-5") + "," + f(sizeSigma, "-1") + "]", "steps[1].size_uncertainty_ns: -1 is out of range; expected a finite size_uncertainty_ns ≥ 0"},
		{"at uncertainty -0.5", "[" + f(atSigma, "-0.5") + "]", "steps[0].at_uncertainty_ns: -0.5 is out of range; expected a finite at_uncertainty_ns ≥ 0"},
	} {
		in := lines(metaLine(FileOffsets), goodOffset, withSteps(tc.steps))
		_, _, err := DecodeOffsets(strings.NewReader(in), "offsets.jsonl")
		check(t, tc.name, err, "offsets.jsonl:3: "+tc.err)
	}
	for _, steps := range []string{
		"[" + step("-5") + "," + step("9") + "]", "[" + f(size, "31557600000000000") + "]", "[" + f(size, "-31557600000000000") + "]",
		"[" + f(atSigma, "0") + "]", "[" + f(sizeSigma, "0") + "]",
	} {
		in := lines(metaLine(FileOffsets), withSteps(steps))
		if _, offs, err := DecodeOffsets(strings.NewReader(in), "offsets.jsonl"); err != nil || len(offs) != 1 {
			t.Errorf("steps %s at the bounds: %v", steps, err)
		}
	}
}

// TestAppendOutOfRange: the writer refuses, with an error and writing
// nothing, what the readers would refuse, NaN and infinities included,
// which JSON cannot carry.
func TestAppendOutOfRange(t *testing.T) {
	ok := Offset{NodeID: 1, WindowStartNS: 10, WindowEndNS: 20}
	at := func(f func(*Offset)) Offset { o := ok; f(&o); return o }
	nan, inf := math.NaN(), math.Inf(1)
	residual := nan
	for _, tc := range []struct {
		name string
		file string
		rec  any
		err  string
	}{
		{"offset 1e300", FileOffsets, at(func(o *Offset) { o.OffsetNS = 1e300 }),
			"offset_ns: 1e+300 is out of range; expected |offset_ns| ≤ 31557600000000000 (one year)"},
		{"offset NaN", FileOffsets, at(func(o *Offset) { o.OffsetNS = nan }),
			"offset_ns: NaN is not finite; expected |offset_ns| ≤ 31557600000000000 (one year)"},
		{"drift -Inf", FileOffsets, at(func(o *Offset) { o.DriftPPM = -inf }),
			"drift_ppm: -Inf is not finite; expected |drift_ppm| ≤ 1000"},
		{"uncertainty -5", FileOffsets, at(func(o *Offset) { o.UncertaintyNS = -5 }),
			"uncertainty_ns: -5 is out of range; expected a finite uncertainty_ns ≥ 0"},
		{"uncertainty +Inf", FileOffsets, at(func(o *Offset) { o.UncertaintyNS = inf }),
			"uncertainty_ns: +Inf is not finite; expected a finite uncertainty_ns ≥ 0"},
		{"window", FileOffsets, &Offset{NodeID: 1, WindowStartNS: 10, WindowEndNS: 10},
			"window_end_ns: 10 is not after window_start_ns 10; expected window_end_ns > window_start_ns"},
		{"alpha", FileRounds, Edge{Alpha: inf}, "alpha: +Inf is not finite; expected a finite number"},
		{"beta", FileRounds, Edge{Beta: nan}, "beta_ns: NaN is not finite; expected a finite number"},
		{"sigma", FileRounds, Edge{Sigma: -1}, "sigma_ns: -1 is out of range; expected a finite sigma_ns ≥ 0"},
		{"residual", FileRounds, &Edge{Residual: &residual}, "residual_ns: NaN is not finite; expected a finite number"},
		{"rms", FileRounds, Round{RMSResidualNS: nan}, "rms_residual_ns: NaN is not finite; expected a finite number"},
		{"max residual", FileRounds, Round{MaxResidualNS: -inf}, "max_residual_ns: -Inf is not finite; expected a finite number"},
		{"drift uncertainty NaN", FileOffsets, at(func(o *Offset) { o.DriftUncertaintyPPM = nan }),
			"drift_uncertainty_ppm: NaN is not finite; expected a finite drift_uncertainty_ppm ≥ 0"},
		{"step size +Inf", FileOffsets, at(func(o *Offset) { o.Steps = []Step{{AtNS: 15, SizeNS: inf}} }),
			"steps[0].size_ns: +Inf is not finite; expected |size_ns| ≤ 31557600000000000 (one year)"},
		{"step size uncertainty NaN", FileOffsets, at(func(o *Offset) { o.Steps = []Step{{AtNS: 15, SizeUncertaintyNS: nan}} }),
			"steps[0].size_uncertainty_ns: NaN is not finite; expected a finite size_uncertainty_ns ≥ 0"},
		{"step at uncertainty +Inf", FileOffsets, at(func(o *Offset) { o.Steps = []Step{{AtNS: 11}, {AtNS: 15, AtUncertaintyNS: inf}} }),
			"steps[1].at_uncertainty_ns: +Inf is not finite; expected a finite at_uncertainty_ns ≥ 0"},
		{"step outside", FileOffsets, at(func(o *Offset) { o.Steps = []Step{{AtNS: 21}} }),
			"steps[0].at_ns: 21 is outside the window [10, 20]; expected window_start_ns ≤ at_ns ≤ window_end_ns"},
		{"steps out of order", FileOffsets, at(func(o *Offset) { o.Steps = []Step{{AtNS: 15}, {AtNS: 12}} }),
			"steps[1].at_ns: 12 is not after steps[0].at_ns 15; expected the steps in increasing at_ns order"},
		{"chi2 +Inf", FileRounds, Round{Chi2: inf}, "chi2: +Inf is not finite; expected a finite chi2 ≥ 0"},
		{"chi2_dof -1", FileRounds, Round{Chi2DOF: -1}, "chi2_dof: -1, want a non-negative integer"},
		{"p_value NaN", FileRounds, Round{PValue: nan}, "p_value: NaN is not finite; expected 0 ≤ p_value ≤ 1"},
		{"p_value 2", FileRounds, Round{PValue: 2}, "p_value: 2 is out of range; expected 0 ≤ p_value ≤ 1"},
		{"birge NaN", FileRounds, &Round{BirgeRatio: nan}, "birge_ratio: NaN is not finite; expected a finite birge_ratio ≥ 0"},
	} {
		var c countingWriter
		w, err := NewWriter(&c, testMeta(tc.file))
		if err != nil {
			t.Fatal(err)
		}
		good := any(ok)
		if tc.file == FileRounds {
			good = Edge{}
		}
		err = w.Append(good, tc.rec)
		if want := "offsets: Append: record 1: " + tc.err; err == nil || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", tc.name, err, want)
		}
		if c.writes != 1 {
			t.Errorf("%s: %d writes, want only the meta line's", tc.name, c.writes)
		}
		if err := w.Append(good); err != nil {
			t.Errorf("%s: a good record after the refused one: %v", tc.name, err)
		}
	}
}
