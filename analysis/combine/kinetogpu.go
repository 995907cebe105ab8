package combine

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/klauspost/compress/gzip"

	"github.com/chronosync/chronosync/analysis/align"
	"github.com/chronosync/chronosync/infile"
	"github.com/chronosync/chronosync/trace/kineto"
)

// A Kineto trace stamps its GPU events on the host clock, but the
// profiler read them on the GPU's clock and converted them itself. The
// combiner's model of that conversion: the profiler took the offset between
// the two clocks once, when it started, and added it to every GPU reading,
// P = R + c. So P is right at the start and drifts from the true host time
// by the GPU clock's rate error (tens of µs over a minute at 1 ppm).
//
// Given snapshot pairs (S, R) of the node's host and GPU clocks, the
// combiner undoes that: the profiler started at H0, the earliest host
// event of the trace, where its conversion was exact, so c = H0 − R0 with
// R0 the GPU reading at H0 (the pairs' mapping inverted). The pairs moved
// by c, (S, R + c), then map a GPU event's P to its host time as an
// XSpace trace's tracer readings are mapped, with the same uncertainty,
// steps and extrapolation flags. The host events are left as they are.
// NodeMetadata.GPUConversionCorrectionMaxNS says by how much the GPU
// events moved.

// kinetoGPU sets up the correction of a Kineto input's GPU events from its
// snapshot pairs (ns.gpuSnaps), when it has some.
func (c *combiner) kinetoGPU(in Input, ns *nodeState) error {
	pairs, gap, err := c.snapshotPairs(in, ns.md)
	if err != nil || pairs == nil {
		ns.md.MissingSnapshots = 0 // a Kineto trace needs none
		return err
	}
	plain, err := align.NewSnapshots(pairs, gap)
	if err != nil {
		return fmt.Errorf("combine: %s: %w", in.Snapshots, err)
	}
	h0, ok := profilerStart(c.kt)
	if !ok {
		return fmt.Errorf("combine: %s: no host event to date the profiler's start by, so its GPU conversion cannot be corrected with %s", in.Trace, in.Snapshots)
	}
	r0 := tracerAt(plain, h0)
	off := h0 - r0
	shifted := make([]align.Pair, len(pairs))
	for i, p := range pairs {
		t := p.Tracer + off
		if (off > 0) != (t > p.Tracer) && off != 0 {
			return fmt.Errorf("combine: %s: its GPU clock readings moved by the profiler's offset %d ns leave the int64 range", in.Snapshots, off)
		}
		shifted[i] = align.Pair{Sys: p.Sys, Tracer: t}
	}
	ns.gpuSnaps, err = c.snapshotMapping(in, ns.md, shifted, gap)
	return err
}

// profilerStart is the Unix time of t's earliest host event (not a
// metadata event, not on a GPU).
func profilerStart(t *kineto.Trace) (int64, bool) {
	dev := kineto.NewDevices(t)
	first, found := int64(0), false
	for i := range t.Events {
		e := &t.Events[i]
		if e.Ph == "M" {
			continue
		}
		if _, gpu := dev.Device(e); gpu {
			continue
		}
		if u := t.UnixNs(e.TsNs); !found || u < first {
			first, found = u, true
		}
	}
	return first, found
}

// tracerAt inverts a snapshot mapping: the tracer reading that maps to
// host time s (the mapping's rate is within a few hundred ppm of 1, so a
// few fixed-point steps converge to the ns).
func tracerAt(m *align.Snapshots, s int64) int64 {
	r := s
	for range 8 {
		h, _, _ := m.ToHost(r)
		d := s - h
		if d == 0 {
			break
		}
		r += d
	}
	return r
}

