package harness

import (
	"crypto/sha256"
	"encoding/hex"
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

// RunDirLock is a held lock on a run directory.
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

// One node per host and cluster. A cluster node (chronosync node) also
// holds a lock in the host's state directory, whatever its --out: the file
// node-<cluster>-rank<N>.lock, where <cluster> is the first 16 hex digits
// of the SHA-256 of the cluster's scenario name and addresses (by rank).
// A second chronosync node of that cluster and rank on the host is refused
// with the holder's PID. The rank is in the key because a host is its
// address in the cluster: on a real host only the rank whose address it
// has can run, and a machine that stands in for several hosts (network
// namespaces, loopback aliases) runs one node of each.

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

// ClusterID identifies a cluster for the host lock: the first 16 hex
// digits of the SHA-256 of its scenario's name and its addresses, by rank.
func ClusterID(c *Cluster) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", c.Scenario.Name)
	for _, a := range c.Addresses {
		fmt.Fprintf(h, "%s\n", a)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// NodeLockPath is the host lock file of rank of cluster c in stateDir.
func NodeLockPath(stateDir string, c *Cluster, rank int) string {
	return filepath.Join(stateDir, fmt.Sprintf("node-%s-rank%d.lock", ClusterID(c), rank))
}

// LockNode takes the host lock of rank of cluster c in stateDir (created,
// mode 0755, if missing). It fails, naming the holder's PID, while another
// chronosync node of that cluster and rank runs on this host.
func LockNode(stateDir string, c *Cluster, rank int) (*RunDirLock, error) {
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		return nil, fmt.Errorf("node lock: create the state directory %s: %w", stateDir, err)
	}
	path := NodeLockPath(stateDir, c, rank)
	l, err := lockfile.Take(path)
	var held *lockfile.HeldError
	switch {
	case errors.As(err, &held):
		return nil, fmt.Errorf("a chronosync node of this cluster (%s, rank %d at %s) is already running on this host: PID %s holds %s; one node per host and cluster: stop it first (kill %s)",
			c.Scenario.Name, rank, c.Addresses[rank], held.PID, held.Path, held.PID)
	case err != nil:
		return nil, fmt.Errorf("node lock %s: %w", path, err)
	}
	return l, nil
}
