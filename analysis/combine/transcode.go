package combine

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/chronosync/chronosync/analysis/validate"
)

// wireEvent is one event of a line being rewritten.
type wireEvent struct {
	raw           []byte // the event message
	tail          []byte // its fields other than 1–3, when they follow those (nil otherwise)
	tailOK        bool   // tail holds every other field
	meta          int64
	offset, dur   int64
	timed         bool
	start, newDur int64 // aligned start (ps) and duration
	sigma         float64
}

// transcoder holds the scratch of one node's rewriting.
type transcoder struct {
	ns    *nodeState
	evs   []wireEvent
	order []int
	line  []byte
	ev    []byte
	body  []byte
	args  []arg
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

// plane rewrites one plane under its new name and id and streams it, its
// JSON export and its printed events out.
func (t *transcoder) plane(c *combiner, p *wirePlane, path, name string, id int64, node int, hostname string) error {
	var newStats []added
	uncID := p.addStat(statUncertainty, &newStats)
	hloID, hasHlo := p.statID(statHloOp)
	gpu := len(p.name) >= len(gpuPrefix) && p.name[:len(gpuPrefix)] == gpuPrefix
	body := t.body[:0]
	body = protowire.AppendTag(body, fPlaneID, protowire.VarintType)
	body = protowire.AppendVarint(body, uint64(id))
	body = protowire.AppendTag(body, fPlaneName, protowire.BytesType)
	body = protowire.AppendString(body, name)
	pid := 1 + id
	if c.json != nil {
		if err := c.json.process(pid, name); err != nil {
			return err
		}
	}
	skew, haveSkew := int64(0), false
	for _, lb := range p.lines {
		line, lineSkew, ok, err := t.rewriteLine(c, p, lb, path, name, uncID, hloID, hasHlo && gpu, pid, node)
		if err != nil {
			return err
		}
		if ok && !haveSkew {
			skew, haveSkew = lineSkew, true
		}
		body = protowire.AppendTag(body, fPlaneLines, protowire.BytesType)
		body = protowire.AppendBytes(body, line)
	}
	body = append(body, p.copied...)
	nodeID := p.addStat(statNodeID, &newStats)
	hostID := p.addStat(statHostname, &newStats)
	skewID := p.addStat(statClockSkew, &newStats)
	for _, a := range newStats {
		var v []byte
		v = protowire.AppendTag(v, fMetaID, protowire.VarintType)
		v = protowire.AppendVarint(v, uint64(a.id))
		v = protowire.AppendTag(v, fMetaName, protowire.BytesType)
		v = protowire.AppendString(v, a.name)
		var e []byte
		e = protowire.AppendTag(e, fMapKey, protowire.VarintType)
		e = protowire.AppendVarint(e, uint64(a.id))
		e = protowire.AppendTag(e, fMapValue, protowire.BytesType)
		e = protowire.AppendBytes(e, v)
		body = protowire.AppendTag(body, fPlaneStatMeta, protowire.BytesType)
		body = protowire.AppendBytes(body, e)
	}
	body = appendStat(body, fPlaneStats, nodeID, fStatInt, uint64(node), "")
	body = appendStat(body, fPlaneStats, hostID, fStatStr, 0, hostname)
	body = appendStat(body, fPlaneStats, skewID, fStatInt, uint64(skew/1000), "")
	body = append(body, p.extra...)
	t.body = body
	return c.space.field(fSpacePlanes, body)
}

// appendStat appends an XStat (a metadata id and one value of kind
// fStatStr, fStatInt or fStatUint) as field num of a message.
func appendStat(b []byte, num protowire.Number, id int64, kind protowire.Number, v uint64, s string) []byte {
	size := protowire.SizeTag(fStatMeta) + protowire.SizeVarint(uint64(id)) + protowire.SizeTag(kind)
	if kind == fStatStr {
		size += protowire.SizeBytes(len(s))
	} else {
		size += protowire.SizeVarint(v)
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(size))
	b = protowire.AppendTag(b, fStatMeta, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(id))
	if kind == fStatStr {
		b = protowire.AppendTag(b, fStatStr, protowire.BytesType)
		return protowire.AppendString(b, s)
	}
	b = protowire.AppendTag(b, kind, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// eventStat returns the value of the stat with metadata id among the
// stats (field 4) of an event's fields b.
func eventStat(b []byte, p *wirePlane, id int64) (string, bool) {
	for len(b) > 0 {
		f, rest, err := next(b)
		if err != nil {
			return "", false
		}
		b = rest
		if f.num != fEventStats || f.typ != protowire.BytesType {
			continue
		}
		if sid, v, ok := statValue(f.data, p); ok && sid == id {
			return v, true
		}
	}
	return "", false
}

// rewriteLine aligns one line's timed events and returns the new line
// message (valid until the next call), the correction at its first timed
// event (ps), and whether it had one. The events keep their order by raw
// start (a later event whose aligned start would come earlier starts with
// its predecessor instead, and is counted), the line is re-based on its
// earliest aligned event, and every timed event gets a
// clock_uncertainty_ns stat.
func (t *transcoder) rewriteLine(c *combiner, p *wirePlane, b []byte, path, plane string, uncID, hloID int64, collectives bool, pid int64, node int) ([]byte, int64, bool, error) {
	var ts, lineID, displayID int64
	var lineName, displayName string
	var others []byte
	t.evs = t.evs[:0]
	for len(b) > 0 {
		f, rest, err := next(b)
		if err != nil {
			return nil, 0, false, err
		}
		b = rest
		switch f.num {
		case fLineTimestamp:
			ts = int64(f.v)
		case fLineEvents:
			e, err := parseEvent(f.data)
			if err != nil {
				return nil, 0, false, err
			}
			t.evs = append(t.evs, e)
		default:
			switch f.num {
			case 1:
				lineID = int64(f.v)
			case 10:
				displayID = int64(f.v)
			case 2:
				lineName = string(f.data)
			case 11:
				displayName = string(f.data)
			}
			others = append(others, f.raw...)
		}
	}
	if ts > maxLineNs || ts < -maxLineNs {
		return nil, 0, false, fmt.Errorf("combine: %s: plane %s line %d: timestamp_ns %d is beyond ±%d ns, too far from zero for picosecond times (are they Unix-epoch ns? XSpace timestamps are relative to the profile's start)",
			path, p.name, lineID, ts, int64(maxLineNs))
	}
	ns := t.ns
	t.order = t.order[:0]
	for i := range t.evs {
		if t.evs[i].timed {
			t.order = append(t.order, i)
		}
	}
	slices.SortStableFunc(t.order, func(a, b int) int { return cmp.Compare(t.evs[a].offset, t.evs[b].offset) })
	base := ts * 1000
	prev, lineMin := int64(math.MinInt64), int64(math.MaxInt64)
	var skew int64
	for k, i := range t.order {
		e := &t.evs[i]
		raw := base + e.offset
		start, s1 := ns.alignPs(raw)
		end, s2 := ns.alignPs(raw + e.dur)
		if start < prev {
			start = prev
			ns.md.MonotonicityFixes++
		}
		prev = start
		e.start, e.newDur, e.sigma = start, max(0, end-start), max(s1, s2)
		ns.sigmas = append(ns.sigmas, e.sigma)
		lineMin = min(lineMin, start)
		corr := start - raw
		ns.md.MaxCorrectionNS = max(ns.md.MaxCorrectionNS, abs(corr)/1000)
		if k == 0 {
			skew = corr
		}
		if !ns.haveFirst || raw < ns.firstRaw {
			ns.firstRaw, ns.firstCorr, ns.haveFirst = raw, corr, true
		}
		ns.md.Events++
	}
	newTs := ts
	if len(t.order) > 0 {
		newTs = floorDiv(lineMin, 1000)
	}
	out := t.line[:0]
	out = append(out, others...)
	if newTs != 0 {
		out = protowire.AppendTag(out, fLineTimestamp, protowire.VarintType)
		out = protowire.AppendVarint(out, uint64(newTs))
	}
	tid := displayID
	if tid == 0 {
		tid = lineID
	}
	if c.json != nil {
		n := displayName
		if n == "" {
			n = lineName
		}
		if err := c.json.thread(pid, tid, n); err != nil {
			return nil, 0, false, err
		}
	}
	nb := newTs * 1000
	for i := range t.evs {
		e := &t.evs[i]
		if !e.timed {
			out = protowire.AppendTag(out, fLineEvents, protowire.BytesType)
			out = protowire.AppendBytes(out, e.raw)
			continue
		}
		m := p.meta[e.meta]
		wantHlo := collectives && m != nil && m.collective
		ev, hlo, hasHlo, err := t.rewriteEvent(p, e, e.start-nb, uncID, hloID, wantHlo)
		if err != nil {
			return nil, 0, false, err
		}
		out = protowire.AppendTag(out, fLineEvents, protowire.BytesType)
		out = protowire.AppendBytes(out, ev)
		if wantHlo {
			if !hasHlo && m.hasHlo {
				hlo, hasHlo = m.hloOp, true
			}
			if hasHlo {
				ns.ops = append(ns.ops, validate.Op{Key: hlo, StartNs: e.start / 1000, EndNs: (e.start + e.newDur) / 1000})
			}
		}
		if c.json != nil {
			if err := t.eventJSON(c, p, e, m, pid, tid); err != nil {
				return nil, 0, false, err
			}
		}
		if c.o.PrintEvents != nil {
			name := ""
			if m != nil {
				name = m.name
			}
			fmt.Fprintf(c.o.PrintEvents, "node %d %s line %d %s start %d ps dur %d ps\n", node, plane, lineID, name, e.start, e.newDur)
		}
	}
	t.line = out
	return out, skew, len(t.order) > 0, nil
}

// parseEvent reads the fields of an event the combiner rewrites. When the
// fields other than metadata_id, offset_ps and duration_ps all come after
// those (as every encoder writes them), tail is that run of bytes, so that
// rewriting copies it whole.
func parseEvent(b []byte) (wireEvent, error) {
	e := wireEvent{raw: b, tailOK: true}
	for len(b) > 0 {
		f, rest, err := next(b)
		if err != nil {
			return e, err
		}
		switch f.num {
		case fEventMeta:
			e.meta = int64(f.v)
		case fEventOffset:
			e.offset, e.timed = int64(f.v), true
		case fEventDuration:
			e.dur = int64(f.v)
		default:
			if e.tail == nil {
				e.tail = b
			}
			b = rest
			continue
		}
		if e.tail != nil {
			e.tailOK = false // a field 1–3 after the others
		}
		b = rest
	}
	return e, nil
}

// rewriteEvent writes a timed event with its new offset and duration, its
// other fields as they were, and the uncertainty stat; with wantHlo it also
// returns the event's hlo_op stat, if it has one.
func (t *transcoder) rewriteEvent(p *wirePlane, e *wireEvent, offset, uncID, hloID int64, wantHlo bool) ([]byte, string, bool, error) {
	out := t.ev[:0]
	if e.meta != 0 {
		out = protowire.AppendTag(out, fEventMeta, protowire.VarintType)
		out = protowire.AppendVarint(out, uint64(e.meta))
	}
	out = protowire.AppendTag(out, fEventOffset, protowire.VarintType)
	out = protowire.AppendVarint(out, uint64(offset))
	if e.newDur != 0 {
		out = protowire.AppendTag(out, fEventDuration, protowire.VarintType)
		out = protowire.AppendVarint(out, uint64(e.newDur))
	}
	var hlo string
	var hasHlo bool
	if e.tailOK {
		out = append(out, e.tail...)
		if wantHlo {
			hlo, hasHlo = eventStat(e.tail, p, hloID)
		}
	} else {
		for b := e.raw; len(b) > 0; {
			f, rest, err := next(b)
			if err != nil {
				return nil, "", false, err
			}
			b = rest
			if f.num == fEventMeta || f.num == fEventOffset || f.num == fEventDuration {
				continue
			}
			out = append(out, f.raw...)
		}
		if wantHlo {
			hlo, hasHlo = eventStat(e.raw, p, hloID)
		}
	}
	out = appendStat(out, fEventStats, uncID, fStatUint, uint64(math.Ceil(e.sigma)), "")
	t.ev = out
	return out, hlo, hasHlo, nil
}

// eventJSON exports one event: its metadata's stats, then its own, then
// its uncertainty, as args.
func (t *transcoder) eventJSON(c *combiner, p *wirePlane, e *wireEvent, m *wireMeta, pid, tid int64) error {
	t.args = t.args[:0]
	name := ""
	if m != nil {
		name = m.display
		if name == "" {
			name = m.name
		}
		t.args = t.appendArgs(p, m.stats, fMetaStats)
	}
	t.args = t.appendArgs(p, e.raw, fEventStats)
	t.args = append(t.args, arg{key: statUncertainty, value: strconv.FormatUint(uint64(math.Ceil(e.sigma)), 10)})
	return c.json.slice(pid, tid, name, e.start, e.newDur, t.args)
}

// appendArgs renders the stats (fields num) of a message.
func (t *transcoder) appendArgs(p *wirePlane, b []byte, num protowire.Number) []arg {
	args := t.args
	for len(b) > 0 {
		f, rest, err := next(b)
		if err != nil {
			return args
		}
		b = rest
		if f.num != num || f.typ != protowire.BytesType {
			continue
		}
		id, v, ok := statValue(f.data, p)
		if !ok {
			continue
		}
		key, known := p.stats[id]
		if !known {
			key = strconv.FormatInt(id, 10)
		}
		args = append(args, arg{key: key, value: v})
	}
	return args
}
