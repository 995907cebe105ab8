package combine

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// topFields returns the ends of b's top-level fields: where a cut at a
// message boundary can fall.
func topFields(t *testing.T, b []byte) []int {
	t.Helper()
	var ends []int
	for pos := 0; pos < len(b); {
		_, typ, n := protowire.ConsumeTag(b[pos:])
		if n < 0 {
			t.Fatalf("byte %d: bad tag", pos)
		}
		m := protowire.ConsumeFieldValue(0, typ, b[pos+n:])
		if m < 0 {
			t.Fatalf("byte %d: bad field", pos)
		}
		pos += n + m
		ends = append(ends, pos)
	}
	return ends
}

// recordRun writes the traces.json a run writes beside inputs' traces.
func recordRun(t *testing.T, dir string, inputs []Input) {
	t.Helper()
	rec := &xspace.TraceRecord{RunID: "synth-run"}
	for _, in := range inputs {
		_, c, err := xspace.ReadCounted(in.Trace)
		if err != nil {
			t.Fatal(err)
		}
		rec.Traces = append(rec.Traces, xspace.TraceEntry{Node: in.Node, File: filepath.Base(in.Trace), Counts: c})
	}
	if err := xspace.WriteTraceRecord(dir, rec); err != nil {
		t.Fatal(err)
	}
}

// noOutputs fails unless Combine left nothing at out.
func noOutputs(t *testing.T, out string) {
	t.Helper()
	for _, p := range []string{out, OutputBase(out) + ".metadata.json"} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %v; want no output", p, err)
		}
	}
}

// TestEmptyTrace: a node's trace of 0 bytes, or of planes without events,
// is an error that names the node and the file, and nothing is written;
// before, combine exited 0 with the node's row at 0 events.
func TestEmptyTrace(t *testing.T) {
	unnamed := &xplanepb.XSpace{Planes: []*xplanepb.XPlane{
		xspace.NewPlaneBuilder(0, "/host:CPU").Plane(), xspace.NewPlaneBuilder(1, "/device:GPU:0").Plane()}}
	for _, tc := range []struct {
		name  string
		write func(path string) error
		want  string
	}{
		{"0 bytes", func(p string) error { return os.WriteFile(p, nil, 0o644) },
			"the trace has no planes and no events (0 bytes)"},
		{"planes without events", func(p string) error { return xspace.Write(p, unnamed) },
			"the trace has 2 planes and no events"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			inputs, offs := writeSynth(t, dir, synthClocks, 4)
			if err := tc.write(inputs[1].Trace); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out", "combined.xplane.pb")
			_, err := Combine(inputs, Options{Offsets: offs, Output: out})
			want := fmt.Sprintf("combine: node 1 (%s): %s: there is nothing to align; give the node's whole trace, or leave the node out",
				inputs[1].Trace, tc.want)
			if err == nil || err.Error() != want {
				t.Fatalf("got %v\nwant %s", err, want)
			}
			noOutputs(t, out)
		})
	}
}

