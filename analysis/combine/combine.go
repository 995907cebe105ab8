// Package combine merges per-node traces into one trace on the global
// timeline: each node's XSpace is read, its events are mapped from the
// tracer clock R to the host clock S by the node's snapshot pairs and on
// to global time by GraphCalc's offsets (package align), its planes are
// renamed so that every node's activity shows as its own device in XLA's
// tools and Perfetto, and the result is written as combined.xplane.pb,
// combined.trace.json.gz, combined.perfetto-trace (perfettoout.go) and
// combined.metadata.json, optionally with the
// collective happens-before check (package validate).
//
// Inputs are XSpace files or PyTorch profiler (Kineto) traces, which are
// converted to XSpace planes first (see input.go and kineto.ToXSpace).
//
// Memory: nodes are processed one at a time and rewritten at the wire
// level (see wire.go), so the combiner holds one node's file, its parse
// index (about 100 bytes per event of its longest line) and the output
// plane being built, plus, for every node, its metadata record and its
// collective invocations (32 bytes each plus the op name), never the whole
// combined trace. A Kineto input is decoded and converted whole before its
// XSpace is marshalled: while it is read, its events (with their JSON text)
// and their XSpace objects are held too. A plane's lines are rewritten in
// parallel (lines.go): each line in flight (at most Options.Workers + 2,
// GOMAXPROCS by default) holds its rewritten message, its JSON text and its
// figures until it is merged; the Chrome JSON goes to a gzip goroutine in
// 1 MiB chunks (two in flight).
//
// Output: the same inputs give the same bytes, whatever GOMAXPROCS and
// Options.Workers (TestOutputDeterministic).
package combine

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/chronosync/chronosync/analysis/align"
	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/analysis/stats"
	"github.com/chronosync/chronosync/analysis/validate"
	"github.com/chronosync/chronosync/trace/kineto"
	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// MemoryBound states the combiner's memory bound; metadata.json repeats it.
const MemoryBound = "one node's trace file (a Kineto trace: its decoded events and their XSpace, while converted) and the next node's, read ahead, the node's parse index, two output planes (one being written), the lines in flight (at most workers + 2: rewritten line, JSON text, figures), two 1 MiB JSON chunks, and the uncertainties of the node's events and the previous node's (8 bytes an event), plus, per node, its metadata and collective invocations"

// Input is one node's files.
type Input struct {
	Node int
	// Trace is the node's XSpace (.xplane.pb) or PyTorch profiler (Kineto)
	// trace (Chrome JSON, plain or gzipped; see IsKineto).
	Trace string
	// Snapshots is its .snapshots.pb; "" when it has none, as for a Kineto
	// trace, which is on the host clock already.
	Snapshots string
}

