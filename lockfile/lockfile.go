// Package lockfile gives an output (a run directory, a combine output set)
// one writer at a time: a lock file beside it, created if missing, locked
// with flock(2) (exclusive, without waiting) and holding the holder's PID.
//
// A second process that asks for the lock while the first holds it gets a
// *HeldError with that PID. The kernel releases a flock when its holder
// dies, so the file of a process that was killed is stale and the next
// process takes it over. The holder removes the file before it unlocks; a
// process that locked a file just removed sees that its path names another
// file now (or none) and tries again. On a shared file system the lock
// holds where the file system implements flock across hosts (NFSv4 does,
// as POSIX locks; Lustre when mounted with -o flock); elsewhere it holds
// between the processes of one host. Where there is no flock(2) at all, a
// lock file with a PID in it counts as held (see tryLock).
package lockfile

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// MaxRead bounds what is read of a lock file that another process holds
// (its PID, for the error).
const MaxRead = 64

// attempts bounds the retries of a lock whose file was removed under it.
const attempts = 10

// Lock is a held lock file.
type Lock struct {
	path string
	f    *os.File
}

// HeldError says that another process holds the lock file Path.
type HeldError struct {
	Path string
	PID  string // as the file says; "unknown" when it holds no number
}

// Error names the holder.
func (e *HeldError) Error() string {
	return fmt.Sprintf("PID %s holds the lock %s", e.PID, e.Path)
}

// Take locks the file at path, creating it (and its directory) if missing,
// and writes this process's PID into it. It returns a *HeldError when
// another process holds it.
func Take(path string) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	for range attempts {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		held, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if held {
			b, _ := io.ReadAll(io.LimitReader(f, MaxRead))
			f.Close()
			pid := string(bytes.TrimSpace(b))
			if _, err := strconv.Atoi(pid); err != nil {
				pid = "unknown"
			}
			return nil, &HeldError{Path: path, PID: pid}
		}
		// The holder before may have removed the file between our open
		// and our lock: then the lock is on a file nobody else will see.
		fst, ferr := f.Stat()
		pst, perr := os.Stat(path)
		if ferr != nil || perr != nil || !os.SameFile(fst, pst) {
			f.Close()
			continue
		}
		err = f.Truncate(0)
		if err == nil {
			_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: write the PID: %w", path, err)
		}
		return &Lock{path: path, f: f}, nil
	}
	return nil, fmt.Errorf("lock %s: the file was removed %d times while being locked", path, attempts)
}

// Release removes the lock file and unlocks it; a nil lock is released.
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	_ = os.Remove(l.path) // before unlocking: see the package documentation
	_ = l.f.Close()       // releases the flock
	l.f = nil
}
