package perfetto_test

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/chronosync/chronosync/trace/perfetto"
	"github.com/chronosync/chronosync/trace/perfetto/perfettotest"
)

// sample writes a small trace with every kind of track and event.
func sample(t *testing.T, c perfetto.Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := perfetto.NewWriter(&buf, c)
	p2, err := w.Process(3, "node 1 (host-b) /device:GPU:0", []string{"/device:GPU:64"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	p1, _ := w.Process(2, "node 0 (host-a) /host:CPU", nil, 0)
	off, _ := w.Counter(p1, "clock offset", -3, true, "")
	drift, _ := w.Counter(p1, "clock drift", -2, false, "ppm")
	for i, v := range []float64{1500, -20.5, 3} {
		if err := w.Value(off, int64(i)*1e9, v); err != nil {
			t.Fatal(err)
		}
		if err := w.Value(drift, int64(i)*1e9, v/100); err != nil {
			t.Fatal(err)
		}
	}
	// The line's events on a sequence of their own (times before the
	// counters': a sequence's times do not go back).
	seq := perfetto.NewSeq(c, 2)
	line, _ := seq.Track(p1, "Stream #1", "", 0, 7)
	args := []perfetto.Arg{
		{Name: "int", Kind: perfetto.KindInt, Int: -5},
		{Name: "uint", Kind: perfetto.KindUint, Uint: math.MaxUint64},
		{Name: "double", Kind: perfetto.KindDouble, Double: 0.25},
		{Name: "string", Kind: perfetto.KindString, Str: "x\xffy"},
		{Name: "bool", Kind: perfetto.KindBool, Bool: true},
	}
	if err := seq.Begin(line, -1000, "outer", args, []uint64{42}, nil); err != nil {
		t.Fatal(err)
	}
	if err := seq.Begin(line, -500, "inner", args[:1], nil, []uint64{42}); err != nil {
		t.Fatal(err)
	}
	_ = seq.End(line, -400)
	_ = seq.Instant(line, -300, "mark\xfe", nil)
	_ = seq.End(line, 2000)
	var lanes int
	async := perfetto.NewSeq(c, 3)
	spans := []perfetto.Slice{{Start: 0, End: 100, Index: 0}, {Start: 50, End: 150, Index: 1}, {Start: 60, End: 70, Index: 2}, {Start: 100, End: 100, Index: 3}}
	err = async.Slices(spans, func(lane int) (perfetto.Track, error) {
		lanes++
		return async.Track(p2, "async", "", 0, 1)
	}, func(s perfetto.Slice, tr perfetto.Track) (bool, error) {
		return false, async.Begin(tr, s.Start, "kernel", nil, nil, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	if lanes != 2 {
		t.Errorf("the overlapping slices took %d lanes, want 2", lanes)
	}
	for _, s := range []*perfetto.Seq{seq, async} {
		c, err := s.Take()
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Append(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if w.Bytes() != int64(buf.Len()) {
		t.Errorf("Bytes() = %d, wrote %d", w.Bytes(), buf.Len())
	}
	return buf.Bytes()
}

// TestDecodeWithPerfettoProtos decodes a trace with Perfetto's own
// protos (testdata/perfetto_trace.proto) and checks what Perfetto's
// importer needs (perfettotest.Check) and what the trace says.
func TestDecodeWithPerfettoProtos(t *testing.T) {
	schema := perfettotest.Schema(t)
	for _, tc := range []struct {
		name   string
		clock  perfetto.Options
		clocks map[uint32]uint64
	}{
		// The first snapshot is the Writer's own sequence's, at its first
		// counter value (time 0).
		{"simulated (no wall clock)", perfetto.Options{}, map[uint32]uint64{64: perfetto.DefaultOffset, 6: perfetto.DefaultOffset}},
		{"unix base", perfetto.Options{RealtimeBaseNS: 1_700_000_000_000_000_000, Offset: 1 << 30},
			map[uint32]uint64{64: 1 << 30, 6: 1 << 30, 1: 1_700_000_000_000_000_000}},
		{"deflate", perfetto.Options{Deflate: true}, map[uint32]uint64{64: perfetto.DefaultOffset, 6: perfetto.DefaultOffset}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := perfettotest.Check(schema, sample(t, tc.clock))
			if err != nil {
				t.Fatal(err)
			}
			if !tc.clock.Deflate && s.Compressed > 0 { // with it, chunks under 512 bytes are not compressed
				t.Errorf("Deflate %v, %d compressed_packets packets", tc.clock.Deflate, s.Compressed)
			}
			if !maps.Equal(s.Clocks, tc.clocks) {
				t.Errorf("clocks %v, want %v", s.Clocks, tc.clocks)
			}
			if s.Sequences != 3 || s.Incremental != 3 {
				t.Errorf("%d sequences, %d with incremental clocks, want 3, 3", s.Sequences, s.Incremental)
			}
			if s.Primary != 6 {
				t.Errorf("primary_trace_clock %d, want 6 (BOOTTIME)", s.Primary)
			}
			if got, want := s.Processes(), []string{"node 0 (host-a) /host:CPU", "node 1 (host-b) /device:GPU:0"}; !slices.Equal(got, want) {
				t.Errorf("processes in rank order %q, want %q", got, want)
			}
			wantNames := map[string]int{"outer": 1, "inner": 1, "mark\uFFFD": 1, "kernel": 4}
			if !maps.Equal(s.Names, wantNames) {
				t.Errorf("event names %v, want %v", s.Names, wantNames)
			}
			wantArgs := map[string]string{"int": "int_value", "uint": "uint_value", "double": "double_value", "string": "string_value", "bool": "bool_value"}
			if !maps.Equal(s.Args, wantArgs) {
				t.Errorf("args %v, want %v", s.Args, wantArgs)
			}
			counters := 0
			for _, tr := range s.Tracks {
				if tr.Counter {
					counters++
					if tr.Values != 3 {
						t.Errorf("counter track %s has %d values, want 3", tr.Name, tr.Values)
					}
				}
			}
			if counters != 2 {
				t.Errorf("%d counter tracks, want 2", counters)
			}
			off := tc.clock.Offset
			if off == 0 {
				off = perfetto.DefaultOffset
			}
			at := func(t int64) uint64 { return uint64(t + off) }
			for _, tr := range s.Tracks {
				if tr.Name != "Stream #1" {
					continue
				}
				if tr.First != at(-1000) || tr.Last != at(2000) {
					t.Errorf("Stream #1 spans %d..%d in trace time, want %d..%d", tr.First, tr.Last, at(-1000), at(2000))
				}
				want := []perfettotest.Span{{Start: at(-1000), End: at(2000), Name: "outer"}, {Start: at(-500), End: at(-400), Name: "inner"},
					{Start: at(-300), End: at(-300), Name: "mark\uFFFD", Instant: true}}
				if !slices.Equal(tr.Spans, want) {
					t.Errorf("Stream #1 decoded %v, want %v", tr.Spans, want)
				}
			}
		})
	}
}

// TestSubsetMatchesPerfetto checks every field of our perfetto.proto
// against Perfetto's message of the same name: number, kind and
// cardinality; and every enum value of ours against Perfetto's.
func TestSubsetMatchesPerfetto(t *testing.T) {
	theirs := perfettotest.Schema(t).ParentFile()
	ours := perfettotest.Compile(t, ".", "perfetto.proto")
	fd, err := ours.FindFileByPath("perfetto.proto")
	if err != nil {
		t.Fatal(err)
	}
	find := func(name protoreflect.FullName) protoreflect.Descriptor {
		rel := name[len("chronosync.perfetto."):]
		d := theirs.Messages().ByName(protoreflect.Name(rel))
		if d != nil {
			return d
		}
		if e := theirs.Enums().ByName(protoreflect.Name(rel)); e != nil {
			return e
		}
		return nil
	}
	var checkMsg func(ours protoreflect.MessageDescriptor, theirs protoreflect.MessageDescriptor)
	checkMsg = func(o, p protoreflect.MessageDescriptor) {
		for i := 0; i < o.Fields().Len(); i++ {
			f := o.Fields().Get(i)
			g := p.Fields().ByName(f.Name())
			switch {
			case g == nil:
				t.Errorf("%s.%s: Perfetto's %s has no such field", o.Name(), f.Name(), p.FullName())
			case g.Number() != f.Number() || g.Kind() != f.Kind() || g.Cardinality() != f.Cardinality():
				t.Errorf("%s.%s: ours is %d %v %v, Perfetto's %d %v %v", o.Name(), f.Name(), f.Number(), f.Cardinality(), f.Kind(), g.Number(), g.Cardinality(), g.Kind())
			}
		}
		for i := 0; i < o.Enums().Len(); i++ {
			checkEnum(t, o.Enums().Get(i), p.Enums().ByName(o.Enums().Get(i).Name()))
		}
		for i := 0; i < o.Messages().Len(); i++ {
			n := o.Messages().Get(i)
			q := p.Messages().ByName(n.Name())
			if q == nil {
				t.Errorf("%s.%s: Perfetto has no such message", o.Name(), n.Name())
				continue
			}
			checkMsg(n, q)
		}
	}
	for i := 0; i < fd.Messages().Len(); i++ {
		m := fd.Messages().Get(i)
		p, ok := find(m.FullName()).(protoreflect.MessageDescriptor)
		if !ok {
			t.Errorf("%s: Perfetto has no such message", m.Name())
			continue
		}
		checkMsg(m, p)
	}
	for i := 0; i < fd.Enums().Len(); i++ {
		e := fd.Enums().Get(i)
		p, _ := find(e.FullName()).(protoreflect.EnumDescriptor)
		checkEnum(t, e, p)
	}
}

func checkEnum(t *testing.T, o, p protoreflect.EnumDescriptor) {
	t.Helper()
	if p == nil {
		t.Errorf("enum %s: Perfetto has no such enum", o.FullName())
		return
	}
	for j := 0; j < o.Values().Len(); j++ {
		v := o.Values().Get(j)
		if w := p.Values().ByName(v.Name()); w == nil || w.Number() != v.Number() {
			t.Errorf("enum %s value %s = %d: Perfetto's differs", o.Name(), v.Name(), v.Number())
		}
	}
}

// TestTimeRange: a time before −Offset is an error, and stays one.
func TestTimeRange(t *testing.T) {
	var buf bytes.Buffer
	w := perfetto.NewWriter(&buf, perfetto.Options{Offset: 1000})
	p, _ := w.Process(1, "p", nil, 0)
	tr, _ := w.Track(p, "l", "", 0, 0)
	if err := w.Begin(tr, -1000, "ok", nil, nil, nil); err != nil {
		t.Fatalf("at −Offset: %v", err)
	}
	if err := w.End(tr, -1001); err == nil {
		t.Fatal("a time before −Offset was written")
	}
	if err := w.Flush(); err == nil {
		t.Fatal("Flush after the error returned nil")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestWriteError: the underlying writer's error comes back, wrapped.
func TestWriteError(t *testing.T) {
	w := perfetto.NewWriter(failWriter{}, perfetto.Options{})
	if err := w.Flush(); err == nil || err.Error() != "perfetto: write: disk full" {
		t.Fatalf("Flush: %v", err)
	}
	if _, err := w.Process(1, "p", nil, 0); err == nil {
		t.Fatal("Process after a write error returned nil")
	}
}

// TestDeflateChunks: a trace of many chunks, compressed, decodes whole,
// each compressed_packets packet under 512 KB (perfettotest.Check), and is
// smaller than the same trace uncompressed.
func TestDeflateChunks(t *testing.T) {
	schema := perfettotest.Schema(t)
	const n = 100_000
	sizes := map[bool]int{}
	for _, deflate := range []bool{false, true} {
		var buf bytes.Buffer
		w := perfetto.NewWriter(&buf, perfetto.Options{Deflate: deflate})
		p, _ := w.Process(1, "p", nil, 0)
		tr, _ := w.Track(p, "l", "", 0, 1)
		for i := range int64(n) {
			args := []perfetto.Arg{{Name: "i", Kind: perfetto.KindInt, Int: i}, {Name: "sigma", Kind: perfetto.KindDouble, Double: float64(i%97) / 7}}
			if err := w.Begin(tr, i*1000, fmt.Sprintf("op%d", i%50), args, nil, nil); err != nil {
				t.Fatal(err)
			}
			if err := w.End(tr, i*1000+500); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		s, err := perfettotest.Check(schema, buf.Bytes())
		if err != nil {
			t.Fatalf("deflate %v: %v", deflate, err)
		}
		total := 0
		for _, c := range s.Names {
			total += c
		}
		if total != n {
			t.Errorf("deflate %v: %d slices decoded, want %d", deflate, total, n)
		}
		if deflate && s.Compressed < 2 {
			t.Errorf("%d compressed_packets packets, want several", s.Compressed)
		}
		sizes[deflate] = buf.Len()
	}
	if sizes[true]*2 > sizes[false] {
		t.Errorf("compressed %d bytes, uncompressed %d: want at least 2× smaller", sizes[true], sizes[false])
	}
	t.Logf("%d slices: %d bytes, %d compressed", n, sizes[false], sizes[true])
}

// TestAbort: after Abort later calls fail, and no goroutine is left.
func TestAbort(t *testing.T) {
	before := runtime.NumGoroutine()
	var buf bytes.Buffer
	w := perfetto.NewWriter(&buf, perfetto.Options{Deflate: true})
	p, _ := w.Process(1, "p", nil, 0)
	tr, _ := w.Track(p, "l", "", 0, 1)
	for i := range int64(50_000) { // several chunks: the goroutine runs
		if err := w.Instant(tr, i, "x", nil); err != nil {
			t.Fatal(err)
		}
	}
	w.Abort()
	if err := w.Instant(tr, 1e9, "x", nil); err == nil {
		t.Error("Instant after Abort returned nil")
	}
	if err := w.Flush(); err == nil {
		t.Error("Flush after Abort returned nil")
	}
	for range 100 {
		if runtime.NumGoroutine() <= before {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("%d goroutines after Abort, %d before", runtime.NumGoroutine(), before)
}

// TestSeqBackwards: on one sequence a time before the previous one is an
// error (an incremental timestamp cannot be negative); on another
// sequence it is not.
func TestSeqBackwards(t *testing.T) {
	s := perfetto.NewSeq(perfetto.Options{}, 2)
	tr, _ := s.Track(perfetto.ProcessTrack(1), "l", "", 0, 1)
	if err := s.Instant(tr, 100, "a", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Instant(tr, 100, "same time", nil); err != nil {
		t.Fatalf("the same time again: %v", err)
	}
	if err := s.Instant(tr, 99, "b", nil); err == nil {
		t.Fatal("a time going back on the sequence was written")
	}
	if _, err := s.Take(); err == nil {
		t.Fatal("Take after the error returned nil")
	}
	o := perfetto.NewSeq(perfetto.Options{}, 3)
	tr, _ = o.Track(perfetto.ProcessTrack(1), "l", "", 0, 1)
	if err := o.Instant(tr, 99, "b", nil); err != nil {
		t.Fatalf("another sequence: %v", err)
	}
}

// TestSeqReset: a Seq reused (Reset) encodes what a new one does, byte
// for byte; the timestamps are deltas (a slice of 500 ns costs the same
// bytes late in the trace as early).
func TestSeqReset(t *testing.T) {
	encode := func(s *perfetto.Seq, base int64) []byte {
		t.Helper()
		tr, _ := s.Track(perfetto.ProcessTrack(1), "l", "", 0, 1)
		for i := range int64(1000) {
			if err := s.Begin(tr, base+i*1000, "op", nil, nil, nil); err != nil {
				t.Fatal(err)
			}
			if err := s.End(tr, base+i*1000+500); err != nil {
				t.Fatal(err)
			}
		}
		c, err := s.Take()
		if err != nil {
			t.Fatal(err)
		}
		return c.Data
	}
	o := perfetto.Options{Deflate: true}
	fresh := encode(perfetto.NewSeq(o, 7), 0)
	reused := perfetto.NewSeq(o, 9)
	encode(reused, 5)
	reused.Reset(7)
	if again := encode(reused, 0); !bytes.Equal(again, fresh) {
		t.Errorf("reused: %d bytes, unlike a new sequence's %d", len(again), len(fresh))
	}
	raw := func(base int64) int {
		c := perfetto.NewSeq(perfetto.Options{}, 7)
		return len(encode(c, base))
	}
	early, late := raw(0), raw(3_600_000_000_000)
	if late-early > 16 { // only the snapshot's readings grow
		t.Errorf("1000 slices: %d bytes at 0, %d an hour later", early, late)
	}
}