// Options configure Combine.
type Options struct {
	// Offsets is GraphCalc's offsets.jsonl or a legacy midpoint file; ""
	// aligns tracer to host clocks only.
	Offsets string
	// NoCorrection merges and renames without touching any timestamp.
	NoCorrection bool
	// PlanePrefix is put before the /node:<id> of the planes named after
	// their node (clock metadata, and non-GPU planes of nodes > 0).
	PlanePrefix string
	// Output is the combined XSpace's path (conventionally
	// combined.xplane.pb); the other outputs go beside it, named by its
	// base: <base>.trace.json.gz, <base>.perfetto-trace,
	// <base>.metadata.json and, with Validate, <base>.validate.json.
	Output string
	// Layout is where the combined XSpace goes: LayoutDefault ("") at
	// Output; LayoutTensorBoard under TensorBoardDir as
	// plugins/profile/<TensorBoardRun>/<TensorBoardHost>.xplane.pb, where
	// TensorBoard's profile plugin and xprof find it (see tensorboard.go).
	// The other outputs stay where Output puts them either way.
	Layout string
	// TensorBoardDir is the TensorBoard log directory of LayoutTensorBoard
	// (tensorboard --logdir); "" means Output's directory.
	TensorBoardDir string
	// TensorBoardRun names the profile run (its directory under
	// plugins/profile); "" means DefaultTensorBoardRun.
	TensorBoardRun string
	// TensorBoardHost names the host the trace viewer shows (the file's
	// name before .xplane.pb); "" means DefaultTensorBoardHost.
	TensorBoardHost string
	// NoTraceJSON skips the Chrome trace export.
	NoTraceJSON bool
	// Window is what the Chrome trace spans: WindowAll ("" too), every
	// event, streamed beside the XSpace; WindowWorkload, only the traced
	// workload's span, exported from the XSpace once it is written (see
	// window.go). The Perfetto trace spans the same.
	Window string
	// NoPerfetto skips the native Perfetto export, <base>.perfetto-trace
	// (see perfettoout.go).
	NoPerfetto bool
	// KinetoDir is where the aligned copy of each Kineto input goes, under
	// the input's own file name: PyTorch's format and naming, so that the
	// tools that read the raw directory (Holistic Trace Analysis,
	// TensorBoard) read it too. "" means <base>.kineto beside Output.
	KinetoDir string
	// NoKinetoOut writes no aligned Kineto copies.
	NoKinetoOut bool
	// RankNodes maps the rank of each Kineto input (its Input.Node) to the
	// node it ran on, whose clock model (offsets, snapshot pairs) its times
	// go through: the ranks of one host share its clock. nil: each rank is
	// its own node (rank r on node r).
	RankNodes map[int]int
	// Validate runs the collective happens-before check on the result.
	Validate bool
	// PrintEvents, when set, receives one line per event with its raw and
	// aligned time.
	PrintEvents io.Writer
	// Logger reports progress: a line per input ("input=3 of 16") and one
	// before each later pass over the output; nil is silent.
	Logger *slog.Logger
	// Workers is the number of goroutines that rewrite a plane's lines;
	// 0 means GOMAXPROCS. The output does not depend on it.
	Workers int

	// nodeFn (tests) replaces nodeWire, so that the reference
	// implementation, which decodes into the generated types, can run.
	nodeFn func(c *combiner, in Input, ns *nodeState, rn *renamer) error
	// sortLines (tests) rewrites every line by sorting its events
	// (rewriteSorting), as only lines out of order are otherwise.
	sortLines bool
	// hook (tests), when set, is called in the goroutines Combine starts
	// for a line, a median or a read ahead, before the work, with what the
	// goroutine does (as a *PanicError would name it); a test panics in it.
	hook func(what string)
	// outputHook (tests), when set, is called before each output is
	// written ("write") and before it is renamed into place ("rename"),
	// with its path; its error fails that step (outputSet.hook).
	outputHook func(step, path string) error
}

// Result is what Combine produced.
type Result struct {
	Metadata Metadata
	Report   *validate.Report // nil without Options.Validate
	Files    []string
}

// OutputBase is the common prefix of the outputs for an XSpace path.
func OutputBase(output string) string {
	for _, ext := range []string{".xplane.pb", ".xspace", ".pb"} {
		if b, ok := strings.CutSuffix(output, ext); ok {
			return b
		}
	}
	return output
}

