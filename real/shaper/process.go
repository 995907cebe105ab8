//go:build linux

package shaper

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"runtime/debug"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/chronosync/chronosync/model/netem"
)

// childEnv marks a process started by StartProcess; MaybeChild looks for
// it.
const childEnv = "CHRONOSYNC_SHAPER_CHILD"

// childReady is the child's first line on stdout: its shaper is built and
// running.
const childReady = "shaper ready"

// childConfig is what StartProcess hands its child (as JSON on fd 3):
// the ports, which follow as fds 4, 5, ..., and every directed link.
type childConfig struct {
	Ports []string          // interface names, for messages
	Seed  uint64            // Config.Seed
	Links [][]*netem.Params // [from][to]; nil: no link
	// Legacy runs the child as on 2026-11-22, for BenchmarkShaperLoad's
	// before and after: spinners in the child's own process, the
	// collector on (GOGC 400), frames read and written through the
	// allocating calls. It stalled the releases for up to 1.5 s beside
	// two CPU hogs (see the package doc). Never set outside tests.
	Legacy bool
}

// childReport is the child's last line on stdout, written when its
// shaper has stopped.
type childReport struct {
	Info  Info
	Stats []LinkStats
	Err   string // Run's error; empty when it stopped cleanly
}

// Process is a Shaper running in a child process of its own (see
// StartProcess). Stop it once.
type Process struct {
	cmd    *exec.Cmd
	stdout *bufio.Reader
	report childReport

	mu      sync.Mutex     // around stdin: SetCut and Stop
	stdin   io.WriteCloser // the child's commands; closing it stops the child
	stopped bool
}

// StartProcess starts a shaper over ports (made by OpenPacketPort) in a
// child process that runs this program's own executable, and returns once
// that shaper runs. The ports pass to the child and are closed here.
//
// In its own process the shaper's real-time thread never waits for the
// Go runtime of a busy program: for a processor slot taken by CPU-bound
// goroutines (up to 10 ms, the scheduler's time slice), for a stop of the
// world, or for the garbage collector (an allocation during a cycle can
// park it until the cycle ends). In one process with the nodes' event
// loops these stalled releases for 10 to 70 ms now and then (see the
// package doc). The program must call MaybeChild first thing in main (and
// a test binary in TestMain); a program that does not gets an error here,
// not a second run of itself: the child is also given test flags that
// run no test.
//
// cfg.Logger is not used: the child logs as text to log (nil discards).
// The child stops when Stop is called or when this process dies (its
// stdin closes).
func StartProcess(ports []Port, cfg Config, log io.Writer) (*Process, error) {
	return startProcessWith(ports, cfg, log, false)
}

