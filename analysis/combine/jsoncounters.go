package combine

import (
	"math"

	"github.com/chronosync/chronosync/analysis/offsets"
)

// clockTrack is a clock node whose offsets the Chrome JSON shows as
// counter tracks.
type clockTrack struct {
	node  int    // the clock node
	host  string // its host's name
	plane string // its clock metadata plane's name in the combined XSpace
}

// noteClock notes the clock node of an input, once per node, in the order
// they are first combined.
func (c *combiner) noteClock(node int, host, plane string) {
	for _, k := range c.clocks {
		if k.node == node {
			return
		}
	}
	c.clocks = append(c.clocks, clockTrack{node: node, host: host, plane: plane})
}

// noteProcess notes how the Chrome JSON shows the plane of id id, for an
// export after the XSpace is written (--window workload).
func (c *combiner) noteProcess(id int64, jp jsonProcess) {
	for int64(len(c.procs)) <= id {
		c.procs = append(c.procs, jsonProcess{})
	}
	c.procs[id] = jp
}

// process is the jsonProcess noted for the plane of id id; the zero one
// (not exported) for a plane without one.
func (c *combiner) process(id int64) jsonProcess {
	if id < 0 || id >= int64(len(c.procs)) {
		return jsonProcess{}
	}
	return c.procs[id]
}

// Counter tracks of a clock node: one sample per offsets window, at the
// window's start in global time, of the model's offset (node clock minus
// global time, ns), drift (ppm) and 1σ uncertainty (ns).
const (
	counterOffset = "clock offset"
	counterDrift  = "clock drift"
	counterSigma  = "clock sigma"
)

// writeCounters writes each clock node's offsets as counter tracks of a
// process of its own ("node 1 (host-b) clock", labelled with its clock
// metadata plane's name, sorted after the node's planes), pids after every
// plane's. With a span, only the samples inside it, and the last one
// before it moved to its start. A node without offsets (snapshot
// alignment only, or --no-correction) has no counters and no process.
func (c *combiner) writeCounters(t *traceJSON, win *jsonSpan) error {
	if c.offs == nil {
		return nil
	}
	for i, k := range c.clocks {
		samples := counterSamples(c.offs.Records(k.node), c.timeBase, win)
		if len(samples) == 0 {
			continue
		}
		pid := 1 + c.nextID + int64(i)
		jp := jsonProcess{label: processLabel(k.node, k.host, "clock"), name: k.plane, sort: sortIndex(c.clockPos[k.node], rankCounters)}
		if err := t.process(pid, jp); err != nil {
			return err
		}
		for _, s := range samples {
			o := s.o
			for _, v := range []struct {
				name, key string
				v         float64
			}{{counterOffset, "ns", o.OffsetNS}, {counterDrift, "ppm", o.DriftPPM}, {counterSigma, "ns", o.UncertaintyNS}} {
				if err := t.counter(pid, v.name, v.key, s.ps, v.v); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// counterSample is one offsets window at ps on the combined timeline.
type counterSample struct {
	ps int64
	o  *offsets.Offset
}

// counterSamples places a node's records (by window start) on the
// combined timeline, whose times count from base (ns): each at its
// window's start in global time, window_start_ns − offset_ns. A record
// whose time is not finite or beyond int64 ps is left out. With a span,
// the samples inside it, led by the last one before it, moved to its
// start.
func counterSamples(recs []offsets.Offset, base int64, win *jsonSpan) []counterSample {
	var out []counterSample
	var before *counterSample
	for i := range recs {
		o := &recs[i]
		ns := float64(o.WindowStartNS-base) - o.OffsetNS
		ps := math.Round(ns * 1000)
		if math.IsNaN(ps) || ps >= math.MaxInt64 || ps <= math.MinInt64 {
			continue
		}
		s := counterSample{ps: int64(ps), o: o}
		switch {
		case win == nil:
		case s.ps < win.from:
			before = &s
			continue
		case s.ps > win.to:
			continue
		}
		out = append(out, s)
	}
	if before != nil && (len(out) == 0 || out[0].ps > win.from) {
		before.ps = win.from
		out = append([]counterSample{*before}, out...)
	}
	return out
}