// Combine merges the inputs; see the package documentation. The outputs
// are one set, replaced together or not at all (see outset.go): on an
// error no new output is left behind and no old one is replaced. An
// output that is one of the inputs (the same file, however named) is
// refused before anything is read. A panic
// in a goroutine Combine started is recovered and returned as a
// *PanicError, once every goroutine Combine started has ended.
func Combine(inputs []Input, o Options) (*Result, error) {
	if len(inputs) == 0 {
		return nil, errors.New("combine: no traces")
	}
	if o.Output == "" {
		return nil, errors.New("combine: no output path")
	}
	if !utf8.ValidString(o.PlanePrefix) {
		return nil, fmt.Errorf("combine: plane prefix %q is not valid UTF-8", o.PlanePrefix)
	}
	if err := checkPlanePrefix(o.PlanePrefix); err != nil {
		return nil, err
	}
	if err := checkLayout(o); err != nil {
		return nil, err
	}
	if err := checkWindow(o.Window); err != nil {
		return nil, err
	}
	seen := map[int]string{}
	for _, in := range inputs {
		if prev, ok := seen[in.Node]; ok {
			if IsKineto(prev) && IsKineto(in.Trace) {
				return nil, fmt.Errorf("combine: %s and %s both claim rank %d: give each rank's trace once", prev, in.Trace, in.Node)
			}
			return nil, fmt.Errorf("combine: %s and %s are both node %d", prev, in.Trace, in.Node)
		}
		seen[in.Node] = in.Trace
	}
	if err := checkOutputs(inputs, o); err != nil {
		return nil, err
	}
	inputs = slices.Clone(inputs)
	slices.SortStableFunc(inputs, func(a, b Input) int { return a.Node - b.Node })

	c := &combiner{o: o, md: Metadata{Corrected: !o.NoCorrection, MemoryBound: MemoryBound}, checks: newWireChecks()}
	lock, err := c.lock()
	if err != nil {
		return nil, err
	}
	defer func() {
		if c.out != nil {
			c.out.cleanup() // the staging directories first: then a directory made is empty
		}
		lock.Release()
		if !c.committed {
			c.removeMade()
		}
	}()
	if err := c.loadOffsets(); err != nil {
		return nil, err
	}
	c.gpuJob = jobHasGPU(inputs)
	c.inputPos, c.clockPos = sortPositions(inputs, func(in Input) int {
		if n, err := c.clockNode(in); err == nil {
			return n
		}
		return in.Node
	})
	if err := c.kinetoBase(inputs); err != nil {
		return nil, err
	}
	out, err := c.open()
	if err != nil {
		return nil, err
	}
	c.out = out
	defer func() {
		c.space.abort() // ends the writing goroutine on an error; a no-op after finish
		if c.json != nil {
			c.json.abort() // ends the gzip goroutine on an error; a no-op after finish
		}
		c.wait() // a median and a read ahead still running on an error
	}()
	var nodes []validate.Node
	for i, in := range inputs {
		c.progress = fmt.Sprintf("%d of %d", i+1, len(inputs))
		c.following = nil
		if i+1 < len(inputs) {
			c.following = &inputs[i+1]
		}
		n, err := c.node(in)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, n)
	}
	if err := c.finish(); err != nil {
		return nil, err
	}
	if !o.NoPerfetto {
		if o.Logger != nil {
			o.Logger.Info("writing the Perfetto trace", "output", OutputBase(o.Output)+".perfetto-trace")
		}
		if err := c.writePerfetto(); err != nil {
			return nil, err
		}
	}
	res := &Result{}
	if o.Validate {
		res.Report = validate.Check(nodes)
		path := OutputBase(o.Output) + ".validate.json"
		c.md.Validate = &ValidateBrief{Violations: res.Report.Violations, Overlaps: res.Report.Overlaps,
			Warnings: res.Report.Warnings, Report: c.rel(path)}
		if err := out.add(path, res.Report.WriteJSON); err != nil {
			return nil, err
		}
	}
	mdPath := OutputBase(o.Output) + ".metadata.json"
	if err := out.add(mdPath, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(c.md)
	}); err != nil {
		return nil, err
	}
	files, err := out.commit()
	if err != nil {
		return nil, err
	}
	c.committed = true
	res.Metadata, res.Files = c.md, files
	return res, nil
}

// combiner is one Combine call's state.
type combiner struct {
	o         Options
	md        Metadata
	offs      *offsets.Index
	windows   map[int]int // offset windows per node
	space     *spaceWriter
	json      *traceJSON
	nextID    int64
	names     map[string]string // output plane name → the input it came from
	hosts     []string
	metaNames []string      // the names of the clock_metadata planes, written last
	gpuJob    bool          // some input has a GPU plane (jobHasGPU; see rename.go)
	checks    *wireChecks   // what the rewriter copies unparsed is checked with
	tc        *transcoder   // the main goroutine's scratch
	tcs       []*transcoder // each line goroutine's (tcs[0] is tc)
	workers   int
	outs      chan *lineOut // free line results
	// pending is the median being computed (nil: none); spare, a buffer
	// for the next node's uncertainties.
	pending *median
	spare   []float64
	// following is the input combined after this one, whose trace file
	// ahead reads while this one is combined (nil: none).
	following *Input
	ahead     *readingAhead
	// curData is the XSpace input being combined (its file's bytes);
	// spareData, a buffer of an input combined already, that the next
	// read takes (nil: none).
	curData, spareData []byte
	// timeBase is the Unix time (ns) the output's times count from: the
	// time_base_ns of the first plane combined (baseFrom's), 0 for an
	// XSpace without one.
	timeBase int64
	baseSet  bool
	baseFrom string
	// kt and ktext are the Kineto input being combined, decoded and as
	// text (nil for an XSpace input); out the pending outputs; made the
	// directories Combine created, removed again on failure when empty.
	kt    *kineto.Trace
	ktext []byte
	// kbase is the baseTimeNanoseconds the aligned Kineto copies share
	// (see kinetobase.go).
	kbase int64
	// progress is the input being combined, "3 of 16", for Logger.
	progress string
	out      *outputSet
	made     []string
	// committed is set once the outputs are in place.
	committed bool

	// records are the traces.json files read, by directory (nil: none
	// there); see checkCounts.
	records map[string]*xspace.TraceRecord

	// inputPos and clockPos are the positions of each input (by
	// Input.Node) and each clock node's counters in the Chrome JSON's
	// process order (sortPositions); procs how it shows each output plane
	// (by id), clocks the clock nodes whose offsets it shows as counters.
	inputPos, clockPos map[int]int
	procs              []jsonProcess
	clocks             []clockTrack
}

