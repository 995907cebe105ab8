//go:build linux

package shaper

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/ci/needs"
	"github.com/chronosync/chronosync/model/netem"
	"github.com/chronosync/chronosync/real/hostload"
	"github.com/chronosync/chronosync/real/netlab"
)

// relayLab builds a netlab Relay lab of n nodes with a shaper running in
// its switch namespace until the test ends.
func relayLab(t *testing.T, n int, links func(from, to int) (netem.Params, bool)) (*netlab.Lab, *Shaper) {
	t.Helper()
	return relayLabWith(t, n, links, nil)
}

// relayLabWith is relayLab with a function that may change the shaper
// before it runs (set a test hook, say); nil for none.
func relayLabWith(t *testing.T, n int, links func(from, to int) (netem.Params, bool), setup func(*Shaper)) (*netlab.Lab, *Shaper) {
	t.Helper()
	lab, ports := relayPorts(t, n)
	s, err := New(ports, Config{Links: links, Seed: 7})
	if err != nil {
		for _, p := range ports {
			p.Close()
		}
		t.Fatal(err)
	}
	if setup != nil {
		setup(s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() { // before lab.Close: the ports hold the switch namespace
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return lab, s
}

// relayPorts builds a netlab Relay lab of n nodes, removed when the test
// ends, and opens a packet port on each of its switch ports (skipping the
// test where namespaces are not available).
func relayPorts(t testing.TB, n int) (*netlab.Lab, []Port) {
	t.Helper()
	needs.Available(t, netlab.Available())
	lab, err := netlab.Create(netlab.Config{Prefix: testPrefix(), Nodes: n, Kind: netlab.Relay})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := lab.Close(); err != nil {
			t.Error(err)
		}
	})
	var ports []Port
	err = lab.DoSwitch(func() error {
		for _, name := range lab.SwitchPorts() {
			p, err := OpenPacketPort(name)
			if err != nil {
				return err
			}
			ports = append(ports, p)
		}
		return nil
	})
	if err != nil {
		for _, p := range ports {
			p.Close()
		}
		t.Fatal(err)
	}
	return lab, ports
}

// udpPair opens a receiving socket on node to and a sending one on node
// from, each in its node's namespace, closed when the test ends.
func udpPair(t testing.TB, lab *netlab.Lab, from, to int) (tx, rx *net.UDPConn) {
	t.Helper()
	err := lab.Do(to, func() (err error) {
		rx, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(lab.Addr(to), 0)))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rx.Close() })
	if err := rx.SetReadBuffer(4 << 20); err != nil {
		t.Fatal(err)
	}
	err = lab.Do(from, func() (err error) {
		tx, err = net.DialUDP("udp4", nil, rx.LocalAddr().(*net.UDPAddr))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Close() })
	return tx, rx
}

// warmUp sends until a datagram gets through, so that ARP is resolved
// (through the relay: no static neighbours) before measuring.
func warmUp(t testing.TB, tx, rx *net.UDPConn) {
	t.Helper()
	buf := make([]byte, 2048)
	deadline := time.Now().Add(8 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := tx.Write([]byte("warm-up")); err != nil {
			t.Fatal(err)
		}
		rx.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		if n, _, err := rx.ReadFromUDP(buf); err == nil && string(buf[:n]) == "warm-up" {
			for { // drain the other warm-up datagrams still in flight
				rx.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
				if _, _, err := rx.ReadFromUDP(buf); err != nil {
					return
				}
			}
		}
	}
	t.Fatal("no datagram got through the relay")
}

// blast sends n datagrams of size bytes (at least 8), numbered, in bursts
// of burst with a pause after each, while a receiver records when each
// arrives. It returns the send and receive times (zero: lost).
func blast(t *testing.T, tx, rx *net.UDPConn, n, size, burst int, pause time.Duration) (sent, recv []time.Time) {
	t.Helper()
	sent, recv = make([]time.Time, n), make([]time.Time, n)
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 2048)
		for {
			rx.SetReadDeadline(time.Now().Add(time.Second))
			k, _, err := rx.ReadFromUDP(buf)
			now := time.Now()
			if err != nil {
				return
			}
			if i := binary.BigEndian.Uint64(buf); k == size && i < uint64(n) {
				recv[i] = now
			}
		}
	}()
	msg := make([]byte, size)
	for i := range n {
		binary.BigEndian.PutUint64(msg, uint64(i))
		sent[i] = time.Now()
		if _, err := tx.Write(msg); err != nil {
			t.Fatal(err)
		}
		if (i+1)%burst == 0 {
			time.Sleep(pause)
		}
	}
	<-done
	return sent, recv
}

