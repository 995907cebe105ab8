// Package hostload measures, over a real run, how much of the machine the
// run had: how busy the CPUs were, how much time the hypervisor stole,
// how long runnable tasks waited for a CPU (the kernel's pressure stall
// information), and how much CPU time this process and its children (the
// shaper) used. A real run's timings are only as good as the CPU it got;
// these figures say whether it got it.
//
// Everything comes from the kernel's own accounting: /proc/stat,
// /proc/pressure/cpu and getrusage(2). Where a file is missing (an old
// kernel without PSI), that figure is reported as unavailable, never as 0.
package hostload

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// Sample is the kernel's counters at one moment.
type Sample struct {
	at         time.Time
	cpu        CPUTimes
	statErr    error
	pressure   int64 // µs some task waited for a CPU (PSI "some" total)
	psiErr     error
	self, kids time.Duration // CPU time of this process, and of its waited-for children
}

// Take reads the counters now.
func Take() Sample {
	s := Sample{at: time.Now()}
	s.cpu, s.statErr = ReadCPUTimes()
	s.pressure, s.psiErr = readPressure()
	s.self, s.kids = rusage(unix.RUSAGE_SELF), rusage(unix.RUSAGE_CHILDREN)
	return s
}

// Reading is what the machine did between two Samples.
type Reading struct {
	Span time.Duration `json:"span_ns"`
	CPUs int           `json:"cpus"`
	// Busy is the share of the CPUs' time spent busy (user, system, irq,
	// steal), by anything on the machine, this run included.
	Busy float64 `json:"busy_share"`
	// Steal is the share of the CPUs' time the hypervisor ran something
	// else while this machine's CPUs had work.
	Steal float64 `json:"steal_share"`
	// Pressure is the share of wall time in which at least one runnable
	// task waited for a CPU (PSI cpu some); -1 where the kernel does not
	// report it.
	Pressure float64 `json:"cpu_pressure_share"`
	// OwnCPU is the CPU time this process and its children used, in CPUs
	// (1.0: one CPU all the time).
	OwnCPU float64 `json:"own_cpus"`
	// Unavailable says which figures could not be read, and why.
	Unavailable []string `json:"unavailable,omitempty"`
}

// Since returns what happened between s and now.
func (s Sample) Since() Reading { return s.To(Take()) }

// To returns what happened between s and the later sample e.
func (s Sample) To(e Sample) Reading {
	r := Reading{Span: e.at.Sub(s.at), CPUs: e.cpu.CPUs, Pressure: -1}
	if err := firstErr(s.statErr, e.statErr); err != nil {
		r.Unavailable = append(r.Unavailable, err.Error())
	} else if total := (e.cpu.Busy - s.cpu.Busy) + (e.cpu.Idle - s.cpu.Idle); total > 0 {
		r.Busy = float64(e.cpu.Busy-s.cpu.Busy) / float64(total)
		r.Steal = float64(e.cpu.Steal-s.cpu.Steal) / float64(total)
	}
	if err := firstErr(s.psiErr, e.psiErr); err != nil {
		r.Unavailable = append(r.Unavailable, "/proc/pressure/cpu: "+err.Error())
	} else if r.Span > 0 {
		r.Pressure = float64(e.pressure-s.pressure) / float64(r.Span.Microseconds())
	}
	if r.Span > 0 {
		r.OwnCPU = float64((e.self-s.self)+(e.kids-s.kids)) / float64(r.Span)
	}
	return r
}

func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// CPUTimes are /proc/stat's counters, in USER_HZ ticks summed over the
// CPUs: Busy is user, nice, system, irq, softirq and steal time (guest time
// is in user already), Idle idle and iowait time.
type CPUTimes struct {
	Busy, Idle, Steal int64
	CPUs              int
}

// ReadCPUTimes reads /proc/stat.
func ReadCPUTimes() (CPUTimes, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return CPUTimes{}, err
	}
	return ParseCPUTimes(b)
}

// ParseCPUTimes reads the text of /proc/stat: its cpu line (user nice
// system idle iowait irq softirq steal ...) and how many cpuN lines follow.
func ParseCPUTimes(b []byte) (CPUTimes, error) {
	var c CPUTimes
	found := false
	for line := range bytes.Lines(b) {
		f := bytes.Fields(line)
		switch {
		case len(f) == 0:
		case string(f[0]) == "cpu":
			if len(f) < 9 {
				return CPUTimes{}, fmt.Errorf("/proc/stat: cpu line with %d fields, want at least 9", len(f))
			}
			var v [8]int64
			for i := range v {
				n, err := strconv.ParseInt(string(f[i+1]), 10, 64)
				if err != nil {
					return CPUTimes{}, fmt.Errorf("/proc/stat: cpu line: %w", err)
				}
				v[i] = n
			}
			c.Busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7]
			c.Idle, c.Steal = v[3]+v[4], v[7]
			found = true
		case bytes.HasPrefix(f[0], []byte("cpu")):
			c.CPUs++
		}
	}
	if !found || c.CPUs == 0 {
		return CPUTimes{}, fmt.Errorf("/proc/stat: no cpu line or no cpuN lines")
	}
	return c, nil
}

// readPressure reads the total of /proc/pressure/cpu's "some" line, in µs.
func readPressure() (int64, error) {
	b, err := os.ReadFile("/proc/pressure/cpu")
	if err != nil {
		return 0, err
	}
	return parsePressure(b)
}

func parsePressure(b []byte) (int64, error) {
	for line := range bytes.Lines(b) {
		f := bytes.Fields(line)
		if len(f) == 0 || string(f[0]) != "some" {
			continue
		}
		for _, kv := range f[1:] {
			if v, ok := bytes.CutPrefix(kv, []byte("total=")); ok {
				n, err := strconv.ParseInt(string(v), 10, 64)
				if err != nil {
					return 0, fmt.Errorf("some total: %w", err)
				}
				return n, nil
			}
		}
	}
	return 0, fmt.Errorf("no \"some ... total=\" line")
}

func rusage(who int) time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(who, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// MemAvailable returns the kernel's estimate of the memory available for
// starting new applications without swapping (/proc/meminfo's
// MemAvailable), in bytes.
func MemAvailable() (int64, error) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("hostload: %w", err)
	}
	return ParseMemAvailable(b)
}

// ParseMemAvailable reads MemAvailable from the text of /proc/meminfo.
func ParseMemAvailable(b []byte) (int64, error) {
	for line := range bytes.Lines(b) {
		f := bytes.Fields(line)
		if len(f) >= 2 && string(f[0]) == "MemAvailable:" {
			kb, err := strconv.ParseInt(string(f[1]), 10, 64)
			if err != nil || kb < 0 || (len(f) > 2 && string(f[2]) != "kB") {
				return 0, fmt.Errorf("hostload: /proc/meminfo: malformed line %q", bytes.TrimSpace(line))
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("hostload: /proc/meminfo: no MemAvailable line")
}
