//go:build linux

package shaper

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/chronosync/chronosync/model/netem"
)

// TestProcess runs the shaper in a child process (this test binary, by
// way of TestMain's MaybeChild) over a two-node relay: datagrams from
// node 0 to node 1 on a 2 ms link arrive 2 ms or more after they were
// sent, the child's counters come back at Stop, and it has exited.
func TestProcess(t *testing.T) {
	lab, ports := relayPorts(t, 2)
	const delay = 2 * time.Millisecond
	var log bytes.Buffer
	p, err := StartProcess(ports, Config{Links: only(netem.Params{Delay: delay}), Seed: 7}, &log)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() { // before lab.Close
		if !stopped {
			p.Stop()
		}
	})
	tx, rx := udpPair(t, lab, 0, 1)
	warmUp(t, tx, rx)
	// Where the child may (see Info.RealTime, checked after Stop), every
	// thread of it, the Go runtime's too, runs under SCHED_FIFO (see
	// setProcessRealTime); none is a spinner.
	fifo, all := fifoThreads(t, p.cmd.Process.Pid)
	if idle := idleThreads(t, p.cmd.Process.Pid); idle != 0 {
		t.Errorf("%d SCHED_IDLE threads in the child, want none (the spinners have a process of their own)", idle)
	}
	const n = 200
	sent, recv := blast(t, tx, rx, n, 64, 10, 5*time.Millisecond)
	var early, lost int
	for i := range n {
		switch d := recv[i].Sub(sent[i]); {
		case recv[i].IsZero():
			lost++
		case d < delay:
			early++
		}
	}
	if lost > 0 || early > 0 {
		t.Errorf("%d of %d datagrams lost, %d arrived sooner than the link's %v", lost, n, early, delay)
	}
	stopped = true
	if err := p.Stop(); err != nil {
		t.Fatalf("Stop: %v\nchild's log:\n%s", err, log.String())
	}
	if st := p.cmd.ProcessState; st == nil || !st.Exited() || st.ExitCode() != 0 {
		t.Errorf("child state after Stop: %v", st)
	}
	var link LinkStats
	for _, st := range p.Stats() {
		if st.From == 0 && st.To == 1 {
			link = st
		}
	}
	if link.Sent < n || link.Written != link.Sent {
		t.Errorf("child's counters for 0->1: sent %d written %d, want at least %d each", link.Sent, link.Written, n)
	}
	if info := p.Info(); info.KernelStamps < n || info.ReadLag.Samples < n {
		t.Errorf("child's Info %+v: want at least %d frames dated by the kernel", info, n)
	}
	switch info := p.Info(); {
	case info.RealTime && fifo != all:
		t.Errorf("%d of the child's %d threads under SCHED_FIFO, want all", fifo, all)
	case !info.RealTime && os.Geteuid() == 0:
		t.Logf("the child ran without SCHED_FIFO (no CAP_SYS_NICE?):\n%s", log.String())
	}
	if n := p.Info().GCCycles; n != 0 {
		t.Errorf("the child collected garbage %d times, want none (its collector is off and relaying allocates nothing)", n)
	}
	t.Logf("child's 0->1 release lateness p50 %v p99 %v; read lag p50 %v p99 %v",
		link.Late.P50, link.Late.P99, p.Info().ReadLag.P50, p.Info().ReadLag.P99)
}

