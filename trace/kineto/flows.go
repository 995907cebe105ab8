package kineto

import (
	"cmp"
	"slices"
	"sort"
	"strconv"
)

// StatFlow (uint64, on complete events) is a flow the event takes part in,
// encoded as XLA's profiler encodes its "flow" stat (tsl XFlow, the
// encoding xprof's trace viewer decodes): id<<2 | direction, direction 1
// for the flow's end ("f"), 2 for its start ("s"), 3 for a step ("t") or
// an event that both starts and ends the same flow. An event may carry
// several.
const StatFlow = "flow"

// Flow directions of StatFlow's low two bits (XFlow::FlowDirection).
const (
	FlowIn    = 1 // the flow ends at the event ("f")
	FlowOut   = 2 // the flow starts at the event ("s")
	FlowInOut = 3 // a step of the flow ("t"), or both ends
)

// MaxFlowID is the largest flow id StatFlow holds (56 bits, as XFlow's).
const MaxFlowID = 1<<56 - 1

// maxFlowScan bounds how many earlier slices of a thread bindFlows looks
// at for the one enclosing a flow event: the innermost is almost always
// the first (a launch and its flow start together), and a hostile trace
// must not make the search quadratic.
const maxFlowScan = 256

// flowSlice is a complete event a flow event may bind to.
type flowSlice struct {
	start, end int64
	e          *Event
}

// bindFlows finds, for every flow event ("s", "f", "t" with an integer
// "id" member, read from Event.Raw) the complete ("X") event of its (pid,
// tid) it binds to, as Chrome's trace viewer binds it: "s" and "t" to the
// slice enclosing their ts (the innermost: the latest start, then the
// shortest), "f" with "bp":"e" too, and an "f" without it to the next
// slice starting at or after its ts. It returns each bound event's
// StatFlow values, in the order of the flow events in the file (an event
// that starts and ends the same flow gets one FlowInOut value). Flow
// events without Raw, without an integer id ≤ MaxFlowID, or with no slice
// to bind to are left out.
func bindFlows(t *Trace) map[*Event][]uint64 {
	var flows []int
	for i := range t.Events {
		switch t.Events[i].Ph {
		case "s", "f", "t":
			if t.Events[i].Raw != nil {
				flows = append(flows, i)
			}
		}
	}
	if len(flows) == 0 {
		return nil
	}
	threads := map[[2]string][]flowSlice{}
	for i := range t.Events {
		e := &t.Events[i]
		if e.Ph == "X" {
			k := [2]string{e.Pid, e.Tid}
			threads[k] = append(threads[k], flowSlice{start: e.TsNs, end: e.EndNs(), e: e})
		}
	}
	for _, s := range threads {
		slices.SortStableFunc(s, func(a, b flowSlice) int { return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(b.end, a.end)) })
	}
	out := map[*Event][]uint64{}
	for _, i := range flows {
		e := &t.Events[i]
		id, enclosing, ok := flowMembers(e.Raw)
		if !ok {
			continue
		}
		dir := uint64(FlowOut)
		switch e.Ph {
		case "f":
			dir = FlowIn
		case "t":
			dir, enclosing = FlowInOut, true
		case "s":
			enclosing = true
		}
		s := threads[[2]string{e.Pid, e.Tid}]
		var to *Event
		if enclosing {
			to = enclosingSlice(s, e.TsNs)
		} else if k := sort.Search(len(s), func(k int) bool { return s[k].start >= e.TsNs }); k < len(s) {
			to = s[k].e
		}
		if to == nil {
			continue
		}
		v := id<<2 | dir
		vs := out[to]
		if k := slices.IndexFunc(vs, func(x uint64) bool { return x>>2 == id }); k >= 0 {
			vs[k] |= dir // both ends on one event: FlowInOut
			continue
		}
		out[to] = append(vs, v)
	}
	return out
}

// enclosingSlice is the innermost slice of s (sorted by start, longer
// first) whose span holds ts, or nil.
func enclosingSlice(s []flowSlice, ts int64) *Event {
	k := sort.Search(len(s), func(k int) bool { return s[k].start > ts })
	for j := k - 1; j >= 0 && j >= k-maxFlowScan; j-- {
		if s[j].end >= ts {
			return s[j].e
		}
	}
	return nil
}

// flowMembers reads a flow event's "id" (an integer ≤ MaxFlowID, or a
// string holding one) and whether its "bp" is "e".
func flowMembers(raw []byte) (id uint64, enclosing, ok bool) {
	for m := newMembers(raw); ; {
		key, val, _, more := m.next()
		if !more {
			break
		}
		switch unquote(key) {
		case "id":
			s := string(val)
			if len(val) > 0 && val[0] == '"' {
				s = unquote(val)
			}
			n, err := strconv.ParseUint(s, 10, 64)
			if err == nil && n <= MaxFlowID {
				id, ok = n, true
			}
		case "bp":
			enclosing = len(val) > 0 && val[0] == '"' && unquote(val) == "e"
		}
	}
	return id, enclosing, ok
}
