package report

import (
	"fmt"
	"math"
	"strings"
)

// HiddenFrac is the share of the pure exchange's time that the run hid:
//
//	hidden_frac = clamp(1 − t_wait / t_pure_comm, 0, 1)
//
// with t_wait the mean exposed wait (t_wait_mean_avg) and t_pure_comm
// the mean time of the same exchange, at the same message size, with
// nothing to hide it behind (t_pure_comm_mean, the --pure-comm pass). It
// is 1 when no wait is left, 0 when the run waited at least as long as
// the exchange alone takes, and falls as the exchange stops hiding, where
// overlap_ratio, which compares the comm window with itself less the
// wait, stays at 1 for every nonblocking mode (the window starts before
// the interior, so it always holds the interior). NaN when t_pure_comm is
// not positive (no pure pass: the figure is empty, not 0).
func HiddenFrac(tWait, tPure float64) float64 {
	if !(tPure > 0) || math.IsNaN(tWait) {
		return math.NaN()
	}
	return math.Max(0, math.Min(1, 1-tWait/tPure))
}

// Statuses of a measured run (Host.Status), as the real backend's runs
// call themselves.
const (
	StatusOK       = "ok"
	StatusDegraded = "degraded"
)

// The bounds past which a run's machine makes it degraded.
const (
	// MaxCPUSteal bounds the share of CPU time the hypervisor stole (the
	// real backend's maxSteal).
	MaxCPUSteal = 0.05
	// OthersSlack is how many CPUs the rest of the machine may use
	// beyond those the run leaves free (host CPUs − P×T) before the run
	// counts as sharing its CPUs: mpirun's own daemon and the kernel's
	// threads use a little. Beyond the free CPUs, what others use is
	// taken from the ranks (spinning ranks leave others only what the
	// scheduler preempts them for), so the slack is small.
	OthersSlack = 0.25
)

// Host is what the machine was doing around one run, as its launcher
// measured it. A model run (simulator, real backend) leaves it zero:
// its cells are empty, and its own summary says whether it was
// degraded.
type Host struct {
	Measured bool // the launcher measured it; false: every cell empty
	// CPUs is the host's CPU count: sched_getaffinity of pid 1, else
	// /proc/cpuinfo's processors, else the Go runtime's count.
	CPUs int
	// LoadStart and LoadEnd are /proc/loadavg's 1-minute load before the
	// benchmark and after the gather; NaN when unreadable.
	LoadStart, LoadEnd float64
	// Load5Start, Load15Start, Load5End and Load15End are its 5- and
	// 15-minute loads (the manifest only).
	Load5Start, Load15Start, Load5End, Load15End float64
	// Pressure is the share of the run's wall time in which some
	// runnable task waited for a CPU (/proc/pressure/cpu); Steal the
	// share of CPU time the hypervisor stole (/proc/stat); NaN when the
	// kernel does not say. Pressure is recorded, not judged: a rank's
	// own Go runtime threads share its bound CPU with a master that
	// spins in MPI, and PSI cannot say whose task waited.
	Pressure, Steal float64
	// OthersCPUs is how many CPUs the rest of the machine kept busy over
	// the run, on average: the host's busy CPU time (/proc/stat) less
	// the ranks' own (getrusage), over the run's wall time; NaN when
	// unknown.
	OthersCPUs float64
	// Status is StatusOK or StatusDegraded; Reasons say why degraded.
	Status  string
	Reasons []string
}

// Judge sets h's Status and Reasons for a run of ranks ranks of threads
// threads: it is degraded when P×T is above the host's CPUs
// (oversubscribed), when the 1-minute load before the run was above them
// (the host was busy already), when the rest of the machine kept more
// CPUs busy over the run than the run left free (host CPUs − P×T, plus
// OthersSlack), or when the hypervisor stole more than MaxCPUSteal. The
// load after the run is recorded, not judged: it holds the run's own
// P×T threads, which a minute's average cannot tell from the others'.
func (h *Host) Judge(ranks, threads int) {
	h.Reasons = nil
	pt := ranks * threads
	if h.CPUs > 0 && pt > h.CPUs {
		h.Reasons = append(h.Reasons, fmt.Sprintf("oversubscribed: P×T = %d×%d = %d > %d host CPUs", ranks, threads, pt, h.CPUs))
	}
	if h.CPUs > 0 && h.LoadStart > float64(h.CPUs) {
		h.Reasons = append(h.Reasons, fmt.Sprintf("load %.2f before the run > %d host CPUs", h.LoadStart, h.CPUs))
	}
	if free := float64(h.CPUs - pt); h.CPUs > 0 && h.OthersCPUs > max(free, 0)+OthersSlack {
		h.Reasons = append(h.Reasons, fmt.Sprintf("other processes kept %.2f CPUs busy during the run; it left %.0f free", h.OthersCPUs, max(free, 0)))
	}
	if h.Steal > MaxCPUSteal {
		h.Reasons = append(h.Reasons, fmt.Sprintf("CPU steal %.1f %% > %.0f %%", 100*h.Steal, 100*MaxCPUSteal))
	}
	h.Status = StatusOK
	if len(h.Reasons) > 0 {
		h.Status = StatusDegraded
	}
}

// Reason is the reasons as one cell, "; "-separated.
func (h Host) Reason() string { return strings.Join(h.Reasons, "; ") }

// Oversubscription is P×T over the host's CPUs (above 1: more threads
// than CPUs); NaN when the host's CPUs are unknown.
func (h Host) Oversubscription(ranks, threads int) float64 {
	if h.CPUs <= 0 {
		return math.NaN()
	}
	return float64(ranks*threads) / float64(h.CPUs)
}

// HostLine is the row's host conditions as one line of a run's stdout,
// "" when unmeasured.
func (r *Row) HostLine() string {
	h := r.Host
	if !h.Measured {
		return ""
	}
	p := &r.Config.Params
	others := "n/a"
	if !math.IsNaN(h.OthersCPUs) {
		others = fmt.Sprintf("%.2f", h.OthersCPUs)
	}
	s := fmt.Sprintf("host: %d CPUs; rank binding %d CPU(s) (fewest of any rank); P×T %d = %.2f× the host's CPUs; load %.2f before, %.2f after; others' CPUs %s; CPU pressure %s, steal %s: %s",
		h.CPUs, r.RankCPUs, p.Ranks*p.Threads, h.Oversubscription(p.Ranks, p.Threads), h.LoadStart, h.LoadEnd, others, pctOrNA(h.Pressure), pctOrNA(h.Steal), h.Status)
	if len(h.Reasons) > 0 {
		s += " (" + h.Reason() + ")"
	}
	return s
}

func pctOrNA(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf("%.0f %%", 100*v)
}