func (c *combiner) loadOffsets() error {
	if c.o.NoCorrection || c.o.Offsets == "" {
		return nil
	}
	runID, offs, err := readOffsets(c.o.Offsets)
	if err != nil {
		return fmt.Errorf("combine: %w", err)
	}
	c.md.RunID, c.md.Offsets = runID, c.rel(c.o.Offsets)
	c.offs = offsets.NewIndex(offs)
	c.windows = map[int]int{}
	for _, r := range offs {
		c.windows[r.NodeID]++
	}
	return nil
}

// node aligns, renames and writes one node's planes, and returns its
// collectives for the happens-before check.
func (c *combiner) node(in Input) (validate.Node, error) {
	clk, err := c.clockNode(in)
	if err != nil {
		return validate.Node{}, err
	}
	md := NodeMetadata{ID: in.Node, ClockNode: clk, Trace: c.rel(in.Trace), Hostname: fmt.Sprintf("node%d", clk), OffsetWindows: c.windows[clk]}
	ns := &nodeState{id: clk, rank: in.Node, md: &md, sigmas: c.spare[:0], sortPos: c.inputPos[in.Node]}
	c.spare = nil
	rn := &renamer{node: in.Node, prefix: c.o.PlanePrefix, gpuJob: c.gpuJob}
	// The node's clock metadata plane, written last, claims its name now,
	// so that no input plane renamed to it goes unnoticed.
	metaName := rn.nodePrefix() + "/clock_metadata"
	if prev, dup := c.names[metaName]; dup {
		return validate.Node{}, fmt.Errorf("combine: node %d (%s): its clock metadata plane would be named %q in the combined trace, as %s already is: every plane needs a name of its own",
			in.Node, in.Trace, metaName, prev)
	}
	c.names[metaName] = fmt.Sprintf("the clock metadata plane of node %d", in.Node)
	nodeFn := (*combiner).nodeWire
	if c.o.nodeFn != nil {
		nodeFn = c.o.nodeFn
	}
	if err := nodeFn(c, in, ns, rn); err != nil {
		return validate.Node{}, err
	}
	if err := c.checkCounts(in, ns); err != nil {
		return validate.Node{}, err
	}
	md.ClockSkewNS = ns.firstCorr / 1000
	md.UncertaintyMaxNS = ns.sigmaMax
	c.hosts = append(c.hosts, md.Hostname)
	c.metaNames = append(c.metaNames, metaName)
	c.noteClock(clk, md.Hostname, metaName)
	if err := c.collectMedian(); err != nil {
		return validate.Node{}, err
	}
	c.md.Nodes = append(c.md.Nodes, md)
	c.md.Events += md.Events
	if len(ns.sigmas) > 0 {
		c.startMedian(len(c.md.Nodes)-1, ns.sigmas)
	}
	if c.o.Logger != nil {
		c.o.Logger.Info("combined node", "input", c.progress, "node", in.Node, "trace", in.Trace, "events", md.Events,
			"max_correction_ns", md.MaxCorrectionNS, "uncertainty_max_ns", md.UncertaintyMaxNS)
	}
	return validate.Node{ID: in.Node, Source: md.Trace, Ops: ns.ops, Declared: ns.declared}, nil
}

// median is a node's uncertainty p50, computed by a goroutine of its own
// while the next node is combined.
type median struct {
	node int       // its index in Metadata.Nodes
	v    []float64 // the node's uncertainties, reordered
	p50  float64
	err  error         // a panic, as a *PanicError
	done chan struct{} // closed once p50 or err is set
}

