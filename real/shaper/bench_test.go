//go:build linux

package shaper

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/chronosync/chronosync/model/netem"
)

// benchDurationEnv sets BenchmarkShaperLoad's run length per strategy (a
// Go duration, "10s"), instead of 60 s (0.5 s with -short).
const benchDurationEnv = "SHAPER_BENCH_DURATION"

// benchSlice is how long BenchmarkShaperLoad runs one strategy before it
// switches to the other.
const benchSlice = 10 * time.Second

// BenchmarkShaperLoad measures the shaper child as the real backend runs
// it (StartProcess), on real2-onoff's link (10 Mbit/s each way, on/off
// cross traffic from node 0 to node 1), with the machine otherwise idle
// ("idle") and beside two CPU hog processes that it starts and kills by
// PID ("hogs2"). Each compares, in one run, the strategy of 2026-11-22
// ("before": SCHED_IDLE spinners in the shaper's own process, the
// collector on, frames read and written through allocating calls, the
// release goroutine locked to its thread) with the current one
// ("after"): the two take turns, a fresh lab and child for each slice of
// 10 s (one slice of 0.5 s with -short), so that both see the same
// machine; this VM is shared, and its load comes and goes. Node 0 sends a
// 64-byte datagram every millisecond and node 1 echoes it: about 1,000
// frames a second each way (fewer beside the hogs, whose CPU the sender
// shares).
//
// Per strategy it reports, over both directed links and every slice:
// release lateness (the write's time minus the modelled release) at the
// median and the 99th percentile, in µs, each the worst slice's
// (late-p50-us, late-p99-us); the largest lateness (late-max-ms) and the
// largest stall (stall-ms: the most a copy was written late or a frame
// read after the kernel stamped it), in ms; the child's garbage
// collections (gc); the CPU time the host took from this VM's CPUs
// meanwhile (steal-ms, /proc/stat), during which no thread of the VM
// runs, the shaper's included; and the shaper's share of one CPU, the
// worst slice's (cpu-%: the child's threads but its SCHED_IDLE spinners,
// which any other thread preempts).
//
// It needs root (namespaces, SCHED_FIFO) and skips without:
//
//	go test -run '^$' -bench ShaperLoad -benchtime 1x ./real/shaper/
func BenchmarkShaperLoad(b *testing.B) {
	d, slice := time.Minute, benchSlice
	if testing.Short() {
		d, slice = 500*time.Millisecond, 500*time.Millisecond
	}
	if s := os.Getenv(benchDurationEnv); s != "" {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			b.Fatalf("$%s: %v", benchDurationEnv, err)
		}
	}
	slices := max(1, int((d+slice/2)/slice))
	for _, load := range []struct {
		name string
		hogs int
	}{{"idle", 0}, {"hogs2", 2}} {
		b.Run(load.name, func(b *testing.B) {
			var before, after loadFigures
			for range b.N {
				for k := range slices {
					// Alternate which goes first, so that neither always
					// follows the other's teardown.
					order := []bool{true, false} // legacy: before
					if k%2 == 1 {
						order = []bool{false, true}
					}
					var lines []string
					for _, legacy := range order {
						f, line := runShaperLoad(b, load.hogs, legacy, d/time.Duration(slices))
						if legacy {
							before = before.add(f)
						} else {
							after = after.add(f)
						}
						lines = append(lines, line)
					}
					// One line per slice: go test keeps 10 lines of a
					// benchmark's log.
					b.Logf("slice %d of %d: %s", k+1, slices, strings.Join(lines, " | "))
				}
			}
			before.report(b, "before")
			after.report(b, "after")
		})
	}
}

// loadFigures are what BenchmarkShaperLoad measured of one strategy.
type loadFigures struct {
	p50, p99, max time.Duration // release lateness, the worst link's and slice's
	stall         time.Duration // the largest lateness or read lag
	gc            uint64        // the child's garbage collections
	steal         time.Duration // the host's steal from this VM's CPUs
	cpu           float64       // the shaper's share of a CPU, the worst slice's
}

// add returns f with g's figures added: the worst of each, the sum of
// the counts.
func (f loadFigures) add(g loadFigures) loadFigures {
	return loadFigures{max(f.p50, g.p50), max(f.p99, g.p99), max(f.max, g.max), max(f.stall, g.stall), f.gc + g.gc, f.steal + g.steal, max(f.cpu, g.cpu)}
}

// report reports f's figures, their units prefixed with name.
func (f loadFigures) report(b *testing.B, name string) {
	b.ReportMetric(float64(f.p50.Nanoseconds())/1e3, name+"-late-p50-us")
	b.ReportMetric(float64(f.p99.Nanoseconds())/1e3, name+"-late-p99-us")
	b.ReportMetric(float64(f.max.Nanoseconds())/1e6, name+"-late-max-ms")
	b.ReportMetric(float64(f.stall.Nanoseconds())/1e6, name+"-stall-ms")
	b.ReportMetric(float64(f.gc), name+"-gc")
	b.ReportMetric(float64(f.steal.Nanoseconds())/1e6, name+"-steal-ms")
	b.ReportMetric(100*f.cpu, name+"-cpu-%")
}

