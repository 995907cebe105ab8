package combine

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/chronosync/chronosync/analysis/align"
	"github.com/chronosync/chronosync/analysis/validate"
	"github.com/chronosync/chronosync/trace/chromejson"
	"github.com/chronosync/chronosync/trace/kineto"
	"github.com/chronosync/chronosync/trace/xspace"
)

// wireEvent is one event of a line being rewritten.
type wireEvent struct {
	raw           []byte // the event message
	tail          []byte // its first run of fields other than 1–3 (nil when it has none)
	tailOK        bool   // tail holds every field other than 1–3
	meta          int64
	offset, dur   int64
	timed         bool
	occurrences   bool  // it has a num_occurrences field (offset_ps's oneof: the last of the two wins)
	across        bool  // it spans a step of the node's host clock (statStepInside)
	start, newDur int64 // aligned start (ps) and duration
	sigma         float64
}

// transcoder holds the scratch of one goroutine's rewriting; the main
// goroutine's also builds the planes (body).
type transcoder struct {
	ns     *nodeState
	evs    []wireEvent
	order  []int
	others []byte
	ev     []byte
	al     lineAligner
	alFor  *align.Node // the alignment of alNode's lines in this goroutine
	alNode *nodeState
	// alSnaps is the snapshot mapping alFor was made with.
	alSnaps *align.Snapshots
	// head is the start of a JSON slice on thread headTid of process
	// headPid (appendSliceStart), when headOK.
	head             []byte
	headPid, headTid int64
	headOK           bool
}

// added is a stat metadata entry the combiner adds to a plane.
type added struct {
	id   int64
	name string
}

// statIDs resolves the ids of the stats the combiner adds, as statID does
// on a decoded plane: an existing entry of that name, else the next free
// id.
func (p *wirePlane) addStat(name string, add *[]added) int64 {
	if id, ok := p.statID(name); ok {
		return id
	}
	id := max(1, p.maxID+1)
	p.maxID = id
	p.stats[id] = name
	*add = append(*add, added{id, name})
	return id
}

// optStat is the id of the plane's stat metadata named name, or -1.
func optStat(p *wirePlane, name string) int64 {
	if id, ok := p.statID(name); ok {
		return id
	}
	return -1
}

// collectiveOp adds to op what a converted Kineto collective's stats say
// about its process group, sequence number and message size (raw is the
// event's message).
func collectiveOp(op validate.Op, raw []byte, pj *planeJob) validate.Op {
	if pj.groupID >= 0 {
		if v, ok, _ := eventStat(raw, pj.p, pj.groupID); ok {
			op.Group = v
		}
	}
	if pj.seqID >= 0 {
		if v, ok, _ := eventStat(raw, pj.p, pj.seqID); ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				op.Seq, op.HasSeq = n, true
			}
		}
	}
	if pj.sizeID >= 0 {
		if v, ok, _ := eventStat(raw, pj.p, pj.sizeID); ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				op.Size = n
			}
		}
	}
	return op
}

