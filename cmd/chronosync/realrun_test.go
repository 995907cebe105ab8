package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chronosync/chronosync/ci/needs"
	"github.com/chronosync/chronosync/real/netlab"
)

// labNamespaces lists the namespaces of chronosync's own form.
func labNamespaces(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], "cs") {
			names = append(names, f[0])
		}
	}
	return names
}

// newNamespaces returns the namespaces in after that are not in before.
func newNamespaces(before, after []string) []string {
	var out []string
	for _, n := range after {
		if !slices.Contains(before, n) {
			out = append(out, n)
		}
	}
	return out
}

// TestRealRunInterrupted: a real run ended by SIGINT removes its namespaces
// and still writes its run directory; a run killed with SIGKILL leaves them,
// and `chronosync netns sweep --prefix` removes exactly those.
func TestRealRunInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real runs")
	}
	needs.Available(t, netlab.Available())
	needs.Command(t, "iproute2", "ip")
	bin, err := exec.LookPath("chronosync")
	if err != nil {
		t.Skip("chronosync is not on PATH (testscript.Main puts it there):", err)
	}
	// start starts a real run of the scenario file name, whose lab has
	// spaces namespaces, and returns it once they exist.
	start := func(t *testing.T, name string, spaces int, out string) (*exec.Cmd, []string) {
		scenario, err := filepath.Abs("../../scenarios/" + name)
		if err != nil {
			t.Fatal(err)
		}
		before := labNamespaces(t)
		cmd := exec.Command(bin, "run", scenario, "--backend=real", "--out", out)
		cmd.Stderr = &lockedBuffer{}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		for range 100 { // the run builds its namespaces first
			if made := newNamespaces(before, labNamespaces(t)); len(made) == spaces {
				return cmd, made
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatal("the run made no namespaces within 5s")
		return nil, nil
	}

	t.Run("SIGINT", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "run")
		cmd, made := start(t, "real2-idle.yaml", 2, out) // a direct link: n0, n1
		time.Sleep(3 * time.Second)
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		if err := waitOrDump(cmd, 30*time.Second); err != nil {
			t.Fatalf("interrupted run: %v", err)
		}
		if left := newNamespaces(nil, labNamespaces(t)); slices.ContainsFunc(made, func(n string) bool { return slices.Contains(left, n) }) {
			t.Errorf("namespaces %v left after SIGINT (now: %v)", made, left)
		}
		if _, err := os.Stat(filepath.Join(out, "summary.json")); err != nil {
			t.Errorf("interrupted run wrote no summary: %v", err)
		}
	})

	// killAndSweep starts a run of the scenario file name (spaces
	// namespaces, a shaper child), kills it with SIGKILL after wait and
	// sweeps its namespaces.
	killAndSweep := func(t *testing.T, name string, spaces int, wait time.Duration) {
		cmd, made := start(t, name, spaces, filepath.Join(t.TempDir(), "run"))
		time.Sleep(wait)
		children := childrenOf(t, cmd.Process.Pid)
		if len(children) == 0 {
			t.Errorf("the run has no child process (the shaper's)")
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		for _, pid := range children {
			if !exits(pid, 5*time.Second) {
				t.Errorf("child %d of the killed run still runs after 5s", pid)
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if left := labNamespaces(t); !slices.Contains(left, made[0]) {
			t.Fatalf("a killed run cannot clean up, yet its namespaces %v are gone", made)
		}
		prefix, _, _ := strings.Cut(made[0], "-")
		sweep, err := exec.Command(bin, "netns", "sweep", "--prefix", prefix).CombinedOutput()
		if err != nil {
			t.Fatalf("sweep: %v\n%s", err, sweep)
		}
		t.Logf("sweep printed:\n%s", sweep)
		left := labNamespaces(t)
		for _, n := range made {
			if slices.Contains(left, n) {
				t.Errorf("%s left after the sweep", n)
			}
		}
		if out, _ := exec.Command("ip", "link").Output(); strings.Contains(string(out), prefix) {
			t.Errorf("links of %s left after the sweep:\n%s", prefix, out)
		}
	}
	// Impaired links: n0, n1 and the switch sw, where a shaper child
	// relays.
	t.Run("SIGKILL then sweep", func(t *testing.T) { killAndSweep(t, "real2-onoff.yaml", 3, time.Second) })
	// Eight nodes and the switch, killed while node 2 is crashed (5 s to
	// 8 s) by the scenario's first fault.
	t.Run("faults, SIGKILL then sweep", func(t *testing.T) { killAndSweep(t, "real8-faults.yaml", 9, 6*time.Second) })
}

// childrenOf returns the pids of the running processes whose parent is
// pid.
func childrenOf(t *testing.T, pid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, state, ok := procStat(child); ok && ppid == pid && state != "Z" {
			out = append(out, child)
		}
	}
	return out
}

// procStat returns the parent pid and state of process pid, from
// /proc/<pid>/stat; ok is false once it is gone.
func procStat(pid int) (ppid int, state string, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, "", false
	}
	// pid (comm) state ppid ...; comm may hold spaces and parentheses.
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) < 2 {
		return 0, "", false
	}
	ppid, err = strconv.Atoi(f[1])
	return ppid, f[0], err == nil
}

// exits reports whether process pid has exited (or is a zombie) within d.
func exits(pid int, d time.Duration) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, state, ok := procStat(pid); !ok || state == "Z" {
			return true
		}
	}
	return false
}

// waitOrDump waits for cmd; if it has not exited within d, it makes the
// process dump its goroutines (SIGQUIT) and returns that with the error.
func waitOrDump(cmd *exec.Cmd, d time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		_ = cmd.Process.Signal(syscall.SIGQUIT)
		err := <-done
		return fmt.Errorf("no exit within %v (%v); its stderr:\n%s", d, err, cmd.Stderr.(*lockedBuffer).String())
	}
}

// lockedBuffer is a bytes.Buffer that exec's copier and the test may share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
