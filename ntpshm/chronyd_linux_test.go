//go:build linux && (amd64 || arm64 || ppc64 || ppc64le || riscv64 || s390x || loong64 || mips64 || mips64le)

package ntpshm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chronosync/chronosync/analysis/offsets"
)

// chronydConf is chronyd's whole configuration for TestChronydReadsSHM:
// every file in dir, no command port, no NTP port, no NTP source, and the
// SHM refclock of unit read 4 times a second (dpoll -2) and filtered
// into one sample a second (poll 0), with the options in extra.
func chronydConf(dir string, unit int, extra string) string {
	return fmt.Sprintf(`pidfile %[1]s/chronyd.pid
bindcmdaddress %[1]s/chronyd.sock
cmdport 0
port 0
driftfile %[1]s/drift
logdir %[1]s
log refclocks
logbanner 0
refclock SHM %[2]d refid CSYN poll 0 dpoll -2 precision 1e-7%[3]s
`, dir, unit, extra)
}

// shmOffset is the offset the writer feeds: global time is
// CLOCK_REALTIME + shmOffset.
const shmOffset = 250 * time.Microsecond

// TestChronydReadsSHM is the proof of issue 31 item 3: a chronyd -x (it
// never touches the clock) with its own configuration in a temporary
// directory reads a segment this package writes, fed through FromModel
// with a clock model whose global time is CLOCK_REALTIME + 250 µs (σ 100
// ns), and chronyc sees it within the model's σ:
//
//   - noselect: `chronyc sources` lists the SHM refclock CSYN with last
//     sample −250 µs (chrony's offsets are the local clock minus the
//     source), adjusted and measured;
//   - selected (as an operator configures it): chrony selects CSYN ('*'),
//     `chronyc tracking` names it the reference and reads "System time :
//     0.000250000 seconds slow of NTP time". With -x chronyd corrects
//     only its own virtual clock, at once, so `sources` then reads about
//     0 against that clock; tracking's System time is the host's offset;
//   - not in sync: samples marked LeapNotInSync, what a node with a stale
//     model may write, are all dropped: after 4 s CSYN's reach is 0.
//
// Each case kills only the chronyd it started, by PID, and removes its
// segment and directory, also on failure; each takes 4 to 5 s.
func TestChronydReadsSHM(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts chronyd three times, about 5 s each")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: chronyd refuses to run as another user")
	}
	chronyd, err := exec.LookPath("chronyd")
	if err != nil {
		chronyd, err = exec.LookPath("/usr/sbin/chronyd")
	}
	if err != nil {
		t.Skip("chronyd not found (Debian: apt-get install chrony)")
	}
	chronyc, err := exec.LookPath("chronyc")
	if err != nil {
		t.Skip("chronyc not found (Debian: apt-get install chrony)")
	}
	for _, tc := range []struct {
		name     string
		noselect bool
		leap     Leap
	}{
		{"noselect", true, LeapNone},
		{"selected", false, LeapNone},
		{"not in sync", false, LeapNotInSync},
	} {
		t.Run(tc.name, func(t *testing.T) {
			extra := ""
			if tc.noselect {
				extra = " noselect"
			}
			f := startFeed(t, tc.leap)
			c := startChronyd(t, chronyd, chronyc, f.seg.Unit(), extra)
			if tc.leap == LeapNotInSync {
				// chrony reads the segment 4 times a second and drops
				// every sample: after 4 s CSYN has none.
				time.Sleep(4 * time.Second)
				c.alive(t, f)
				src, err := c.source()
				if err != nil {
					t.Fatal(err)
				}
				out, err := c.run("sources")
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("chronyc sources, 4 s of samples marked not in sync:\n%s", out)
				if src.Reach != 0 || src.State == "*" {
					t.Errorf("chrony took samples marked LeapNotInSync: CSYN reach %o, state %q; want 0, not selected", src.Reach, src.State)
				}
				return
			}
			// Wait until chrony's filter holds 4 samples (sourcestats'
			// NP) and, when it may, it has selected CSYN; at most 20 s.
			deadline := time.Now().Add(20 * time.Second)
			for {
				c.alive(t, f)
				src, err := c.source()
				if err == nil && src.Reach != 0 && (tc.noselect || src.State == "*") {
					if np, err2 := c.sourcestatsNP(); err2 != nil {
						err = err2
					} else if np >= 4 {
						break
					}
				}
				if time.Now().After(deadline) {
					t.Fatalf("chronyd has not taken 4 samples of CSYN%s after 20 s: %v (last: %+v)\nchronyd's log:\n%s",
						map[bool]string{false: " and selected it"}[tc.noselect], err, src, tail(c.logPath))
				}
				time.Sleep(500 * time.Millisecond)
			}
			t.Logf("CSYN has 4 samples after %v", time.Since(f.start).Round(time.Millisecond))
			out := map[string]string{}
			for _, cmd := range []string{"sources -v", "sourcestats -v", "tracking"} {
				o, err := c.run(strings.Fields(cmd)...)
				if err != nil {
					t.Fatal(err)
				}
				out[cmd] = o
				t.Logf("chronyc %s:\n%s", cmd, o)
			}
			t.Logf("refclocks.log (raw offset, clock − receive, then cooked):\n%s", tail(filepath.Join(c.dir, "refclocks.log")))

			tol := f.model.SigmaAt(time.Now().UnixNano()) * 1e-9 // the model's σ, s
			src, err := c.source()
			if err != nil {
				t.Fatal(err)
			}
			if tc.noselect {
				want := -shmOffset.Seconds()
				for _, v := range []struct {
					name string
					got  float64
				}{{"adjusted offset", src.Offset}, {"measured offset", src.Measured}} {
					if math.Abs(v.got-want) > tol {
						t.Errorf("chronyc sources: CSYN %s %.9f s, want %.9f ± %.9f s (the model's σ)", v.name, v.got, want, tol)
					}
				}
				t.Logf("chronyc sources: CSYN offset %+.3f µs (measured %+.3f µs, error ±%.3f µs); fed global − realtime = %v, σ %.0f ns",
					src.Offset*1e6, src.Measured*1e6, src.Error*1e6, shmOffset, tol*1e9)
				return
			}
			ref, slow, err := parseTracking(out["tracking"])
			if err != nil {
				t.Fatal(err)
			}
			if ref != "CSYN" || src.State != "*" {
				t.Errorf("chronyc tracking: reference %q, sources state %q; want CSYN, '*'", ref, src.State)
			}
			if want := shmOffset.Seconds(); math.Abs(slow-want) > tol {
				t.Errorf("chronyc tracking: System time %.9f s slow of NTP time, want %.9f ± %.9f s (the model's σ)", slow, want, tol)
			}
			t.Logf("chronyc tracking: reference CSYN, System time %.3f µs slow; fed global − realtime = %v, σ %.0f ns", slow*1e6, shmOffset, tol*1e9)
		})
	}
}