// logLink logs the shaper's view of the directed link from -> to.
func logLink(t *testing.T, s *Shaper, from, to int) LinkStats {
	t.Helper()
	for _, st := range s.Stats() {
		if st.From == from && st.To == to {
			t.Logf("shaper %d->%d: sent %d delivered %d lost %d queue-dropped %d written %d write-dropped %d; release lateness p50 %v p99 %v max %v",
				from, to, st.Sent, st.Delivered, st.Lost, st.QueueDropped, st.Written, st.WriteDropped, st.Late.P50, st.Late.P99, st.Late.Max)
			return st
		}
	}
	t.Fatalf("no stats for %d->%d", from, to)
	return LinkStats{}
}

// only applies p to frames from node 0 to node 1; the reverse is ideal.
func only(p netem.Params) func(from, to int) (netem.Params, bool) {
	return func(from, to int) (netem.Params, bool) {
		if from == 0 && to == 1 {
			return p, true
		}
		return netem.Params{}, true
	}
}

// TestRelayReachability checks that every node reaches every other one
// through the relay with ideal links, ARP included (nothing static), and
// that the relay never reads back its own writes (no storm of copies).
func TestRelayReachability(t *testing.T) {
	lab, s := relayLab(t, 3, func(int, int) (netem.Params, bool) { return netem.Params{}, true })
	for from := range 3 {
		for to := range 3 {
			if from != to {
				tx, rx := udpPair(t, lab, from, to)
				warmUp(t, tx, rx)
			}
		}
	}
	var frames uint64
	for _, st := range s.Stats() {
		frames += st.Sent
		if st.Written != st.Sent {
			t.Errorf("%d->%d: %d frames offered, %d written", st.From, st.To, st.Sent, st.Written)
		}
	}
	if frames == 0 || frames > 200 {
		t.Errorf("%d frames relayed for 6 exchanges and their ARP", frames)
	}
}

// measure runs try, a measurement that returns the tolerances it
// violated, up to 5 times until one attempt is within all of them, and
// fails the test with the last attempt's violations. A shared VM has
// bursts of CPU steal that stall any userspace process for milliseconds
// (ppoll wakes 10 ms late at p99 here at such times, whatever the
// shaper does), and they come in spells that can outlast three attempts
// back to back (a clean-clone CI run in session 7 saw 6–10% of the
// datagrams stalled in each of three, in a run of the same code that
// passed twice before); the retries, a second apart, keep such a spell
// from failing the test, while a systematic error fails every attempt.
//
// A spell can outlast all five (a CI run of 2026-11-24 had 20–30% of
// the datagrams stalled in each, release lateness p99 9–12 ms against
// 0.6 ms on the same code in a session): when every attempt failed and
// the last one was starved (starved), the test skips with that
// measurement, recorded as ci/needs records skips so that make test
// lists it, instead of failing a correct build. On a machine that gave
// the shaper its CPU the same test fails. A nil s never skips: a test
// that loads the machine itself (measureUnderLoad) measures the shaper
// under that load.
func measure(t *testing.T, s *Shaper, try func(attempt int) []string) {
	t.Helper()
	var bad []string
	var last hostload.Reading
	for attempt := 1; attempt <= 5; attempt++ {
		if attempt > 1 {
			time.Sleep(time.Second) // let a spell of steal pass
		}
		before := hostload.Take()
		bad = try(attempt)
		last = before.Since()
		if len(bad) == 0 {
			return
		}
		t.Logf("attempt %d out of tolerance: %v", attempt, bad)
	}
	if s != nil {
		if why := starved(last, s.Info()); why != "" {
			needs.Skip(t, fmt.Sprintf("machine too busy: %s; the link model could not be measured (%s)", why, strings.Join(bad, "; ")))
			return
		}
		t.Logf("machine gave the shaper its CPU: %s", machine(last, s.Info()))
	}
	for _, b := range bad {
		t.Error(b)
	}
}

// The bounds from which starved calls an attempt starved: the hypervisor
// taking a few percent of the CPUs' time (with the spinners of awake the
// vCPUs always want to run, so steal is what the host withheld), or the
// shaper's thread waking a millisecond late from its timed sleeps (the
// time between a ppoll's timeout and its return, in which no shaper code
// runs) at the 99th percentile. The CPUs' busy share says nothing here:
// the spinners keep it at 100%.
const (
	starvedSteal = 0.02
	starvedWake  = time.Millisecond
)

// starved says why the machine did not give the shaper's thread its CPU
// during an attempt (r, and the shaper's Info since it started), or ""
// when nothing shows that it did not.
func starved(r hostload.Reading, info Info) string {
	if len(r.Unavailable) == 0 && r.Steal >= starvedSteal || info.WakeLate.P99 >= starvedWake {
		return machine(r, info)
	}
	return ""
}