// TestCutTrace: a trace cut at a message boundary parses; combine's
// metadata records each input's planes, events and bytes, and where the
// run recorded them (traces.json beside the traces) a cut shows against
// that record and is refused; before, the cut trace combined, exit 0, as
// 1 plane of 2. Without a record the counts are recorded alone.
func TestCutTrace(t *testing.T) {
	const collectives = 40
	setup := func(t *testing.T, record bool) ([]Input, string, string, []byte) {
		dir := t.TempDir()
		inputs, offs := writeSynth(t, dir, synthClocks, collectives)
		if record {
			recordRun(t, dir, inputs)
		}
		whole, err := os.ReadFile(inputs[1].Trace)
		if err != nil {
			t.Fatal(err)
		}
		return inputs, offs, dir, whole
	}
	cut := func(t *testing.T, path string, whole []byte, fields int) {
		t.Helper()
		ends := topFields(t, whole)
		if len(ends) != 3 { // host plane, GPU plane, host name
			t.Fatalf("the synthetic trace has %d top-level fields, want 3", len(ends))
		}
		if err := os.WriteFile(path, whole[:ends[fields-1]], 0o644); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("whole, recorded", func(t *testing.T) {
		inputs, offs, dir, whole := setup(t, true)
		res, err := Combine(inputs, Options{Offsets: offs, Output: filepath.Join(dir, "c.xplane.pb")})
		if err != nil {
			t.Fatal(err)
		}
		n := res.Metadata.Nodes[1]
		want := xspace.Counts{Bytes: int64(len(whole)), Planes: 2, Events: 2 * collectives}
		if n.Recorded == nil || *n.Recorded != want {
			t.Errorf("recorded %+v, want %+v", n.Recorded, want)
		}
		if got := (xspace.Counts{Bytes: n.TraceBytes, Planes: n.TracePlanes, Events: n.Events + n.UntimedEvents}); got != want {
			t.Errorf("metadata counts %+v, want %+v", got, want)
		}
	})
	for _, tc := range []struct {
		name   string
		fields int
		want   string
	}{
		{"after the first plane", 1, "trace has 1 plane and 40 events; the run recorded 2 planes and 80 events: the trace is cut"},
		{"before the host name", 2, "trace has %s bytes, 2 planes and 80 events; the run recorded %s bytes: the trace is cut"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inputs, offs, dir, whole := setup(t, true)
			cut(t, inputs[1].Trace, whole, tc.fields)
			out := filepath.Join(dir, "out", "c.xplane.pb")
			_, err := Combine(inputs, Options{Offsets: offs, Output: out})
			msg := tc.want
			if tc.fields == 2 {
				msg = fmt.Sprintf(tc.want, commas(topFields(t, whole)[1]), commas(len(whole)))
			}
			want := fmt.Sprintf("combine: node 1 (%s): %s (%s)", inputs[1].Trace, msg, filepath.Join(dir, xspace.FileTraceRecord))
			if err == nil || err.Error() != want {
				t.Fatalf("got %v\nwant %s", err, want)
			}
			noOutputs(t, out)
		})
	}
	t.Run("cut, not recorded", func(t *testing.T) {
		inputs, offs, dir, whole := setup(t, false)
		cut(t, inputs[1].Trace, whole, 1)
		res, err := Combine(inputs, Options{Offsets: offs, Output: filepath.Join(dir, "c.xplane.pb")})
		if err != nil {
			t.Fatal(err)
		}
		n := res.Metadata.Nodes[1]
		if n.Recorded != nil || n.TracePlanes != 1 || n.Events != collectives || n.TraceBytes != int64(topFields(t, whole)[0]) {
			t.Errorf("node 1: recorded %v, %d planes, %d events, %d bytes; want no record, 1 plane, %d events, %d bytes",
				n.Recorded, n.TracePlanes, n.Events, n.TraceBytes, collectives, topFields(t, whole)[0])
		}
	})
	t.Run("recorded as another node's", func(t *testing.T) {
		inputs, offs, dir, _ := setup(t, false)
		inputs[0].Trace, inputs[1].Trace = inputs[1].Trace, inputs[0].Trace
		inputs[0].Snapshots, inputs[1].Snapshots = "", ""
		recordRun(t, dir, inputs[:1]) // records node1.xplane.pb as node 0's
		inputs[0].Trace, inputs[1].Trace = inputs[1].Trace, inputs[0].Trace
		_, err := Combine(inputs, Options{Offsets: offs, Output: filepath.Join(dir, "out", "c.xplane.pb")})
		want := fmt.Sprintf("combine: node 1 (%s): the run recorded it as node 0's trace (%s)", inputs[1].Trace, filepath.Join(dir, xspace.FileTraceRecord))
		if err == nil || err.Error() != want {
			t.Fatalf("got %v\nwant %s", err, want)
		}
	})
}

// TestManyEmptyPlanes: planes without names collide in the combined
// trace, and the error names them by index and id (before: "plane  would
// be named , as a plane of … already is"); a trace of more than MaxPlanes
// planes (10^6 empty ones: 2 MB on disk) is refused as it is split, at
// the first plane beyond, without parsing the others (before: 315 MB to
// reach the name error; 10^6 planes with distinct names, 1.5 GB and 7.5 s
// to combine).
func TestManyEmptyPlanes(t *testing.T) {
	emptyPlane := []byte{byte(xspace.FieldSpacePlanes<<3 | protowire.BytesType), 0}
	named := func(n int) []byte {
		var b []byte
		for i := range n {
			p := protowire.AppendTag(nil, xspace.FieldPlaneName, protowire.BytesType)
			p = protowire.AppendString(p, fmt.Sprintf("/c:%d", i))
			b = protowire.AppendTag(b, xspace.FieldSpacePlanes, protowire.BytesType)
			b = protowire.AppendBytes(b, p)
		}
		return b
	}
	namedMany := named(1_000_000)
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"ten empty planes", bytes.Repeat(emptyPlane, 10),
			`planes[1] (id 0, no name) would be named "" in the combined trace, as planes[0] (id 0, no name) of TRACE already is: every plane needs a name of its own`},
		{"a million empty planes", bytes.Repeat(emptyPlane, 1_000_000),
			fmt.Sprintf("planes[%d] at byte %d: more than %d planes (combine.MaxPlanes)", MaxPlanes, 2*MaxPlanes, MaxPlanes)},
		{"a million named planes", namedMany,
			fmt.Sprintf("planes[%d] at byte %d: more than %d planes (combine.MaxPlanes)", MaxPlanes, len(named(MaxPlanes)), MaxPlanes)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			trace, out, err := combineOne(t, t.TempDir(), tc.data, Options{NoCorrection: true})
			runtime.ReadMemStats(&after)
			want := fmt.Sprintf("combine: node 0 (%s): %s", trace, tc.want)
			want = string(bytes.ReplaceAll([]byte(want), []byte("TRACE"), []byte(trace)))
			if err == nil || err.Error() != want {
				t.Fatalf("got %v\nwant %s", err, want)
			}
			noOutputs(t, out)
			// The input, read ahead once, and the planes' slices up to
			// the limit: a few times the input, never the planes parsed.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8*uint64(len(tc.data))+(8<<20) {
				t.Errorf("allocated %d MiB for a %d KiB input", alloc>>20, len(tc.data)>>10)
			}
		})
	}
}

// commas writes n ≥ 0 with thousands separators.
func commas(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
