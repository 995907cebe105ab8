package timepage

import (
	"fmt"
	"math"

	"github.com/chronosync/chronosync/analysis/offsets"
)

// Model is what the page holds: one node's clock model (analysis/offsets's
// Offset, its steps summed up) with its reference, deadline and status.
type Model struct {
	RoundID       uint64
	WindowID      uint64
	WindowStartNS int64 // local clock
	WindowEndNS   int64 // local clock
	OffsetNS      float64
	DriftPPM      float64
	SigmaNS       float64 // 1σ of the offset at the window's middle
	DriftSigmaPPM float64
	// StepSumNS, StepVarNS2 and StepAbsSumNS are the sum of the window's
	// step sizes, of the squares of their 1σ, and of their magnitudes;
	// StepCount how many there were; StepsEndNS the first reading after
	// every step with none in doubt (window start where there is none).
	StepSumNS    float64
	StepVarNS2   float64
	StepAbsSumNS float64
	StepsEndNS   int64
	StepCount    int
	// ValidUntilNS is the deadline on the local clock: a reading after it
	// gets ErrStale. PublishedNS is when the model was published.
	ValidUntilNS  int64
	PublishedNS   int64
	NodeID        int
	ReferenceNode int
	ClockID       int32 // ClockRealtime
	Status        Status
}

// FromOffset makes the page's model from a node's record of a round: o
// (its offset, drift, σ, window and steps), the reference node, when it is
// published and until when it holds (both on the node's clock), and the
// node's status.
func FromOffset(o offsets.Offset, reference int, publishedNS, validUntilNS int64, status Status) Model {
	m := Model{
		RoundID: o.RoundID, WindowID: o.WindowID,
		WindowStartNS: o.WindowStartNS, WindowEndNS: o.WindowEndNS,
		OffsetNS: o.OffsetNS, DriftPPM: o.DriftPPM,
		SigmaNS: o.UncertaintyNS, DriftSigmaPPM: o.DriftUncertaintyPPM,
		StepsEndNS: o.WindowStartNS, StepCount: len(o.Steps),
		ValidUntilNS: validUntilNS, PublishedNS: publishedNS,
		NodeID: o.NodeID, ReferenceNode: reference,
		ClockID: ClockRealtime, Status: status,
	}
	for _, s := range o.Steps {
		m.StepSumNS += s.SizeNS
		m.StepVarNS2 += s.SizeUncertaintyNS * s.SizeUncertaintyNS
		m.StepAbsSumNS += math.Abs(s.SizeNS)
		// Offset.SigmaAt doubts a reading x <= AtNS + AtUncertaintyNS.
		end := s.AtNS + int64(math.Floor(s.AtUncertaintyNS)) + 1
		m.StepsEndNS = max(m.StepsEndNS, end)
	}
	return m
}

// Check reports the first field of m a page cannot hold or a reader could
// not use.
func (m Model) Check() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"offset_ns", m.OffsetNS}, {"drift_ppm", m.DriftPPM}, {"sigma_ns", m.SigmaNS}, {"drift_sigma_ppm", m.DriftSigmaPPM},
		{"step_sum_ns", m.StepSumNS}, {"step_var_ns2", m.StepVarNS2}, {"step_abs_sum_ns", m.StepAbsSumNS}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("timepage: model %s: expected a finite number, got %v", f.name, f.v)
		}
	}
	switch {
	case m.SigmaNS < 0 || m.DriftSigmaPPM < 0 || m.StepVarNS2 < 0 || m.StepAbsSumNS < 0:
		return fmt.Errorf("timepage: model: expected σ, drift σ, step variance and |steps| >= 0, got %v, %v, %v, %v",
			m.SigmaNS, m.DriftSigmaPPM, m.StepVarNS2, m.StepAbsSumNS)
	case math.Abs(m.OffsetNS) >= 1<<53 || math.Abs(m.StepSumNS) >= 1<<53 || math.Abs(m.DriftPPM) >= 1e5:
		return fmt.Errorf("timepage: model: offset %v ns, step sum %v ns, drift %v ppm: expected |offset|, |step sum| < 2^53 ns and |drift| < 1e5 ppm",
			m.OffsetNS, m.StepSumNS, m.DriftPPM)
	case m.WindowEndNS < m.WindowStartNS:
		return fmt.Errorf("timepage: model: window end %d before its start %d", m.WindowEndNS, m.WindowStartNS)
	case m.StepCount < 0:
		return fmt.Errorf("timepage: model: step count %d, expected >= 0", m.StepCount)
	case m.NodeID < math.MinInt32 || m.NodeID > math.MaxInt32 || m.ReferenceNode < math.MinInt32 || m.ReferenceNode > math.MaxInt32:
		return fmt.Errorf("timepage: model: node %d / reference %d out of int32 range", m.NodeID, m.ReferenceNode)
	case m.Status == StatusNone || m.Status > StatusFailed:
		return fmt.Errorf("timepage: model: status %v, expected ok, degraded or failed", m.Status)
	}
	return nil
}