// awake runs the spinner process until the test ends, as a shaper child
// does while it relays (keepAwake): on a virtual machine a vCPU left idle
// halts, and waking it for a release takes milliseconds at times
// (TestMeasuredUnderLoad/quiet: release lateness p99 3.7 ms, max 10 ms on
// an idle 2-vCPU VM, against 33 µs beside two CPU hogs).
func awake(t *testing.T) {
	t.Cleanup(keepAwake(slog.New(slog.NewTextHandler(testWriter{t}, nil)), os.Stderr))
}

// testWriter writes to a test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// machine describes an attempt's load reading and the shaper's thread.
func machine(r hostload.Reading, info Info) string {
	return fmt.Sprintf("CPUs %.0f%% busy, %.1f%% stolen over %v (unavailable: %v); shaper thread real-time %v, woke late p99 %v max %v, read lag p99 %v, %d collections",
		100*r.Busy, 100*r.Steal, r.Span.Round(10*time.Millisecond), r.Unavailable, info.RealTime,
		info.WakeLate.P99, info.WakeLate.Max, info.ReadLag.P99, info.GCCycles)
}

// TestMeasuredDelay sends 2000 datagrams node 0 -> node 1 through a link
// of delay 1 ms and jitter 200 µs (normal distribution, whose standard
// deviation is the jitter) and measures each one-way delay with
// time.Now before the send and after the receive (one kernel clock).
//
// netem's normal table stays within 4 jitters of the delay, so a delay
// beyond 1 ms + 4×200 µs + 500 µs is a stall of the machine (a woken
// thread that does not run), not the model: such samples are counted,
// must be at most 5%, and are left out of the mean. Smaller stalls still
// inflate the sample standard deviation on a busy VM, so the spread is
// checked with a robust estimate that they barely move: the
// interquartile range / 1.349, which is the standard deviation of a
// normal distribution. Tolerances: the mean within -10%/+10% of 1 ms plus
// 100 µs of stack and scheduling overhead; the robust standard deviation
// within ±25% of 200 µs. The plain mean and standard deviation of every
// sample are logged too. See measure for the retries.
func TestMeasuredDelay(t *testing.T) {
	const delay, jitter = time.Millisecond, 200 * time.Microsecond
	const stall = delay + 4*jitter + 500*time.Microsecond
	awake(t)
	lab, s := relayLab(t, 2, only(netem.Params{Delay: delay, Jitter: jitter, Distribution: netem.Normal}))
	tx, rx := udpPair(t, lab, 0, 1)
	warmUp(t, tx, rx)
	measure(t, s, func(attempt int) (bad []string) {
		sent, recv := blast(t, tx, rx, 2000, 64, 2, 300*time.Microsecond)
		var d []float64
		for i := range sent {
			if !recv[i].IsZero() {
				d = append(d, float64(recv[i].Sub(sent[i])))
			}
		}
		if len(d) < len(sent)*99/100 {
			return []string{fmt.Sprintf("%d of %d datagrams arrived", len(d), len(sent))}
		}
		slices.Sort(d)
		rawMean, rawStd := meanStd(d)
		kept := d[:sort.SearchFloat64s(d, float64(stall))]
		stalled := len(d) - len(kept)
		mean, std := meanStd(kept)
		robust := (kept[len(kept)*3/4] - kept[len(kept)/4]) / 1.349
		ms := func(f float64) time.Duration { return time.Duration(f).Round(100 * time.Nanosecond) }
		t.Logf("attempt %d: one-way delay of %d datagrams: all: mean %v std %v; %d stalled beyond %v; the rest: mean %v std %v, IQR/1.349 %v (configured %v, jitter %v)",
			attempt, len(d), ms(rawMean), ms(rawStd), stalled, stall, ms(mean), ms(std), ms(robust), delay, jitter)
		logLink(t, s, 0, 1)
		if stalled > len(d)/20 {
			bad = append(bad, fmt.Sprintf("%d datagrams stalled beyond %v", stalled, stall))
		}
		if lo, hi := 0.9*float64(delay), 1.1*float64(delay)+100e3; mean < lo || mean > hi {
			bad = append(bad, fmt.Sprintf("mean delay %v outside [%v, %v]", ms(mean), ms(lo), ms(hi)))
		}
		if lo, hi := 0.75*float64(jitter), 1.25*float64(jitter); robust < lo || robust > hi {
			bad = append(bad, fmt.Sprintf("delay std (IQR/1.349) %v outside [%v, %v]", ms(robust), ms(lo), ms(hi)))
		}
		return bad
	})
}