// readKinetoText reads a Kineto trace's JSON text, uncompressed.
func readKinetoText(path string) ([]byte, error) {
	b, err := infile.ReadFile(path, infile.Kineto)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if !infile.IsGzip(b) {
		return b, nil
	}
	// Check what it decompresses to in constant memory before holding it
	// (a bomb is refused having allocated nothing), then decompress it
	// into a buffer of that size.
	n, err := infile.CheckGzip(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	zr, err := infile.NewGunzip(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	defer zr.Close()
	out := bytes.NewBuffer(make([]byte, 0, n+1))
	if _, err := out.ReadFrom(zr); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return out.Bytes(), nil
}

// rankTimes aligns every event of the node's Kineto trace as its planes
// were (host events through the host clock, GPU events through the
// corrected conversion when there is one) and returns their new ts and dur
// on the base the copies share (c.kbase, see kinetobase.go). An event's start is kept at or after the start
// of the event before it on its (pid, tid), in raw order, as the XSpace
// lines are; such moves count in md.MonotonicityFixes only once (the
// XSpace planes count them already).
func (c *combiner) rankTimes(ns *nodeState) (ts, dur []int64, err error) {
	t := c.kt
	ts, dur = make([]int64, len(t.Events)), make([]int64, len(t.Events))
	shift := t.BaseTimeNs - c.kbase // both within ±MaxTimeNs: no overflow
	for i := range t.Events {
		ts[i], dur[i] = t.Events[i].TsNs+shift, t.Events[i].DurNs
	}
	if ns.al == nil {
		return ts, dur, nil
	}
	dev := kineto.NewDevices(t)
	host := align.NewNode(ns.id, nil, ns.offs)
	gpu := host
	if ns.gpuSnaps != nil {
		gpu = align.NewNode(ns.id, ns.gpuSnaps, ns.offs)
	}
	var corrMax float64
	for i := range t.Events {
		e := &t.Events[i]
		al := host
		_, onGPU := dev.Device(e)
		if onGPU {
			al = gpu
		}
		u0 := t.UnixNs(e.TsNs)
		u1 := t.UnixNs(e.EndNs())
		a, b := al.AlignSpan(u0, u1)
		if (a.Flags|b.Flags)&align.Overflow != 0 {
			return nil, nil, fmt.Errorf("combine: %s: event %d (%q) at %d ns maps beyond the int64 range of ns", t.Name, i, e.Name, u0)
		}
		if onGPU && ns.gpuSnaps != nil {
			h, _, _ := ns.gpuSnaps.ToHost(u0)
			corrMax = max(corrMax, math.Abs(float64(h-u0)))
		}
		ts[i], dur[i] = a.Global-c.kbase, max(0, b.Global-a.Global)
	}
	ns.md.GPUConversionCorrectionMaxNS = int64(corrMax + 0.5)
	keepLineOrder(t, ts, dur)
	return ts, dur, nil
}

// keepLineOrder moves an event's start, where alignment put it before the
// start of an event that began before it on the same (pid, tid), to that
// start, keeping its end.
func keepLineOrder(t *kineto.Trace, ts, dur []int64) {
	type line struct{ pid, tid string }
	byLine := map[line][]int{}
	var order []line
	for i := range t.Events {
		e := &t.Events[i]
		if e.Ph == "M" {
			continue
		}
		l := line{e.Pid, e.Tid}
		if _, ok := byLine[l]; !ok {
			order = append(order, l)
		}
		byLine[l] = append(byLine[l], i)
	}
	for _, l := range order {
		idx := byLine[l]
		sortByRaw(t, idx)
		prev := int64(math.MinInt64)
		for _, i := range idx {
			if ts[i] < prev {
				end := ts[i] + dur[i]
				ts[i], dur[i] = prev, max(0, end-prev)
			}
			prev = ts[i]
		}
	}
}

// sortByRaw orders event indices by their raw start, stably.
func sortByRaw(t *kineto.Trace, idx []int) {
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(t.Events[a].TsNs, t.Events[b].TsNs) })
}

// kinetoOut is where the corrected per-rank Kineto traces go: the option,
// else <base>.kineto beside the combined trace.
func (c *combiner) kinetoOut() string { return kinetoDir(c.o) }

// kinetoDir is o's Kineto output directory (see kinetoOut).
func kinetoDir(o Options) string {
	if o.KinetoDir != "" {
		return o.KinetoDir
	}
	return OutputBase(o.Output) + ".kineto"
}

// writeRank writes the node's Kineto trace with its aligned times into the
// Kineto output directory, under its own file name (gzipped when that
// ends in .gz), as a pending output that Combine commits with the others.
// The copy's baseTimeNanoseconds is the one all copies share, and it
// names its rank (see rankMembers). The directory holds nothing else, so
// that it can be handed to HTA's TraceAnalysis(trace_dir=...) as it is.
func (c *combiner) writeRank(in Input, ns *nodeState) error {
	if c.o.NoKinetoOut {
		return nil
	}
	ts, dur, err := c.rankTimes(ns)
	if err != nil {
		return err
	}
	for i := range ts {
		if ts[i] < 0 && c.kt.Events[i].Ph != "M" {
			ns.md.KinetoBeforeBase++
		}
	}
	if n := ns.md.KinetoBeforeBase; n > 0 && c.o.Logger != nil {
		c.o.Logger.Warn("aligned Kineto events before the shared base, written with a negative ts", "node", in.Node, "events", n, "base_ns", c.kbase)
	}
	dir := c.kinetoOut()
	if err := c.makeDir(dir); err != nil {
		return err
	}
	path := filepath.Join(dir, filepath.Base(in.Trace))
	t, src := c.kt, c.ktext
	ns.md.Corrected = c.rel(path)
	opt := kineto.RetimeOptions{Top: c.rankMembers(ns)}
	at := func(i int, _ *kineto.Event) (int64, int64) { return ts[i], dur[i] }
	return c.out.add(path, func(w io.Writer) error {
		if !strings.HasSuffix(strings.ToLower(path), ".gz") {
			return kineto.RetimeWith(src, t, w, at, opt)
		}
		zw, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
		if err != nil {
			return err
		}
		if err := kineto.RetimeWith(src, t, zw, at, opt); err != nil {
			return err
		}
		return zw.Close()
	})
}

// makeDir creates dir when it is missing, and remembers it so that a
// failed Combine removes it again (when it is still empty).
func (c *combiner) makeDir(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("combine: %w", err)
	}
	c.made = append(c.made, dir)
	return nil
}
