//go:build linux

package realbackend

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/chronosync/chronosync/real/shaper"
	"github.com/chronosync/chronosync/scenario"
	"github.com/chronosync/chronosync/world"
)

// faultAction is one step of a fault: a crash or its restart, a link
// going down or up, ...
type faultAction struct {
	at   time.Duration
	what string
	do   func() error
}

// faultActions expands the scenario's faults into the actions that apply
// them on the real backend, in time order (stable: equal times keep the
// file's order): the world crashes, restarts, steps and slows nodes; the
// shaper cuts links for partitions and flaps.
func (b *Backend) faultActions(faults []scenario.Fault) []faultAction {
	var out []faultAction
	add := func(at time.Duration, what string, do func() error) {
		out = append(out, faultAction{at, what, do})
	}
	for _, f := range faults {
		switch f.Kind {
		case scenario.FaultCrash:
			id := world.NodeID(*f.Node)
			add(f.At, fmt.Sprintf("crash node %d", id), func() error { b.Crash(id); return nil })
			if f.RestartAfter != nil {
				add(f.At+*f.RestartAfter, fmt.Sprintf("restart node %d", id), func() error { return b.Restart(id, b.program(id)) })
			}
		case scenario.FaultPartition:
			add(f.At, fmt.Sprintf("partition %v", f.Groups), func() error { return b.partition(f.Groups, true) })
			if f.HealAfter != nil {
				add(f.At+*f.HealAfter, "heal the partition", func() error { return b.partition(f.Groups, false) })
			}
		case scenario.FaultLinkFlap:
			links := f.Links()
			at := f.At
			for range f.Count {
				add(at, fmt.Sprintf("link down %v", links), func() error { return b.cutLinks(links, shaper.CutLinkDown, true) })
				add(at+f.Down, fmt.Sprintf("link up %v", links), func() error { return b.cutLinks(links, shaper.CutLinkDown, false) })
				at += f.Down + f.Up
			}
		case scenario.FaultClockStep:
			id, by := world.NodeID(*f.Node), f.By
			add(f.At, fmt.Sprintf("step node %d's clock by %v", id, by), func() error { _, err := b.StepClock(id, by); return err })
		case scenario.FaultSlowNode:
			id, d := world.NodeID(*f.Node), f.ExtraDelay
			add(f.At, fmt.Sprintf("slow node %d by %v", id, d), func() error { b.SetSlow(id, d); return nil })
			if f.For != nil {
				add(f.At+*f.For, fmt.Sprintf("node %d no longer slow", id), func() error { b.SetSlow(id, 0); return nil })
			}
		}
	}
	slices.SortStableFunc(out, func(a, b faultAction) int { return cmp.Compare(a.at, b.at) })
	return out
}

// partition cuts (or heals) every directed link between two groups.
func (b *Backend) partition(groups [][]int, on bool) error {
	var links [][2]int
	for gi, g := range groups {
		for hi, h := range groups {
			if gi == hi {
				continue
			}
			for _, from := range g {
				for _, to := range h {
					links = append(links, [2]int{from, to})
				}
			}
		}
	}
	return b.cutLinks(links, shaper.CutPartition, on)
}

func (b *Backend) cutLinks(links [][2]int, why shaper.Cut, on bool) error {
	if b.net == nil || b.net.shaper == nil {
		return fmt.Errorf("no shaper to cut links with")
	}
	for _, l := range links {
		if err := b.net.shaper.SetCut(l[0], l[1], why, on); err != nil {
			return err
		}
	}
	return nil
}

// inject applies actions at their times from boot until ctx is done,
// logging each to log, and returns what it applied. A real run's faults
// come from this one goroutine, never from the nodes' loops.
func inject(ctx context.Context, boot time.Time, actions []faultAction, log io.Writer) []Fault {
	var done []Fault
	t := time.NewTimer(0)
	defer t.Stop()
	<-t.C
	for _, a := range actions {
		t.Reset(time.Until(boot.Add(a.at)))
		select {
		case <-ctx.Done():
			return done
		case <-t.C:
		}
		late := time.Since(boot.Add(a.at))
		rf := Fault{What: a.what, Due: a.at, LateNS: int64(late)}
		if err := a.do(); err != nil {
			rf.Error = err.Error()
		}
		fmt.Fprintf(log, "fault at %v (%v late): %s%s\n", a.at, late.Round(time.Microsecond), a.what, errSuffix(rf.Error))
		done = append(done, rf)
	}
	return done
}

// linkFaults reports whether the scenario's faults cut links (partitions,
// flaps), which only the shaper can do.
func linkFaults(r *scenario.Resolved) bool {
	for _, f := range r.Faults {
		if f.Kind == scenario.FaultPartition || f.Kind == scenario.FaultLinkFlap {
			return true
		}
	}
	return false
}

// lostToCrashes is how many probes a run's crashes explain, for judging
// its conditions (the datagrams a partition or a flap drops are counted
// by the shaper; the node-rounds faults leave without a model are judged
// one by one, see explain): an upper estimate from the schedule, in which
// a crashed node's probe relations (either direction, each edge of it)
// lose every pair from the crash to the restart and the window in flight
// at the crash.
func lostToCrashes(sc *scenario.Scenario, r *scenario.Resolved) (probes float64) {
	y := sc.Protocol.Sync
	if y.Window <= 0 || y.Cadence <= 0 {
		return 0
	}
	for _, f := range r.Faults {
		if f.Kind != scenario.FaultCrash {
			continue
		}
		down := r.Duration - f.At
		if f.RestartAfter != nil {
			down = min(*f.RestartAfter, down)
		}
		relations := 0
		for _, e := range r.Edges {
			if e.From == *f.Node || e.To == *f.Node {
				relations++
			}
		}
		probes += 2 * float64(relations) * float64(down+y.Window) / float64(y.Cadence)
	}
	return probes
}
