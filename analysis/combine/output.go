package combine

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/chronosync/chronosync/trace/chromejson"
	"github.com/chronosync/chronosync/trace/kineto"
	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// open creates the streamed outputs, in the output set's staging
// directory.
func (c *combiner) open() (*outputSet, error) {
	if err := c.makeSpaceDir(); err != nil {
		return nil, err
	}
	out := newOutputSet(c.o.Output, c.o.outputHook)
	f, err := out.create(SpacePath(c.o))
	if err != nil {
		out.cleanup()
		return nil, err
	}
	c.space = newSpaceWriter(f)
	c.names = map[string]string{}
	if !c.o.NoTraceJSON && !c.o.windowed() { // windowed: exported in finish
		path := OutputBase(c.o.Output) + ".trace.json.gz"
		jf, err := out.create(path)
		if err != nil {
			c.space.abort()
			out.cleanup()
			return nil, err
		}
		if c.json, err = newTraceJSON(jf); err != nil {
			c.space.abort()
			out.cleanup()
			return nil, err
		}
	}
	return out, nil
}

// jsonSpan is the span of time, ps on the combined timeline, that the
// Chrome JSON exports (--window workload): a slice is exported when it
// overlaps [from, to].
type jsonSpan struct{ from, to int64 }

// holds reports whether a slice from start for dur overlaps s; a nil span
// holds everything.
func (s *jsonSpan) holds(start, dur int64) bool {
	return s == nil || (start <= s.to && start+dur >= s.from)
}

// writePlaneJSON exports one decoded plane as the process jp (nothing for
// the zero jsonProcess): a thread per line, a slice per timed event with
// the stats of its metadata and its own as arguments (see jsonargs.go),
// each followed by the flow events of its flow stats, as the wire path
// (transcode.go) exports a plane it rewrites. With a span, only the slices
// that overlap it are exported, and a plane or line with none is left out.
func writePlaneJSON(t *traceJSON, p *xplanepb.XPlane, jp jsonProcess, win *jsonSpan) error {
	if jp.label == "" {
		return nil
	}
	pid := 1 + p.Id
	flowID, hasFlow := findStat(p, kineto.StatFlow)
	phID, hasPh := findStat(p, kineto.StatPhase)
	exported := func(line *xplanepb.XLine, ev *xplanepb.XEvent) bool {
		if _, timed := ev.Data.(*xplanepb.XEvent_OffsetPs); !timed || !win.holds(xspace.StartPs(line, ev), ev.DurationPs) {
			return false
		}
		if hasPh {
			for _, s := range ev.Stats {
				if s.MetadataId == phID {
					return !flowMarker(s.GetStrValue())
				}
			}
		}
		return true
	}
	hasSlice := func(line *xplanepb.XLine) bool {
		for _, ev := range line.Events {
			if exported(line, ev) {
				return true
			}
		}
		return false
	}
	if win != nil && !slices.ContainsFunc(p.Lines, hasSlice) {
		return nil
	}
	if err := t.process(pid, jp); err != nil {
		return err
	}
	var err error
	for _, line := range p.Lines {
		if win != nil && !hasSlice(line) {
			continue
		}
		tid := line.DisplayId
		if tid == 0 {
			tid = line.Id
		}
		name := line.DisplayName
		if name == "" {
			name = line.Name
		}
		if err := t.thread(pid, tid, name); err != nil {
			return err
		}
		for _, ev := range line.Events {
			if !exported(line, ev) {
				continue
			}
			md := p.EventMetadata[ev.MetadataId]
			name := ""
			if md != nil {
				name = md.DisplayName
				if name == "" {
					name = md.Name
				}
			}
			start := xspace.StartPs(line, ev)
			t.begin()
			t.buf = append(t.buf, `{"ph":"X","pid":`...)
			t.buf = strconv.AppendInt(t.buf, pid, 10)
			t.buf = append(t.buf, `,"tid":`...)
			t.buf = strconv.AppendInt(t.buf, tid, 10)
			t.buf = append(t.buf, `,"ts":`...)
			t.buf = chromejson.AppendMicros(t.buf, start, chromejson.Picoseconds, chromejson.Trim)
			t.buf = append(t.buf, `,"dur":`...)
			t.buf = chromejson.AppendMicros(t.buf, ev.DurationPs, chromejson.Picoseconds, chromejson.Trim)
			t.buf = append(t.buf, `,"name":`...)
			t.buf = chromejson.AppendString(t.buf, name)
			n := len(t.buf)
			t.buf = append(t.buf, `,"args":{`...)
			if md != nil {
				for _, s := range md.Stats {
					if t.buf, err = appendXStatJSON(t.buf, p, s); err != nil {
						return fmt.Errorf("plane %s: event metadata %d (%q): %w", p.Name, ev.MetadataId, md.Name, err)
					}
				}
			}
			for _, s := range ev.Stats {
				if t.buf, err = appendXStatJSON(t.buf, p, s); err != nil {
					return fmt.Errorf("plane %s line %d: event %q at offset_ps %d: %w", p.Name, line.Id, md.GetName(), ev.GetOffsetPs(), err)
				}
			}
			if t.buf[len(t.buf)-1] == ',' {
				t.buf[len(t.buf)-1] = '}'
			} else {
				t.buf = t.buf[:n] // no args
			}
			t.buf = append(t.buf, '}')
			if hasFlow {
				for _, s := range ev.Stats {
					if s.MetadataId != flowID {
						continue
					}
					switch v := s.Value.(type) {
					case *xplanepb.XStat_Uint64Value:
						t.buf = appendFlowJSON(t.buf, v.Uint64Value, jp.node, pid, tid, start)
					case *xplanepb.XStat_Int64Value:
						t.buf = appendFlowJSON(t.buf, uint64(v.Int64Value), jp.node, pid, tid, start)
					}
				}
			}
			if err := t.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// clockMetadataPlane is a node's /node:<id>/clock_metadata plane: its
// alignment figures as plane stats (no events).
func clockMetadataPlane(name string, md *NodeMetadata) *xplanepb.XPlane {
	p := &xplanepb.XPlane{Name: name}
	add := func(stat string, v int64) {
		p.Stats = append(p.Stats, &xplanepb.XStat{MetadataId: statID(p, stat), Value: &xplanepb.XStat_Int64Value{Int64Value: v}})
	}
	add(statNodeID, int64(md.ID))
	p.Stats = append(p.Stats, &xplanepb.XStat{MetadataId: statID(p, statHostname), Value: &xplanepb.XStat_StrValue{StrValue: md.Hostname}})
	add("snapshot_pairs", int64(md.SnapshotPairs))
	add("snapshot_samples", int64(md.SnapshotSamples))
	add("sampling_period_ns", int64(md.SamplingPeriodNS))
	add("missing_snapshots", int64(md.MissingSnapshots))
	add("snapshot_residual_ns", int64(md.SnapshotResidualNS+0.5))
	add("offset_windows", int64(md.OffsetWindows))
	add("max_correction_ns", md.MaxCorrectionNS)
	add(statClockSkew, md.ClockSkewNS)
	add("uncertainty_p50_ns", int64(md.UncertaintyP50NS+0.5))
	add("uncertainty_max_ns", int64(md.UncertaintyMaxNS+0.5))
	return p
}
