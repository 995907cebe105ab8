package combine

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// open creates the streamed outputs, in the output set's staging
// directory.
func (c *combiner) open() (*outputSet, error) {
	if err := c.makeDir(filepath.Dir(c.o.Output)); err != nil {
		return nil, err
	}
	out := newOutputSet(c.o.Output, c.o.outputHook)
	f, err := out.create(c.o.Output)
	if err != nil {
		out.cleanup()
		return nil, err
	}
	c.space = newSpaceWriter(f)
	c.names = map[string]string{}
	if !c.o.NoTraceJSON {
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

// writePlaneJSON exports one plane: a process for the plane (named
// process), a thread per
// line, a slice per timed event with the event's stats (and those of its
// metadata) as arguments.
func writePlaneJSON(t *traceJSON, p *xplanepb.XPlane, process string) error {
	pid := 1 + p.Id
	if err := t.process(pid, process); err != nil {
		return err
	}
	var args []arg
	var err error
	for _, line := range p.Lines {
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
		base := line.TimestampNs * 1000
		for _, ev := range line.Events {
			if _, timed := ev.Data.(*xplanepb.XEvent_OffsetPs); !timed {
				continue
			}
			md := p.EventMetadata[ev.MetadataId]
			name := ""
			args = args[:0]
			if md != nil {
				name = md.DisplayName
				if name == "" {
					name = md.Name
				}
				if args, err = appendStats(args, p, md.Stats); err != nil {
					return fmt.Errorf("plane %s: event metadata %d (%q): %w", p.Name, ev.MetadataId, md.Name, err)
				}
			}
			if args, err = appendStats(args, p, ev.Stats); err != nil {
				return fmt.Errorf("plane %s line %d: event %q at offset_ps %d: %w", p.Name, line.Id, md.GetName(), ev.GetOffsetPs(), err)
			}
			if err := t.slice(pid, tid, name, base+ev.GetOffsetPs(), ev.DurationPs, args); err != nil {
				return err
			}
		}
	}
	return nil
}

// appendStats appends stats, stats of p, to args, rendered by
// xspace.StatValue.
func appendStats(args []arg, p *xplanepb.XPlane, stats []*xplanepb.XStat) ([]arg, error) {
	for _, s := range stats {
		key := strconv.FormatInt(s.MetadataId, 10)
		if m := p.StatMetadata[s.MetadataId]; m != nil {
			key = m.Name
		}
		v, err := xspace.StatValue(p, s)
		if err != nil {
			return args, err
		}
		args = append(args, arg{key: key, value: v})
	}
	return args, nil
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
