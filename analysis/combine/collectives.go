package combine

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/chronosync/chronosync/analysis/validate"
	"github.com/chronosync/chronosync/trace/kineto"
	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// StatWorldSize is the plane stat (int64) that declares how many nodes
// (ranks) the job has: a converted Kineto trace's host plane carries
// distributedInfo.world_size in it, a simulated node's trace the number of
// nodes of its run. Collectives and Combine report it to the check.
const StatWorldSize = "world_size"

// Collectives extracts the collective invocations of an XSpace for the
// happens-before check: on every /device:GPU: plane, the events whose
// metadata name contains rccl or nccl (any case) and that carry an hlo_op
// stat, keyed by hlo_op. A plane's node is its node_id stat (as the
// combiner and the simulator write it); a plane without one belongs to the
// one node the trace's other planes name, or to node when they name none
// or several. So a combined trace gives one validate.Node per node and a
// per-node trace one. Every node with a
// plane is returned, with or without collectives, so that the check counts
// the nodes it saw; a node's Declared is the largest world_size stat of
// its planes. Times are a plane's time_base_ns (xspace.StatTimeBase) plus
// its events' times, so that planes converted from Kineto traces compare
// on Unix time. source names the file in the report.
func Collectives(space *xplanepb.XSpace, node int, source string) []validate.Node {
	stated := map[int]bool{}
	for _, p := range space.Planes {
		if id, ok := planeNode(p); ok {
			stated[id] = true
		}
	}
	if len(stated) == 1 { // a per-node trace that says which node it is
		for id := range stated {
			node = id
		}
	}
	byNode := map[int]*validate.Node{}
	for _, p := range space.Planes {
		id, ok := planeNode(p)
		if !ok {
			id = node
		}
		n := byNode[id]
		if n == nil {
			n = &validate.Node{ID: id, Source: source}
			byNode[id] = n
		}
		n.Declared = max(n.Declared, declaredNodes(p))
		n.Ops = append(n.Ops, planeCollectives(p)...)
	}
	ids := make([]int, 0, len(byNode))
	for id := range byNode {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	out := make([]validate.Node, 0, len(ids))
	for _, id := range ids {
		n := byNode[id]
		slices.SortStableFunc(n.Ops, func(a, b validate.Op) int { return cmp.Compare(a.StartNs, b.StartNs) })
		out = append(out, *n)
	}
	return out
}

// planeNode returns the node a plane's node_id stat names.
func planeNode(p *xplanepb.XPlane) (int, bool) {
	if s, ok := xspace.StatByName(p, p.Stats, statNodeID); ok {
		if v, ok := s.Value.(*xplanepb.XStat_Int64Value); ok {
			return int(v.Int64Value), true
		}
	}
	return 0, false
}

// declaredNodes returns the number of nodes a plane's world_size stat
// declares, or 0.
func declaredNodes(p *xplanepb.XPlane) int {
	if s, ok := xspace.StatByName(p, p.Stats, StatWorldSize); ok {
		if v, ok := s.Value.(*xplanepb.XStat_Int64Value); ok && v.Int64Value > 0 && v.Int64Value <= math.MaxInt32 {
			return int(v.Int64Value)
		}
	}
	return 0
}

// planeCollectives returns the collectives of a /device:GPU: plane (none
// for other planes), in the plane's order.
func planeCollectives(p *xplanepb.XPlane) []validate.Op {
	if !strings.HasPrefix(p.Name, gpuPrefix) {
		return nil
	}
	hloID, ok := findStat(p, statHloOp)
	if !ok {
		return nil
	}
	base, _ := xspace.TimeBase(p)
	var ops []validate.Op
	for _, line := range p.Lines {
		for _, ev := range line.Events {
			if _, timed := ev.Data.(*xplanepb.XEvent_OffsetPs); !timed {
				continue
			}
			if op, ok := collective(p, ev, hloID); ok {
				start := xspace.StartPs(line, ev)
				ops = append(ops, describedOp(p, ev, validate.Op{Key: op, StartNs: base + floorDiv(start, 1000), EndNs: base + floorDiv(start+ev.DurationPs, 1000)}))
			}
		}
	}
	return ops
}

// describedOp adds to op what a converted Kineto collective's stats say
// about its process group, sequence number and message size
// (kineto.StatCollective*).
func describedOp(p *xplanepb.XPlane, ev *xplanepb.XEvent, op validate.Op) validate.Op {
	if s, ok := xspace.StatByName(p, ev.Stats, kineto.StatCollectiveGroup); ok {
		op.Group = xspace.StatString(p, s)
	}
	if s, ok := xspace.StatByName(p, ev.Stats, kineto.StatCollectiveSeq); ok {
		op.Seq, op.HasSeq = s.GetInt64Value(), true
	}
	if s, ok := xspace.StatByName(p, ev.Stats, kineto.StatCollectiveSize); ok {
		op.Size = s.GetInt64Value()
	}
	return op
}
