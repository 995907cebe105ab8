package groundtruth

import (
	"cmp"
	"math"
	"slices"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/analysis/stats"
)

// Calibration says whether the uncertainties a set of clock models reports
// contain their errors: at every truth point of every node window but the
// reference's, the error against the truth in units of the uncertainty
// reported for that reading (the node's and the reference's, combined).
// Honest uncertainties put about 68 % of the points within 1σ and
// 99.7 % within 3σ, and their RMS ratio near 1; a ratio far below 1 means
// uncertainties much larger than the errors.
type Calibration struct {
	// Points counts the truth points compared; Unsolved the node windows
	// with truth but no model.
	Points   int `json:"points"`
	Unsolved int `json:"unsolved"`
	// Within1, Within2 and Within3 are the fractions of points whose
	// |error| is at most 1, 2 and 3 reported σ.
	Within1 float64 `json:"within_1_sigma"`
	Within2 float64 `json:"within_2_sigma"`
	Within3 float64 `json:"within_3_sigma"`
	// Sigmas summarises |error|/σ; RMSSigmas is its root mean square.
	Sigmas    stats.Summary `json:"error_sigmas"`
	RMSSigmas float64       `json:"rms_error_sigmas"`
	// ErrorNS summarises |error| and SigmaNS the reported σ, in ns.
	ErrorNS stats.Summary `json:"error_ns"`
	SigmaNS stats.Summary `json:"sigma_ns"`
	// Worst lists the points furthest outside their σ, worst first (at
	// most WorstPoints).
	Worst []PointError `json:"worst,omitempty"`
}

// PointError is one truth point's error against its reported uncertainty.
type PointError struct {
	Round   uint64  `json:"round_id"`
	Node    int     `json:"node_id"`
	Local   int64   `json:"local_ns"`
	ErrorNS float64 `json:"error_ns"`
	SigmaNS float64 `json:"sigma_ns"`
}

// Sigmas is |ErrorNS|/SigmaNS (+Inf for a σ of 0 with an error).
func (p PointError) Sigmas() float64 {
	if p.SigmaNS <= 0 {
		if p.ErrorNS == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return math.Abs(p.ErrorNS) / p.SigmaNS
}

// WorstPoints bounds Calibration.Worst.
const WorstPoints = 5

// Target is the fraction of points that must lie within 3σ for a set of
// uncertainties to count as calibrated.
const Target = 0.99

// Calibrated reports whether at least Target of the points lie within 3σ.
func (c Calibration) Calibrated() bool { return c.Points > 0 && c.Within3 >= Target }

// PointErrors returns every truth point's error and reported uncertainty
// (node windows of the reference are skipped; those without both models
// come back as unsolved).
func PointErrors(offs []offsets.Offset, truth []Window, ref int) (pts []PointError, unsolved []Window) {
	unsolved = eachSolved(offs, truth, ref, func(w Window, o, r offsets.Offset) {
		for _, p := range w.Points {
			pts = append(pts, PointError{
				Round: w.Round, Node: w.Node, Local: p.Local,
				ErrorNS: pointError(o, r, p),
				SigmaNS: math.Hypot(o.SigmaAt(p.Local), r.SigmaAt(p.Ref)),
			})
		}
	})
	return pts, unsolved
}

// Calibrate measures the calibration of offs against truth, from round
// convergedFrom on.
func Calibrate(offs []offsets.Offset, truth []Window, ref int, convergedFrom uint64) Calibration {
	all, unsolved := PointErrors(offs, truth, ref)
	var c Calibration
	for _, w := range unsolved {
		if w.Round >= convergedFrom {
			c.Unsolved++
		}
	}
	var pts []PointError
	for _, p := range all {
		if p.Round >= convergedFrom {
			pts = append(pts, p)
		}
	}
	c.Points = len(pts)
	if c.Points == 0 {
		return c
	}
	z, errs, sig := make([]float64, len(pts)), make([]float64, len(pts)), make([]float64, len(pts))
	var in1, in2, in3 int
	var ss float64
	for i, p := range pts {
		z[i], errs[i], sig[i] = p.Sigmas(), math.Abs(p.ErrorNS), p.SigmaNS
		ss += z[i] * z[i]
		switch {
		case z[i] <= 1:
			in1++
			fallthrough
		case z[i] <= 2:
			in2++
			fallthrough
		case z[i] <= 3:
			in3++
		}
	}
	n := float64(c.Points)
	c.Within1, c.Within2, c.Within3 = float64(in1)/n, float64(in2)/n, float64(in3)/n
	c.Sigmas, c.RMSSigmas = stats.Summarize(z), math.Sqrt(ss/n)
	c.ErrorNS, c.SigmaNS = stats.Summarize(errs), stats.Summarize(sig)
	worst := slices.Clone(pts)
	slices.SortStableFunc(worst, func(a, b PointError) int { return cmp.Compare(b.Sigmas(), a.Sigmas()) })
	c.Worst = worst[:min(WorstPoints, len(worst))]
	return c
}

// roundNode keys a model by round and node.
type roundNode struct {
	round uint64
	node  int
}

// eachSolved calls f with every truth window of a node but the reference
// and the node's and the reference's records of its round (a later record
// of a round and node wins), and returns the windows that lack either.
func eachSolved(offs []offsets.Offset, truth []Window, ref int, f func(w Window, o, r offsets.Offset)) (unsolved []Window) {
	byKey := make(map[roundNode]offsets.Offset, len(offs))
	for _, o := range offs {
		byKey[roundNode{o.RoundID, o.NodeID}] = o
	}
	for _, w := range truth {
		if w.Node == ref {
			continue
		}
		o, ok := byKey[roundNode{w.Round, w.Node}]
		r, rok := byKey[roundNode{w.Round, ref}]
		if !ok || !rok {
			unsolved = append(unsolved, w)
			continue
		}
		f(w, o, r)
	}
	return unsolved
}
