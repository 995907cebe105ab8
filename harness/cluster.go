package harness

import "github.com/chronosync/chronosync/harness/cluster"

// Cluster is a loaded cluster file (cluster.Cluster).
type Cluster = cluster.Cluster

// ClusterNode says which node of a cluster this process runs
// (cluster.Node): Options.Cluster runs it on the real backend.
type ClusterNode = cluster.Node

// LoadCluster reads and checks a cluster file, in either format
// (cluster.Load).
func LoadCluster(path string) (*Cluster, error) { return cluster.Load(path) }

// NodeLockPath is the host lock file of rank of cluster c in stateDir
// (cluster.NodeLockPath).
func NodeLockPath(stateDir string, c *Cluster, rank int) string {
	return cluster.NodeLockPath(stateDir, c, rank)
}

// LockNode takes the host lock of rank of cluster c in stateDir: one node
// per host, cluster and rank (cluster.LockNode).
func LockNode(stateDir string, c *Cluster, rank int) (*RunDirLock, error) {
	return cluster.LockNode(stateDir, c, rank)
}
