// Package cluster is a multi-host cluster as one of its nodes sees it: the
// cluster file (the YAML of [File], or rpd's ADDRESS,rank=RANK lines) with
// its scenario, addresses and key ([Load]), the rank of this process
// ([RankFromEnv], [Cluster.RankFromEnv]), the node it runs on the real
// backend ([Node], [Node.Configure]) and the host lock that lets one node
// of a cluster and rank run on a host ([LockNode]).
//
// It knows the real world's configuration, not how a run drives it: the
// real backend (harness/realbackend) configures its world with a [Node],
// and chronosync node loads the file and takes the lock.
package cluster