// startProcessWith is StartProcess, with the strategy of 2026-11-22 when
// legacy is set (see childConfig.Legacy).
func startProcessWith(ports []Port, cfg Config, log io.Writer, legacy bool) (*Process, error) {
	if len(ports) == 0 {
		return nil, errors.New("shaper: StartProcess: no ports")
	}
	if cfg.Links == nil {
		return nil, errors.New("shaper: StartProcess: Config.Links is nil")
	}
	closeAll := func() {
		for _, p := range ports {
			p.Close()
		}
	}
	defer closeAll() // the child has its own copies
	cc := childConfig{Seed: cfg.Seed, Links: make([][]*netem.Params, len(ports)), Legacy: legacy}
	for from, p := range ports {
		pp, ok := p.(*packetPort)
		if !ok {
			return nil, fmt.Errorf("shaper: StartProcess: port %d is not a packet port", from)
		}
		cc.Ports = append(cc.Ports, pp.ifname)
		cc.Links[from] = make([]*netem.Params, len(ports))
		for to := range ports {
			if to == from {
				continue
			}
			if l, ok := cfg.Links(from, to); ok {
				cc.Links[from][to] = &l
			}
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("shaper: StartProcess: %w", err)
	}
	return startProcess(exe, ports, cc, log)
}

// startProcess starts exe as the shaper child of StartProcess, handing it
// the packet ports' files and cc.
func startProcess(exe string, ports []Port, cc childConfig, log io.Writer) (*Process, error) {
	cfgR, cfgW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("shaper: StartProcess: %w", err)
	}
	defer cfgR.Close()
	files := []*os.File{cfgR} // fd 3, then the ports from fd 4
	for _, p := range ports {
		files = append(files, p.(*packetPort).f)
	}
	if log == nil {
		log = io.Discard
	}
	cmd := exec.Command(exe, "-test.run=^$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.ExtraFiles = files
	cmd.Stderr = log
	stdin, err := cmd.StdinPipe()
	if err != nil {
		cfgW.Close()
		return nil, fmt.Errorf("shaper: StartProcess: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cfgW.Close()
		return nil, fmt.Errorf("shaper: StartProcess: %w", err)
	}
	if err := cmd.Start(); err != nil {
		cfgW.Close()
		return nil, fmt.Errorf("shaper: StartProcess: start %s: %w", exe, err)
	}
	// The child has its copy of the read end: with ours closed, a child
	// that exits without reading (a program without MaybeChild) fails
	// the write below instead of blocking it for good.
	cfgR.Close()
	p := &Process{cmd: cmd, stdin: stdin, stdout: bufio.NewReader(stdout)}
	err = json.NewEncoder(cfgW).Encode(cc)
	cfgW.Close()
	if err == nil {
		err = p.expectReady()
	}
	if err != nil {
		stdin.Close()
		io.Copy(io.Discard, p.stdout)
		p.cmd.Wait() // its error says less than err
		return nil, fmt.Errorf("shaper: StartProcess: %w", err)
	}
	return p, nil
}

// expectReady reads the child's first line.
func (p *Process) expectReady() error {
	line, err := p.stdout.ReadString('\n')
	if line == childReady+"\n" {
		return nil
	}
	var rep childReport
	if json.Unmarshal([]byte(line), &rep) == nil && rep.Err != "" {
		return errors.New(rep.Err)
	}
	if err == nil || errors.Is(err, io.EOF) {
		return fmt.Errorf("the child did not start its shaper (got %q; does the program call shaper.MaybeChild first?)", line)
	}
	return fmt.Errorf("read the child's start: %w", err)
}

// wait reads the child's report, if any, and waits for it to exit.
func (p *Process) wait() error {
	line, _ := p.stdout.ReadBytes('\n')
	rerr := json.Unmarshal(line, &p.report)
	werr := p.cmd.Wait()
	switch {
	case rerr == nil && p.report.Err != "":
		return errors.New(p.report.Err)
	case rerr == nil:
		return nil
	case werr != nil:
		return fmt.Errorf("shaper child: %w", werr)
	default:
		return fmt.Errorf("shaper child: no report: %w", rerr)
	}
}

// Stop stops the child's shaper, waits for the child to exit and returns
// Run's error. Info and Stats then give the child's last figures.
func (p *Process) Stop() error {
	p.mu.Lock()
	p.stopped = true
	p.stdin.Close()
	p.mu.Unlock()
	return p.wait()
}

// SetCut is Shaper.SetCut in the child: it hands the child the command
// and returns; the child applies it within microseconds, and logs a
// command it cannot apply.
func (p *Process) SetCut(from, to int, why Cut, on bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return fmt.Errorf("shaper: cut %d->%d: the shaper has stopped", from, to)
	}
	if _, err := fmt.Fprintf(p.stdin, "cut %d %d %d %t\n", from, to, why, on); err != nil {
		return fmt.Errorf("shaper: cut %d->%d: %w", from, to, err)
	}
	return nil
}

// commands applies the parent's commands, one a line ("cut FROM TO WHY
// ON", see Process.SetCut), until in ends.
func commands(in io.Reader, s *Shaper, log *slog.Logger) {
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		var from, to, why int
		var on bool
		if _, err := fmt.Sscanf(sc.Text(), "cut %d %d %d %t", &from, &to, &why, &on); err != nil {
			log.Error("shaper child: malformed command", "line", sc.Text(), "err", err)
			continue
		}
		if err := s.SetCut(from, to, Cut(why), on); err != nil {
			log.Error("shaper child", "err", err)
		}
	}
}

// Info returns how the child's shaper ran; valid after Stop.
func (p *Process) Info() Info { return p.report.Info }

// Stats returns the child's link counters; valid after Stop.
func (p *Process) Stats() []LinkStats { return p.report.Stats }

// MaybeChild makes this process a shaper child and exits when it was
// started by StartProcess; otherwise it returns at once. Call it first in
// main, and in TestMain of any test binary that starts a shaper process.
func MaybeChild() {
	switch os.Getenv(childEnv) {
	case "":
		return
	case spinnerMode:
		os.Exit(spinnerMain(os.Stdin, os.Stdout))
	default:
		os.Exit(childMain(os.Stdin, os.Stdout, os.Stderr))
	}
}

// childMemoryLimit returns the heap size at which the collector of a
// shaper child over n ports, otherwise off, runs after all: far above
// what such a shaper keeps (the copies in flight, and a lateness ring of
// 512 KiB for each directed link that carries traffic, plus the garbage
// of its growth), so that it is only a guard against a leak.
func childMemoryLimit(n int) int64 {
	return 1<<30 + int64(n*n)<<20
}

