package combine

import (
	"cmp"
	"slices"
	"strings"

	"github.com/chronosync/chronosync/analysis/validate"
	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// Collectives extracts the collective invocations of an XSpace for the
// happens-before check: on every /device:GPU: plane, the events whose
// metadata name contains rccl or nccl (any case) and that carry an hlo_op
// stat, keyed by hlo_op. A plane's node is its node_id stat (as the
// combiner writes it), or node when it has none, so a combined trace gives
// one validate.Node per node and a per-node trace one. Times are a plane's
// time_base_ns (xspace.StatTimeBase) plus its events' times, so that planes
// converted from Kineto traces compare on Unix time. source names the file
// in the report.
func Collectives(space *xplanepb.XSpace, node int, source string) []validate.Node {
	byNode := map[int][]validate.Op{}
	for _, p := range space.Planes {
		if !strings.HasPrefix(p.Name, gpuPrefix) {
			continue
		}
		hloID, ok := findStat(p, statHloOp)
		if !ok {
			continue
		}
		base, _ := xspace.TimeBase(p)
		id := node
		if s, ok := xspace.StatByName(p, p.Stats, statNodeID); ok {
			if v, ok := s.Value.(*xplanepb.XStat_Int64Value); ok {
				id = int(v.Int64Value)
			}
		}
		for _, line := range p.Lines {
			for _, ev := range line.Events {
				if _, timed := ev.Data.(*xplanepb.XEvent_OffsetPs); !timed {
					continue
				}
				if op, ok := collective(p, ev, hloID); ok {
					start := xspace.StartPs(line, ev)
					byNode[id] = append(byNode[id], validate.Op{Key: op, StartNs: base + floorDiv(start, 1000), EndNs: base + floorDiv(start+ev.DurationPs, 1000)})
				}
			}
		}
	}
	ids := make([]int, 0, len(byNode))
	for id := range byNode {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	out := make([]validate.Node, 0, len(ids))
	for _, id := range ids {
		ops := byNode[id]
		slices.SortStableFunc(ops, func(a, b validate.Op) int { return cmp.Compare(a.StartNs, b.StartNs) })
		out = append(out, validate.Node{ID: id, Source: source, Ops: ops})
	}
	return out
}