// feed is a segment fed with a model whose global time is CLOCK_REALTIME
// + shmOffset.
type feed struct {
	seg   *Segment
	model offsets.Offset
	start time.Time
	done  chan error // the writer's result, sent once
}

// startFeed creates a test segment and writes FromModel's sample to it,
// marked leap, at each reading of the host's clock, 10 times a second,
// until the test ends; the segment is removed after the writer stopped.
func startFeed(t *testing.T, leap Leap) *feed {
	seg := newTestSegment(t)
	start := time.Now()
	f := &feed{
		seg: seg, start: start, done: make(chan error, 1),
		// node clock minus global = −250 µs: global = realtime + 250 µs.
		model: offsets.Offset{
			RoundID: 1, NodeID: 1,
			WindowStartNS: start.UnixNano(), WindowEndNS: start.UnixNano() + 1e9,
			OffsetNS: -float64(shmOffset.Nanoseconds()), UncertaintyNS: 100,
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			now := time.Now()
			sample, err := FromModel(f.model, now.UnixNano(), now)
			sample.Leap = leap
			if err == nil {
				err = seg.Write(sample)
			}
			if err != nil {
				f.done <- err
				return
			}
			select {
			case <-ctx.Done():
				f.done <- nil
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-f.done; err != nil {
			t.Errorf("writer: %v", err)
		}
	})
	return f
}

// chronydRun is a chronyd this test started.
type chronydRun struct {
	dir, logPath, chronyc string
	pid                   int
	exited                chan error // cmd.Wait's result, sent once
}

// startChronyd starts chronyd -x on chronydConf(unit, extra) in a new
// temporary directory, stopped (by PID) and the directory removed when
// the test ends.
func startChronyd(t *testing.T, chronyd, chronyc string, unit int, extra string) *chronydRun {
	dir := t.TempDir() // removed after chronyd stopped
	// chronyd refuses a command socket in a directory others can reach.
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "chrony.conf")
	text := chronydConf(dir, unit, extra)
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Logf("chrony.conf:\n%s", text)
	c := &chronydRun{dir: dir, logPath: filepath.Join(dir, "chronyd.out"), chronyc: chronyc, exited: make(chan error, 1)}
	logFile, err := os.Create(c.logPath)
	if err != nil {
		t.Fatal(err)
	}
	// -x: never touch the clock; -d: foreground, log to stderr; -u root:
	// keep root, which owns dir.
	cmd := exec.Command(chronyd, "-x", "-d", "-u", "root", "-f", conf)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		t.Fatalf("start %v: %v", cmd.Args, err)
	}
	c.pid = cmd.Process.Pid
	go func() { c.exited <- cmd.Wait(); logFile.Close() }()
	t.Cleanup(func() { stopChronyd(t, c.pid, cmd.Process, c.exited, c.logPath) })
	t.Logf("started chronyd, pid %d", c.pid)
	return c
}

// alive fails the test if chronyd or the writer has stopped.
func (c *chronydRun) alive(t *testing.T, f *feed) {
	t.Helper()
	select {
	case err := <-c.exited:
		c.exited <- err
		t.Fatalf("chronyd exited: %v\n%s", err, tail(c.logPath))
	case err := <-f.done:
		f.done <- err
		t.Fatalf("writer stopped: %v", err)
	default:
	}
}