// ToGlobal maps local, a reading of the node's clock, to global time with
// its 1σ, as the page's readers do (without the deadline and status; see
// Reader.ToGlobal). For a reading at or after StepsEndNS it equals
// offsets.Offset.Global rounded to the ns (exact at any magnitude: the
// correction is computed from small terms) and SigmaAt.
func (m *Model) ToGlobal(local int64) (int64, float64) {
	w := m.words()
	return wordsToGlobal(&w, local)
}

// wordsToGlobal is Model.ToGlobal on the model region's words, the form
// the Reader has them in (and the C and Python readers compute the same,
// in the same order).
func wordsToGlobal(w *[ModelWords]uint64, local int64) (int64, float64) {
	start := int64(w[2])
	drift := math.Float64frombits(w[5]) * 1e-6
	d := float64(local - start)
	corr := math.Float64frombits(w[4]) + drift*d + (1-drift)*math.Float64frombits(w[8])
	x := math.Float64frombits(w[7]) * 1e-6 * (d - float64(int64(w[3])-start)/2)
	sigma := math.Float64frombits(w[6])
	v := sigma*sigma + x*x + math.Float64frombits(w[9])
	if local < int64(w[11]) {
		a := math.Float64frombits(w[10]) * math.Abs(1-drift)
		v += a * a
	}
	return local - int64(math.Round(corr)), math.Sqrt(v)
}

// words encodes m as the model region's words.
func (m *Model) words() [ModelWords]uint64 {
	sc := m.StepCount
	if sc > math.MaxUint16 {
		sc = math.MaxUint16
	}
	return [ModelWords]uint64{
		m.RoundID, m.WindowID, uint64(m.WindowStartNS), uint64(m.WindowEndNS),
		math.Float64bits(m.OffsetNS), math.Float64bits(m.DriftPPM),
		math.Float64bits(m.SigmaNS), math.Float64bits(m.DriftSigmaPPM),
		math.Float64bits(m.StepSumNS), math.Float64bits(m.StepVarNS2), math.Float64bits(m.StepAbsSumNS),
		uint64(m.StepsEndNS), uint64(m.ValidUntilNS), uint64(m.PublishedNS),
		uint64(uint32(int32(m.NodeID))) | uint64(uint32(int32(m.ReferenceNode)))<<32,
		uint64(uint32(m.ClockID)) | uint64(m.Status)<<32 | uint64(sc)<<48,
	}
}

// fromWords decodes the model region's words.
func fromWords(w *[ModelWords]uint64) Model {
	return Model{
		RoundID: w[0], WindowID: w[1], WindowStartNS: int64(w[2]), WindowEndNS: int64(w[3]),
		OffsetNS: math.Float64frombits(w[4]), DriftPPM: math.Float64frombits(w[5]),
		SigmaNS: math.Float64frombits(w[6]), DriftSigmaPPM: math.Float64frombits(w[7]),
		StepSumNS: math.Float64frombits(w[8]), StepVarNS2: math.Float64frombits(w[9]), StepAbsSumNS: math.Float64frombits(w[10]),
		StepsEndNS: int64(w[11]), ValidUntilNS: int64(w[12]), PublishedNS: int64(w[13]),
		NodeID: int(int32(uint32(w[14]))), ReferenceNode: int(int32(uint32(w[14] >> 32))),
		ClockID: int32(uint32(w[15])), Status: Status(uint16(w[15] >> 32)), StepCount: int(uint16(w[15] >> 48)),
	}
}
