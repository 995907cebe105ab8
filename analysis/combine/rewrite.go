package combine

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/chronosync/chronosync/analysis/validate"
	"github.com/chronosync/chronosync/trace/xspace"
)

// A line is rewritten in two passes over its bytes: the first reads the
// line's own fields (its timestamp_ns among them, which its events' times
// are relative to, wherever the encoder put it), the second its events.
// A line whose timed events come in the order of their offsets, as
// tracers write them, is rewritten within that second pass, each event
// aligned and written as it is read (rewriteInOrder). Any other line, and
// any line that fails there, is rewritten by keeping its events and
// sorting them first (rewriteSorting), which also reports the errors. The
// two give the same bytes for a line both can rewrite.

// lineHead is a line's own fields: everything but its events.
type lineHead struct {
	ts, id, displayID int64
	name, displayName []byte
	others            []byte // its fields but timestamp_ns and events, as they were, in order
}

// tid is the line's thread id in the JSON export.
func (h *lineHead) tid() int64 {
	if h.displayID != 0 {
		return h.displayID
	}
	return h.id
}

// threadName is the line's thread name in the JSON export.
func (h *lineHead) threadName() []byte {
	if len(h.displayName) != 0 {
		return h.displayName
	}
	return h.name
}

// start returns b emptied, then room for timestamp_ns (known only once the
// first timed event is aligned) and the line's other own fields: the start
// of the rewritten line, its events to be appended.
func (h *lineHead) start(b []byte) []byte {
	return append(xspace.WithHead(b), h.others...)
}

// finish sets out's line to the rewritten line b (from start), with
// timestamp_ns ts written into its room.
func finish(out *lineOut, b []byte, ts int64) {
	out.line, out.lineFrom = b, xspace.HeadRoom
	if ts != 0 {
		out.lineFrom = xspace.PutHead(b, byte(xspace.FieldLineTimestamp<<3|protowire.VarintType), uint64(ts))
	}
}

// eventAt returns the events field (its message) at the start of b, if b
// starts with one, and what follows the field.
func eventAt(b []byte) (data, rest []byte, ok bool, err error) {
	if len(b) > 1 && b[0] == tagLineEvents && b[1] < 0x80 {
		if end := 2 + int(b[1]); end <= len(b) {
			return b[2:end], b[end:], true, nil
		}
	}
	f, rest, err := xspace.Next(b, xspace.LineSpec)
	if err != nil {
		return nil, nil, false, err
	}
	return f.Data, rest, f.Num == xspace.FieldLineEvents, nil
}

// nextEvent parses into e the events field at the start of b, if b starts
// with one (ok), and returns what follows the field. It checks with check
// the fields that the rewriting copies unparsed: the event's tail, or the
// whole event when its tail is not all its other fields.
func nextEvent(e *wireEvent, b []byte, check *xspace.Checker) (rest []byte, ok bool, err error) {
	data, rest, ok, err := eventAt(b)
	if err != nil || !ok {
		return rest, false, err
	}
	if err := parseEvent(e, data); err != nil {
		return rest, true, err
	}
	copied := e.raw
	if e.tailOK {
		copied = e.tail
	}
	if !check.Valid(copied) {
		return rest, true, xspace.ErrWire
	}
	return rest, true, nil
}

// lineHead reads the line b's own fields, into t's scratch.
func (t *transcoder) lineHead(pj *planeJob, b []byte) (lineHead, error) {
	h := lineHead{others: t.others[:0]}
	for len(b) > 0 {
		if _, rest, ok, _ := eventAt(b); ok {
			b = rest
			continue
		}
		f, rest, err := xspace.Next(b, xspace.LineSpec)
		if err != nil {
			return h, err
		}
		b = rest
		switch f.Num {
		case xspace.FieldLineTimestamp:
			h.ts = int64(f.Value)
			continue
		case 1:
			h.id = int64(f.Value)
		case 10:
			h.displayID = int64(f.Value)
		case 2:
			h.name = f.Data
		case 11:
			h.displayName = f.Data
		}
		h.others = append(h.others, f.Raw...)
	}
	t.others = h.others
	if !pj.checks.line.Valid(h.others) {
		return h, xspace.ErrWire
	}
	if h.ts > maxLineNs || h.ts < -maxLineNs {
		return h, fmt.Errorf("combine: %s: plane %s line %d: timestamp_ns %d is beyond ±%d ns, too far from zero for picosecond times (are they Unix-epoch ns? XSpace timestamps are relative to the profile's start)",
			pj.path, pj.p.name, h.id, h.ts, int64(maxLineNs))
	}
	return h, nil
}