// startMedian starts computing the median of v, node's uncertainties.
func (c *combiner) startMedian(node int, v []float64) {
	m := &median{node: node, v: v, done: make(chan struct{})}
	what := fmt.Sprintf("computing the median uncertainty of node %d (%d events)", c.md.Nodes[node].ID, len(v))
	hook := c.o.hook
	go func() {
		defer close(m.done)
		defer recoverPanic(&m.err, func() string { return what })
		if hook != nil {
			hook(what)
		}
		m.p50 = stats.Median(m.v)
	}()
	c.pending = m
}

// collectMedian waits for the median being computed, if any, sets it in
// the metadata and keeps its buffer for the next node; it returns the
// goroutine's panic, if any.
func (c *combiner) collectMedian() error {
	m := c.pending
	if m == nil {
		return nil
	}
	<-m.done
	c.pending = nil
	if m.err != nil {
		return m.err
	}
	c.md.Nodes[m.node].UncertaintyP50NS = m.p50
	c.spare = m.v
	return nil
}

// wait waits for the goroutines that may outlive a failed Combine's work:
// the median being computed and the trace being read ahead.
func (c *combiner) wait() {
	if c.pending != nil {
		<-c.pending.done
		c.pending = nil
	}
	if c.ahead != nil {
		<-c.ahead.done
		c.ahead = nil
	}
}

// clockNode is the node whose clock model an input's times go through:
// its own id, or for a Kineto trace the node its rank ran on
// (Options.RankNodes).
func (c *combiner) clockNode(in Input) (int, error) {
	if c.o.RankNodes == nil || !IsKineto(in.Trace) {
		return in.Node, nil
	}
	n, ok := c.o.RankNodes[in.Node]
	if !ok {
		return 0, fmt.Errorf("combine: %s is rank %d, which the rank-to-node map does not place on a node", in.Trace, in.Node)
	}
	return n, nil
}

// aligner sets up the node's alignment (unless --no-correction).
func (c *combiner) aligner(in Input, ns *nodeState) error {
	if c.o.NoCorrection {
		return nil
	}
	var snaps *align.Snapshots // nil for Kineto: R = S
	if ns.md.Format != formatKineto {
		var err error
		if snaps, err = c.snapshots(in, ns.md); err != nil {
			return err
		}
	} else if err := c.kinetoGPU(in, ns); err != nil {
		return err
	}
	ns.al, ns.snaps, ns.offs = align.NewNode(ns.id, snaps, c.offs), snaps, c.offs
	ns.md.HostSteps = len(align.StepsOf(c.offs, ns.id))
	ns.stepped = ns.md.HostSteps > 0
	return nil
}

// newName renames the input's plane i (id id, named orig) and checks that
// no earlier plane has the name: the error names both planes by index and
// id, as a name may be empty.
func (c *combiner) newName(in Input, rn *renamer, orig string, i int, id int64) (string, error) {
	name, err := rn.rename(orig)
	if err != nil {
		return "", fmt.Errorf("combine: %s: %w", in.Trace, err)
	}
	this := planeLabel(i, id, orig)
	if prev, dup := c.names[name]; dup {
		return "", fmt.Errorf("combine: node %d (%s): %s would be named %q in the combined trace, as %s already is: every plane needs a name of its own",
			in.Node, in.Trace, this, name, prev)
	}
	c.names[name] = this + " of " + in.Trace
	return name, nil
}

