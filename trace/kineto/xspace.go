package kineto

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// Names of the stats ToXSpace writes besides the events' args.
const (
	// StatMetadataEvents (host plane, string) holds the trace's metadata
	// ("M") events, as a JSON array of their text in file order.
	StatMetadataEvents = "kineto_metadata_events"
	// StatHloOp (collective kernels) is the kernel's pairing key,
	// Kernel.Key: the collective's name when the trace records it, else
	// the kernel's name; the key by which a happens-before check matches
	// collectives across nodes (see also StatCollectiveGroup,
	// StatCollectiveSeq and StatCollectiveSize).
	StatHloOp = "hlo_op"
	// StatCategory (event metadata, string) is the events' "cat".
	StatCategory = "cat"
	// StatPhase (events other than complete "X" ones, string) is "ph".
	StatPhase = "ph"
)

// TimeBase is the Unix time, in ns, that [ToXSpace] counts t's times from:
// the earliest start (BaseTimeNs + ts) of its events other than metadata
// ("M") events, rounded down to the whole second; BaseTimeNs rounded down
// when it has none. For a trace beyond the limits (see Trace.Check) the
// start saturates (see UnixNs), and within a second of the most negative
// int64 it is rounded toward zero, where rounding down would overflow.
func (t *Trace) TimeBase() int64 {
	first, found := int64(0), false
	for i := range t.Events {
		e := &t.Events[i]
		if e.Ph == "M" {
			continue
		}
		if u := t.UnixNs(e.TsNs); !found || u < first {
			first, found = u, true
		}
	}
	if !found {
		first = t.BaseTimeNs
	}
	q := first / 1e9
	if first%1e9 < 0 && q > math.MinInt64/1_000_000_000 {
		q--
	}
	return q * 1e9
}

// ToXSpace converts a Kineto trace into XSpace planes, XLA-style:
//
//   - events on a GPU go to /device:GPU:<n>, one line per stream (the tid,
//     which Kineto sets to the stream). An event is on GPU n when its pid is
//     labelled "GPU n" by a process_labels metadata event; failing a label,
//     when its category is a GPU activity (kernel, gpu_memcpy, gpu_memset,
//     gpu_user_annotation; any case) and its "device" arg, else its pid, is
//     an integer n ≥ 0.
//   - every other event goes to /host:CPU, one line per (pid, tid).
//   - a line's id is its tid when that is an integer no earlier line of
//     the plane took, else the next id above all tids; its name is the
//     thread_name metadata of its (pid, tid) when there is one (the last
//     one), else "stream <tid>" on a GPU and "pid <pid> tid <tid>" on the
//     host.
//   - every event other than a metadata ("M") event becomes one XEvent, the
//     events of a line sorted by start, longer first on ties (XLA's order),
//     then by position in the file. Its metadata is keyed by name and
//     category, with the category as a "cat" stat; its stats are its args
//     in file order, then "ph" unless it is "X", then the event's members
//     other than ph, name, cat, pid, tid, ts, dur and args (such as a flow's
//     "id" and "bp"). Collective kernels (as [Collectives] finds them) get
//     an "hlo_op" stat holding their pairing key ([Kernel.Key]: the
//     collective's name when the trace records it, else the kernel's
//     name), which is how the combiner and validate find collectives in an
//     XSpace, and, where known, collective_group (string), collective_seq
//     and collective_size (int64): the kernel's Group, Seq and Size. An
//     arg named hlo_op becomes "args.hlo_op", and any other stat whose name
//     an arg took gets "event." before it.
//   - flows: the complete event a flow event ("s", "f", "t", such as
//     Kineto's launch→kernel "ac2g" flows) binds to gets a "flow" stat
//     ([StatFlow], XLA's encoding id<<2 | direction, so that xprof draws
//     the arrow) after its other stats; the flow events stay events of
//     their own too (see bindFlows).
//   - arg values become XLA's stat kinds: strings str_value; integers
//     int64_value (uint64_value beyond int64); other numbers double_value;
//     true and false int64 1 and 0 (as XLA's XStatsBuilder stores bools);
//     arrays and objects their compact JSON as str_value; null a stat with
//     no value. Without Event.Raw (DecodeOptions.Raw) the args come from
//     Event.Args, all as strings, sorted by key.
//   - metadata events are kept as the host plane's kineto_metadata_events
//     stat (and give lines their names); distributedInfo as its rank,
//     world_size and backend stats.
//
// Times: every plane has a time_base_ns stat ([xspace.StatTimeBase]) of
// t.TimeBase(); an event's start is time_base_ns + line.timestamp_ns +
// offset_ps/1000, exactly its Unix time BaseTimeNs + TsNs. ts and dur were
// rounded to the nearest ns (halves away from zero) from their decimal text
// when the trace was read, so no float rounding happens here; each is
// rounded on its own, so an end (ts + dur) can lie 1 ns from the exact
// decimal sum rounded. A trace beyond the limits (see Trace.Check) is an
// error, and so is an event more than 26 days from the base, or longer,
// naming the trace and the event.
func ToXSpace(t *Trace) (*xplanepb.XSpace, error) {
	if err := t.Check(); err != nil {
		return nil, err
	}
	return newConverter(t).convert()
}

