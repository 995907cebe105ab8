package harness

import "github.com/chronosync/chronosync/harness/engine"

// RunDirLock is a held lock on a run directory (engine.RunDirLock).
type RunDirLock = engine.RunDirLock

// LockPath is the lock file of run directory out: .<name>.lock beside it
// (engine.LockPath).
func LockPath(out string) string { return engine.LockPath(out) }

// LockRunDir takes the lock on run directory out (engine.LockRunDir).
func LockRunDir(out string) (*RunDirLock, error) { return engine.LockRunDir(out) }

// DefaultStateDir is the host's state directory for node locks
// (engine.DefaultStateDir).
func DefaultStateDir(getenv func(string) string) string { return engine.DefaultStateDir(getenv) }
