package engine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/chronosync/chronosync/lockfile"
)

// One writer a run directory. A run holds a lock on its run directory from
// before it checks the directory until it has renamed its staging
// directory into place: the file .<name>.lock beside the directory (not
// inside it: the directory is replaced whole), taken with package
// lockfile (flock(2), the holder's PID in it; a dead holder's lock is
// stale and taken over). A second process asking for the directory while
// the first holds it is refused with the holder's PID.

// RunDirLock is a held lock on a run directory (or a node's on its host).
type RunDirLock = lockfile.Lock

// LockPath is the lock file of run directory out: .<name>.lock beside it.
func LockPath(out string) string {
	return filepath.Join(filepath.Dir(out), "."+filepath.Base(filepath.Clean(out))+".lock")
}

// LockRunDir takes the lock on run directory out (see above), creating
// out's parent directory if missing. It fails, naming the holder's PID,
// when another process holds it.
func LockRunDir(out string) (*RunDirLock, error) {
	l, err := lockfile.Take(LockPath(out))
	var held *lockfile.HeldError
	switch {
	case errors.As(err, &held):
		return nil, fmt.Errorf("run directory %s is in use by another process (PID %s holds its lock %s): one process writes a run directory at a time; give this one another --out", out, held.PID, held.Path)
	case err != nil:
		return nil, fmt.Errorf("run directory %s: %w", out, err)
	}
	return l, nil
}

// DefaultStateDir is the host's state directory for node locks: $CHRONOSYNC_STATE_DIR
// if set, else /run/chronosync where it can be created (root, as a
// systemd unit runs), else $XDG_RUNTIME_DIR/chronosync, else
// chronosync-<uid> in the temporary directory. getenv reads the
// environment.
func DefaultStateDir(getenv func(string) string) string {
	if d := getenv("CHRONOSYNC_STATE_DIR"); d != "" {
		return d
	}
	if err := os.MkdirAll("/run/chronosync", 0o755); err == nil {
		if f, err := os.CreateTemp("/run/chronosync", ".probe-"); err == nil {
			f.Close()
			os.Remove(f.Name())
			return "/run/chronosync"
		}
	}
	if d := getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "chronosync")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("chronosync-%d", os.Getuid()))
}