// newConverter starts the conversion of t, which is within the limits.
func newConverter(t *Trace) *converter {
	return &converter{t: t, base: t.TimeBase(), devices: NewDevices(t), threads: map[[2]string]string{},
		byDevice: map[int]*planeAcc{}, flows: bindFlows(t)}
}

// convert converts c.t (see ToXSpace).
func (c *converter) convert() (*xplanepb.XSpace, error) {
	t := c.t
	for i := range t.Events {
		e := &t.Events[i]
		if e.Ph != "M" {
			continue
		}
		c.meta = append(c.meta, i)
		if e.Name == "thread_name" {
			c.threads[[2]string{e.Pid, e.Tid}] = e.Args["name"]
		}
	}
	host := c.plane(-1)
	for i := range t.Events {
		e := &t.Events[i]
		if e.Ph == "M" {
			continue
		}
		rel := t.UnixNs(e.TsNs) - c.base
		if rel > maxSpanNs || rel < -maxSpanNs || e.DurNs > maxSpanNs || e.DurNs < -maxSpanNs {
			return nil, fmt.Errorf("kineto: %s: event %d (%q): ts %d ns and dur %d ns are more than %d days from the trace's time base, %d ns since the Unix epoch",
				t.Name, i, e.Name, e.TsNs, e.DurNs, int64(maxSpanNs/(86400*1_000_000_000)), c.base)
		}
		p := host
		if n, ok := c.device(e); ok {
			p = c.plane(n)
		}
		p.add(e, i, rel)
	}
	c.hostStats(host)
	space := &xplanepb.XSpace{}
	slices.SortFunc(c.planes, func(a, b *planeAcc) int { return cmp.Compare(a.device, b.device) })
	for id, p := range c.planes {
		space.Planes = append(space.Planes, c.build(p, int64(id)))
	}
	return space, nil
}

// converter is one ToXSpace call's state.
type converter struct {
	t       *Trace
	base    int64
	devices *Devices             // which events ran on a GPU
	threads map[[2]string]string // (pid, tid) → thread_name
	meta    []int                // the metadata events
	// planes are the planes in order of creation (sorted by device before
	// they are built: the output never depends on map order); byDevice
	// finds them by device.
	planes   []*planeAcc
	byDevice map[int]*planeAcc
	// lookups counts the planes plane compared to find one: one per call,
	// which TestConvertManyDevices holds it to.
	lookups int
	buf     bytes.Buffer
	// flows are the StatFlow values of the slices flow events bind to
	// (bindFlows).
	flows map[*Event][]uint64
}

// planeAcc collects one plane's events by line.
type planeAcc struct {
	device int // -1 for the host
	pb     *planeBuilder
	lines  map[[2]string]*lineAcc
	order  []*lineAcc
}

// lineAcc is one line's events: indices into Trace.Events and their times
// relative to the base.
type lineAcc struct {
	pid, tid string
	evs      []int
	rel      []int64
}

// plane returns device's plane (-1: the host's), made on first use.
func (c *converter) plane(device int) *planeAcc {
	c.lookups++
	if p, ok := c.byDevice[device]; ok {
		return p
	}
	name := "/host:CPU"
	if device >= 0 {
		name = "/device:GPU:" + strconv.Itoa(device)
	}
	p := &planeAcc{device: device, pb: newPlaneBuilder(name), lines: map[[2]string]*lineAcc{}}
	c.planes = append(c.planes, p)
	c.byDevice[device] = p
	return p
}

func (p *planeAcc) add(e *Event, i int, rel int64) {
	k := [2]string{e.Pid, e.Tid}
	l := p.lines[k]
	if l == nil {
		l = &lineAcc{pid: e.Pid, tid: e.Tid}
		p.lines[k] = l
		p.order = append(p.order, l)
	}
	l.evs, l.rel = append(l.evs, i), append(l.rel, rel)
}

// device is the GPU an event ran on, if any (see ToXSpace).
func (c *converter) device(e *Event) (int, bool) { return c.devices.Device(e) }

