package combine

// The reference implementation of a node's rewriting: its XSpace decoded
// into the generated types, aligned event by event and encoded again. The
// combiner rewrites at the wire level (wire.go, transcode.go); these tests
// hold it to this simpler form (TestWireMatchesProto).

import (
	"bufio"
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/chronosync/chronosync/analysis/validate"
	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// nodeProto is the reference implementation: the node's XSpace decoded into
// the generated types, aligned (alignPlane) and encoded again. Tests check
// that nodeWire gives the same planes.
func (c *combiner) nodeProto(in Input, ns *nodeState, rn *renamer) error {
	data, err := c.readSpace(in, ns.md)
	if err != nil {
		return err
	}
	space := &xplanepb.XSpace{}
	if err := xspace.Unmarshal(data, space); err != nil {
		return fmt.Errorf("combine: read %s: %w", in.Trace, err)
	}
	if len(space.Hostnames) > 0 && space.Hostnames[0] != "" {
		ns.md.Hostname = space.Hostnames[0]
	}
	if ns.md.Format != formatKineto {
		ns.md.TraceBytes = int64(len(data))
	}
	for _, p := range space.Planes {
		for _, l := range p.Lines {
			for _, e := range l.Events {
				if _, timed := e.Data.(*xplanepb.XEvent_OffsetPs); !timed {
					ns.md.UntimedEvents++
				}
			}
		}
	}
	if err := c.checkTraceNode(in, space); err != nil {
		return err
	}
	for _, p := range space.Planes {
		ns.declared = max(ns.declared, declaredNodes(p))
	}
	if err := checkRange(in.Trace, space); err != nil {
		return err
	}
	if err := c.aligner(in, ns); err != nil {
		return err
	}
	for i, p := range space.Planes {
		name, err := c.newName(in, rn, p.Name, i, p.Id)
		if err != nil {
			return err
		}
		ns.md.Planes = append(ns.md.Planes, PlaneRename{From: p.Name, To: name})
		base, _ := xspace.TimeBase(p)
		if err := c.setBase(ns, in.Trace, p.Name, base); err != nil {
			return err
		}
		ns.md.TimeBaseNS = base
		dropTimeBase(p)
		skew, err := ns.alignPlane(p, strings.HasPrefix(p.Name, gpuPrefix))
		if err != nil {
			return fmt.Errorf("combine: %s: plane %s: %w", in.Trace, p.Name, err)
		}
		process := processName(ns, p.Name, name)
		orig := p.Name
		p.Name = name
		addPlaneStats(p, in.Node, ns.md.Hostname, skew, orig)
		if c.timeBase != 0 {
			p.Stats = append(p.Stats, &xplanepb.XStat{MetadataId: statID(p, xspace.StatTimeBase), Value: &xplanepb.XStat_Int64Value{Int64Value: c.timeBase}})
		}
		if err := c.writePlane(p, process); err != nil {
			return err
		}
		if err := c.printEvents(in.Node, p); err != nil {
			return err
		}
	}
	return nil
}

// checkTraceNode compares the node and run ids a trace records about
// itself (node_id and run_id stats on its planes, as chronosync's
// simulator writes them) with the input's.
func (c *combiner) checkTraceNode(in Input, space *xplanepb.XSpace) error {
	for _, p := range space.Planes {
		for _, s := range p.Stats {
			m := p.StatMetadata[s.MetadataId]
			switch {
			case m == nil:
			case m.Name == statNodeID:
				if v, ok := s.Value.(*xplanepb.XStat_Int64Value); ok && v.Int64Value != int64(in.Node) {
					return fmt.Errorf("combine: node id mismatch: %s records node %d, given as node %d", in.Trace, v.Int64Value, in.Node)
				}
			case m.Name == "run_id":
				if v := xspace.StatString(p, s); c.md.RunID != "" && v != c.md.RunID {
					return fmt.Errorf("combine: run id mismatch: %s is run %q but %s is run %q", in.Trace, v, c.o.Offsets, c.md.RunID)
				}
			}
		}
	}
	return nil
}

// checkRange refuses traces whose line timestamps are too far from zero
// for picosecond arithmetic, such as Unix-epoch ns: XLA writes them
// relative to the profile's start.
func checkRange(path string, space *xplanepb.XSpace) error {
	for _, p := range space.Planes {
		for _, l := range p.Lines {
			if l.TimestampNs > maxLineNs || l.TimestampNs < -maxLineNs {
				return fmt.Errorf("combine: %s: plane %s line %d: timestamp_ns %d is beyond ±%d ns, too far from zero for picosecond times (are they Unix-epoch ns? XSpace timestamps are relative to the profile's start)",
					path, p.Name, l.Id, l.TimestampNs, int64(maxLineNs))
			}
		}
	}
	return nil
}

// printEvents writes one line per timed event of a combined plane.
func (c *combiner) printEvents(node int, p *xplanepb.XPlane) error {
	if c.o.PrintEvents == nil {
		return nil
	}
	w := bufio.NewWriter(c.o.PrintEvents)
	for _, line := range p.Lines {
		for _, ev := range line.Events {
			name := ""
			if m := p.EventMetadata[ev.MetadataId]; m != nil {
				name = m.Name
			}
			fmt.Fprintf(w, "node %d %s line %d %s start %d ps dur %d ps\n",
				node, p.Name, line.Id, name, line.TimestampNs*1000+ev.GetOffsetPs(), ev.DurationPs)
		}
	}
	return w.Flush()
}

// alignPlane rewrites every timed event of p onto the global timeline, in
// place: each line's events keep their order by raw start (a later event
// whose aligned start would come earlier is moved to its predecessor's),
// the line is re-based on its earliest aligned event, and every event gets
// a clock_uncertainty_ns stat (and one that spans a step of the node's
// host clock a clock_step_inside stat). It returns the correction at the
// plane's first event, or an error where a time does not fit.
func (ns *nodeState) alignPlane(p *xplanepb.XPlane, gpu bool) (skewNs int64, err error) {
	uncID := statID(p, statUncertainty)
	var stepID int64
	if ns.stepped {
		stepID = statID(p, statStepInside)
	}
	hloID, hasHlo := findStat(p, statHloOp)
	// The wire path's alignment (the same align.Node per plane); its flag
	// counts go to the node's metadata when the plane is done.
	var flags lineOut
	al := (&transcoder{}).aligner(ns, &flags)
	defer func() {
		ns.md.ExtrapolatedEvents += flags.extrapolated
		ns.md.OutsideWindowEvents += flags.outside
		ns.md.AcrossStepEvents += flags.acrossStep
	}()
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
			start, end, sigma, across, err := al.alignSpanPs(raw, raw+ev.DurationPs)
			if err != nil {
				return 0, fmt.Errorf("line %d: %w", line.Id, err)
			}
			if start < prev {
				start = prev
				ns.md.MonotonicityFixes++
			}
			prev = start
			ev.DurationPs = max(0, end-start)
			starts[k] = start
			lineMin = min(lineMin, start)
			raw += ns.shift * 1000 // from the output's base
			ns.sigmas = append(ns.sigmas, sigma)
			ns.sigmaMax = max(ns.sigmaMax, sigma)
			ev.Stats = append(ev.Stats, &xplanepb.XStat{MetadataId: uncID,
				Value: &xplanepb.XStat_Uint64Value{Uint64Value: uint64(math.Ceil(sigma))}})
			if across {
				ev.Stats = append(ev.Stats, &xplanepb.XStat{MetadataId: stepID, Value: &xplanepb.XStat_Int64Value{Int64Value: 1}})
			}
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
					ns.ops = append(ns.ops, describedOp(p, ev, validate.Op{Key: op, StartNs: start / 1000, EndNs: (start + ev.DurationPs) / 1000}))
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
	return firstPlane / 1000, nil
}

// dropTimeBase removes the plane's time_base_ns stats: the combiner writes
// the combined trace's.
func dropTimeBase(p *xplanepb.XPlane) {
	id, ok := findStat(p, xspace.StatTimeBase)
	if !ok {
		return
	}
	p.Stats = slices.DeleteFunc(p.Stats, func(s *xplanepb.XStat) bool { return s.MetadataId == id })
}

// addPlaneStats tags the plane with the node's id, hostname and clock skew
// and its name in the node's own trace.
func addPlaneStats(p *xplanepb.XPlane, node int, hostname string, skewNs int64, orig string) {
	p.Stats = append(p.Stats,
		&xplanepb.XStat{MetadataId: statID(p, statNodeID), Value: &xplanepb.XStat_Int64Value{Int64Value: int64(node)}},
		&xplanepb.XStat{MetadataId: statID(p, statHostname), Value: &xplanepb.XStat_StrValue{StrValue: hostname}},
		&xplanepb.XStat{MetadataId: statID(p, statClockSkew), Value: &xplanepb.XStat_Int64Value{Int64Value: skewNs}},
		&xplanepb.XStat{MetadataId: statID(p, statOriginalName), Value: &xplanepb.XStat_StrValue{StrValue: orig}})
}
