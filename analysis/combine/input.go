package combine

import (
	"bufio"
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/chronosync/chronosync/infile"
	"github.com/chronosync/chronosync/trace/kineto"
)

// Inputs are XSpace files or PyTorch profiler (Kineto) traces. A Kineto
// trace is converted to XSpace planes (kineto.ToXSpace) and then combined
// as an XSpace is. Its timestamps are on the host clock already (R = S);
// its planes count their times from a time base (time_base_ns), since
// Unix-epoch times do not fit XSpace's picoseconds. Its GPU events were
// converted to host time by the profiler itself; given snapshot pairs of
// the GPU clock, the combiner corrects that conversion (see kinetogpu.go).

// Formats of an input, as NodeMetadata.Format records them.
const (
	formatXSpace = ""
	formatKineto = "kineto"
)

// kinetoClock is NodeMetadata.TracerClock for a Kineto input, and
// kinetoGPUClock for one given with snapshot pairs of its GPU clock.
const (
	kinetoClock    = "host: Kineto timestamps are on the host clock (R = S), so no snapshot pairs are needed"
	kinetoGPUClock = "host: Kineto timestamps are on the host clock; its GPU events' conversion from the GPU clock is corrected by the snapshot pairs (see gpu_conversion_correction_max_ns)"
)

// nodeName matches the node<i> file names NodeOf reads.
var nodeName = regexp.MustCompile(`^node(\d+)\.(?:xplane\.pb|json|json\.gz|pt\.trace\.json|pt\.trace\.json\.gz)$`)

// IsKineto reports whether path is a Kineto trace rather than an XSpace:
// by its name (*.json, *.json.gz) or, for other names than *.pb and
// *.xspace, by its first bytes (gzip's magic, or a JSON object or array).
func IsKineto(path string) bool {
	base := strings.ToLower(filepath.Base(path))
	switch {
	case strings.HasSuffix(base, ".json"), strings.HasSuffix(base, ".json.gz"):
		return true
	case strings.HasSuffix(base, ".pb"), strings.HasSuffix(base, ".xspace"):
		return false
	}
	f, err := infile.Open(path, infile.XSpace)
	if err != nil {
		return false // read as an XSpace, which reports the error
	}
	defer f.Close()
	head, _ := bufio.NewReader(f).Peek(512)
	if len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b {
		return true
	}
	s := strings.TrimLeft(string(head), " \t\r\n")
	return strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[")
}

// NodeOfTrace returns the node id of the trace at path, the input at
// position pos of a list. For an XSpace: the id of its node<i> file name
// (NodeOf), else pos. For a Kineto trace: its distributedInfo.rank, else
// the id of its file name, else an error naming the file; reading the rank
// reads (and checks) the whole trace, keeping no event.
func NodeOfTrace(path string, pos int) (int, error) {
	if !IsKineto(path) {
		if n, ok := NodeOf(path); ok {
			return n, nil
		}
		return pos, nil
	}
	t, err := kineto.ReadWith(path, kineto.DecodeOptions{Keep: func(kineto.Event) bool { return false }})
	if err != nil {
		return 0, fmt.Errorf("combine: %w", err)
	}
	if t.Rank >= 0 {
		return t.Rank, nil
	}
	if n, ok := NodeOf(path); ok {
		return n, nil
	}
	return 0, fmt.Errorf("combine: %s: cannot tell its node: the Kineto trace has no distributedInfo.rank and its name is not node<i>.json[.gz] or node<i>.pt.trace.json[.gz]", path)
}

// readSpace returns the node's trace as XSpace bytes: the file, or the
// Kineto trace converted.
func (c *combiner) readSpace(in Input, md *NodeMetadata) ([]byte, error) {
	if !IsKineto(in.Trace) {
		ahead := c.ahead
		if ahead == nil || ahead.path != in.Trace {
			ahead = c.readAhead(in.Trace, c.takeSpare())
		}
		<-ahead.done
		c.ahead = nil
		if ahead.err != nil {
			return nil, fmt.Errorf("combine: read %s: %w", in.Trace, ahead.err)
		}
		// The previous XSpace input is combined: its buffer, which
		// nothing refers to any more, takes the next file.
		c.spareData, c.curData = c.curData, ahead.data
		if c.following != nil && !IsKineto(c.following.Trace) {
			c.ahead = c.readAhead(c.following.Trace, c.takeSpare())
		}
		return ahead.data, nil
	}
	src, err := readKinetoText(in.Trace)
	if err != nil {
		return nil, fmt.Errorf("combine: %w", err)
	}
	t, err := kineto.DecodeWith(bytes.NewReader(src), in.Trace, kineto.DecodeOptions{Raw: true})
	if err != nil {
		return nil, fmt.Errorf("combine: %w", err) // names the file
	}
	if t.Rank >= 0 && t.Rank != in.Node {
		return nil, fmt.Errorf("combine: node id mismatch: %s is rank %d, given as node %d", in.Trace, t.Rank, in.Node)
	}
	c.kt, c.ktext = t, src
	space, err := kineto.ToXSpace(t)
	if err != nil {
		return nil, fmt.Errorf("combine: %w", err)
	}
	md.Format, md.TracerClock = formatKineto, kinetoClock
	if in.Snapshots != "" {
		md.TracerClock = kinetoGPUClock
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(space)
	if err != nil {
		return nil, fmt.Errorf("combine: %s: marshal its XSpace: %w", in.Trace, err)
	}
	return b, nil
}

// setBase sets the time bases of a plane whose times count from base: the
// first plane combined sets the combined trace's; a later plane must lie
// within reach of picosecond times of it.
func (c *combiner) setBase(ns *nodeState, path, plane string, base int64) error {
	if !c.baseSet {
		c.timeBase, c.baseSet, c.baseFrom = base, true, path
		c.md.TimeBaseNS = base
	}
	if d, ok := subPs(base, c.timeBase); !ok || d > maxLineNs || d < -maxLineNs {
		return fmt.Errorf("combine: %s: plane %s counts its times from %d ns (its time_base_ns; 0 without one), too far from the combined trace's time base %d ns (from %s) for picosecond times: are they on unrelated clocks? (a Kineto trace's times are Unix time; an XSpace without time_base_ns counts from 0)",
			path, plane, base, c.timeBase, c.baseFrom)
	}
	ns.setBase(base, c.timeBase)
	return nil
}

// readingAhead is a trace file that a goroutine of its own reads, so
// that reading the next node's trace overlaps combining this one's.
type readingAhead struct {
	path string
	done chan struct{} // closed once data and err are set
	data []byte
	err  error
}

// takeSpare returns the spare input buffer (nil: none) and forgets it.
func (c *combiner) takeSpare() []byte {
	b := c.spareData
	c.spareData = nil
	return b
}

// readAhead starts reading the file at path, into buf when it has room
// (see readInto); a panic in the goroutine is its error (a *PanicError).
func (c *combiner) readAhead(path string, buf []byte) *readingAhead {
	r := &readingAhead{path: path, done: make(chan struct{})}
	what := "reading " + path + " ahead"
	hook := c.o.hook
	go func() {
		defer close(r.done)
		defer recoverPanic(&r.err, func() string { return what })
		if hook != nil {
			hook(what)
		}
		r.data, r.err = readInto(path, buf)
	}()
	return r
}

// readInto reads the XSpace at path into buf's storage when it has room
// (infile.ReadFileInto): the combiner reuses one node's buffer for the
// node after next, so that 16 inputs cost two buffers, not 16
// allocations (and the collections they bring about).
func readInto(path string, buf []byte) ([]byte, error) {
	return infile.ReadFileInto(path, infile.XSpace, buf)
}