// nodeWire rewrites the node's planes at the wire level (see wire.go).
func (c *combiner) nodeWire(in Input, ns *nodeState, rn *renamer) error {
	data, err := c.readSpace(in, ns.md)
	if err != nil {
		return err
	}
	if ns.md.Format != formatKineto {
		ns.md.TraceBytes = int64(len(data))
	}
	planes, hosts, err := splitSpace(data, c.checks)
	if errors.Is(err, errManyPlanes) {
		return fmt.Errorf("combine: node %d (%s): %w", in.Node, in.Trace, err)
	}
	if err != nil {
		return c.locate(in, data)
	}
	if len(hosts) > 0 && hosts[0] != "" {
		ns.md.Hostname = hosts[0]
	}
	parsed := make([]*wirePlane, len(planes))
	for i, b := range planes {
		if parsed[i], err = parsePlane(b, c.checks); err != nil {
			if errors.Is(err, xspace.ErrWire) {
				return c.locate(in, data)
			}
			return fmt.Errorf("combine: %s: %w", in.Trace, err)
		}
		if err := c.checkWireNode(in, ns, parsed[i]); err != nil {
			if errors.Is(err, xspace.ErrWire) {
				return c.locate(in, data)
			}
			return err
		}
	}
	if err := c.aligner(in, ns); err != nil {
		return err
	}
	if c.tc == nil {
		c.tc = &transcoder{}
		c.workers = c.o.Workers
		if c.workers <= 0 {
			c.workers = runtime.GOMAXPROCS(0)
		}
		c.tcs = []*transcoder{c.tc}
		for range c.workers - 1 {
			c.tcs = append(c.tcs, &transcoder{})
		}
		c.outs = make(chan *lineOut, c.workers+2)
	}
	t := c.tc // its buffers serve every node
	t.ns = ns
	for i, p := range parsed {
		name, err := c.newName(in, rn, p.name, i, p.id)
		if err != nil {
			return err
		}
		ns.md.Planes = append(ns.md.Planes, PlaneRename{From: p.name, To: name})
		if err := c.setBase(ns, in.Trace, p.name, p.base); err != nil {
			return err
		}
		ns.md.TimeBaseNS = p.base
		if ns.md.Format == formatKineto && ns.al != nil {
			ns.snaps = nil // host planes: on the host clock already
			if strings.HasPrefix(p.name, gpuPrefix) {
				ns.snaps = ns.gpuSnaps
			}
		}
		id := c.nextID
		c.nextID++
		c.md.Planes++
		if err := t.plane(c, p, in.Trace, name, id, in.Node, ns.md.Hostname); err != nil {
			if errors.Is(err, xspace.ErrWire) {
				return c.locate(in, data)
			}
			return err
		}
	}
	if c.kt != nil {
		err := c.writeRank(in, ns)
		c.kt, c.ktext = nil, nil
		return err
	}
	return nil
}

// locate checks a trace the wire parser refused, without decoding it, for
// an error that says where it breaks.
func (c *combiner) locate(in Input, data []byte) error {
	if err := c.checks.space.Check(data); err != nil {
		return fmt.Errorf("combine: read %s: %w", in.Trace, err)
	}
	return fmt.Errorf("combine: %s: %w", in.Trace, xspace.ErrWire)
}

// splitSpace returns an XSpace's planes (message bytes) and host names,
// checking with checks every field but its planes, which parsePlane
// checks.
func splitSpace(b []byte, checks *wireChecks) (planes [][]byte, hosts []string, err error) {
	all := b
	for len(b) > 0 {
		f, rest, err := xspace.Next(b, xspace.SpaceSpec)
		if err != nil {
			return nil, nil, err
		}
		b = rest
		if f.Num != xspace.FieldSpacePlanes && !checks.space.Valid(f.Raw) {
			return nil, nil, xspace.ErrWire
		}
		switch {
		case f.Num == xspace.FieldSpacePlanes && f.Type == protowire.BytesType:
			if len(planes) == MaxPlanes {
				return nil, nil, fmt.Errorf("planes[%d] at byte %d: %w", len(planes), len(all)-len(b)-len(f.Raw), errManyPlanes)
			}
			planes = append(planes, f.Data)
		case f.Num == xspace.FieldSpaceHostnames && f.Type == protowire.BytesType:
			hosts = append(hosts, string(f.Data))
		}
	}
	return planes, hosts, nil
}

// checkWireNode is checkTraceNode on a parsed plane; it also notes the
// number of nodes the plane declares (a world_size stat) in ns.
func (c *combiner) checkWireNode(in Input, ns *nodeState, p *wirePlane) error {
	for _, st := range p.pstats {
		id, val, err := statOf(st)
		if err != nil {
			return err
		}
		name := p.stats[id]
		if name != statNodeID && name != StatWorldSize && name != "run_id" {
			continue
		}
		v, err := p.statText(id, val)
		if err != nil {
			return fmt.Errorf("combine: %s: plane %s: %w", in.Trace, p.name, err)
		}
		switch name {
		case statNodeID:
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && n != int64(in.Node) {
				return fmt.Errorf("combine: node id mismatch: %s records node %d, given as node %d", in.Trace, n, in.Node)
			}
		case StatWorldSize:
			if n, err := strconv.ParseInt(v, 10, 32); err == nil && n > 0 {
				ns.declared = max(ns.declared, int(n))
			}
		case "run_id":
			if c.md.RunID != "" && v != c.md.RunID {
				return fmt.Errorf("combine: run id mismatch: %s is run %q but %s is run %q", in.Trace, v, c.o.Offsets, c.md.RunID)
			}
			ns.runID = v
		}
	}
	return nil
}