// checkTs checks a line's new timestamp_ns.
func checkTs(pj *planeJob, h *lineHead, ts int64) error {
	if ts > maxLineNs || ts < -maxLineNs {
		return fmt.Errorf("combine: %s: plane %s line %d: aligned, its events lie %d ns from the combined trace's time base, beyond the ±%d ns of picosecond times (are the inputs on unrelated clocks?)",
			pj.path, pj.p.name, h.id, ts, int64(maxLineNs))
	}
	return nil
}

// rewriteLine aligns one line's timed events into out: the new line
// message, its JSON text and printed events, the correction at its first
// timed event (ps) and the line's figures. The events keep their order by
// raw start (a later event whose aligned start would come earlier starts
// with its predecessor instead, and is counted), the line is re-based on
// its earliest aligned event, and every timed event gets a
// clock_uncertainty_ns stat (and one that spans a step of the node's host
// clock a clock_step_inside stat).
func (t *transcoder) rewriteLine(pj *planeJob, b []byte, out *lineOut) error {
	h, err := t.lineHead(pj, b)
	if err != nil {
		return err
	}
	if !pj.sortLines && t.rewriteInOrder(pj, b, &h, out) {
		return nil
	}
	out.reset()
	return t.rewriteSorting(pj, b, &h, out)
}

// rewriteInOrder is rewriteLine for a line whose timed events come in the
// order of their offsets: it aligns and writes each event as it reads it.
// It returns false, leaving out to be reset, when they do not or when
// anything fails.
func (t *transcoder) rewriteInOrder(pj *planeJob, b []byte, h *lineHead, out *lineOut) bool {
	al := t.aligner(pj.ns, out)
	tid := threadJSON(pj, h, out)
	line := h.start(out.line)
	base, newTs, nb := h.ts*1000, h.ts, int64(0)
	prevOffset, first := int64(math.MinInt64), true
	for len(b) > 0 {
		var e wireEvent
		rest, ok, err := nextEvent(&e, b, pj.checks.event)
		if err != nil {
			return false
		}
		b = rest
		if !ok {
			continue
		}
		if !e.timed {
			line = appendUntimed(line, e.raw)
			out.untimed++
			continue
		}
		if e.offset < prevOffset {
			return false
		}
		prevOffset = e.offset
		if al.event(&e, base, first) != nil {
			return false
		}
		if first {
			// Aligned starts never go backwards: the first is the least.
			newTs = floorDiv(e.start, 1000)
			if checkTs(pj, h, newTs) != nil {
				return false
			}
			nb, first = newTs*1000, false
		}
		if line, err = t.emitEvent(line, pj, &e, nb, tid, h.id, out); err != nil {
			return false
		}
	}
	finish(out, line, newTs)
	out.timed = !first
	return true
}

// rewriteSorting is rewriteLine for any line: it keeps the line's events,
// aligns the timed ones in the order of their offsets, then writes them
// all in their own order.
func (t *transcoder) rewriteSorting(pj *planeJob, b []byte, h *lineHead, out *lineOut) error {
	t.evs = t.evs[:0]
	for len(b) > 0 {
		var e wireEvent
		rest, ok, err := nextEvent(&e, b, pj.checks.event)
		if err != nil {
			return err
		}
		b = rest
		if ok {
			t.evs = append(t.evs, e)
		}
	}
	t.order = t.order[:0]
	for i := range t.evs {
		if t.evs[i].timed {
			t.order = append(t.order, i)
		}
	}
	slices.SortStableFunc(t.order, func(a, b int) int { return cmp.Compare(t.evs[a].offset, t.evs[b].offset) })
	al := t.aligner(pj.ns, out)
	lineMin := int64(math.MaxInt64)
	for k, i := range t.order {
		e := &t.evs[i]
		if err := al.event(e, h.ts*1000, k == 0); err != nil {
			return pj.eventError(h.id, e, err)
		}
		lineMin = min(lineMin, e.start)
	}
	newTs := h.ts
	if len(t.order) > 0 {
		newTs = floorDiv(lineMin, 1000)
		if err := checkTs(pj, h, newTs); err != nil {
			return err
		}
	}
	line := h.start(out.line)
	tid := threadJSON(pj, h, out)
	nb := newTs * 1000
	for i := range t.evs {
		e := &t.evs[i]
		if !e.timed {
			line = appendUntimed(line, e.raw)
			out.untimed++
			continue
		}
		var err error
		if line, err = t.emitEvent(line, pj, e, nb, tid, h.id, out); err != nil {
			return err
		}
	}
	finish(out, line, newTs)
	out.timed = len(t.order) > 0
	return nil
}

