//go:build linux

package shaper

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

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

// TestKeepAwake checks that the spinners take one extra processor slot
// per CPU while they run and give them back when stopped.
func TestKeepAwake(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	stop, ok := keepAwake()
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
