package combine

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/chronosync/chronosync/trace/kineto"
	"github.com/chronosync/chronosync/trace/perfetto"
	"github.com/chronosync/chronosync/trace/perfetto/perfettotest"
	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// lineKey names a line of the picture: its process's pid and its name.
type lineKey struct {
	pid  int64
	name string
}

// span is a slice (or an instant: start = end) in global ns.
type span struct {
	start, end int64
	name       string
}

func sortSpans(m map[lineKey][]span) {
	for _, s := range m {
		slices.SortFunc(s, func(a, b span) int {
			return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.end, b.end), cmp.Compare(a.name, b.name))
		})
	}
}

// perfettoSpans is the slices and instants of the trace s by line, in
// global ns: the trace time decoded (incremental timestamps summed,
// through each sequence's ClockSnapshot) less perfetto.DefaultOffset.
func perfettoSpans(s *perfettotest.Summary) map[lineKey][]span {
	out := map[lineKey][]span{}
	for _, tr := range s.Tracks {
		p := s.Tracks[tr.Parent]
		if p == nil || p.Process == "" || tr.Counter {
			continue
		}
		k := lineKey{int64(p.PID), tr.Name}
		for _, sp := range tr.Spans {
			out[k] = append(out[k], span{int64(sp.Start) - perfetto.DefaultOffset, int64(sp.End) - perfetto.DefaultOffset, sp.Name})
		}
	}
	sortSpans(out)
	return out
}

// xspaceSpans is the timed events of the combined XSpace at path by line
// (pid 1 + plane id, as the export names them), in global ns (ps floored),
// a converted Kineto trace's flow events left out; with win, only those
// that overlap it.
func xspaceSpans(t *testing.T, path string, win *jsonSpan) map[lineKey][]span {
	t.Helper()
	space, err := xspace.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[lineKey][]span{}
	for _, p := range space.Planes {
		var ph int64 = -1
		for id, m := range p.StatMetadata {
			if m.Name == kineto.StatPhase {
				ph = id
			}
		}
		for _, l := range p.Lines {
			name := l.DisplayName
			if name == "" {
				name = l.Name
			}
			for _, ev := range l.Events {
				if _, ok := ev.Data.(*xplanepb.XEvent_OffsetPs); !ok {
					continue
				}
				if slices.ContainsFunc(ev.Stats, func(s *xplanepb.XStat) bool { return s.MetadataId == ph && flowMarker(s.GetStrValue()) }) {
					continue
				}
				start := xspace.StartPs(l, ev)
				if !win.holds(start, ev.DurationPs) {
					continue
				}
				m := p.EventMetadata[ev.MetadataId]
				evName := m.GetDisplayName()
				if evName == "" {
					evName = m.GetName()
				}
				k := lineKey{1 + p.Id, name}
				out[k] = append(out[k], span{floorDiv(start, 1000), floorDiv(start+max(ev.DurationPs, 0), 1000), evName})
			}
		}
	}
	sortSpans(out)
	return out
}

// sameSpans reports where got (the Perfetto trace) and want (the XSpace)
// differ.
func sameSpans(t *testing.T, got, want map[lineKey][]span) {
	t.Helper()
	n := 0
	for _, k := range slices.SortedFunc(maps.Keys(want), func(a, b lineKey) int { return cmp.Or(cmp.Compare(a.pid, b.pid), cmp.Compare(a.name, b.name)) }) {
		n += len(want[k])
		if !slices.Equal(got[k], want[k]) {
			g, w := got[k], want[k]
			i := 0
			for i < min(len(g), len(w)) && g[i] == w[i] {
				i++
			}
			t.Errorf("pid %d line %q: %d events decoded, %d in the XSpace; first difference at %d", k.pid, k.name, len(g), len(w), i)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("pid %d line %q: %d events decoded, none in the XSpace", k.pid, k.name, len(got[k]))
		}
	}
	if n == 0 {
		t.Error("no events to compare")
	}
}

// TestPerfettoGlobalTimes: the absolute times decoded from the Perfetto
// trace (incremental timestamps summed from each sequence's snapshot)
// are the global times of the combined XSpace's events, event for event,
// on a simulated job and on Kineto ranks (flows, a Unix time base).
func TestPerfettoGlobalTimes(t *testing.T) {
	t.Run("synthetic", func(t *testing.T) {
		dir := t.TempDir()
		inputs, offs := writeSynth(t, dir, []synthNode{{}, {off: 3e6, rOff: 1e6, drift: 20}, {off: -2e6, rOff: 5e5, drift: -10}}, 8)
		out := filepath.Join(dir, "combined.xplane.pb")
		if _, err := Combine(inputs, Options{Offsets: offs, Output: out}); err != nil {
			t.Fatal(err)
		}
		sameSpans(t, perfettoSpans(readPerfetto(t, out)), xspaceSpans(t, out, nil))
	})
	t.Run("kineto", func(t *testing.T) {
		in, _ := kinetoRanks(t)
		out := filepath.Join(t.TempDir(), "combined.xplane.pb")
		if _, err := Combine(in, Options{Output: out, NoKinetoOut: true, NoTraceJSON: true}); err != nil {
			t.Fatal(err)
		}
		sameSpans(t, perfettoSpans(readPerfetto(t, out)), xspaceSpans(t, out, nil))
	})
}

