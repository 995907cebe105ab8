package syncrun

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/chronosync/chronosync/graphcalc"
	"github.com/chronosync/chronosync/rounds"
	"github.com/chronosync/chronosync/scenario"
)

// UnsolvedRound is a round in which nodes of the probe graph got no clock
// model: offsets.jsonl has no record of them for that round.
type UnsolvedRound struct {
	Round uint64 `json:"round"`
	// Nodes are the nodes without a model, ascending.
	Nodes []int `json:"nodes"`
	// Reason says why, in the master's terms: the nodes that did not
	// report, those cut off from the reference, or why the round has no
	// solution at all.
	Reason string `json:"reason"`
	// ExplainedBy names the scheduled faults that account for every node
	// of Nodes; empty when they do not, and the run is then degraded.
	ExplainedBy string `json:"explained_by,omitempty"`
}

// unsolvedRound returns round r's nodes without a model (nil when every
// node of the probe graph has one), with why, and with the scheduled
// faults that explain them, active around true time now (when the master
// solved the round; the round's window ended a gather before).
func (p *syncProtocol) unsolvedRound(r *rounds.RoundReport, now time.Duration) *UnsolvedRound {
	solved := make(map[int]bool, len(r.Offsets))
	for _, o := range r.Offsets {
		solved[o.NodeID] = true
	}
	var nodes []int
	for _, n := range p.cfg.Nodes {
		if !solved[int(n)] {
			nodes = append(nodes, int(n))
		}
	}
	if len(nodes) == 0 {
		return nil
	}
	var why []string
	if len(r.Missing) > 0 {
		why = append(why, "did not report: "+nodeRanges(r.Missing))
	}
	var disc *graphcalc.DisconnectedError
	var cut []int
	switch {
	case errors.As(r.Err, &disc):
		for _, c := range disc.Components[1:] {
			cut = append(cut, c...)
		}
		slices.Sort(cut)
		comps := "components"
		if len(disc.Components) == 2 {
			comps = "component"
		}
		why = append(why, fmt.Sprintf("cut off from the reference: %s (%d %s)", nodeRanges(cut), len(disc.Components)-1, comps))
	case r.Err != nil:
		why = append(why, "no solution: "+r.Err.Error())
	}
	if len(why) == 0 {
		why = append(why, "in no edge the round kept")
	}
	u := &UnsolvedRound{Round: r.Round, Nodes: nodes, Reason: strings.Join(why, "; ")}
	y := p.sc.Protocol.Sync
	// The round's window, and what can keep a node out of the next one
	// after a fault ends: a gather, re-dialling after three heartbeats and
	// joining at the next round start.
	from := now - r.Figures.Window - y.GatherDeadline
	until := now + r.Figures.Window + y.GatherDeadline + 3*y.Heartbeat
	u.ExplainedBy = explain(p.faults, nodes, cut, int(p.cfg.Master), int(p.cfg.Reference), from, until)
	return u
}

// nodeRanges writes ascending node ids as "node 3", or "nodes 3, 5 and
// 16-31".
func nodeRanges(ns []int) string {
	var parts []string
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
			j++
		}
		switch {
		case j == i:
			parts = append(parts, fmt.Sprint(ns[i]))
		case j == i+1:
			parts = append(parts, fmt.Sprint(ns[i]), fmt.Sprint(ns[j]))
		default:
			parts = append(parts, fmt.Sprintf("%d-%d", ns[i], ns[j]))
		}
		i = j + 1
	}
	if len(ns) == 1 {
		return "node " + parts[0]
	}
	if len(parts) == 1 {
		return "nodes " + parts[0]
	}
	return "nodes " + strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// explain names the faults active in the true-time interval [from,
// until) (a fault ends with its restart, heal, last flap or slowness)
// that account for every node of nodes, or returns "" when some node is
// accounted for by none. cut are the nodes the graph's split left out of
// the reference's component. A crash, a slow node or a flapping link
// accounts for its nodes, and for every node when it is the master's or
// the reference's; a flapping link or a partition also for every node
// cut off; a partition for every node outside the group that holds both
// the master and the reference, and for every node when there is none or
// when the round has no solution at all.
func explain(faults []scenario.Fault, nodes, cut []int, master, ref int, from, until time.Duration) string {
	var names []string
	covered := map[int]bool{}
	for _, f := range faults {
		end, ok := faultEnd(f)
		if !ok || f.At >= until || end < from {
			continue
		}
		var involved []int
		switch f.Kind {
		case scenario.FaultCrash, scenario.FaultSlowNode:
			involved = []int{*f.Node}
		case scenario.FaultLinkFlap:
			for _, l := range f.Links() {
				involved = append(involved, l[0], l[1])
			}
			involved = append(involved, cut...)
		case scenario.FaultPartition:
			involved = append(involved, cut...)
			home := false
			for _, g := range f.Groups {
				if slices.Contains(g, master) && slices.Contains(g, ref) {
					home = true
				} else {
					involved = append(involved, g...)
				}
			}
			if !home || slices.Contains(nodes, ref) {
				// No group holds both, or the reference's side has no
				// edge left to solve: the whole round.
				involved = append(involved, master)
			}
		}
		all := slices.Contains(involved, master) || slices.Contains(involved, ref)
		used := false
		for _, n := range nodes {
			if all || slices.Contains(involved, n) {
				used = used || !covered[n]
				covered[n] = true
			}
		}
		if used {
			names = append(names, describeFault(f))
		}
	}
	for _, n := range nodes {
		if !covered[n] {
			return ""
		}
	}
	return strings.Join(names, ", ")
}

// faultEnd is when a fault that can keep nodes out of a round ends (the
// run's end is far enough for one that never does); false for a fault
// that cannot (a clock step).
func faultEnd(f scenario.Fault) (time.Duration, bool) {
	const never = time.Duration(1<<63 - 1)
	switch f.Kind {
	case scenario.FaultCrash:
		if f.RestartAfter != nil {
			return f.At + *f.RestartAfter, true
		}
		return never, true
	case scenario.FaultPartition:
		if f.HealAfter != nil {
			return f.At + *f.HealAfter, true
		}
		return never, true
	case scenario.FaultSlowNode:
		if f.For != nil {
			return f.At + *f.For, true
		}
		return never, true
	case scenario.FaultLinkFlap:
		return f.At + time.Duration(f.Count)*(f.Down+f.Up), true
	}
	return 0, false
}

// describeFault names a fault as the summary prints it: "crash of node 5
// at 10s".
func describeFault(f scenario.Fault) string {
	switch f.Kind {
	case scenario.FaultCrash:
		return fmt.Sprintf("crash of node %d at %v", *f.Node, f.At)
	case scenario.FaultSlowNode:
		return fmt.Sprintf("slow node %d at %v", *f.Node, f.At)
	case scenario.FaultLinkFlap:
		l := f.Links()[0]
		return fmt.Sprintf("link flap %d-%d at %v", l[0], l[1], f.At)
	case scenario.FaultPartition:
		return fmt.Sprintf("partition at %v", f.At)
	}
	return fmt.Sprintf("%s at %v", f.Kind, f.At)
}

// printUnsolved writes every round in which nodes got no model, with why
// and what explains it.
func printUnsolved(w io.Writer, us []UnsolvedRound) {
	for _, u := range us {
		expl := "explained by " + u.ExplainedBy
		if u.ExplainedBy == "" {
			expl = "NOT explained by a scheduled fault"
		}
		fmt.Fprintf(w, "  unsolved: round %d: no model for %s: %s; %s\n", u.Round, nodeRanges(u.Nodes), u.Reason, expl)
	}
}
