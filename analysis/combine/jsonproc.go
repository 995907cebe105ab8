package combine

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// jsonProcess is how the Chrome JSON shows one plane of the combined
// trace: a process named label (processLabel), with the plane's name in
// the combined XSpace as its process_labels, sorted by sort. The zero
// value (label "") exports no process: the plane stays in the XSpace only.
type jsonProcess struct {
	label string // the process name
	name  string // the plane's name in the combined XSpace
	sort  int32  // process_sort_index
	// node is the input's id (Input.Node; a Kineto trace's rank), which
	// makes flow ids unique across inputs (flowJSONID).
	node int
	// snapshot marks a plane of clock snapshots, which --window workload
	// leaves out of the workload's span.
	snapshot bool
}

// processName describes a plane's process in the Chrome JSON: named
// processLabel(node, host, orig), "node 1 (host-b) /device:GPU:0", with
// orig its name in the node's own trace; a Kineto trace's plane "rank 1 ·
// node 1 (host-b) /device:GPU:0", its rank and the node it ran on. name
// is its name in the combined XSpace.
func processName(ns *nodeState, orig, name string) jsonProcess {
	label := processLabel(ns.id, ns.md.Hostname, orig)
	if ns.md.Format == formatKineto {
		label = fmt.Sprintf("rank %d · %s", ns.rank, label)
	}
	return jsonProcess{label: label, name: name, sort: sortIndex(ns.sortPos, planeRank(orig)), node: ns.rank,
		snapshot: strings.Contains(orig, "snapshot")}
}

// Process sort indices (process_sort_index, an int32 in Perfetto): each
// input, and each clock node's counters, has a position (sortPositions)
// and sortSlots indices from position·sortSlots, in which its planes sort
// by planeRank.
const (
	sortSlots    = 1024
	rankHost     = 0    // /host:CPU
	rankHostMore = 1    // other host planes
	rankDevice   = 2    // /device:<kind>:<n> at rankDevice + n (n ≤ maxRankedOrd)
	maxRankedOrd = 1000 // larger ordinals share its slot
	rankOther    = 1010 // any other plane
	rankSnapshot = 1020 // clock snapshot planes, after the node's devices
	rankCounters = 1023 // a clock node's counters
)

// planeRank orders a node's planes: the host first, then its devices by
// ordinal, then other planes, then its clock snapshots.
func planeRank(orig string) int {
	switch {
	case strings.Contains(orig, "snapshot"):
		return rankSnapshot
	case orig == hostCPU:
		return rankHost
	case strings.HasPrefix(orig, hostPrefix):
		return rankHostMore
	case strings.HasPrefix(orig, "/device:"):
		i := strings.LastIndexByte(orig, ':')
		if n, err := strconv.Atoi(orig[i+1:]); err == nil && n >= 0 {
			return rankDevice + min(n, maxRankedOrd)
		}
	}
	return rankOther
}

// sortIndex is the process_sort_index of slot rank at position pos.
func sortIndex(pos, rank int) int32 {
	v := int64(pos)*sortSlots + int64(rank)
	return int32(min(v, math.MaxInt32))
}

// sortKey is one position of the process order: an input (its clock node
// and id) or, after the inputs of a clock node, its counters.
type sortKey struct {
	clock, id int
	counters  bool
}

// sortPositions orders the inputs by the node whose clock they are on,
// then by id, each clock node's counters after its inputs, and returns
// each input's position (by Input.Node) and each clock node's (by node).
func sortPositions(inputs []Input, clock func(Input) int) (inputPos, clockPos map[int]int) {
	var keys []sortKey
	seen := map[int]bool{}
	for _, in := range inputs {
		n := clock(in)
		keys = append(keys, sortKey{clock: n, id: in.Node})
		if !seen[n] {
			seen[n] = true
			keys = append(keys, sortKey{clock: n, counters: true})
		}
	}
	slices.SortFunc(keys, func(a, b sortKey) int {
		return cmp.Or(cmp.Compare(a.clock, b.clock), cmpBool(a.counters, b.counters), cmp.Compare(a.id, b.id))
	})
	inputPos, clockPos = map[int]int{}, map[int]int{}
	for i, k := range keys {
		if k.counters {
			clockPos[k.clock] = i
		} else {
			inputPos[k.id] = i
		}
	}
	return inputPos, clockPos
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