// runShaperLoad is one slice of BenchmarkShaperLoad: a two-node relay lab
// with a shaper child (the strategy of 2026-11-22 if legacy), hogs CPU hog
// processes, d of echoed datagrams. It returns the figures and a line
// that describes them.
func runShaperLoad(b *testing.B, hogs int, legacy bool, d time.Duration) (loadFigures, string) {
	b.Helper()
	lab, ports := relayPorts(b, 2)
	link := netem.Params{Rate: netem.Rate{BitsPerSecond: 10e6}}
	cross := link
	cross.Cross = netem.CrossTraffic{Kind: netem.CrossOnOff, Load: 1, PacketSize: 1500, On: 20 * time.Millisecond, Off: 80 * time.Millisecond}
	links := func(from, to int) (netem.Params, bool) {
		if from == 0 {
			return cross, true
		}
		return link, true
	}
	var log bytes.Buffer
	p, err := startProcessWith(ports, Config{Links: links, Seed: 1}, &log, legacy)
	if err != nil {
		b.Fatal(err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			if err := p.Stop(); err != nil {
				b.Errorf("shaper child: %v\n%s", err, log.String())
			}
		}
	}
	defer stop() // before the lab is removed: the child holds its ports
	tx, rx := udpPair(b, lab, 0, 1)
	back, home := udpPair(b, lab, 1, 0)
	warmUp(b, tx, rx)
	warmUp(b, back, home)
	rx.SetReadDeadline(time.Time{}) // warmUp's
	home.SetReadDeadline(time.Time{})
	pids := startHogPIDs(b, hogs)
	defer pids.kill()
	var wg sync.WaitGroup
	wg.Go(func() { // node 1 echoes
		buf := make([]byte, 2048)
		for {
			n, err := rx.Read(buf)
			if err != nil {
				return
			}
			back.Write(buf[:n])
		}
	})
	wg.Go(func() { // node 0 reads the echoes
		buf := make([]byte, 2048)
		for {
			if _, err := home.Read(buf); err != nil {
				return
			}
		}
	})
	steal0 := stealTime(b)
	load0, _ := os.ReadFile("/proc/loadavg")
	msg := make([]byte, 64)
	start := time.Now()
	for i := uint64(0); time.Since(start) < d; i++ {
		binary.BigEndian.PutUint64(msg, i)
		if _, err := tx.Write(msg); err != nil {
			b.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // the last echoes
	f := loadFigures{steal: stealTime(b) - steal0}
	busy := shaperCPU(b, p.cmd.Process.Pid)
	elapsed := time.Since(start)
	pids.kill()
	stop()
	rx.Close()
	home.Close()
	wg.Wait()
	info := p.Info()
	f.stall, f.gc = info.ReadLag.Max, info.GCCycles
	f.cpu = float64(busy) / float64(elapsed)
	name := "after"
	if legacy {
		name = "before"
	}
	line := fmt.Sprintf("%s (load %s): real-time %v, GC %d, steal %v, CPU %.0f%%, wake late p99 %v max %v, read lag p99 %v max %v",
		name, strings.Join(strings.Fields(string(load0))[:1], ""), info.RealTime, info.GCCycles, f.steal, 100*f.cpu,
		info.WakeLate.P99.Round(time.Microsecond), info.WakeLate.Max.Round(time.Microsecond),
		info.ReadLag.P99.Round(time.Microsecond), info.ReadLag.Max.Round(time.Microsecond))
	for _, st := range p.Stats() {
		if st.Sent == 0 {
			continue
		}
		l := st.Late
		f.p50, f.p99, f.max, f.stall = max(f.p50, l.P50), max(f.p99, l.P99), max(f.max, l.Max), max(f.stall, l.Max)
		line += fmt.Sprintf("; %d->%d: %d copies, late p50 %v p99 %v max %v", st.From, st.To, st.Written,
			l.P50.Round(10*time.Nanosecond), l.P99.Round(time.Microsecond), l.Max.Round(time.Microsecond))
	}
	if s := strings.TrimSpace(log.String()); s != "" {
		line += "; child's log: " + strings.ReplaceAll(s, "\n", " / ")
	}
	return f, line
}

// stealTime returns the CPU time the host has taken from this VM's CPUs
// since boot (/proc/stat's steal, in USER_HZ ticks of 10 ms).
func stealTime(b *testing.B) time.Duration {
	b.Helper()
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		b.Fatal(err)
	}
	line, _, _ := bytes.Cut(stat, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 9 || f[0] != "cpu" {
		b.Fatalf("/proc/stat: unexpected first line %q", line)
	}
	ticks, err := strconv.ParseInt(f[8], 10, 64)
	if err != nil {
		b.Fatalf("/proc/stat: steal: %v", err)
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

// shaperCPU returns the CPU time the threads of process pid have used,
// but those under SCHED_IDLE (spinners).
func shaperCPU(b *testing.B, pid int) time.Duration {
	b.Helper()
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		b.Fatal(err)
	}
	var ticks int64
	for _, task := range tasks {
		tid, err := strconv.Atoi(task.Name())
		if err != nil {
			continue
		}
		if attr, err := unix.SchedGetAttr(tid, 0); err != nil || attr.Policy == unix.SCHED_IDLE {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/stat", pid, tid))
		if err != nil {
			continue // exited
		}
		// Fields after the command, which is in parentheses: state is
		// the 3rd field of the line, utime and stime the 14th and 15th.
		_, rest, _ := bytes.Cut(stat, []byte(") "))
		f := strings.Fields(string(rest))
		if len(f) < 13 {
			b.Fatalf("/proc/%d/task/%d/stat: %q", pid, tid, stat)
		}
		for _, v := range f[11:13] {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			ticks += n
		}
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}