// snapshots reads and checks the node's snapshot file; with none, the
// node's tracer clock is taken as its host clock and that is recorded.
func (c *combiner) snapshots(in Input, md *NodeMetadata) (*align.Snapshots, error) {
	pairs, gap, err := c.snapshotPairs(in, md)
	if err != nil || pairs == nil {
		return nil, err
	}
	return c.snapshotMapping(in, md, pairs, gap)
}

// snapshotPairs reads and checks the node's snapshot file and returns its
// pairs and the gap that tells a sample's pairs apart; nil pairs when the
// node has none (recorded in md).
func (c *combiner) snapshotPairs(in Input, md *NodeMetadata) ([]align.Pair, int64, error) {
	if in.Snapshots == "" {
		md.MissingSnapshots = 1
		return nil, 0, nil
	}
	sp, err := xspace.ReadSnapshots(in.Snapshots)
	if err != nil {
		return nil, 0, fmt.Errorf("combine: %w", err)
	}
	if sp.NodeId != int64(md.ClockNode) {
		return nil, 0, fmt.Errorf("combine: node id mismatch: %s is node %d but %s is node %d", in.Trace, md.ClockNode, in.Snapshots, sp.NodeId)
	}
	if c.md.RunID != "" && sp.RunId != "" && sp.RunId != c.md.RunID {
		return nil, 0, fmt.Errorf("combine: run id mismatch: %s is run %q but %s is run %q", c.o.Offsets, c.md.RunID, in.Snapshots, sp.RunId)
	}
	if c.md.RunID == "" {
		c.md.RunID = sp.RunId
	}
	pairs := make([]align.Pair, len(sp.Pairs))
	for i, q := range sp.Pairs {
		pairs[i] = align.Pair{Sys: q.SysClockNs, Tracer: q.TracerClockNs}
	}
	md.SamplingPeriodNS, md.SnapshotsTaken, md.MissingSnapshots = sp.SamplingPeriodNs, sp.SnapshotsTaken, sp.MissedDeadline
	// The sampler reads a sample's pairs ms apart and samples seconds
	// apart: an eighth of the period tells them apart.
	return pairs, int64(sp.SamplingPeriodNs / 8), nil
}

// snapshotMapping maps the tracer readings of pairs to the host clock.
// Where the node's host clock stepped (its offsets say so), the mapping
// runs through the host clock with the steps taken out.
func (c *combiner) snapshotMapping(in Input, md *NodeMetadata, pairs []align.Pair, gap int64) (*align.Snapshots, error) {
	steps := align.StepsOf(c.offs, md.ClockNode)
	snaps, err := align.NewSnapshotsStepped(pairs, gap, steps)
	if err != nil {
		return nil, fmt.Errorf("combine: %s: %w", in.Snapshots, err)
	}
	md.Snapshots, md.SnapshotPairs, md.SnapshotSamples = c.rel(in.Snapshots), snaps.Len(), snaps.Samples()
	md.SnapshotResidualNS = snaps.PairSigma()
	md.UnrecordedHostSteps = snaps.Steps()
	return snaps, nil
}

// rel names an input relative to the output's directory when it lies
// there or below, so that metadata.json stays true when the directory
// moves; otherwise as given.
func (c *combiner) rel(path string) string {
	r, err := filepath.Rel(filepath.Dir(c.o.Output), path)
	if err != nil || r == ".." || strings.HasPrefix(r, "../") || filepath.IsAbs(r) {
		return path
	}
	return r
}

// maxLineNs bounds |timestamp_ns| of a line: its events' times in ps
// (timestamp_ns·1000 + offset_ps, XLA's own arithmetic) must fit an
// int64, which leaves ±106 days around the clock's zero.
const maxLineNs = math.MaxInt64/1000 - 1e12