// TestStartProcessErrors checks the configurations StartProcess refuses
// before it starts a child.
func TestStartProcessErrors(t *testing.T) {
	tests := []struct {
		name  string
		ports []Port
		cfg   Config
		want  string
	}{
		{"no ports", nil, Config{Links: ideal}, "no ports"},
		{"no links", []Port{newMemPort()}, Config{}, "Links is nil"},
		{"not a packet port", []Port{newMemPort(), newMemPort()}, Config{Links: ideal}, "port 0 is not a packet port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := StartProcess(tt.ports, tt.cfg, nil)
			if err == nil {
				p.Stop()
				t.Fatal("StartProcess succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
		})
	}
}

// TestSpinners starts the spinner process (this test binary, by way of
// TestMain's MaybeChild): one thread per CPU of it, and none of this
// process's, runs under SCHED_IDLE while it spins, this process's
// GOMAXPROCS is left alone, and the process exits when stopped.
func TestSpinners(t *testing.T) {
	cpus, err := affinity()
	if err != nil {
		t.Fatal(err)
	}
	before := runtime.GOMAXPROCS(0)
	sp, pinned, n, err := startSpinners(os.Args[0], os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	idle := idleThreads(t, sp.cmd.Process.Pid)
	own := idleThreads(t, os.Getpid())
	if err := sp.stop(); err != nil {
		t.Errorf("stop: %v", err)
	}
	if pinned != len(cpus) || n != len(cpus) {
		t.Errorf("%d of %d CPUs got a spinner, want all %d (SCHED_IDLE and pinning need no privilege)", pinned, n, len(cpus))
	}
	if idle != len(cpus) || own != 0 {
		t.Errorf("%d SCHED_IDLE threads in the spinner process, %d in this one; want %d and 0", idle, own, len(cpus))
	}
	if after := runtime.GOMAXPROCS(0); after != before {
		t.Errorf("GOMAXPROCS %d here while spinning elsewhere, want %d as before", after, before)
	}
	if st := sp.cmd.ProcessState; st == nil || !st.Exited() || st.ExitCode() != 0 {
		t.Errorf("spinner process after stop: %v", st)
	}
}

// idleThreads counts the threads of process pid under SCHED_IDLE.
func idleThreads(t *testing.T, pid int) int {
	t.Helper()
	n, _ := threadsUnder(t, pid, unix.SCHED_IDLE)
	return n
}

// fifoThreads counts the threads of process pid under SCHED_FIFO, and
// all of them.
func fifoThreads(t *testing.T, pid int) (fifo, all int) {
	t.Helper()
	return threadsUnder(t, pid, unix.SCHED_FIFO)
}

// threadsUnder counts the threads of process pid under policy, and all
// of them.
func threadsUnder(t *testing.T, pid int, policy uint32) (n, all int) {
	t.Helper()
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		tid, err := strconv.Atoi(task.Name())
		if err != nil {
			continue
		}
		attr, err := unix.SchedGetAttr(tid, 0)
		if err != nil {
			continue // exited
		}
		all++
		if attr.Policy == policy {
			n++
		}
	}
	return n, all
}

// TestKeepAwakeInProcess checks the spinners of 2026-11-22, kept for
// BenchmarkShaperLoad: they take one extra processor slot per CPU while
// they run and give them back when stopped.
func TestKeepAwakeInProcess(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	stop, ok := keepAwakeInProcess()
	during := runtime.GOMAXPROCS(0)
	stop()
	if after := runtime.GOMAXPROCS(0); after != before {
		t.Errorf("GOMAXPROCS %d after stop, want %d as before", after, before)
	}
	if during <= before {
		t.Errorf("GOMAXPROCS %d while spinning, want more than %d", during, before)
	}
	if !ok {
		t.Error("not every CPU got its spinner (SCHED_IDLE and pinning need no privilege)")
	}
}

// TestStartProcessNotAChild starts a program that is no shaper child (it
// exits at once, reading nothing): StartProcess must fail with an error
// naming MaybeChild, not hang, whether the links' table fits the pipe's
// buffer (2 ports) or not (64 ports: the write fails instead).
func TestStartProcessNotAChild(t *testing.T) {
	exe, err := exec.LookPath("true")
	if err != nil {
		t.Skip(err)
	}
	busy := netem.Params{Delay: time.Millisecond, Jitter: 100 * time.Microsecond, Distribution: netem.Normal}
	for _, n := range []int{2, 64} {
		t.Run(fmt.Sprintf("%d ports", n), func(t *testing.T) {
			var ports []Port
			cc := childConfig{Links: make([][]*netem.Params, n)}
			for i := range n {
				f, err := os.Open(os.DevNull)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { f.Close() })
				ports = append(ports, &packetPort{ifname: fmt.Sprintf("p%d", i), f: f})
				cc.Ports = append(cc.Ports, fmt.Sprintf("p%d", i))
				cc.Links[i] = make([]*netem.Params, n)
				for j := range n {
					if j != i {
						cc.Links[i][j] = &busy
					}
				}
			}
			done := make(chan error, 1)
			go func() {
				p, err := startProcess(exe, ports, cc, nil)
				if err == nil {
					p.Stop()
				}
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), "MaybeChild") && !strings.Contains(err.Error(), "broken pipe") {
					t.Errorf("StartProcess of %s: %v, want an error naming MaybeChild or the broken pipe", exe, err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("StartProcess hangs on a program that is no shaper child")
			}
		})
	}
}

