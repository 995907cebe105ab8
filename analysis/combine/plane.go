package combine

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/chronosync/chronosync/analysis/align"
	"github.com/chronosync/chronosync/analysis/validate"
	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// Stat names the combiner adds.
const (
	statNodeID      = "node_id"
	statHostname    = "hostname"
	statClockSkew   = "clock_skew_ns"
	statUncertainty = "clock_uncertainty_ns"
	statHloOp       = "hlo_op"
)

// nodeState accumulates one node's figures while its planes are aligned.
type nodeState struct {
	id        int
	al        *align.Node // nil: no correction
	md        *NodeMetadata
	sigmas    []float64
	firstRaw  int64 // ps of the node's earliest event, and its correction
	firstCorr int64
	haveFirst bool
	ops       []validate.Op
}

// alignPlane rewrites every timed event of p onto the global timeline, in
// place: each line's events keep their order by raw start (a later event
// whose aligned start would come earlier is moved to its predecessor's),
// the line is re-based on its earliest aligned event, and every event gets
// a clock_uncertainty_ns stat. It returns the correction at the plane's
// first event.
func (ns *nodeState) alignPlane(p *xplanepb.XPlane, gpu bool) (skewNs int64) {
	uncID := statID(p, statUncertainty)
	hloID, hasHlo := findStat(p, statHloOp)
	var order []int
	firstPlane, haveSkew := int64(0), false
	for _, line := range p.Lines {
		evs := line.Events
		order = order[:0]
		for i, ev := range evs {
			if _, timed := ev.Data.(*xplanepb.XEvent_OffsetPs); timed {
				order = append(order, i)
			}
		}
		base := line.TimestampNs * 1000
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(evs[a].GetOffsetPs(), evs[b].GetOffsetPs()) })
		starts := make([]int64, len(order))
		prev, lineMin := int64(math.MinInt64), int64(math.MaxInt64)
		for k, i := range order {
			ev := evs[i]
			raw := base + ev.GetOffsetPs()
			start, s1 := ns.alignPs(raw)
			end, s2 := ns.alignPs(raw + ev.DurationPs)
			if start < prev {
				start = prev
				ns.md.MonotonicityFixes++
			}
			prev = start
			ev.DurationPs = max(0, end-start)
			starts[k] = start
			lineMin = min(lineMin, start)
			sigma := max(s1, s2)
			ns.sigmas = append(ns.sigmas, sigma)
			ev.Stats = append(ev.Stats, &xplanepb.XStat{MetadataId: uncID,
				Value: &xplanepb.XStat_Uint64Value{Uint64Value: uint64(math.Ceil(sigma))}})
			corr := start - raw
			ns.md.MaxCorrectionNS = max(ns.md.MaxCorrectionNS, abs(corr)/1000)
			if !haveSkew {
				firstPlane, haveSkew = corr, true
			}
			if !ns.haveFirst || raw < ns.firstRaw {
				ns.firstRaw, ns.firstCorr, ns.haveFirst = raw, corr, true
			}
			ns.md.Events++
			if gpu && hasHlo {
				if op, ok := collective(p, ev, hloID); ok {
					ns.ops = append(ns.ops, validate.Op{Key: op, StartNs: start / 1000, EndNs: (start + ev.DurationPs) / 1000})
				}
			}
		}
		if len(order) == 0 {
			continue
		}
		line.TimestampNs = floorDiv(lineMin, 1000)
		nb := line.TimestampNs * 1000
		for k, i := range order {
			evs[i].Data = &xplanepb.XEvent_OffsetPs{OffsetPs: starts[k] - nb}
		}
	}
	return firstPlane / 1000
}

// alignPs maps a raw time in ps (the tracer clock) to global ps and its 1σ
// in ns, counting the flags it raised.
func (ns *nodeState) alignPs(ps int64) (int64, float64) {
	if ns.al == nil {
		return ps, 0
	}
	n := floorDiv(ps, 1000)
	t := ns.al.Align(n)
	if t.Flags&align.Extrapolated != 0 {
		ns.md.ExtrapolatedEvents++
	}
	if t.Flags&align.OutsideWindows != 0 {
		ns.md.OutsideWindowEvents++
	}
	return t.Global*1000 + (ps - n*1000), t.Sigma
}

// collective reports the hlo_op of an event that is a collective kernel:
// its metadata name contains rccl or nccl (any case) and it carries hlo_op
// (on the event or its metadata).
func collective(p *xplanepb.XPlane, ev *xplanepb.XEvent, hloID int64) (string, bool) {
	md := p.EventMetadata[ev.MetadataId]
	if md == nil {
		return "", false
	}
	name := strings.ToLower(md.Name)
	if !strings.Contains(name, "rccl") && !strings.Contains(name, "nccl") {
		return "", false
	}
	for _, stats := range [][]*xplanepb.XStat{ev.Stats, md.Stats} {
		for _, s := range stats {
			if s.MetadataId == hloID {
				return xspace.StatString(p, s), true
			}
		}
	}
	return "", false
}

// addPlaneStats tags the plane with the node's id, hostname and clock skew.
func addPlaneStats(p *xplanepb.XPlane, node int, hostname string, skewNs int64) {
	p.Stats = append(p.Stats,
		&xplanepb.XStat{MetadataId: statID(p, statNodeID), Value: &xplanepb.XStat_Int64Value{Int64Value: int64(node)}},
		&xplanepb.XStat{MetadataId: statID(p, statHostname), Value: &xplanepb.XStat_StrValue{StrValue: hostname}},
		&xplanepb.XStat{MetadataId: statID(p, statClockSkew), Value: &xplanepb.XStat_Int64Value{Int64Value: skewNs}})
}

// findStat returns the id of the plane's stat metadata named name.
func findStat(p *xplanepb.XPlane, name string) (int64, bool) {
	best, found := int64(0), false
	for id, m := range p.StatMetadata {
		if m.GetName() == name && (!found || id < best) {
			best, found = id, true
		}
	}
	return best, found
}

// statID returns the id of the plane's stat metadata named name, adding it
// (with the next free id) when the plane has none.
func statID(p *xplanepb.XPlane, name string) int64 {
	if id, ok := findStat(p, name); ok {
		return id
	}
	next := int64(1)
	for id := range p.StatMetadata {
		next = max(next, id+1)
	}
	if p.StatMetadata == nil {
		p.StatMetadata = map[int64]*xplanepb.XStatMetadata{}
	}
	p.StatMetadata[next] = &xplanepb.XStatMetadata{Id: next, Name: name}
	return next
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// floorDiv is a/b rounded towards −∞ (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
