// Package graphcalc (GraphCalc) solves one round's probe graph for a
// global clock model: every node's offset and rate against a reference
// node whose clock defines global time g. This comment is its design doc.
//
// # Model
//
// Each node i has a clock C_i (ns, int64 readings, possibly negative). The
// reference's clock is global time, and G0 = Input.Origin is the
// reference's fit origin in its own clock (the protocol uses the middle of
// its window, where an edge fit's offset and drift errors are least
// correlated). Over a round each clock is
// linear in g:
//
//	C_i(g) = G0 + u_i + r_i·(g − G0)
//
// with rate r_i = dC_i/dg and u_i = C_i(G0) − G0, the offset at the global
// instant G0. The reference has r = 1, u = 0. Model carries (U, Rate) =
// (u_i, r_i) and converts: global(local) = G0 + (local − G0 − U)/Rate,
// OffsetAt(local) = local − global(local), DriftPPM = (1 − 1/Rate)·1e6, so
// that g = local − OffsetAt(ws) − DriftPPM·1e-6·(local − ws) for any ws;
// Linear gives the map as the globaltime.Linear every part of the project
// uses.
//
// # Equations
//
// Node src fits, for each out-edge src→dst, the line
//
//	C_dst − C_src = Alpha·(C_src − SrcOrigin) + Beta
//
// with SrcOrigin the x origin of src's fits in its own clock (the middle of
// its window). Substituting the
// model and matching the terms in g and the constants gives, exactly:
//
//	rates:   r_dst = (1 + Alpha)·r_src, linear in ℓ = ln r:
//	         ℓ_dst − ℓ_src = log1p(Alpha),                 weight 1/AlphaSigma²
//	offsets: u_dst − (1 + Alpha)·u_src = Alpha·(G0 − SrcOrigin) + Beta,
//	                                                      weight 1/Sigma²
//
// The two weighted least-squares problems are solved separately, rates
// first (for Rate and RateSigma; Rate = exp ℓ). The offset rows use each
// edge's measured Alpha as a known coefficient, so they are linear in u.
// Their weight ignores the uncertainty of Alpha: its error enters the row
// as δAlpha·(C_src(G0) − SrcOrigin), which vanishes when windows run
// together (SrcOrigin ≈ C_src(G0)), as they do by design.
//
// Each problem is min Σ_e w_e (t_e − a_eᵀx)², x_ref = 0, with a_e = +1 at
// dst and −c_e at src (c = 1 for rates, 1 + Alpha for offsets): normal
// equations N x = Aᵀ W t with N = Aᵀ W A, a weighted graph Laplacian
// (offsets: nearly one) grounded at the reference. N is positive definite
// on the reference's connected component.
//
// # Solver
//
// N is assembled from the edge list as a sparse matrix (diagonal plus
// compressed rows; the two directions of a link fall on the same entry and
// are merged, halving the work against a row-by-row operator) and solved
// by conjugate gradients with a Jacobi (diagonal) preconditioner, to a
// relative residual ‖b − N x‖/‖b‖ ≤ 1e-14 (iterations bounded by 10n+100,
// restarted from the true residual when rounding stalls; a true residual
// ≤ 1e-12 is accepted). The first pass starts from the exact solution of a
// breadth-first spanning tree from the reference, which leaves only the
// loop inconsistencies to spread; later passes warm-start from the
// previous solution. Should conjugate gradients fail, systems of up to
// 2048 unknowns fall back to dense Cholesky (gonum/mat); larger ones wrap
// ErrNotConverged. Tests compare against dense Cholesky. The systems that
// outlier rejection tries (below) are not assembled anew: removing rows
// between nodes a and b changes only a's and b's entries of N and of
// Aᵀ W t, which are summed again over their kept rows in the order a new
// assembly sums them, so they are the same to the bit; and the assessment
// of an inconsistent fit reuses the candidates that rejection tried at the
// same solution.
//
// # Consistency
//
// Edges measured around a loop must add up: the offsets of a loop's links
// close to within their Sigmas. The goodness of fit is the χ² of the kept
// offset rows, Σ (r_e/Sigma_e)² (r_e measured minus solved), against its
// degrees of freedom, kept rows − solved nodes + 1 (one per independent
// loop, counting a link measured both ways as a loop of two). A fit is
// inconsistent when honest Sigmas would give so large a χ² with
// probability below ConsistencyP (default 1e-3). A constant path asymmetry
// biases both directions of a link alike and is invisible on its own; in a
// loop it shows as the loop's closure.
//
// # Outlier rejection
//
// While the fit is inconsistent, the links carrying the most χ²
// (Candidates, default 8) are each tried out: the offsets are re-solved
// without the link, and, for a link measured more than once, without each
// of its rows alone (one bad direction). The candidate leaving the lowest
// χ² is rejected when the data single it out: every rival (another link;
// for one direction, the link's other directions) leaves a χ² higher by at
// least RejectMargin (default the one-degree-of-freedom χ² quantile at
// ConsistencyP, 10.8), in units of the remaining χ²/DOF where that exceeds
// 1, and removing it drops the χ² by more than that quantile per row. A
// row goes alone when it leaves a χ² within that quantile of its whole
// link's. Rejection repeats, up to MaxRejectRounds links (default 3;
// negative turns it off), then both problems are re-solved. A link whose
// removal would disconnect the graph is never removed whole. This is a
// leave-one-out test on the χ², not a threshold on the residuals: a bad
// link drags its neighbours' residuals and inflates any robust spread of
// them (in a 6-node mesh a 10 µs asymmetry left 3.4 µs on its link, up to
// 0.88 µs on others, and a MAD threshold of about 6 µs that rejected
// nothing), while its removal alone restores the χ². In a single loop every
// link closes it alike, so none is singled out: one loop cannot say which
// of its links is wrong, and nothing is rejected.
//
// # Inflation
//
// Model.Sigma covers what the fit cannot resolve. Consistent or not, it is
// FitSigma (from N⁻¹, below) times max(1, Birge ratio √(χ²/DOF)), as the
// Particle Data Group scales errors of averages that disagree. An
// inconsistent fit also names its loops that do not close (fundamental
// loops of a breadth-first tree from the reference, each link off the tree
// closing one, and links whose directions disagree; Consistency.Loops) and
// its suspects (the candidates that lower the χ² most; Suspects). When
// removing one link alone would make it consistent but several links each
// would (Ambiguous: a single loop, or a pendant link's two directions),
// each node's variance becomes FitSigma² times the scale of the fits
// without them plus the largest squared shift of the node over those
// hypotheses, so that it covers whichever is wrong; otherwise (no single
// link explains it) FitSigma times the Birge ratio, plus the largest
// squared shift over the three worst suspects. RateSigma is scaled by
// max(1, the rates' Birge ratio).
//
// # Systematic uncertainty
//
// An edge may say that part of its Sigma is systematic (Edge.SysSigma):
// an error that other edges share, such as the bias a path asymmetry
// leaves when queueing on one direction of many links raises the floor of
// all their delays alike. Such errors do not average out, and a pattern of
// them that is consistent around every loop (each link i→j, i < j, off by
// the same b) is invisible to the χ². So the weights count only the
// statistical part, √(Sigma² − SysSigma²) (floored at 1 ns; down-weighting
// the edges that reveal an asymmetry would only lean on those that hide
// it), and each node's Sigma adds, in quadrature, the systematic
// uncertainties at their worst signs: SysSigma_i = Σ_e |∂x_i/∂t_e|·
// SysSigma_e, with ∂x/∂t_e = w_e·N⁻¹a_e from the exact inverse (above
// ExactCovarianceLimit unknowns, the largest SysSigma of the kept edges).
//
// # Connectivity
//
// Components are those of the undirected graph of the edges (either
// direction links two nodes; nodes without edges are singletons). As links
// that would disconnect the graph are never rejected whole, they are also
// the components of the kept edges. Only the reference's component is solved; for a disconnected
// graph Solve returns its summary together with a *DisconnectedError that
// names every component.
//
// # Covariance
//
// FitSigma and RateSigma (before its scale) come from the diagonal of N⁻¹
// (for rates, the σ of ℓ times Rate), then inflated as above. With up to ExactCovarianceLimit unknowns
// (default 256; unknowns = component nodes less the reference) the
// diagonal is exact: dense Cholesky of N and its inverse. Above it, it is
// sketched (Spielman–Srivastava): (N⁻¹)_ii = ‖W^½ A N⁻¹ e_i‖², which for a
// Laplacian is the effective resistance from i to the reference, and
// projecting the rows of W^½ A onto SketchDim = k random ±1/√k vectors
// (PCG seeded by Options.Seed) gives an unbiased estimate whose relative
// standard deviation is at most √(2/k), so σ is good to about √(1/2k):
// 17.7% at the default k = 16. Most of that norm is known without the
// sketch, which then only estimates the rest (a control variate): N⁻¹ e_i
// is close to D⁻¹ e_i + g (D = diag N), the node's own share plus
// g = N⁻¹ π, the potential of a unit spread over the nodes in proportion
// to their weighted degrees (where a walk from i soon spreads), one solve
// for all nodes. The norm of that approximation and its inner product
// with N⁻¹ e_i are exact, its projections come from the sketch's own
// right-hand sides, and subtracting their error, with the coefficient that
// minimises the variance, keeps the estimate unbiased; it is floored at
// 1/N_ii, a lower bound of (N⁻¹)_ii. The sketch costs k conjugate-gradient
// solves per system, run as blocks of eight columns on the Jacobi-scaled
// system to a relative residual of 1e-4 (against solving them exactly this
// adds a median 1%, worst 3%, on a ring of 400, and nothing measurable on
// expanders), each block started from its Galerkin solution on g, which
// takes out the slowest mode of a system grounded at one node and halves
// the iterations (24 and 12 instead of 54 and 25 for the rate and offset
// systems of 10,000 nodes). Measured on random 8-regular graphs against
// the exact diagonal, the median relative error of σ at k = 16 is 0.056
// (U) and 0.056 (Rate), worst 0.49, at 256 nodes (TestSketchAccuracy, four
// seeds; 0.108 and 0.121, worst 0.59, without the control variate);
// 0.071 and 0.057, worst 0.46, at 1,024 nodes (BenchmarkSolve10k reports
// these); 0.060 and 0.053, worst 0.57, at 2,048; at k = 32, 0.044 and
// 0.040, worst 0.37, at 2,048. On a ring of 400, where the approximation
// is worst, 0.097 and 0.086, worst 0.46, at k = 16. k = 16 is the default
// because the sketch is the larger part of a large Solve, for an
// uncertainty that is itself an estimate; Options.SketchDim buys more
// precision where it is wanted.
//
// # Precision
//
// Offsets reach ±1 s and rates ±200 ppm, and consistency must stay well
// under 10 ns. Clock readings enter only as int64 differences (G0 −
// SrcOrigin, local − G0), so absolute clock values do not matter; all
// arithmetic is float64, whose resolution at 1e9 ns is 1.2e-7 ns. Rates
// are solved as log-rates, so products of (1 + Alpha) around loops become
// sums. Noise-free graphs (mesh, rings, random regular) are recovered to
// < 1e-6 ns in U and < 1e-15 in Rate, and the conversions reproduce true
// global time to about 1e-6 ns a second away from the origin. OffsetAt
// computes (U + (local − G0)·(Rate − 1))/Rate, all small terms, and
// Linear's Global takes local − G0 in integers, so neither loses precision
// for clocks far from zero (a plain float64 G0 + (local − G0 − U)/Rate
// would: at Unix-epoch values its ulp is 256 ns).
//
// Input is bounded so that this holds for any edge a node may send:
// |Alpha| ≤ MaxAlpha, |Beta| ≤ MaxBeta, Sigma in [MinSigma, MaxSigma],
// AlphaSigma in [MinAlphaSigma, MaxAlphaSigma], SysSigma in [0, MaxSigma]
// (Edge.Check). A Sigma of 1e-300 would square to a weight that
// overflows; such an edge wraps ErrBadInput, naming it and the field. As a
// last guard Solve checks its solution and returns ErrNotFinite rather
// than a NaN or an infinity.
//
// # Determinism and cost
//
// Solve is deterministic: no map decides an order, the only randomness is
// the seeded sketch, and there are no goroutines and no clocks. On random
// 8-regular graphs with both directions of every link (Sigma 3–48 ns) a
// Solve, the rejection pass and the sketched covariance included, costs on
// one core of a shared 2-core AMD EPYC VM (-cpu 1; the benchmarks report
// the process's CPU time as cpu-ms/solve beside the wall time, which the
// machine's neighbours inflate two- or threefold): 5.5–5.7 ms of CPU at
// 1,024 nodes (8,192 edges, BenchmarkSolve1024; 7.5–8.4 ms before the
// candidates' systems were derived and the sketch took its control
// variate), 61–62 ms at 10,000 nodes (80,000 edges, BenchmarkSolve10k;
// 94–101 ms before). With one direction of one link 5 µs off, rejection
// tries the eight worst links (24 solves) and takes 169–177 ms
// (BenchmarkSolve10kOutlier); with every Sigma understated by 30 %, the
// fit inconsistent with no link to blame, 154–160 ms
// (BenchmarkSolve10kUnderstated; the assessment reuses rejection's
// candidates); with three bad links, each rejected in its own round, about
// 380 ms (BenchmarkSolve10kThreeOutliers; 650 ms before). The sketch's 2×16 solves are about 60% of a consistent Solve at
// 10,000 nodes; the candidates' solves, about 40 conjugate-gradient
// iterations each to the relative residual of 1e-14 that offsets of ±1 s
// need, most of an inconsistent one.
package graphcalc
