package rounds

import (
	"math"
	"testing"
	"time"

	"github.com/chronosync/chronosync/estimate"
	"github.com/chronosync/chronosync/probe/probelog"
)

// block is one edge window of 400 pairs 1 ms apart on 10 µs links with a
// few ns of jitter, dst 1 µs ahead of src; every fourth probe's t3 is a
// user-space reading where user is set.
func block(user bool) *probelog.Block {
	b := &probelog.Block{Src: 0, Dst: 1, WindowStart: 0, WindowEnd: 400e6, SentPairs: 400}
	for p := range uint32(400) {
		for slot := range uint8(2) {
			t1 := int64(p)*1e6 + int64(slot)*5000
			j := int64((p*7+uint32(slot)*3)%11) - 5 // ns of jitter
			pr := estimate.Probe{T1: t1, T2: t1 + 10e3 + 1e3 + j, Pair: p, Slot: slot, T3Source: estimate.T3Kernel}
			pr.T3 = pr.T2 + 2e3
			pr.T4 = pr.T3 - 1e3 + 10e3 - j
			if user && (int(p)*2+int(slot))%4 == 0 {
				pr.T3Source = estimate.T3User
			}
			b.Probes = append(b.Probes, pr)
		}
	}
	return b
}

// TestTimestampFloor: the real backend's timestamp floors reach a fit's
// Sigma and AsymSigma in quadrature, the user-space t3 floor in proportion
// to the probes with such a t3; without floors (the simulator) the fit is
// the estimator's, bit for bit.
func TestTimestampFloor(t *testing.T) {
	base := estimate.Options{Kind: estimate.SVM}
	plain := FitEdge(block(false), base)
	if plain.Insufficient {
		t.Fatal("insufficient fit")
	}
	for _, tc := range []struct {
		name  string
		user  bool
		ts    time.Duration
		t3    time.Duration
		floor float64 // ns
	}{
		{"none", false, 0, 0, 0},
		{"timestamps", false, 5, 20e3, 5},
		{"a quarter user t3", true, 5, 20e3, math.Hypot(5, 20e3/4)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := base
			o.TimestampSigma, o.UserT3Sigma = tc.ts, tc.t3
			e := FitEdge(block(tc.user), o)
			want := math.Hypot(plain.SigmaNs, tc.floor)
			wantAsym := math.Hypot(plain.AsymSigmaNs, tc.floor)
			if tc.floor == 0 && (e.SigmaNs != plain.SigmaNs || e.AsymSigmaNs != plain.AsymSigmaNs || e.Beta != plain.Beta) {
				t.Fatalf("without floors: sigma %v asym %v beta %v, want the estimator's %v %v %v", e.SigmaNs, e.AsymSigmaNs, e.Beta, plain.SigmaNs, plain.AsymSigmaNs, plain.Beta)
			}
			if math.Abs(e.SigmaNs-want) > 1e-9*want || math.Abs(e.AsymSigmaNs-wantAsym) > 1e-9*max(wantAsym, 1) {
				t.Errorf("sigma %.4f asym %.4f ns, want %.4f and %.4f (fit's %.4f and %.4f, floor %.4f)", e.SigmaNs, e.AsymSigmaNs, want, wantAsym, plain.SigmaNs, plain.AsymSigmaNs, tc.floor)
			}
		})
	}
}
