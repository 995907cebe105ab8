package mpirun

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/chronosync/chronosync/phasegap/report"
	"github.com/chronosync/chronosync/real/hostload"
)

// HostCPUs is the host's CPU count, not this process's binding: the
// affinity of pid 1 (the host's, or the container's, init), else the
// processors /proc/cpuinfo lists, else the Go runtime's count (which is
// this process's affinity, so a bound rank's: the last resort).
func HostCPUs() int {
	var set unix.CPUSet
	if unix.SchedGetaffinity(1, &set) == nil && set.Count() > 0 {
		return set.Count()
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		if n := CountProcessors(b); n > 0 {
			return n
		}
	}
	return runtime.NumCPU()
}

// CountProcessors counts the "processor" lines of /proc/cpuinfo's text.
func CountProcessors(cpuinfo []byte) int {
	n := 0
	for line := range bytes.Lines(cpuinfo) {
		k, _, ok := bytes.Cut(line, []byte(":"))
		if ok && string(bytes.TrimSpace(k)) == "processor" {
			n++
		}
	}
	return n
}

// RankCPUs is this process's affinity (the rank's binding): how many
// CPUs and which, as a list ("0-1,4"); 0 and "" when unreadable.
func RankCPUs() (int, string) {
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) != nil {
		return 0, ""
	}
	var cpus []int
	for i := range len(set) * 64 {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	return len(cpus), CPUList(cpus)
}

// CPUList writes ascending CPU numbers as the kernel's list format:
// ranges joined by commas, "0-3,6".
func CPUList(cpus []int) string {
	var b bytes.Buffer
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j > i {
			fmt.Fprintf(&b, "%d-%d", cpus[i], cpus[j])
		} else {
			fmt.Fprintf(&b, "%d", cpus[i])
		}
		i = j + 1
	}
	return b.String()
}

// ParseLoadavg reads the 1-, 5- and 15-minute loads of /proc/loadavg's
// text.
func ParseLoadavg(b []byte) ([3]float64, error) {
	var out [3]float64
	f := bytes.Fields(b)
	if len(f) < 3 {
		return out, fmt.Errorf("/proc/loadavg: %d fields, want at least 3", len(f))
	}
	for i := range out {
		v, err := strconv.ParseFloat(string(f[i]), 64)
		if err != nil || v < 0 {
			return out, fmt.Errorf("/proc/loadavg: field %d: %q: expected a load", i+1, f[i])
		}
		out[i] = v
	}
	return out, nil
}

// loadavg reads /proc/loadavg; NaN where it cannot.
func loadavg() [3]float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err == nil {
		if l, err := ParseLoadavg(b); err == nil {
			return l
		}
	}
	return [3]float64{math.NaN(), math.NaN(), math.NaN()}
}

// OthersCPUs is how many CPUs the rest of the machine kept busy, on
// average, over span seconds: the host's busy share of its cpus, less
// own CPU-seconds (the ranks'), never below 0.
func OthersCPUs(busy float64, cpus int, span, own float64) float64 {
	return max(0, busy*float64(cpus)-own/span)
}

// CPUSeconds is the CPU time (user and system) this process used so far.
func CPUSeconds() float64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// hostWatch is the machine's counters at a run's start.
type hostWatch struct {
	cpus int
	load [3]float64
	at   hostload.Sample
}

// watchHost reads the host's CPUs, load and CPU counters before a run.
func watchHost() hostWatch {
	return hostWatch{cpus: HostCPUs(), load: loadavg(), at: hostload.Take()}
}

// end reads them again after the run and judges the run of ranks×threads
// (report.Host.Judge); own is the CPU time, in seconds, the ranks used.
func (w hostWatch) end(ranks, threads int, own float64) report.Host {
	r, end := w.at.Since(), loadavg()
	h := report.Host{Measured: true, CPUs: w.cpus,
		LoadStart: w.load[0], Load5Start: w.load[1], Load15Start: w.load[2],
		LoadEnd: end[0], Load5End: end[1], Load15End: end[2],
		Pressure: r.Pressure, Steal: math.NaN(), OthersCPUs: math.NaN()}
	if h.Pressure < 0 {
		h.Pressure = math.NaN()
	}
	if r.CPUs > 0 {
		h.Steal = r.Steal
		if span := r.Span.Seconds(); span > 0 {
			h.OthersCPUs = OthersCPUs(r.Busy, r.CPUs, span, own)
		}
	}
	h.Judge(ranks, threads)
	return h
}