// meanStd returns the mean and standard deviation of x.
func meanStd(x []float64) (mean, std float64) {
	var sum, sum2 float64
	for _, v := range x {
		sum += v
	}
	mean = sum / float64(len(x))
	for _, v := range x {
		sum2 += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(sum2 / float64(len(x)))
}

// TestMeasuredLoss sends 5000 datagrams node 0 -> node 1 through a link
// with 10% random loss; the loss rate must lie within 4 binomial standard
// deviations of 10% (±1.7 points), and the datagrams lost must be the
// frames the model dropped (up to 3 more frames: an ARP probe may share
// the link).
func TestMeasuredLoss(t *testing.T) {
	const p, n = 0.10, 5000
	awake(t)
	lab, s := relayLab(t, 2, only(netem.Params{Loss: netem.Loss{Model: netem.LossRandom, Probability: p}}))
	tx, rx := udpPair(t, lab, 0, 1)
	warmUp(t, tx, rx)
	measure(t, s, func(attempt int) (bad []string) {
		before := logLink(t, s, 0, 1)
		sent, recv := blast(t, tx, rx, n, 64, 20, 200*time.Microsecond)
		lost := 0
		for i := range sent {
			if recv[i].IsZero() {
				lost++
			}
		}
		rate, band := float64(lost)/n, 4*math.Sqrt(p*(1-p)/n)
		t.Logf("attempt %d: loss %d of %d = %.4f (configured %.2f, 4-sigma band ±%.4f)", attempt, lost, n, rate, p, band)
		after := logLink(t, s, 0, 1)
		if math.Abs(rate-p) > band {
			bad = append(bad, fmt.Sprintf("loss rate %.4f outside %.2f ± %.4f", rate, p, band))
		}
		if model := after.Lost - before.Lost; model < uint64(lost) || model > uint64(lost)+3 {
			bad = append(bad, fmt.Sprintf("%d datagrams lost, the model dropped %d frames", lost, model))
		}
		return bad
	})
}

// TestMeasuredRate sends 1200 datagrams of 1000 bytes (1042-byte frames)
// node 0 -> node 1 as fast as possible through a 10 Mbit/s link; the
// receiver's throughput in frame bits, from first to last arrival, must
// be within ±10% of the rate. See measure for the retries.
func TestMeasuredRate(t *testing.T) {
	const bps, n, size = 10e6, 1200, 1000
	const frameLen = size + 8 + 20 + 14 // UDP, IPv4, Ethernet headers
	awake(t)
	lab, s := relayLab(t, 2, only(netem.Params{Rate: netem.Rate{BitsPerSecond: bps}, Limit: 5000}))
	tx, rx := udpPair(t, lab, 0, 1)
	warmUp(t, tx, rx)
	measure(t, s, func(attempt int) (bad []string) {
		_, recv := blast(t, tx, rx, n, size, n, 0)
		var first, last time.Time
		got := 0
		for _, r := range recv {
			if r.IsZero() {
				continue
			}
			got++
			if first.IsZero() || r.Before(first) {
				first = r
			}
			if r.After(last) {
				last = r
			}
		}
		if got < n*99/100 {
			return []string{fmt.Sprintf("%d of %d datagrams arrived", got, n)}
		}
		rate := float64(got-1) * frameLen * 8 / last.Sub(first).Seconds()
		t.Logf("attempt %d: throughput %.3f Mbit/s over %d frames in %v (configured %.0f Mbit/s)", attempt, rate/1e6, got, last.Sub(first), bps/1e6)
		logLink(t, s, 0, 1)
		if rate < 0.9*bps || rate > 1.1*bps {
			bad = append(bad, fmt.Sprintf("throughput %.3f Mbit/s outside %.0f ± 10%%", rate/1e6, bps/1e6))
		}
		return bad
	})
}

// TestStarved pins which attempts count as starved: stolen time or late
// wake-ups, but not a busy share (the spinners keep every CPU busy), and
// nothing without a reading.
func TestStarved(t *testing.T) {
	late := Info{WakeLate: Lateness{Samples: 100, P99: 2 * time.Millisecond}}
	for _, tt := range []struct {
		name    string
		r       hostload.Reading
		info    Info
		starved bool
	}{
		{"quiet", hostload.Reading{Busy: 0.3, Steal: 0.001}, Info{}, false},
		{"spinners busy", hostload.Reading{Busy: 1, Steal: 0.005}, Info{}, false},
		{"stolen", hostload.Reading{Busy: 1, Steal: 0.05}, Info{}, true},
		{"late wake-ups", hostload.Reading{Busy: 0.5}, late, true},
		{"no reading", hostload.Reading{Steal: 0.5, Unavailable: []string{"no /proc/stat"}}, Info{}, false},
	} {
		if got := starved(tt.r, tt.info) != ""; got != tt.starved {
			t.Errorf("%s: starved = %v, want %v", tt.name, got, tt.starved)
		}
	}
}