// TestPacketPortAllocatesNothing checks that the scheduler's thread reads
// a frame from a packet port with its kernel stamp and writes it to
// another allocating nothing, so that a shaper child, whose collector is
// off, never collects; the calls of 2026-11-22 (viaRuntime) allocated on
// both.
func TestPacketPortAllocatesNothing(t *testing.T) {
	lab, ports := relayPorts(t, 2)
	t.Cleanup(func() {
		for _, p := range ports {
			p.Close()
		}
	})
	in, out := ports[0].(*packetPort), ports[1].(*packetPort)
	var src Port // node 0's own end: what it writes arrives on port 0
	err := lab.Do(0, func() (err error) {
		src, err = OpenPacketPort("eth0")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	f := frame(macOf(1), macOf(0), "allocations")
	const runs = 100
	buf, oob := make([]byte, readBuf), make([]byte, stampOOB)
	relay := func() {
		n, stamp, err := in.readStamped(buf, oob)
		if err != nil || stamp == 0 {
			t.Fatalf("readStamped: %d bytes, stamp %d, %v", n, stamp, err)
		}
		if err := out.writeNow(buf[:n]); err != nil {
			t.Fatal(err)
		}
	}
	for _, viaRuntime := range []bool{false, true} {
		in.viaRuntime, out.viaRuntime = viaRuntime, viaRuntime
		for range 2 * (runs + 1) { // ARP and others may share the port
			if err := src.WriteFrame(f); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(50 * time.Millisecond)
		a := testing.AllocsPerRun(runs, relay)
		t.Logf("viaRuntime %v: %v allocations per frame read and written", viaRuntime, a)
		if !viaRuntime && a != 0 {
			t.Errorf("%v allocations per frame read and written, want 0", a)
		}
		for { // drain
			if _, _, err := in.readStamped(buf, oob); err != nil {
				break
			}
		}
	}
}

// TestProcessCut cuts the link 0->1 in a shaper child (a partition, then
// a link flap on top of it): nothing gets through while any cut holds,
// the child counts the frames each cut dropped, the reverse link stays
// open, and lifting the cuts opens the link again.
func TestProcessCut(t *testing.T) {
	lab, ports := relayPorts(t, 2)
	var log bytes.Buffer
	p, err := StartProcess(ports, Config{Links: only(netem.Params{}), Seed: 7}, &log)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			p.Stop()
		}
	})
	tx, rx := udpPair(t, lab, 0, 1)
	back, backRx := udpPair(t, lab, 1, 0)
	warmUp(t, tx, rx)
	warmUp(t, back, backRx)
	got := func(tx, rx *net.UDPConn) int {
		_, recv := blast(t, tx, rx, 50, 64, 10, time.Millisecond)
		n := 0
		for _, r := range recv {
			if !r.IsZero() {
				n++
			}
		}
		return n
	}
	cut := func(why Cut, on bool) {
		t.Helper()
		if err := p.SetCut(0, 1, why, on); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond) // the child applies it in µs
	}
	cut(CutPartition, true)
	cut(CutLinkDown, true)
	if n := got(tx, rx); n != 0 {
		t.Errorf("partitioned and down: %d of 50 datagrams 0->1 arrived, want none", n)
	}
	cut(CutPartition, false)
	if n := got(tx, rx); n != 0 {
		t.Errorf("still down: %d of 50 datagrams 0->1 arrived, want none", n)
	}
	if n := got(back, backRx); n != 50 {
		t.Errorf("%d of 50 datagrams 1->0 arrived while 0->1 was cut, want all", n)
	}
	cut(CutLinkDown, false)
	if n := got(tx, rx); n != 50 {
		t.Errorf("after the cuts were lifted: %d of 50 datagrams 0->1 arrived, want all", n)
	}
	if err := p.SetCut(0, 0, CutPartition, true); err != nil {
		t.Fatal(err) // the child refuses it, and logs
	}
	stopped = true
	if err := p.Stop(); err != nil {
		t.Fatalf("Stop: %v\nchild's log:\n%s", err, log.String())
	}
	if err := p.SetCut(0, 1, CutPartition, true); err == nil {
		t.Error("SetCut after Stop: no error")
	}
	for _, st := range p.Stats() {
		if st.From == 0 && st.To == 1 && (st.Partitioned < 50 || st.LinkDown < 50) {
			t.Errorf("0->1: %d frames dropped by the partition, %d by the link being down; want at least 50 each", st.Partitioned, st.LinkDown)
		}
	}
	if !strings.Contains(log.String(), "no such link") {
		t.Errorf("child's log lacks the refused cut of 0->0:\n%s", log.String())
	}
}
