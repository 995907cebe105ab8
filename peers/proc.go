package peers

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

const (
	readyTimeout = 5 * time.Second // for a daemon to start
	termTimeout  = 3 * time.Second // between SIGTERM and SIGKILL on Stop
)

// process is a daemon started with `ip netns exec` in its own process group.
type process struct {
	name    string // for messages, e.g. "chronyd (client)"
	logPath string // where its stdout and stderr go
	cmd     *exec.Cmd
	done    chan struct{} // closed once cmd.Wait has returned
	waitErr error         // cmd.Wait's result, set before done is closed

	stopOnce sync.Once
	stopErr  error
}

// startInNS runs argv in network namespace ns with its output appended to
// logPath and, if extra is not nil, copied to extra too. The process gets
// its own process group, so Stop reaches anything it starts, and SIGKILL if
// the thread that started it dies (in practice: if this program dies).
func startInNS(name, ns, logPath string, extra io.Writer, argv ...string) (*process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns}, argv...)...)
	var out io.Writer = logFile
	if extra != nil {
		out = io.MultiWriter(logFile, extra)
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("%s: start %v: %w", name, cmd.Args, err)
	}
	p := &process{name: name, logPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// waitReady polls ready until it reports true, failing if the process exits
// first or readyTimeout passes. On failure it stops the process.
func (p *process) waitReady(ready func() bool) error {
	deadline := time.Now().Add(readyTimeout)
	for !ready() {
		select {
		case <-p.done:
			return fmt.Errorf("%s exited while starting: %v%s", p.name, p.waitErr, p.logTail())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			err := fmt.Errorf("%s not ready after %v%s", p.name, readyTimeout, p.logTail())
			return errors.Join(err, p.Stop())
		}
	}
	return nil
}

// Stop sends SIGTERM to the process group, then SIGKILL if it has not
// exited after termTimeout. It returns an error if the process had exited
// by itself before Stop.
func (p *process) Stop() error {
	p.stopOnce.Do(func() { p.stopErr = p.stop() })
	return p.stopErr
}

func (p *process) stop() error {
	select {
	case <-p.done:
		return fmt.Errorf("%s had exited: %v%s", p.name, p.waitErr, p.logTail())
	default:
	}
	pgid := p.cmd.Process.Pid
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("%s: SIGTERM: %w", p.name, err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(termTimeout):
	}
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("%s: SIGKILL: %w", p.name, err)
	}
	<-p.done
	return nil
}

// logTail returns the end of the process's output, for error messages.
func (p *process) logTail() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil || len(b) == 0 {
		return ""
	}
	const limit = 1000
	if len(b) > limit {
		b = b[len(b)-limit:]
	}
	return "; output:\n" + string(bytes.TrimSpace(b))
}
