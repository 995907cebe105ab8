package combine

import (
	"fmt"
	"strconv"
	"strings"
)

// Plane naming in the combined trace. The names are chosen for what
// xprof's trace viewer (TensorBoard's profile plugin) renders; the rules,
// read from openxla/xprof's and XLA's tsl profiler sources, are written
// down in docs/trace-pipeline.md ("Plane names in the combined trace") and
// encoded in planerules_test.go:
//
//   - host: the plane named exactly /host:CPU (tsl's
//     xla/tsl/profiler/convert/xplane_to_trace_events.cc, FindPlaneWithName),
//     or, in the streaming viewer, every plane whose name starts with
//     /host:CPU, one process each, ordered by name
//     (xprof/convert/xplane_to_trace_container.cc,
//     ConvertXSpaceToTraceEventsContainer);
//   - devices: the planes whose names start with /device:GPU:; only when
//     there is none, those starting with /device:TPU: (a TPU plane of a
//     job with any GPU plane is not shown); the non-streaming viewer falls
//     back to /device:CUSTOM: after that, the streaming one always adds
//     them;
//   - a device's process id is 1 + the plane's id (the streaming viewer
//     folds ids past 499 onto 1);
//   - every other plane (/host:metadata, "Task Environment", snapshot and
//     clock metadata planes) is kept in the file for other tools but not
//     shown.
//
// So the renamer keeps each node's devices devices, of their own kind,
// with node-unique ordinals; makes a later node's /host:CPU a GPU plane
// only in a GPU job (where TPU planes are hidden anyway), and in a TPU job
// a /host:CPU<prefix>/node:<id> plane, which the streaming viewer shows
// as one more host; and puts every other plane of a later node under
// <prefix>/node:<id>/, where nothing takes it for a device or a host.
const (
	hostCPU       = "/host:CPU"
	hostPrefix    = "/host:"
	gpuPrefix     = "/device:GPU:"
	tpuPrefix     = "/device:TPU:"
	customPrefix  = "/device:CUSTOM:"
	devicePrefix  = "/device"
	chipPrefix    = "#Chip" // TPU non-core planes (tsl's kTpuNonCorePlaneNamePrefix)
	gpusPerNode   = 64      // GPU ordinals per node: node·64 + local
	tpusPerNode   = 64      // TPU ordinals per node: node·64 + local
	hostPlaneBase = 10000   // a GPU job's host plane of node n: /device:GPU:<10000·n>
)

// renamer renames one node's planes.
type renamer struct {
	node   int
	prefix string // --plane-prefix, prepended to /node:<id> names
	// gpuJob: some input of the combine has a GPU plane (jobHasGPU), so
	// xprof shows GPU planes and no TPU plane, and a later node's host
	// plane is shown as a GPU.
	gpuJob bool
}

// nodePrefix is the prefix of the node's own planes: <prefix>/node:<id>.
func (r *renamer) nodePrefix() string {
	return r.prefix + "/node:" + strconv.Itoa(r.node)
}

// rename returns the combined name of the node's plane orig:
//   - /device:GPU:<n> becomes /device:GPU:<node·64+n>, for n < 64;
//   - /device:TPU:<n>, and /device:TPU:<n><suffix> for a suffix after a
//     space (a SparseCore plane), become /device:TPU:<node·64+n><suffix>,
//     for n < 64;
//   - node 0's other planes keep their names;
//   - a later node's /host:CPU becomes /device:GPU:<10000·node> in a GPU
//     job and /host:CPU<prefix>/node:<id> in a job without GPU planes;
//   - a later node's every other plane (other host planes such as
//     /host:snapshots and /host:metadata, "Task Environment", custom and
//     non-core device planes, planes without a number) becomes
//     <prefix>/node:<id>/<orig without its leading slash>; an unnamed one
//     <prefix>/node:<id>.
func (r *renamer) rename(orig string) (string, error) {
	if n, ok := gpuOrdinal(orig); ok {
		if n >= gpusPerNode {
			return "", fmt.Errorf("plane %s: GPU ordinal %d does not fit in the %d a node may have", orig, n, gpusPerNode)
		}
		return gpuPrefix + strconv.Itoa(r.node*gpusPerNode+n), nil
	}
	if n, suffix, ok := tpuOrdinal(orig); ok {
		if n >= tpusPerNode {
			return "", fmt.Errorf("plane %s: TPU ordinal %d does not fit in the %d a node may have", orig, n, tpusPerNode)
		}
		return tpuPrefix + strconv.Itoa(r.node*tpusPerNode+n) + suffix, nil
	}
	if r.node == 0 {
		return orig, nil
	}
	if orig == hostCPU {
		if r.gpuJob {
			return gpuPrefix + strconv.Itoa(hostPlaneBase*r.node), nil
		}
		return hostCPU + r.nodePrefix(), nil
	}
	if orig == "" {
		return r.nodePrefix(), nil
	}
	return r.nodePrefix() + "/" + strings.TrimPrefix(orig, "/"), nil
}

// gpuOrdinal parses /device:GPU:<n>.
func gpuOrdinal(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, gpuPrefix)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil && n >= 0 && isDigits(rest)
}

// tpuOrdinal parses /device:TPU:<n> and /device:TPU:<n> <suffix> (the
// SparseCore planes, "/device:TPU:0 SparseCore 1"): the ordinal and the
// suffix from its space on.
func tpuOrdinal(name string) (int, string, bool) {
	rest, ok := strings.CutPrefix(name, tpuPrefix)
	if !ok {
		return 0, "", false
	}
	digits, suffix := rest, ""
	if i := strings.IndexByte(rest, ' '); i >= 0 {
		digits, suffix = rest[:i], rest[i:]
	}
	if !isDigits(digits) || len(digits) > 9 {
		return 0, "", false
	}
	n, err := strconv.Atoi(digits)
	return n, suffix, err == nil
}

// isDigits reports whether s is a non-empty run of ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// posesAsDevice reports whether xprof takes a plane of this name for a
// device or the host (tsl's IsDevicePlane and the trace viewer's host
// rule): names the combiner gives its own planes must not.
func posesAsDevice(name string) bool {
	return strings.HasPrefix(name, devicePrefix) || strings.HasPrefix(name, chipPrefix) || strings.HasPrefix(name, hostCPU)
}

// checkPlanePrefix refuses a --plane-prefix that would make the planes
// named after a node (clock metadata, a later node's other planes) pose
// as devices or the host in xprof.
func checkPlanePrefix(prefix string) error {
	if posesAsDevice(prefix + "/node:0") {
		return fmt.Errorf("combine: plane prefix %q would make the /node:<id> planes pose as devices or the host in xprof (names starting %s, %s or %s): choose another, e.g. /clusterA", prefix, devicePrefix, hostCPU, chipPrefix)
	}
	return nil
}