// childMain runs the child: reads its configuration, runs the shaper
// until stdin closes (or SIGTERM), then writes its report.
func childMain(stdin io.Reader, stdout, stderr io.Writer) int {
	// No collection while the shaper runs: relaying a frame allocates
	// nothing, and a cycle's stops of the world and its work on every
	// processor slot stop or slow the release goroutine too (see the
	// package doc). Info.GCCycles says whether one ran all the same.
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(childMemoryLimit(0))
	log := slog.New(slog.NewTextHandler(stderr, nil)).With("component", "shaper")
	fail := func(err error) int {
		log.Error("shaper child", "err", err)
		json.NewEncoder(stdout).Encode(childReport{Err: err.Error()})
		return 1
	}
	var cc childConfig
	cfgF := os.NewFile(3, "shaper-config")
	err := json.NewDecoder(cfgF).Decode(&cc)
	cfgF.Close()
	if err != nil {
		return fail(fmt.Errorf("read configuration: %w", err))
	}
	if cc.Legacy {
		debug.SetGCPercent(400)
		debug.SetMemoryLimit(math.MaxInt64)
	} else {
		debug.SetMemoryLimit(childMemoryLimit(len(cc.Ports)))
	}
	ports := make([]Port, len(cc.Ports))
	for i, name := range cc.Ports {
		p, err := packetPortFromFD(4+i, name)
		if err != nil {
			return fail(err)
		}
		p.viaRuntime = cc.Legacy
		ports[i] = p
	}
	s, err := New(ports, Config{Seed: cc.Seed, Logger: log, Links: func(from, to int) (netem.Params, bool) {
		if l := cc.Links[from][to]; l != nil {
			return *l, true
		}
		return netem.Params{}, false
	}})
	if err != nil {
		return fail(err)
	}
	// A terminal's interrupt reaches the whole process group: the parent
	// handles it and stops the child when its run is done with the links.
	signal.Ignore(syscall.SIGINT)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		commands(stdin, s, log) // returns when the parent closes it or dies
		cancel()
	}()
	if cc.Legacy {
		wake, awake := keepAwakeInProcess()
		defer wake()
		if !awake {
			log.Warn("shaper: could not keep every CPU awake (SCHED_IDLE spinners); releases may be late by a vCPU's wake-up")
		}
	} else {
		defer keepAwake(log, stderr)()
		// After the spinner process has started: it must not inherit
		// the policy.
		if err := setProcessRealTime(rtPriority); err != nil {
			log.Info("shaper: the child's threads stay SCHED_OTHER (SCHED_FIFO needs root or CAP_SYS_NICE); releases will be late by milliseconds on a busy machine", "err", err)
		} else {
			s.anyThread = true
		}
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	fmt.Fprintln(stdout, childReady)
	err = <-done
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	rep := childReport{Info: s.Info(), Stats: s.Stats()}
	if err != nil {
		rep.Err = err.Error()
	}
	if n := rep.Info.GCCycles; n > 0 && !cc.Legacy {
		log.Warn("shaper: the garbage collector ran while the shaper ran; each cycle stops its real-time thread", "cycles", n)
	}
	if err := json.NewEncoder(stdout).Encode(rep); err != nil {
		log.Error("shaper child: write report", "err", err)
	}
	if err != nil {
		return 1
	}
	return 0
}

// keepAwake starts the spinner process (see spinners) and returns the
// function that stops it. It logs, to the run's log, when the spinners
// could not start or not on every CPU: the shaper runs all the same,
// its releases late by a vCPU's wake-up now and then.
func keepAwake(log *slog.Logger, stderr io.Writer) (stop func()) {
	const why = "releases may be late by a vCPU's wake-up (tens of µs to ms)"
	exe, err := os.Executable()
	var sp *spinners
	var pinned, cpus int
	if err == nil {
		sp, pinned, cpus, err = startSpinners(exe, stderr)
	}
	if err != nil {
		log.Warn("shaper: could not keep the CPUs awake; "+why, "err", err)
		return func() {}
	}
	if pinned < cpus {
		log.Warn("shaper: could not keep every CPU awake (a SCHED_IDLE spinner could not be pinned to its CPU); "+why,
			"cpus", cpus, "kept awake", pinned)
	}
	return func() {
		if err := sp.stop(); err != nil {
			log.Warn("shaper: stop the spinners", "err", err)
		}
	}
}

// packetPortFromFD makes a Port of an AF_PACKET socket that
// OpenPacketPort opened and a parent passed down as fd.
func packetPortFromFD(fd int, ifname string) (*packetPort, error) {
	// The parent's exec made the socket blocking (os.File.Fd does).
	if err := unix.SetNonblock(fd, true); err != nil {
		return nil, fmt.Errorf("shaper: port %s (fd %d): %w", ifname, fd, err)
	}
	f := os.NewFile(uintptr(fd), "packet:"+ifname)
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("shaper: port %s (fd %d): %w", ifname, fd, err)
	}
	return &packetPort{ifname: ifname, fd: fd, f: f, rc: rc}, nil
}
