package combine

import (
	"errors"
	"fmt"
	"os"

	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// What the Chrome JSON spans (Options.Window).
const (
	// WindowAll exports every event (the default).
	WindowAll = "all"
	// WindowWorkload exports only the traced workload's span: from the
	// first start to the last end of the slices of every exported plane but
	// the clock snapshot planes, widened by windowMargin on each side. The
	// combined XSpace keeps everything.
	WindowWorkload = "workload"
)

// windowMargin widens the workload's span on each side by this fraction of
// it, and by at least windowMarginMinPs.
const (
	windowMargin      = 0.01
	windowMarginMinPs = 10_000_000 // 10 µs
)

// checkWindow checks Options.Window.
func checkWindow(w string) error {
	switch w {
	case "", WindowAll, WindowWorkload:
		return nil
	}
	return fmt.Errorf("combine: unknown trace JSON window %q (want %q or %q)", w, WindowAll, WindowWorkload)
}

// windowed reports whether the Chrome JSON is exported after the XSpace,
// in the workload's span, rather than streamed beside it.
func (o *Options) windowed() bool { return !o.NoTraceJSON && o.Window == WindowWorkload }

// JSONWindow is the span the Chrome JSON was limited to (--window
// workload), ps on the combined timeline (from its time base).
type JSONWindow struct {
	Mode   string `json:"mode"`
	FromPS int64  `json:"from_ps"`
	ToPS   int64  `json:"to_ps"`
	// Workload is false when no slice outside the snapshot planes was
	// found: then everything was exported.
	Workload bool `json:"workload"`
}

// exportWindowed writes the Chrome JSON from the combined XSpace just
// written (its staged file, whole by now), read twice a plane at a time:
// once at the wire level for the workload's span (workloadSpan, which the
// Perfetto export shares), once (xspace.ScanPlanes) to export the slices
// that overlap it (writePlaneJSON), then the clock counters inside it. It
// records the span in the metadata.
func (c *combiner) exportWindowed() error {
	src, ok := c.out.stagedPath(SpacePath(c.o))
	if !ok {
		return fmt.Errorf("combine: the combined XSpace %s is not in the output set", SpacePath(c.o))
	}
	path := OutputBase(c.o.Output) + ".trace.json.gz"
	win, err := c.workloadSpan(src)
	if err != nil {
		return fmt.Errorf("combine: write %s: %w", path, err)
	}
	c.md.TraceJSONWindow = &JSONWindow{Mode: WindowWorkload, Workload: win != nil}
	if win != nil {
		c.md.TraceJSONWindow.FromPS, c.md.TraceJSONWindow.ToPS = win.from, win.to
	}
	jf, err := c.out.create(path)
	if err != nil {
		return err
	}
	t, err := newTraceJSON(jf)
	if err != nil {
		return fmt.Errorf("combine: write %s: %w", path, err)
	}
	err = c.scanStaged(src, func(p *xplanepb.XPlane) error { return writePlaneJSON(t, p, c.process(p.Id), win) })
	if err == nil {
		err = c.writeCounters(t, win)
	}
	if err != nil {
		t.abort()
		return fmt.Errorf("combine: write %s: %w", path, err)
	}
	if err := t.close(); err != nil {
		return fmt.Errorf("combine: write %s: %w", path, err)
	}
	return nil
}

// scanStaged reads the staged combined XSpace src a plane at a time.
func (c *combiner) scanStaged(src string, plane func(*xplanepb.XPlane) error) (err error) {
	f, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("read back the combined XSpace: %w", err)
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	return xspace.ScanPlanes(f, 0, plane, nil)
}