// TestPerfettoWorkers: the Perfetto trace is the same bytes whatever the
// number of workers that encode its lines.
func TestPerfettoWorkers(t *testing.T) {
	dir := t.TempDir()
	inputs, offs := writeSynth(t, dir, []synthNode{{}, {off: 3e6, rOff: 1e6, drift: 20}, {off: -2e6, rOff: 5e5, drift: -10}}, 8)
	var first []byte
	for _, workers := range []int{1, 2, 3, 8} {
		out := filepath.Join(dir, fmt.Sprint(workers), "combined.xplane.pb")
		if _, err := Combine(inputs, Options{Offsets: offs, Output: out, Workers: workers, NoTraceJSON: true}); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(OutputBase(out) + PerfettoSuffix)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = data
			continue
		}
		if !bytes.Equal(data, first) {
			t.Errorf("%d workers: %d bytes, unlike 1 worker's %d", workers, len(data), len(first))
		}
	}
}

// TestPerfettoWindow: with --window workload the Perfetto trace holds
// the events that overlap the Chrome JSON's span (the metadata's), and
// no other; without the JSON it finds the same span, and is the same
// bytes.
func TestPerfettoWindow(t *testing.T) {
	dir := t.TempDir()
	in := []Input{writeWindowNode(t, dir, 0), writeWindowNode(t, dir, 1)} // TestJSONWindow's job
	offs := writeOffsets(t, dir, 2, []int64{0, 4e9, 8e9, 12e9})
	out := filepath.Join(dir, "json", "combined.xplane.pb")
	res, err := Combine(in, Options{Offsets: offs, Output: out, Window: WindowWorkload})
	if err != nil {
		t.Fatal(err)
	}
	w := res.Metadata.TraceJSONWindow
	if w == nil || !w.Workload {
		t.Fatalf("no workload window in the metadata: %+v", w)
	}
	win := &jsonSpan{from: w.FromPS, to: w.ToPS}
	s := readPerfetto(t, out)
	sameSpans(t, perfettoSpans(s), xspaceSpans(t, out, win))
	all := xspaceSpans(t, out, nil)
	inWin, total := 0, 0
	for _, v := range xspaceSpans(t, out, win) {
		inWin += len(v)
	}
	for _, v := range all {
		total += len(v)
	}
	if inWin == 0 || inWin == total {
		t.Errorf("%d of %d events in the window: want some, not all (snapshot instants lie outside it)", inWin, total)
	}
	for _, tr := range s.Tracks {
		if tr.Counter && tr.Values > 0 && (int64(tr.First)-perfetto.DefaultOffset < floorDiv(win.from, 1000) || int64(tr.Last)-perfetto.DefaultOffset > floorDiv(win.to, 1000)) {
			t.Errorf("counter %s spans %d..%d ns, outside the window %d..%d ps", tr.Name, int64(tr.First)-perfetto.DefaultOffset, int64(tr.Last)-perfetto.DefaultOffset, win.from, win.to)
		}
	}
	t.Logf("window %d..%d ps: %d of the %d events", win.from, win.to, inWin, total)
	noJSON := filepath.Join(dir, "nojson", "combined.xplane.pb")
	if _, err := Combine(in, Options{Offsets: offs, Output: noJSON, NoTraceJSON: true, Window: WindowWorkload}); err != nil {
		t.Fatal(err)
	}
	a, err := os.ReadFile(OutputBase(out) + PerfettoSuffix)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(OutputBase(noJSON) + PerfettoSuffix)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("the windowed trace without the JSON (%d bytes) differs from the one with it (%d)", len(b), len(a))
	}
}

// TestQuickStat: quickStat reads what statOf reads, or declines.
func TestQuickStat(t *testing.T) {
	stat := func(fields ...[]byte) []byte { return bytes.Join(fields, nil) }
	meta := func(id uint64) []byte { return protowire.AppendVarint([]byte{xspace.FieldStatMeta << 3}, id) }
	varint := func(num protowire.Number, v uint64) []byte {
		return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), v)
	}
	str := func(num protowire.Number, s string) []byte {
		return protowire.AppendString(protowire.AppendTag(nil, num, protowire.BytesType), s)
	}
	dbl := protowire.AppendFixed64(protowire.AppendTag(nil, xspace.FieldStatDouble, protowire.Fixed64Type), 0x3ff0000000000000)
	for _, tc := range []struct {
		name string
		b    []byte
		ok   bool
	}{
		{"uint", stat(meta(3), varint(xspace.FieldStatUint, 1<<40)), true},
		{"int", stat(meta(300), varint(xspace.FieldStatInt, 1<<63)), true},
		{"ref", stat(meta(1), varint(xspace.FieldStatRef, 7)), true},
		{"double", stat(meta(2), dbl), true},
		{"string", stat(meta(2), str(xspace.FieldStatStr, "all-reduce.3")), true},
		{"bytes", stat(meta(2), str(xspace.FieldStatBytes, "\x00\x01")), true},
		{"long string", stat(meta(2), str(xspace.FieldStatStr, string(make([]byte, 200)))), false},
		{"value first", stat(varint(xspace.FieldStatUint, 5), meta(2)), false},
		{"two values", stat(meta(2), varint(xspace.FieldStatUint, 5), varint(xspace.FieldStatInt, 6)), false},
		{"no value", meta(2), false},
		{"wrong wire type", stat(meta(2), varint(xspace.FieldStatStr, 5)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, val, ok := quickStat(tc.b)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			wid, wval, err := statOf(tc.b)
			if err != nil {
				t.Fatal(err)
			}
			if id != wid || val.Num != wval.Num || val.Type != wval.Type || val.Value != wval.Value || !bytes.Equal(val.Data, wval.Data) {
				t.Errorf("quickStat %d %+v, statOf %d %+v", id, val, wid, wval)
			}
		})
	}
}
