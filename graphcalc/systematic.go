package graphcalc

import "math"

// systematic returns, for every node, the part of its offset's uncertainty
// that the edges' systematic uncertainties (Edge.SysSigma) carry: errors
// that do not average out, since one cause (queueing on one direction of
// many links, say) biases many edges alike. Each is taken at its worst
// sign: Σ_e |∂x_i/∂t_e|·SysSigma_e over the kept rows, where ∂x/∂t_e =
// w_e·N⁻¹a_e is the solution's sensitivity to row e (a_e: +1 at dst, −c at
// src). inv is N⁻¹ (exactInverse); without it (a graph too large for the
// exact covariance) every node gets the largest SysSigma of the kept rows.
// It returns nil when no kept row has a systematic uncertainty.
func systematic(n int, all *rows, kept []bool, inv func(i, j int) float64) []float64 {
	worst := 0.0
	for e, ok := range kept {
		if ok {
			worst = max(worst, all.sys[e])
		}
	}
	if worst == 0 {
		return nil
	}
	out := make([]float64, n)
	if inv == nil {
		for i := range out {
			out[i] = worst
		}
		return out
	}
	for e, ok := range kept {
		if !ok || all.sys[e] == 0 {
			continue
		}
		i, j, c, w := int(all.src[e]), int(all.dst[e]), all.c[e], all.w[e]
		for k := range out {
			out[k] += math.Abs(w*(inv(k, j)-c*inv(k, i))) * all.sys[e]
		}
	}
	return out
}
