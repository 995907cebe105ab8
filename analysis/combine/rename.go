package combine

import (
	"fmt"
	"strconv"
	"strings"
)

// Plane naming in the combined trace (seed 001 §3): XLA's trace-event
// converter shows only /host:CPU and /device:GPU:<n> planes, so every
// node's activity is given GPU-plane names that stay unique across nodes.
const (
	hostCPU       = "/host:CPU"
	hostPrefix    = "/host:"
	gpuPrefix     = "/device:GPU:"
	gpusPerNode   = 64    // GPU ordinals per node: node·64 + local
	hostPlaneBase = 10000 // host planes of node n: 10000·n (+k for the k-th other host plane)
)

// renamer renames one node's planes.
type renamer struct {
	node   int
	prefix string // --plane-prefix, prepended to /node:<id> names
	hosts  int    // host planes renamed so far (node > 0)
}

// nodePrefix is the prefix of the node's own planes: <prefix>/node:<id>.
func (r *renamer) nodePrefix() string {
	return r.prefix + "/node:" + strconv.Itoa(r.node)
}

// rename returns the combined name of the node's plane orig:
//   - /device:GPU:<n> becomes /device:GPU:<node·64+n>, for n < 64;
//   - node 0's host planes keep their names; a later node's /host:CPU
//     becomes /device:GPU:<10000·node>, and its other host planes (such as
//     /host:snapshots) /device:GPU:<10000·node+k>, k = 1, 2, … in order;
//   - any other plane (TPU, custom, metadata) of a node > 0 is prefixed
//     with <prefix>/node:<id>; node 0's keep their names.
func (r *renamer) rename(orig string) (string, error) {
	if n, ok := gpuOrdinal(orig); ok {
		if n >= gpusPerNode {
			return "", fmt.Errorf("plane %s: GPU ordinal %d does not fit in the %d a node may have", orig, n, gpusPerNode)
		}
		return gpuPrefix + strconv.Itoa(r.node*gpusPerNode+n), nil
	}
	if r.node == 0 {
		return orig, nil
	}
	if strings.HasPrefix(orig, hostPrefix) {
		k := 0
		if orig != hostCPU {
			r.hosts++
			k = r.hosts
			if k >= hostPlaneBase {
				return "", fmt.Errorf("plane %s: more than %d host planes on node %d", orig, hostPlaneBase-1, r.node)
			}
		}
		return gpuPrefix + strconv.Itoa(hostPlaneBase*r.node+k), nil
	}
	return r.nodePrefix() + orig, nil
}

// gpuOrdinal parses /device:GPU:<n>.
func gpuOrdinal(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, gpuPrefix)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil && n >= 0
}
