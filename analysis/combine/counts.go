package combine

import (
	"fmt"
	"path/filepath"

	"github.com/chronosync/chronosync/trace/xspace"
)

// MaxPlanes is the most planes one input may have. A node's trace has a
// few (a host plane, one per GPU, a snapshots plane; the renamer gives a
// node at most 64 GPU ordinals and 9,999 other host planes); an XSpace of
// 10^6 empty planes is 2 MB on disk and took 1.5 GB and 7.5 s to refuse.
// The planes are counted as the trace is split, before any is parsed.
const MaxPlanes = 1 << 14

// errManyPlanes is wrapped by the error of an input with more than
// MaxPlanes planes.
var errManyPlanes = fmt.Errorf("more than %d planes (combine.MaxPlanes)", MaxPlanes)

// checkCounts notes what the input held in its metadata (TracePlanes;
// TraceBytes and Events are set as it is read) and refuses an input
// without events, and an XSpace input whose counts differ from those the
// run that wrote it recorded beside it (xspace.FileTraceRecord): a trace
// cut at a message boundary still parses, and only its counts tell it
// from its node's whole trace. A record of another run (its run_id is not
// the trace's run_id stat) is no record of the trace.
func (c *combiner) checkCounts(in Input, ns *nodeState) error {
	md := ns.md
	md.TracePlanes = len(md.Planes)
	got := xspace.Counts{Bytes: md.TraceBytes, Planes: md.TracePlanes, Events: md.Events + md.UntimedEvents}
	if why := got.Empty(); why != "" {
		return fmt.Errorf("combine: node %d (%s): the trace has %s: there is nothing to align; give the node's whole trace, or leave the node out",
			in.Node, in.Trace, why)
	}
	if md.Format == formatKineto {
		return nil
	}
	rec, runID, ok, err := c.recordOf(in.Trace)
	if err != nil {
		return fmt.Errorf("combine: node %d (%s): %w", in.Node, in.Trace, err)
	}
	if !ok || (runID != "" && ns.runID != "" && runID != ns.runID) {
		return nil
	}
	if rec.Node != in.Node {
		return fmt.Errorf("combine: node %d (%s): the run recorded it as node %d's trace (%s)",
			in.Node, in.Trace, rec.Node, filepath.Join(filepath.Dir(in.Trace), xspace.FileTraceRecord))
	}
	md.Recorded = &rec.Counts
	if m := xspace.Mismatch(got, rec.Counts); m != "" {
		return fmt.Errorf("combine: node %d (%s): %s (%s)", in.Node, in.Trace, m,
			filepath.Join(filepath.Dir(in.Trace), xspace.FileTraceRecord))
	}
	return nil
}

// recordOf returns the record of the trace at path in the traces.json
// beside it, and the record's run id, reading each directory's once.
func (c *combiner) recordOf(path string) (e xspace.TraceEntry, runID string, ok bool, err error) {
	dir := filepath.Dir(path)
	r, seen := c.records[dir]
	if !seen {
		if r, err = xspace.ReadTraceRecord(dir); err != nil {
			return xspace.TraceEntry{}, "", false, err
		}
		if c.records == nil {
			c.records = map[string]*xspace.TraceRecord{}
		}
		c.records[dir] = r
	}
	if r == nil {
		return xspace.TraceEntry{}, "", false, nil
	}
	e, ok = r.Lookup(filepath.Base(path))
	return e, r.RunID, ok, nil
}

// planeLabel names an input's plane i for an error: "planes[1] (id 0, no
// name)", "planes[0] (id 2, named \"/host:CPU\")".
func planeLabel(i int, id int64, name string) string {
	if name == "" {
		return fmt.Sprintf("planes[%d] (id %d, no name)", i, id)
	}
	return fmt.Sprintf("planes[%d] (id %d, named %q)", i, id, name)
}