// plane rewrites one plane under its new name and id and streams it, its
// JSON export and its printed events out. Its lines are rewritten in
// parallel (see lines.go) and merged in order.
func (t *transcoder) plane(c *combiner, p *wirePlane, path, name string, id int64, node int, hostname string) error {
	var newStats []added
	pj := &planeJob{p: p, path: path, name: name, node: node, pid: 1 + id, ns: t.ns, checks: c.checks,
		json: c.json != nil, print: c.o.PrintEvents != nil, sortLines: c.o.sortLines}
	pj.uncID = p.addStat(statUncertainty, &newStats)
	if t.ns.stepped {
		pj.stepID = p.addStat(statStepInside, &newStats)
	}
	hloID, hasHlo := p.statID(statHloOp)
	gpu := len(p.name) >= len(gpuPrefix) && p.name[:len(gpuPrefix)] == gpuPrefix
	pj.hloID, pj.collectives = hloID, hasHlo && gpu
	pj.groupID, pj.seqID, pj.sizeID = optStat(p, kineto.StatCollectiveGroup), optStat(p, kineto.StatCollectiveSeq), optStat(p, kineto.StatCollectiveSize)
	pj.flowID, pj.phID = optStat(p, kineto.StatFlow), optStat(p, kineto.StatPhase)
	body := c.space.message()
	body = protowire.AppendTag(body, xspace.FieldPlaneID, protowire.VarintType)
	body = protowire.AppendVarint(body, uint64(id))
	body = protowire.AppendTag(body, xspace.FieldPlaneName, protowire.BytesType)
	body = protowire.AppendString(body, name)
	jp := processName(t.ns, p.name, name)
	c.noteProcess(id, jp)
	if c.json != nil {
		if err := c.json.process(pj.pid, jp); err != nil {
			return err
		}
		if err := p.prepareJSON(); err != nil {
			return fmt.Errorf("combine: %s: %w", path, err)
		}
	}
	skew, haveSkew := int64(0), false
	sized := false
	err := c.rewriteLines(pj, p.lines, func(out *lineOut) error {
		if out.timed && !haveSkew {
			skew, haveSkew = out.skew, true
		}
		if !sized { // the first line, p.lines[0]
			sized = true
			body, t.ns.sigmas, t.ns.ops = presize(body, t.ns.sigmas, t.ns.ops, p.lines, out)
		}
		body = protowire.AppendTag(body, xspace.FieldPlaneLines, protowire.BytesType)
		body = protowire.AppendBytes(body, out.line[out.lineFrom:])
		out.mergeInto(t.ns)
		if c.json != nil {
			if err := c.json.raw(out.json); err != nil {
				return err
			}
		}
		if c.o.PrintEvents != nil {
			if _, err := c.o.PrintEvents.Write(out.print); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	body = append(body, p.copied...)
	nodeID := p.addStat(statNodeID, &newStats)
	hostID := p.addStat(statHostname, &newStats)
	skewID := p.addStat(statClockSkew, &newStats)
	origID := p.addStat(statOriginalName, &newStats)
	var baseID int64
	if c.timeBase != 0 {
		baseID = p.addStat(xspace.StatTimeBase, &newStats)
	}
	for _, a := range newStats {
		var v []byte
		v = protowire.AppendTag(v, xspace.FieldMetaID, protowire.VarintType)
		v = protowire.AppendVarint(v, uint64(a.id))
		v = protowire.AppendTag(v, xspace.FieldMetaName, protowire.BytesType)
		v = protowire.AppendString(v, a.name)
		var e []byte
		e = protowire.AppendTag(e, xspace.FieldMapKey, protowire.VarintType)
		e = protowire.AppendVarint(e, uint64(a.id))
		e = protowire.AppendTag(e, xspace.FieldMapValue, protowire.BytesType)
		e = protowire.AppendBytes(e, v)
		body = protowire.AppendTag(body, xspace.FieldPlaneStatMeta, protowire.BytesType)
		body = protowire.AppendBytes(body, e)
	}
	body = appendStat(body, xspace.FieldPlaneStats, nodeID, xspace.FieldStatInt, uint64(node), "")
	body = appendStat(body, xspace.FieldPlaneStats, hostID, xspace.FieldStatStr, 0, hostname)
	body = appendStat(body, xspace.FieldPlaneStats, skewID, xspace.FieldStatInt, uint64(skew/1000), "")
	body = appendStat(body, xspace.FieldPlaneStats, origID, xspace.FieldStatStr, 0, p.name)
	if c.timeBase != 0 {
		body = appendStat(body, xspace.FieldPlaneStats, baseID, xspace.FieldStatInt, uint64(c.timeBase), "")
	}
	body = append(body, p.extra...)
	return c.space.field(xspace.FieldSpacePlanes, body)
}

// presize grows a plane's output buffer body, and its node's
// uncertainties and collectives, to what the plane's lines will likely
// take, so that each grows at most once more (appended to from empty, a
// buffer is copied a dozen times and twice as much memory touched). out is
// the first line rewritten: the estimate is its output times the input's
// size over that line's, plus a sixteenth; for body at least the input's
// size and at most three times it, for the others (one per timed event at
// most, of 4 bytes at least) at most a quarter of it. body comes back to
// the XSpace writer's free list and the uncertainties to the median's
// spare, so those grow for the first planes and nodes only; the
// collectives are the node's, kept for the happens-before check.
func presize(body []byte, sigmas []float64, ops []validate.Op, lines [][]byte, out *lineOut) ([]byte, []float64, []validate.Op) {
	in, first := 0, len(lines[0])
	for _, l := range lines {
		in += len(l)
	}
	if first == 0 {
		return body, sigmas, ops
	}
	scale := func(n, most int) int { return int(min(float64(most), float64(n)*float64(in)/float64(first)*17/16)) }
	if want := max(in, scale(len(out.line)-out.lineFrom, 3*in)); cap(body)-len(body) < want {
		body = slices.Grow(body, want)
	}
	// A timed event takes 4 bytes at least (its tag, length and offset_ps).
	if want := scale(len(out.sigmas), in/4); cap(sigmas)-len(sigmas) < want {
		sigmas = slices.Grow(sigmas, want)
	}
	if want := scale(len(out.ops), in/4); cap(ops)-len(ops) < want {
		ops = slices.Grow(ops, want)
	}
	return body, sigmas, ops
}

// appendStat appends an XStat (a metadata id and one value of kind
// FieldStatStr, FieldStatInt or FieldStatUint) as field num of a message.
func appendStat(b []byte, num protowire.Number, id int64, kind protowire.Number, v uint64, s string) []byte {
	size := protowire.SizeTag(xspace.FieldStatMeta) + protowire.SizeVarint(uint64(id)) + protowire.SizeTag(kind)
	if kind == xspace.FieldStatStr {
		size += protowire.SizeBytes(len(s))
	} else {
		size += protowire.SizeVarint(v)
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(size))
	b = protowire.AppendTag(b, xspace.FieldStatMeta, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(id))
	if kind == xspace.FieldStatStr {
		b = protowire.AppendTag(b, xspace.FieldStatStr, protowire.BytesType)
		return protowire.AppendString(b, s)
	}
	b = protowire.AppendTag(b, kind, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// eventStat returns the value of the stat with metadata id among the
// stats (field 4) of an event's fields b, rendered as statText does.
func eventStat(b []byte, p *wirePlane, id int64) (string, bool, error) {
	for len(b) > 0 {
		f, rest, err := xspace.Next(b, xspace.EventSpec)
		if err != nil {
			return "", false, err
		}
		b = rest
		if f.Num != xspace.FieldEventStats || f.Type != protowire.BytesType {
			continue
		}
		sid, val, err := statOf(f.Data)
		if err != nil {
			return "", false, err
		}
		if sid == id {
			v, err := p.statText(sid, val)
			return v, err == nil, err
		}
	}
	return "", false, nil
}

// parseEvent reads the fields of the event b the combiner rewrites into
// *e. When the
// fields other than metadata_id, offset_ps and duration_ps form one run of
// bytes (C++ encoders write them after those; Go's writes the offset_ps
// oneof after them), tail is that run, so that rewriting copies it whole.
func parseEvent(e *wireEvent, b []byte) error {
	*e = wireEvent{raw: b, tailOK: true}
	closed := -1 // len(b) where tail's run ended (a field 1–3 after it)
	for len(b) > 0 {
		at := len(b)
		// Fast paths: fields 1–3 as varints, the way every encoder writes
		// them, and short length-delimited fields 4–15 (stats); anything
		// else goes through next.
		var num protowire.Number
		var v uint64
		t := b[0]
		switch {
		case t == tagEventMeta || t == tagEventOffset || t == tagEventDuration:
			if len(b) > 1 && b[1] < 0x80 {
				num, v, b = protowire.Number(t>>3), uint64(b[1]), b[2:]
			} else {
				x, n := xspace.ConsumeVarint(b[1:])
				if n < 0 {
					return xspace.ErrWire
				}
				num, v, b = protowire.Number(t>>3), x, b[1+n:]
			}
		case t&7 == byte(protowire.BytesType) && t > xspace.FieldEventDuration<<3 && t < 0x80 && len(b) > 1 && b[1] < 0x80 && 2+int(b[1]) <= len(b):
			e.other(b, closed)
			b = b[2+int(b[1]):]
			continue
		default:
			f, rest, err := xspace.Next(b, xspace.EventSpec)
			if err != nil {
				return err
			}
			if f.Num == xspace.FieldEventOccurrences {
				e.timed, e.occurrences = false, true
			}
			if f.Num < xspace.FieldEventMeta || f.Num > xspace.FieldEventDuration {
				e.other(b, closed)
				b = rest
				continue
			}
			num, v, b = f.Num, f.Value, rest
		}
		switch num {
		case xspace.FieldEventMeta:
			e.meta = int64(v)
		case xspace.FieldEventOffset:
			e.offset, e.timed = int64(v), true
		case xspace.FieldEventDuration:
			e.dur = int64(v)
		}
		if e.tail != nil && closed < 0 {
			closed = at
		}
	}
	if e.tail != nil && closed >= 0 {
		e.tail = e.tail[:len(e.tail)-closed]
	}
	if e.timed && e.occurrences {
		// offset_ps came after num_occurrences and replaces it: the
		// rewriting must leave num_occurrences out (rewriteEvent).
		e.tailOK = false
	}
	return nil
}

// other notes a field other than 1–3 at the start of b: the first starts
// tail, one after tail's run closed (at closed ≥ 0) breaks it.
func (e *wireEvent) other(b []byte, closed int) {
	switch {
	case e.tail == nil:
		e.tail = b
	case closed >= 0:
		e.tailOK = false // other fields on both sides of a field 1–3
	}
}

// One-byte tags of the fields appendEvent writes.
const (
	tagLineEvents    = byte(xspace.FieldLineEvents<<3 | protowire.BytesType)
	tagEventMeta     = byte(xspace.FieldEventMeta<<3 | protowire.VarintType)
	tagEventOffset   = byte(xspace.FieldEventOffset<<3 | protowire.VarintType)
	tagEventDuration = byte(xspace.FieldEventDuration<<3 | protowire.VarintType)
	tagEventStats    = byte(xspace.FieldEventStats<<3 | protowire.BytesType)
	tagStatMeta      = byte(xspace.FieldStatMeta<<3 | protowire.VarintType)
	tagStatUint      = byte(xspace.FieldStatUint<<3 | protowire.VarintType)
	tagStatInt       = byte(xspace.FieldStatInt<<3 | protowire.VarintType)
	tagStatRef       = byte(xspace.FieldStatRef<<3 | protowire.VarintType)
	tagStatStr       = byte(xspace.FieldStatStr<<3 | protowire.BytesType)
)

// appendEvent appends a timed event that spans no host clock step to line
// as a line's events field: the event with its new offset and duration,
// its other fields as they were, and the uncertainty stat (see
// rewriteEvent); with wantHlo it also returns the event's hlo_op stat, if
// it has one. An event whose other fields are one run (tailOK, as every
// encoder writes them) is written in place, its size computed first.
func (t *transcoder) appendEvent(line []byte, p *wirePlane, e *wireEvent, offset, uncID, hloID int64, wantHlo bool) ([]byte, string, bool, error) {
	if !e.tailOK {
		ev, hlo, hasHlo, err := t.rewriteEvent(p, e, offset, uncID, 0, hloID, wantHlo)
		if err != nil {
			return line, "", false, err
		}
		line = protowire.AppendTag(line, xspace.FieldLineEvents, protowire.BytesType)
		return protowire.AppendBytes(line, ev), hlo, hasHlo, nil
	}
	unc := uint64(math.Ceil(e.sigma))
	stat := protowire.SizeTag(xspace.FieldStatMeta) + protowire.SizeVarint(uint64(uncID)) + protowire.SizeTag(xspace.FieldStatUint) + protowire.SizeVarint(unc)
	size := protowire.SizeTag(xspace.FieldEventOffset) + protowire.SizeVarint(uint64(offset)) + len(e.tail) +
		protowire.SizeTag(xspace.FieldEventStats) + protowire.SizeVarint(uint64(stat)) + stat
	if e.meta != 0 {
		size += protowire.SizeTag(xspace.FieldEventMeta) + protowire.SizeVarint(uint64(e.meta))
	}
	if e.newDur != 0 {
		size += protowire.SizeTag(xspace.FieldEventDuration) + protowire.SizeVarint(uint64(e.newDur))
	}
	// The tags of fields 1–15 are one byte each. The room is made once,
	// and the fields put into it.
	n := len(line)
	line = slices.Grow(line, 1+binary.MaxVarintLen64+size)
	b := line[n : n+1+binary.MaxVarintLen64+size]
	b[0] = tagLineEvents
	i := 1 + xspace.PutVarint(b[1:], uint64(size))
	if e.meta != 0 {
		b[i] = tagEventMeta
		i += 1 + xspace.PutVarint(b[i+1:], uint64(e.meta))
	}
	b[i] = tagEventOffset
	i += 1 + xspace.PutVarint(b[i+1:], uint64(offset))
	if e.newDur != 0 {
		b[i] = tagEventDuration
		i += 1 + xspace.PutVarint(b[i+1:], uint64(e.newDur))
	}
	i += copy(b[i:], e.tail)
	b[i] = tagEventStats
	i += 1 + xspace.PutVarint(b[i+1:], uint64(stat))
	b[i] = tagStatMeta
	i += 1 + xspace.PutVarint(b[i+1:], uint64(uncID))
	b[i] = tagStatUint
	i += 1 + xspace.PutVarint(b[i+1:], unc)
	line = line[:n+i]
	if !wantHlo {
		return line, "", false, nil
	}
	hlo, hasHlo, err := eventStat(e.tail, p, hloID)
	return line, hlo, hasHlo, err
}

// appendSpanning is appendEvent for an event of pj's plane that spans a
// step of its node's host clock: it gets the step stat too. Such events
// are rare, and take the general path.
func (t *transcoder) appendSpanning(line []byte, pj *planeJob, e *wireEvent, offset int64, wantHlo bool) ([]byte, string, bool, error) {
	ev, hlo, hasHlo, err := t.rewriteEvent(pj.p, e, offset, pj.uncID, pj.stepID, pj.hloID, wantHlo)
	if err != nil {
		return line, "", false, err
	}
	line = protowire.AppendTag(line, xspace.FieldLineEvents, protowire.BytesType)
	return protowire.AppendBytes(line, ev), hlo, hasHlo, nil
}

// rewriteEvent writes a timed event with its new offset and duration, its
// other fields as they were, the uncertainty stat (id uncID) and, if it
// spans a host clock step, the step stat (id stepID); with wantHlo it also
// returns the event's hlo_op stat, if it has one.
func (t *transcoder) rewriteEvent(p *wirePlane, e *wireEvent, offset, uncID, stepID, hloID int64, wantHlo bool) ([]byte, string, bool, error) {
	out := t.ev[:0]
	if e.meta != 0 {
		out = protowire.AppendTag(out, xspace.FieldEventMeta, protowire.VarintType)
		out = protowire.AppendVarint(out, uint64(e.meta))
	}
	out = protowire.AppendTag(out, xspace.FieldEventOffset, protowire.VarintType)
	out = protowire.AppendVarint(out, uint64(offset))
	if e.newDur != 0 {
		out = protowire.AppendTag(out, xspace.FieldEventDuration, protowire.VarintType)
		out = protowire.AppendVarint(out, uint64(e.newDur))
	}
	var hlo string
	var hasHlo bool
	var err error
	if e.tailOK {
		out = append(out, e.tail...)
		if wantHlo {
			hlo, hasHlo, err = eventStat(e.tail, p, hloID)
		}
	} else {
		for b := e.raw; len(b) > 0; {
			f, rest, err := xspace.Next(b, xspace.EventSpec)
			if err != nil {
				return nil, "", false, err
			}
			b = rest
			if f.Num == xspace.FieldEventMeta || f.Num == xspace.FieldEventOffset || f.Num == xspace.FieldEventDuration || f.Num == xspace.FieldEventOccurrences {
				continue
			}
			out = append(out, f.Raw...)
		}
		if wantHlo {
			hlo, hasHlo, err = eventStat(e.raw, p, hloID)
		}
	}
	if err != nil {
		return nil, "", false, err
	}
	out = appendStat(out, xspace.FieldEventStats, uncID, xspace.FieldStatUint, uint64(math.Ceil(e.sigma)), "")
	if e.across {
		out = appendStat(out, xspace.FieldEventStats, stepID, xspace.FieldStatInt, 1, "")
	}
	t.ev = out
	return out, hlo, hasHlo, nil
}

// eventJSON appends ",\n" and one event's JSON to b: its metadata's
// stats, then its own, then its uncertainty and, if it spans a host clock
// step, the step stat, as args (the metadata's name and stats rendered
// once per plane, by prepareJSON), then the flow events of its flow stats
// (see jsonargs.go). A converted Kineto flow event is not exported.
func (t *transcoder) eventJSON(b []byte, pj *planeJob, e *wireEvent, m *wireMeta, tid int64) ([]byte, error) {
	p := pj.p
	stats := e.raw
	if e.tailOK {
		stats = e.tail
	}
	if pj.phID >= 0 {
		if ph, ok, err := eventStat(stats, p, pj.phID); err != nil || (ok && flowMarker(ph)) {
			return b, err
		}
	}
	name := jsonEmpty
	if m != nil {
		name = m.jsonName
	}
	if !t.headOK || t.headPid != pj.pid || t.headTid != tid {
		t.head = appendSliceStart(t.head[:0], pj.pid, tid)
		t.headPid, t.headTid, t.headOK = pj.pid, tid, true
	}
	b = append(appendSliceRest(append(append(b, ',', '\n'), t.head...), name, e.start, e.newDur), `,"args":{`...)
	if m != nil {
		b = append(b, m.jsonArgs...)
	}
	b, err := p.appendArgsJSON(b, stats, xspace.FieldEventStats)
	if err != nil {
		return b, err
	}
	b = append(b, `"`+statUncertainty+`":`...)
	b = strconv.AppendUint(b, uint64(math.Ceil(e.sigma)), 10)
	if e.across {
		b = append(b, `,"`+statStepInside+`":1`...)
	}
	b = append(b, `}}`...)
	if pj.flowID >= 0 {
		for msg := stats; len(msg) > 0; {
			f, rest, err := xspace.NextField(msg)
			if err != nil {
				return b, err
			}
			msg = rest
			if f.Num != xspace.FieldEventStats || f.Type != protowire.BytesType {
				continue
			}
			id, val, err := statOf(f.Data)
			if err != nil {
				return b, err
			}
			if id == pj.flowID && (val.Num == xspace.FieldStatUint || val.Num == xspace.FieldStatInt) {
				b = appendFlowJSON(b, val.Value, pj.node, pj.pid, tid, e.start)
			}
		}
	}
	return b, nil
}

// prepareJSON renders the plane's metadata names and stats and its stat
// names as JSON once, before its lines are exported in parallel.
func (p *wirePlane) prepareJSON() error {
	p.jsonKeys = make(map[int64][]byte, len(p.stats))
	p.jsonKeyList = nil
	if p.maxID >= 0 && p.maxID < maxKeyList {
		p.jsonKeyList = make([][]byte, p.maxID+1)
	}
	for id, name := range p.stats {
		k := chromejson.AppendString(nil, name)
		p.jsonKeys[id] = k
		if id >= 0 && id < int64(len(p.jsonKeyList)) {
			p.jsonKeyList[id] = k
		}
	}
	for id, m := range p.meta {
		n := m.display
		if n == "" {
			n = m.name
		}
		m.jsonName = chromejson.AppendString(nil, n)
		var err error
		if m.jsonArgs, err = p.appendArgsJSON(nil, m.stats, xspace.FieldMetaStats); err != nil {
			return fmt.Errorf("plane %s: event metadata %d (%q): %w", p.name, id, m.name, err)
		}
	}
	return nil
}

// maxKeyList bounds the stat metadata ids whose JSON names prepareJSON
// also keeps in a slice (wirePlane.jsonKeyList), looked up faster than
// the map.
const maxKeyList = 4096

// jsonEmpty is "" as a JSON string.
var jsonEmpty = []byte(`""`)

// appendArgsJSON renders the stats (fields num) of a message as JSON
// members `"key":value,` (each followed by a comma; see jsonargs.go).
func (p *wirePlane) appendArgsJSON(b, msg []byte, num protowire.Number) ([]byte, error) {
	fast := num >= 1 && num <= 15 // a one-byte tag
	tag := byte(num)<<3 | byte(protowire.BytesType)
	for len(msg) > 0 {
		// Fast path: a stat of up to 127 bytes, as NextField would read it.
		if fast && len(msg) > 1 && msg[0] == tag && msg[1] < 0x80 && 2+int(msg[1]) <= len(msg) {
			end := 2 + int(msg[1])
			var err error
			if b, err = p.appendStatJSON(b, msg[2:end]); err != nil {
				return b, err
			}
			msg = msg[end:]
			continue
		}
		f, rest, err := xspace.NextField(msg)
		if err != nil {
			return b, err
		}
		msg = rest
		if f.Num != num || f.Type != protowire.BytesType {
			continue
		}
		if b, err = p.appendStatJSON(b, f.Data); err != nil {
			return b, err
		}
	}
	return b, nil
}

// appendStatJSON renders one XStat as `"key":value,` (see jsonargs.go).
func (p *wirePlane) appendStatJSON(b, st []byte) ([]byte, error) {
	id, val, err := statOf(st)
	if err != nil {
		return b, err
	}
	b = p.keyJSON(b, id)
	b = append(b, ':')
	switch val.Num {
	case 0:
		b = append(b, jsonEmpty...)
	case xspace.FieldStatUint:
		b = strconv.AppendUint(b, val.Value, 10)
	case xspace.FieldStatInt:
		b = strconv.AppendInt(b, int64(val.Value), 10)
	case xspace.FieldStatDouble:
		b = chromejson.AppendFloat(b, protowireFloat(val.Value))
	case xspace.FieldStatStr:
		b = chromejson.AppendString(b, val.Data)
	default: // rare kinds
		v, err := p.statText(id, val)
		if err != nil {
			return b, err
		}
		b = chromejson.AppendString(b, v)
	}
	return append(b, ','), nil
}

// keyJSON is the JSON string of the name of stat metadata id, from
// prepareJSON's table; an id the plane has no metadata for is named by its
// decimal (appended to the scratch key, as lines run in parallel).
func (p *wirePlane) keyJSON(b []byte, id int64) []byte {
	if uint64(id) < uint64(len(p.jsonKeyList)) {
		if k := p.jsonKeyList[id]; k != nil {
			return append(b, k...)
		}
	}
	if k, ok := p.jsonKeys[id]; ok {
		return append(b, k...)
	}
	return chromejson.AppendString(b, strconv.FormatInt(id, 10))
}