// writePlane gives the plane the next output id and streams it to both
// outputs; process names its process in the Chrome JSON ("": its name).
func (c *combiner) writePlane(p *xplanepb.XPlane, process jsonProcess) error {
	p.Id = c.nextID
	c.nextID++
	c.md.Planes++
	if err := c.space.plane(p); err != nil {
		return err
	}
	c.noteProcess(p.Id, process)
	if c.json != nil {
		return writePlaneJSON(c.json, p, process, nil)
	}
	return nil
}

// finish writes the clock metadata planes (to the XSpace only: the
// Chrome JSON shows the clock nodes' offsets as counters) and the host
// names, and ends the Chrome JSON, or with --window workload exports it.
func (c *combiner) finish() error {
	if err := c.collectMedian(); err != nil {
		return err
	}
	for i, name := range c.metaNames {
		if err := c.writePlane(clockMetadataPlane(name, &c.md.Nodes[i]), jsonProcess{}); err != nil {
			return err
		}
	}
	if err := c.space.hostnames(c.hosts); err != nil {
		return err
	}
	if c.json != nil {
		if err := c.writeCounters(c.json, nil); err != nil {
			return err
		}
		return c.json.close()
	}
	if c.o.windowed() {
		return c.exportWindowed()
	}
	return nil
}

// spaceWriter streams an XSpace: each plane as one repeated field 1, the
// host names as field 4. A goroutine of its own (a pipeWriter) writes
// them, so that building the next plane overlaps writing this one. Planes
// are marshalled deterministically, so equal inputs give equal bytes.
type spaceWriter struct {
	bw   *bufio.Writer
	pipe *pipeWriter
	buf  []byte // the next field's, from the pipe's free list
}

// newSpaceWriter streams an XSpace to f.
func newSpaceWriter(f syncWriter) *spaceWriter {
	bw := bufio.NewWriterSize(f, 1<<16)
	s := &spaceWriter{bw: bw, pipe: newPipeWriter(&writeBack{bw: bw, f: f}, "the combined XSpace", 2, 0)}
	s.buf = s.pipe.buffer()
	return s
}

// syncWriter is a file being written.
type syncWriter interface {
	io.Writer
	Sync() error
}

// writeBack writes chunks through bw to f and syncs f after each large
// one, in the writing goroutine: the outputs are synced before they
// replace the old ones (atomically), and syncing plane by plane, while
// the next plane is built, leaves that final sync little to wait for.
type writeBack struct {
	bw *bufio.Writer
	f  syncWriter
}

// writeBackMin is the least chunk after which writeBack syncs.
const writeBackMin = 4 << 20

func (w *writeBack) Write(b []byte) (int, error) {
	n, err := w.bw.Write(b)
	if err != nil || len(b) < writeBackMin {
		return n, err
	}
	if err := w.bw.Flush(); err != nil {
		return n, err
	}
	return n, w.f.Sync()
}

// message returns an empty buffer for the next field's message: append
// the message to it (past the room kept for the field's tag and length)
// and pass it to field.
func (s *spaceWriter) message() []byte { return xspace.WithHead(s.buf) }

// field writes the message b, which message returned and the caller
// appended to, as field num. The writer owns b from then on.
func (s *spaceWriter) field(num protowire.Number, b []byte) error {
	from := xspace.PutHead(b, byte(num)<<3|byte(protowire.BytesType), uint64(len(b)-xspace.HeadRoom))
	var err error
	s.buf, err = s.pipe.writeFrom(b, from)
	return err
}

func (s *spaceWriter) plane(p *xplanepb.XPlane) error {
	b, err := proto.MarshalOptions{Deterministic: true}.MarshalAppend(s.message(), p)
	if err != nil {
		return fmt.Errorf("combine: marshal plane %s: %w", p.Name, err)
	}
	return s.field(xspace.FieldSpacePlanes, b)
}

// hostnames writes the host names and ends the stream.
func (s *spaceWriter) hostnames(h []string) error {
	for _, name := range h {
		if err := s.field(xspace.FieldSpaceHostnames, append(s.message(), name...)); err != nil {
			return err
		}
	}
	if err := s.pipe.close(); err != nil {
		return err
	}
	return s.bw.Flush()
}

// abort ends the writing goroutine after an error elsewhere.
func (s *spaceWriter) abort() { s.pipe.close() }
