package cluster

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/chronosync/chronosync/lockfile"
)

// One node per host and cluster. A cluster node (chronosync node) also
// holds a lock in the host's state directory, whatever its --out: the file
// node-<cluster>-rank<N>.lock, where <cluster> is the first 16 hex digits
// of the SHA-256 of the cluster's scenario name and addresses (by rank).
// A second chronosync node of that cluster and rank on the host is refused
// with the holder's PID. The rank is in the key because a host is its
// address in the cluster: on a real host only the rank whose address it
// has can run, and a machine that stands in for several hosts (network
// namespaces, loopback aliases) runs one node of each.

// ID identifies a cluster for the host lock: the first 16 hex digits of
// the SHA-256 of its scenario's name and its addresses, by rank.
func ID(c *Cluster) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", c.Scenario.Name)
	for _, a := range c.Addresses {
		fmt.Fprintf(h, "%s\n", a)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// NodeLockPath is the host lock file of rank of cluster c in stateDir.
func NodeLockPath(stateDir string, c *Cluster, rank int) string {
	return filepath.Join(stateDir, fmt.Sprintf("node-%s-rank%d.lock", ID(c), rank))
}

// LockNode takes the host lock of rank of cluster c in stateDir (created,
// mode 0755, if missing). It fails, naming the holder's PID, while another
// chronosync node of that cluster and rank runs on this host.
func LockNode(stateDir string, c *Cluster, rank int) (*lockfile.Lock, error) {
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