// run runs chronyc on c's command socket.
func (c *chronydRun) run(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	argv := append([]string{"-h", filepath.Join(c.dir, "chronyd.sock"), "-n"}, args...)
	out, err := exec.CommandContext(ctx, c.chronyc, argv...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("chronyc %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// source returns CSYN's line of `chronyc -c sources`.
func (c *chronydRun) source() (chronySource, error) {
	out, err := c.run("-c", "sources")
	if err != nil {
		return chronySource{}, err
	}
	return parseSources(out, "CSYN")
}

// sourcestatsNP returns CSYN's NP of `chronyc -c sourcestats`.
func (c *chronydRun) sourcestatsNP() (int, error) {
	out, err := c.run("-c", "sourcestats")
	if err != nil {
		return 0, err
	}
	return sourcestatsNP(out, "CSYN")
}

// stopChronyd stops the chronyd of pid that the test started: SIGTERM,
// then SIGKILL after 3 s.
func stopChronyd(t *testing.T, pid int, p *os.Process, exited chan error, logPath string) {
	select {
	case err := <-exited:
		t.Errorf("chronyd (pid %d) had exited: %v\n%s", pid, err, tail(logPath))
		return
	default:
	}
	if err := p.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("chronyd (pid %d): SIGTERM: %v", pid, err)
	}
	select {
	case <-exited:
		return
	case <-time.After(3 * time.Second):
	}
	t.Errorf("chronyd (pid %d) still running 3 s after SIGTERM: SIGKILL", pid)
	if err := p.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("chronyd (pid %d): SIGKILL: %v", pid, err)
	}
	<-exited
}

// tail returns the last 2000 bytes of the file at path, for messages.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(bytes.TrimSpace(b))
}

// chronySource is a line of `chronyc -c sources`.
type chronySource struct {
	Mode, State, Name string
	Reach             int
	// Offset is the adjusted offset of the last sample, Measured the
	// measured one, Error its error bound; seconds, local minus source.
	Offset, Measured, Error float64
}

// parseSources finds name in `chronyc -c sources` output: mode, state,
// name, stratum, poll, reach (octal), last rx, adjusted offset, measured
// offset, error.
func parseSources(out, name string) (chronySource, error) {
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, ",")
		if len(f) != 10 || f[2] != name {
			continue
		}
		reach, err := strconv.ParseInt(f[5], 8, 32)
		if err != nil {
			return chronySource{}, fmt.Errorf("chronyc -c sources: %q: reach %q: expected an octal number", line, f[5])
		}
		var v [3]float64
		for i := range v {
			if v[i], err = strconv.ParseFloat(f[7+i], 64); err != nil {
				return chronySource{}, fmt.Errorf("chronyc -c sources: %q: field %d %q: expected seconds", line, 8+i, f[7+i])
			}
		}
		return chronySource{Mode: f[0], State: f[1], Name: f[2], Reach: int(reach), Offset: v[0], Measured: v[1], Error: v[2]}, nil
	}
	return chronySource{}, fmt.Errorf("chronyc -c sources lists no %s:\n%s", name, out)
}

// sourcestatsNP returns the NP (samples retained) column of name in
// `chronyc -c sourcestats` output.
func sourcestatsNP(out, name string) (int, error) {
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, ",")
		if len(f) > 1 && f[0] == name {
			np, err := strconv.Atoi(f[1])
			if err != nil {
				return 0, fmt.Errorf("chronyc -c sourcestats: %q: NP %q: expected an integer", line, f[1])
			}
			return np, nil
		}
	}
	return 0, fmt.Errorf("chronyc -c sourcestats lists no %s:\n%s", name, out)
}

// parseTracking returns the reference's name and how many seconds the
// system clock is slow of it (negative: fast) from `chronyc tracking`.
func parseTracking(out string) (ref string, slow float64, err error) {
	var haveRef, haveTime bool
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "Reference ID":
			// "4353594E (CSYN)"
			_, name, _ := strings.Cut(v, "(")
			ref, haveRef = strings.TrimSuffix(strings.TrimSpace(name), ")"), true
		case "System time":
			// "0.000250000 seconds slow of NTP time"
			f := strings.Fields(v)
			if len(f) < 3 || (f[2] != "slow" && f[2] != "fast") {
				return "", 0, fmt.Errorf("chronyc tracking: %q: expected \"N seconds slow|fast of NTP time\"", line)
			}
			if slow, err = strconv.ParseFloat(f[0], 64); err != nil {
				return "", 0, fmt.Errorf("chronyc tracking: %q: expected seconds: %w", line, err)
			}
			if f[2] == "fast" {
				slow = -slow
			}
			haveTime = true
		}
	}
	if !haveRef || !haveTime {
		return "", 0, fmt.Errorf("chronyc tracking: no Reference ID or System time line in\n%s", out)
	}
	return ref, slow, nil
}
