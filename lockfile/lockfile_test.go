package lockfile

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestMain lets this test binary hold a lock in a child process: with
// LOCKFILE_HOLD=path it takes the lock, says "held" and waits for stdin
// to close.
func TestMain(m *testing.M) {
	if path := os.Getenv("LOCKFILE_HOLD"); path != "" {
		l, err := Take(path)
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Println("held")
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		l.Release()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestTake: a lock another process holds is refused with its PID; once
// that process is killed (SIGKILL: it releases nothing itself) its lock
// file is stale and taken over; a lock released is gone from disk; and
// another open file of this very process counts as another holder.
func TestTake(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no flock")
	}
	path := filepath.Join(t.TempDir(), "sub", ".out.lock")
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "LOCKFILE_HOLD="+path)
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = stdin.Close() })
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "held\n" {
		t.Fatalf("child: %q, %v", line, err)
	}

	_, err = Take(path)
	var held *HeldError
	if !errors.As(err, &held) || held.PID != strconv.Itoa(child.Process.Pid) || held.Path != path {
		t.Fatalf("Take while the child holds it: %v; want a *HeldError naming PID %d", err, child.Process.Pid)
	}
	if !strings.Contains(err.Error(), "PID "+held.PID+" holds the lock "+path) {
		t.Errorf("error %q", err)
	}

	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	if b, err := os.ReadFile(path); err != nil || strings.TrimSpace(string(b)) != held.PID {
		t.Fatalf("the dead holder's lock file: %q, %v", b, err)
	}
	l, err := Take(path)
	if err != nil {
		t.Fatalf("a dead holder's lock: %v", err)
	}
	if b, _ := os.ReadFile(path); strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Errorf("lock file says %q, want this PID %d", b, os.Getpid())
	}
	if _, err := Take(path); !errors.As(err, &held) {
		t.Errorf("a second Take in this process: %v, want a *HeldError", err)
	}
	l.Release()
	l.Release()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("lock file after Release: %v", err)
	}
	l, err = Take(path)
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
}
