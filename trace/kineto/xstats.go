package kineto

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/chronosync/chronosync/trace/xplanepb"
)

// Names of the stats ToXSpace gives collective kernels besides hlo_op
// (StatHloOp, their pairing key, Kernel.Key), where the trace records
// them (see Collectives).
const (
	// StatCollectiveGroup (string) is Kernel.Group, the process group.
	StatCollectiveGroup = "collective_group"
	// StatCollectiveSeq (int64) is Kernel.Seq, the sequence number in the
	// process group.
	StatCollectiveSeq = "collective_seq"
	// StatCollectiveSize (int64) is Kernel.Size, the message size in
	// elements.
	StatCollectiveSize = "collective_size"
)

// planeBuilder builds one XPlane of ToXSpace: metadata ids in order of
// first use, from 1.
type planeBuilder struct {
	plane  *xplanepb.XPlane
	events map[[2]string]int64 // (name, cat) → event metadata id
	stats  map[string]int64    // name → stat metadata id
	// kernels are the trace's collective kernels by event, built on first
	// use (see converter.kernel); nil until then.
	kernels map[*Event]*Kernel
}

func newPlaneBuilder(name string) *planeBuilder {
	return &planeBuilder{
		plane: &xplanepb.XPlane{Name: name, EventMetadata: map[int64]*xplanepb.XEventMetadata{},
			StatMetadata: map[int64]*xplanepb.XStatMetadata{}},
		events: map[[2]string]int64{},
		stats:  map[string]int64{},
	}
}

func (b *planeBuilder) statID(name string) int64 {
	if id, ok := b.stats[name]; ok {
		return id
	}
	id := int64(len(b.stats) + 1)
	b.stats[name] = id
	b.plane.StatMetadata[id] = &xplanepb.XStatMetadata{Id: id, Name: name}
	return id
}

// eventID is the id of the event metadata of name and category cat.
func (b *planeBuilder) eventID(name, cat string) int64 {
	k := [2]string{name, cat}
	if id, ok := b.events[k]; ok {
		return id
	}
	id := int64(len(b.events) + 1)
	b.events[k] = id
	m := &xplanepb.XEventMetadata{Id: id, Name: name}
	if cat != "" {
		m.Stats = []*xplanepb.XStat{b.stat(StatCategory, strStat(cat))}
	}
	b.plane.EventMetadata[id] = m
	return id
}

// stat gives st (a value made by intStat, strStat, ...) the metadata id
// of name.
func (b *planeBuilder) stat(name string, st *xplanepb.XStat) *xplanepb.XStat {
	st.MetadataId = b.statID(name)
	return st
}

func (b *planeBuilder) planeStat(name string, st *xplanepb.XStat) {
	b.plane.Stats = append(b.plane.Stats, b.stat(name, st))
}

func intStat(v int64) *xplanepb.XStat {
	return &xplanepb.XStat{Value: &xplanepb.XStat_Int64Value{Int64Value: v}}
}

func uintStat(v uint64) *xplanepb.XStat {
	return &xplanepb.XStat{Value: &xplanepb.XStat_Uint64Value{Uint64Value: v}}
}

func strStat(s string) *xplanepb.XStat {
	return &xplanepb.XStat{Value: &xplanepb.XStat_StrValue{StrValue: s}}
}

func doubleStat(v float64) *xplanepb.XStat {
	return &xplanepb.XStat{Value: &xplanepb.XStat_DoubleValue{DoubleValue: v}}
}