// gpuLabel parses a process label "GPU <n>" (anything may follow n).
func gpuLabel(l string) (int, bool) {
	rest, ok := strings.CutPrefix(l, "GPU ")
	if !ok {
		return 0, false
	}
	end := 0
	for end < len(rest) && isDigit(rest[end]) {
		end++
	}
	n, err := strconv.Atoi(rest[:end])
	return n, err == nil
}

// hostStats gives the host plane the trace's metadata events and
// distributedInfo.
func (c *converter) hostStats(host *planeAcc) {
	b := host.pb
	if c.t.Rank >= 0 {
		b.planeStat("rank", intStat(int64(c.t.Rank)))
	}
	if c.t.WorldSize > 0 {
		b.planeStat("world_size", intStat(int64(c.t.WorldSize)))
	}
	if c.t.Backend != "" {
		b.planeStat("backend", strStat(c.t.Backend))
	}
	if len(c.meta) == 0 {
		return
	}
	var arr []byte
	arr = append(arr, '[')
	for k, i := range c.meta {
		if k > 0 {
			arr = append(arr, ',')
		}
		arr = append(arr, c.compact(c.t.Events[i].Raw, &c.t.Events[i])...)
	}
	arr = append(arr, ']')
	b.planeStat(StatMetadataEvents, strStat(string(arr)))
}

// compact is an event's JSON text, compacted; without it, its fields.
func (c *converter) compact(raw []byte, e *Event) []byte {
	c.buf.Reset()
	if raw == nil || json.Compact(&c.buf, raw) != nil {
		c.buf.Reset()
		m := map[string]any{"ph": e.Ph, "name": e.Name, "pid": e.Pid, "tid": e.Tid}
		if e.Args != nil {
			m["args"] = e.Args
		}
		enc, _ := json.Marshal(m) // strings only: cannot fail
		c.buf.Write(enc)
	}
	return bytes.ToValidUTF8(c.buf.Bytes(), []byte("\uFFFD")) // a copy; see decoder.args
}

// build makes the plane's XPlane: lines with their ids and names, events
// sorted, with their stats.
func (c *converter) build(p *planeAcc, id int64) *xplanepb.XPlane {
	b := p.pb
	b.plane.Id = id
	b.planeStat(xspace.StatTimeBase, intStat(c.base))
	ids := lineIDs(p.order)
	for k, l := range p.order {
		name, ok := c.threads[[2]string{l.pid, l.tid}]
		switch {
		case ok:
		case p.device >= 0:
			name = "stream " + l.tid
		default:
			name = "pid " + l.pid + " tid " + l.tid
		}
		b.plane.Lines = append(b.plane.Lines, c.line(b, l, ids[k], name))
	}
	return b.plane
}

// lineIDs gives each line its tid when that is an integer ≥ 0 that no
// earlier line took, the others the next ids above every tid taken.
func lineIDs(lines []*lineAcc) []int64 {
	ids := make([]int64, len(lines))
	used := map[int64]bool{}
	next := int64(0)
	for k, l := range lines {
		ids[k] = -1
		if n, err := strconv.ParseInt(l.tid, 10, 64); err == nil && n >= 0 && !used[n] {
			ids[k], used[n] = n, true
			if n < math.MaxInt64 {
				next = max(next, n+1)
			}
		}
	}
	for k := range ids {
		if ids[k] < 0 {
			ids[k] = next
			next++
		}
	}
	return ids
}

// line builds one line: its events sorted by start (longer first on ties,
// then by position in the file), the line's timestamp its earliest start.
func (c *converter) line(b *planeBuilder, l *lineAcc, id int64, name string) *xplanepb.XLine {
	order := make([]int, len(l.evs))
	for k := range order {
		order[k] = k
	}
	evs := c.t.Events
	slices.SortFunc(order, func(x, y int) int {
		return cmp.Or(cmp.Compare(l.rel[x], l.rel[y]),
			cmp.Compare(evs[l.evs[y]].DurNs, evs[l.evs[x]].DurNs),
			cmp.Compare(l.evs[x], l.evs[y]))
	})
	line := &xplanepb.XLine{Id: id, Name: name}
	if len(order) > 0 {
		line.TimestampNs = l.rel[order[0]]
	}
	for _, k := range order {
		e := &evs[l.evs[k]]
		off := l.rel[k] - line.TimestampNs
		line.Events = append(line.Events, c.event(b, e, off))
		line.DurationPs = max(line.DurationPs, (off+max(0, e.DurNs))*1000)
	}
	return line
}
