package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

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
	if err := netlab.Available(); err != nil {
		t.Skip(err)
	}
	bin, err := exec.LookPath("chronosync")
	if err != nil {
		t.Skip("chronosync is not on PATH (testscript.Main puts it there):", err)
	}
	scenario, err := filepath.Abs("../../scenarios/real2-idle.yaml")
	if err != nil {
		t.Fatal(err)
	}
	start := func(t *testing.T, out string) (*exec.Cmd, []string) {
		before := labNamespaces(t)
		cmd := exec.Command(bin, "run", scenario, "--backend=real", "--out", out)
		cmd.Stderr = &lockedBuffer{}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		for range 100 { // the run builds its namespaces first
			if made := newNamespaces(before, labNamespaces(t)); len(made) == 2 { // direct link: n0, n1
				return cmd, made
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatal("the run made no namespaces within 5s")
		return nil, nil
	}

	t.Run("SIGINT", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "run")
		cmd, made := start(t, out)
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

	t.Run("SIGKILL then sweep", func(t *testing.T) {
		cmd, made := start(t, filepath.Join(t.TempDir(), "run"))
		time.Sleep(time.Second)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
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
	})
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