// event converts one event whose start is off ns after its line's
// timestamp (see ToXSpace for its stats).
func (c *converter) event(b *planeBuilder, e *Event, off int64) *xplanepb.XEvent {
	ev := &xplanepb.XEvent{MetadataId: b.eventID(e.Name, e.Cat),
		Data: &xplanepb.XEvent_OffsetPs{OffsetPs: off * 1000}, DurationPs: e.DurNs * 1000}
	var names []string
	add := func(name string, st *xplanepb.XStat) {
		names = append(names, name)
		ev.Stats = append(ev.Stats, b.stat(name, st))
	}
	// other takes the name of an event-level stat, "event."+name when an
	// arg has it.
	other := func(name string, st *xplanepb.XStat) {
		if slices.Contains(names, name) {
			name = "event." + name
		}
		add(name, st)
	}
	argName := func(k string) string {
		if k == StatHloOp {
			return "args." + k
		}
		return k
	}
	var rest [][2][]byte // members other than the fields and args
	if e.Raw != nil {
		var args []byte
		for m := newMembers(e.Raw); ; {
			key, val, _, ok := m.next()
			if !ok {
				break
			}
			switch k := unquote(key); k {
			case "ph", "name", "cat", "pid", "tid", "ts", "dur":
			case "args":
				args = val
			default:
				if string(val) != "null" {
					rest = append(rest, [2][]byte{key, val})
				}
			}
		}
		if len(args) > 0 && args[0] == '{' {
			for m := newMembers(args); ; {
				key, val, _, ok := m.next()
				if !ok {
					break
				}
				add(argName(unquote(key)), c.value(val))
			}
		}
	} else {
		keys := make([]string, 0, len(e.Args))
		for k := range e.Args {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			add(argName(k), strStat(e.Args[k]))
		}
	}
	if k := c.kernel(b, e); k != nil {
		other(StatHloOp, strStat(k.Key()))
		if k.Group != "" {
			other(StatCollectiveGroup, strStat(k.Group))
		}
		if k.HasSeq {
			other(StatCollectiveSeq, intStat(k.Seq))
		}
		if k.Size > 0 {
			other(StatCollectiveSize, intStat(k.Size))
		}
	}
	if e.Ph != "X" {
		other(StatPhase, strStat(e.Ph))
	}
	for _, m := range rest {
		other(unquote(m[0]), c.value(m[1]))
	}
	if vs := c.flows[e]; len(vs) > 0 {
		name := StatFlow // every flow under the one name, even an arg's
		if slices.Contains(names, name) {
			name = "event." + name
		}
		for _, v := range vs {
			add(name, uintStat(v))
		}
	}
	return ev
}

// kernel returns the collective kernel (as Collectives finds it) that e
// is, or nil. The trace's kernels are found once per conversion, on first
// use, and kept with the host plane's builder, which every conversion has
// (b's own when there is none).
func (c *converter) kernel(b *planeBuilder, e *Event) *Kernel {
	if e.Ph != "X" || !strings.EqualFold(e.Cat, "kernel") || !isCollective(e.Name) {
		return nil
	}
	if h, ok := c.byDevice[-1]; ok {
		b = h.pb
	}
	if b.kernels == nil {
		ks := Collectives(c.t)
		b.kernels = make(map[*Event]*Kernel, len(ks))
		for i := range ks {
			b.kernels[&c.t.Events[ks[i].Index]] = &ks[i]
		}
	}
	return b.kernels[e]
}

// value converts a JSON value to a stat value (see ToXSpace).
func (c *converter) value(raw []byte) *xplanepb.XStat {
	switch raw[0] {
	case '"':
		return strStat(unquote(raw))
	case 't':
		return intStat(1)
	case 'f':
		return intStat(0)
	case 'n':
		return &xplanepb.XStat{}
	case '{', '[':
		c.buf.Reset()
		if err := json.Compact(&c.buf, raw); err != nil {
			return strStat(string(raw)) // checked JSON: cannot happen
		}
		return strStat(strings.ToValidUTF8(c.buf.String(), "\uFFFD")) // see decoder.args
	}
	s := string(raw)
	if !strings.ContainsAny(s, ".eE") {
		if v, err := strconv.ParseInt(s, 10, 64); err == nil {
			return intStat(v)
		}
		if v, err := strconv.ParseUint(s, 10, 64); err == nil {
			return uintStat(v)
		}
	}
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		return doubleStat(v)
	}
	return strStat(s) // beyond float64's range: its text
}
