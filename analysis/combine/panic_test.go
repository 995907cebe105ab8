package combine

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/trace/snapshotpb"
	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// writeManyLines writes nodes traces of one GPU plane with lines lines of
// perLine events each, their snapshot files and offsets.jsonl, all
// covering the events (200 ms into every clock, 2 µs apart).
func writeManyLines(t *testing.T, dir string, nodes, lines, perLine int) ([]Input, string) {
	t.Helper()
	offs := filepath.Join(dir, "offsets.jsonl")
	w, err := offsets.Create(offs, offsets.Meta{File: "offsets", RunID: "panic", Estimator: "svm", Mode: "rounds"})
	if err != nil {
		t.Fatal(err)
	}
	var inputs []Input
	for n := range nodes {
		if err := w.Append(offsets.Offset{NodeID: n, RoundID: 1, WindowID: 1, WindowStartNS: 0, WindowEndNS: 2e9,
			OffsetNS: float64(n) * 1e5, DriftPPM: float64(n), UncertaintyNS: 15}); err != nil {
			t.Fatal(err)
		}
		gpu := xspace.NewPlaneBuilder(1, "/device:GPU:0")
		for l := range lines {
			lb := gpu.Line(int64(l), fmt.Sprintf("stream %d", l), 2e8)
			for e := range perLine {
				lb.Add("gemm_fusion", 2e8+int64(e)*2000, 1000, xspace.Uint("correlation_id", uint64(l*perLine+e)))
			}
		}
		trace := filepath.Join(dir, fmt.Sprintf("node%d.xplane.pb", n))
		if err := xspace.Write(trace, &xplanepb.XSpace{Planes: []*xplanepb.XPlane{gpu.Plane()}}); err != nil {
			t.Fatal(err)
		}
		sp := &snapshotpb.SnapshotPairs{RunId: "panic", NodeId: int64(n), SamplingPeriodNs: 4e9}
		for s := int64(0); s < 8e9; s += 4e8 {
			sp.Pairs = append(sp.Pairs, &snapshotpb.SnapshotPair{SysClockNs: s, TracerClockNs: s + s/100_000 + int64(n)*7e6})
		}
		snap := filepath.Join(dir, fmt.Sprintf("node%d.snapshots.pb", n))
		if err := xspace.Write(snap, sp); err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, Input{Node: n, Trace: trace, Snapshots: snap})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return inputs, offs
}