// threadJSON starts the line's JSON text, when the JSON is exported, with
// its thread's metadata events, and returns the thread's id.
func threadJSON(pj *planeJob, h *lineHead, out *lineOut) int64 {
	tid := h.tid()
	if pj.json {
		out.json = appendThreadJSON(append(out.json, ',', '\n'), pj.pid, tid, h.threadName())
	}
	return tid
}

// appendUntimed appends an event without offset_ps, as it was, to a line.
func appendUntimed(line, ev []byte) []byte {
	line = protowire.AppendTag(line, xspace.FieldLineEvents, protowire.BytesType)
	return protowire.AppendBytes(line, ev)
}

// event aligns the timed event e of a line whose times are relative to
// base (ps) into e.start, e.newDur and e.sigma, keeping starts from going
// backwards, and counts it into the line's figures; first marks the
// line's first timed event. A time beyond an int64 of ps is an error.
func (a *lineAligner) event(e *wireEvent, base int64, first bool) error {
	out := a.out
	raw, ok0 := addPs(base, e.offset)
	rawEnd, ok1 := addPs(raw, e.dur)
	if !ok0 || !ok1 {
		return fmt.Errorf("its start or end (duration_ps %d) from the line's timestamp_ns %d lies beyond the reach of int64 picoseconds", e.dur, base/1000)
	}
	start, end, sigma, across, err := a.alignSpanPs(raw, rawEnd)
	if err != nil {
		return err
	}
	if start < a.prev {
		start = a.prev
		out.fixes++
	}
	a.prev = start
	dur, ok := subPs(end, start)
	if !ok {
		return fmt.Errorf("its aligned duration, from %d ps to %d ps, does not fit an int64 of picoseconds", start, end)
	}
	e.start, e.newDur, e.sigma, e.across = start, max(0, dur), sigma, across
	out.sigmas = append(out.sigmas, e.sigma)
	out.sigmaMax = max(out.sigmaMax, e.sigma)
	raw, ok0 = addPs(raw, a.shift*1000) // from the output's base
	corr, ok1 := subPs(start, raw)
	if !ok0 || !ok1 {
		return fmt.Errorf("its correction, from %d ps (from the plane's time base %d ns) to %d ps, does not fit an int64 of picoseconds", raw, a.inBase, start)
	}
	out.maxCorr = max(out.maxCorr, abs(corr)/1000)
	if first {
		out.skew = corr
	}
	if !out.haveFirst || raw < out.firstRaw {
		out.firstRaw, out.firstCorr, out.haveFirst = raw, corr, true
	}
	out.events++
	return nil
}

// emitEvent appends the aligned timed event e to line (whose new times
// are relative to nb, ps), its JSON and its printed form to out, and its
// collective invocation to out's ops.
func (t *transcoder) emitEvent(line []byte, pj *planeJob, e *wireEvent, nb, tid, lineID int64, out *lineOut) ([]byte, error) {
	p := pj.p
	m := p.meta[e.meta]
	wantHlo := pj.collectives && m != nil && m.collective
	offset, ok := subPs(e.start, nb)
	if !ok {
		return line, pj.eventError(lineID, e, fmt.Errorf("its aligned start %d ps lies beyond the reach of int64 picoseconds from the line's new timestamp_ns %d", e.start, nb/1000))
	}
	var hlo string
	var hasHlo bool
	var err error
	if e.across {
		line, hlo, hasHlo, err = t.appendSpanning(line, pj, e, offset, wantHlo)
	} else {
		line, hlo, hasHlo, err = t.appendEvent(line, p, e, offset, pj.uncID, pj.hloID, wantHlo)
	}
	if err != nil {
		return line, pj.eventError(lineID, e, err)
	}
	if wantHlo {
		if !hasHlo && m.hasHlo {
			hlo, hasHlo = m.hloOp, true
		}
		if hasHlo {
			out.ops = append(out.ops, collectiveOp(validate.Op{Key: hlo, StartNs: e.start / 1000, EndNs: (e.start + e.newDur) / 1000}, e.raw, pj))
		}
	}
	if pj.json {
		if out.json, err = t.eventJSON(out.json, pj, e, m, tid); err != nil {
			return line, pj.eventError(lineID, e, err)
		}
	}
	if pj.print {
		name := ""
		if m != nil {
			name = m.name
		}
		out.print = fmt.Appendf(out.print, "node %d %s line %d %s start %d ps dur %d ps\n", pj.node, pj.name, lineID, name, e.start, e.newDur)
	}
	return line, nil
}