// settledGoroutines waits (up to 5 s) for the number of goroutines to come
// back to at most want, and returns the last count.
func settledGoroutines(want int) int {
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestCombineGoroutinePanic: a panic in a goroutine Combine started (a
// line worker, a node's median, the read ahead of the next trace) becomes
// Combine's error, a *PanicError naming what the goroutine did, with the
// panic value and the stack down to the panic; the line workers stop
// starting lines, every goroutine has ended and no output or temporary
// file is left. Then the same inputs combine.
func TestCombineGoroutinePanic(t *testing.T) {
	const lines, workers = 64, 4
	dir := t.TempDir()
	inputs, offs := writeManyLines(t, dir, 3, lines, 20)
	for _, tc := range []struct {
		name  string
		at    string   // the hook panics where what contains it
		want  []string // in the error's What
		lines int      // at most this many lines started (0: no bound)
	}{
		{"first line", "(node 0): plane /device:GPU:0 (renamed /device:GPU:0): the line at index 0 of 64",
			[]string{"rewriting " + inputs[0].Trace + " (node 0)", "plane /device:GPU:0", "line at index 0 of 64"}, 2*workers + 2},
		{"later line", "(node 1): plane /device:GPU:0 (renamed /device:GPU:64): the line at index 37 of 64",
			[]string{"rewriting " + inputs[1].Trace + " (node 1)", "renamed /device:GPU:64", "line at index 37 of 64"}, 0},
		{"median", "median uncertainty of node 1", []string{"computing the median uncertainty of node 1 (1280 events)"}, 0},
		{"read ahead", "reading " + inputs[2].Trace + " ahead", []string{"reading " + inputs[2].Trace + " ahead"}, 0},
		{"perfetto read back", "reading back the combined XSpace for the Perfetto trace", []string{"reading back the combined XSpace for the Perfetto trace"}, 0},
		{"perfetto line", "encoding plane /device:GPU:64 line at index 5 for the Perfetto trace", []string{"encoding plane /device:GPU:64 line at index 5 for the Perfetto trace"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out", "combined.xplane.pb")
			var started atomic.Int64 // lines of the panicking plane
			plane := tc.at[:max(0, strings.Index(tc.at, " the line at"))]
			o := Options{Offsets: offs, Output: out, Validate: true, Workers: workers, hook: func(what string) {
				if plane != "" && strings.Contains(what, plane) {
					started.Add(1)
				}
				if strings.Contains(what, tc.at) {
					panic("injected: " + tc.name)
				}
			}}
			before := runtime.NumGoroutine()
			res, err := Combine(inputs, o)
			if err == nil {
				t.Fatalf("combined %v despite the panic", res.Files)
			}
			var pe *PanicError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a *PanicError", err)
			}
			if pe.Value != "injected: "+tc.name {
				t.Errorf("panic value %v", pe.Value)
			}
			for _, want := range tc.want {
				if !strings.Contains(pe.What, want) {
					t.Errorf("what %q lacks %q", pe.What, want)
				}
			}
			msg := err.Error()
			// The stack is the panicking goroutine's, down to the panic in
			// the hook above.
			for _, want := range []string{"injected: " + tc.name, pe.What, "goroutine ", "panic(", "combine.TestCombineGoroutinePanic", "panic_test.go:"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error lacks %q:\n%s", want, msg)
				}
			}
			if tc.lines > 0 {
				if n := started.Load(); n > int64(tc.lines) {
					t.Errorf("%d of the plane's %d lines started after its line 0 panicked, want at most %d", n, lines, tc.lines)
				}
			}
			if n := settledGoroutines(before); n > before {
				buf := make([]byte, 1<<20)
				t.Errorf("%d goroutines after Combine, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
			}
			// The output directory Combine made is removed again: nothing
			// new is left.
			ents, err := os.ReadDir(filepath.Dir(out))
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			for _, e := range ents {
				t.Errorf("left in the output directory: %s", e.Name())
			}
			// The failure was the injected panic's alone.
			o.hook = nil
			if _, err := Combine(inputs, o); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// panicWriter panics on its second Write.
type panicWriter struct {
	bytes.Buffer
	writes int
}

func (w *panicWriter) Write(b []byte) (int, error) {
	if w.writes++; w.writes == 2 {
		panic("writer bug")
	}
	return w.Buffer.Write(b)
}

// TestPipeWriterPanic: a panic of the pipe's writer becomes the error of
// the writes after it and of close, a *PanicError naming what the pipe
// writes, with the stack down to the panic; the producer never blocks and
// close ends the goroutine.
func TestPipeWriterPanic(t *testing.T) {
	w := &panicWriter{}
	p := newPipeWriter(w, "the test output", 2, 8)
	buf := p.buffer()
	var err error
	for i := 0; i < 50 && err == nil; i++ {
		buf, err = p.write(append(buf, fmt.Sprintf("chunk %d;", i)...))
	}
	// The panic shows in a write after it, at the latest in close.
	cerr := p.close()
	if cerr == nil || (err != nil && err != cerr) {
		t.Fatalf("write error %v, close error %v: want the same panic", err, cerr)
	}
	var pe *PanicError
	if !errors.As(cerr, &pe) {
		t.Fatalf("close: %v, want a *PanicError", cerr)
	}
	if pe.Value != "writer bug" || !strings.HasPrefix(pe.What, "writing the test output (a chunk of 8 bytes)") {
		t.Errorf("panic %v while %q", pe.Value, pe.What)
	}
	for _, want := range []string{"writer bug", "panicWriter).Write", "panic_test.go:"} {
		if !strings.Contains(cerr.Error(), want) {
			t.Errorf("error lacks %q:\n%s", want, cerr)
		}
	}
	if got := w.String(); got != "chunk 0;" {
		t.Errorf("written %q, want the first chunk only", got)
	}
	select {
	case <-p.done:
	default:
		t.Error("the pipe's goroutine still runs after close")
	}
	if _, err := p.write(buf); !errors.As(err, &pe) {
		t.Errorf("write after close: %v, want the panic", err)
	}
	if err := p.close(); !errors.As(err, &pe) {
		t.Errorf("second close: %v, want the panic", err)
	}
}

// TestPanicErrorUnwrap: a panic with an error value unwraps to it.
func TestPanicErrorUnwrap(t *testing.T) {
	var err error
	func() {
		defer recoverPanic(&err, func() string { return "testing" })
		panic(io.ErrShortWrite)
	}()
	if !errors.Is(err, io.ErrShortWrite) || !strings.HasPrefix(err.Error(), "combine: panic testing: short write\n\ngoroutine ") {
		t.Errorf("err = %v", err)
	}
}
