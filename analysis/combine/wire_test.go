package combine

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/chronosync/chronosync/trace/xspace"
)

// TestWireMatchesProto: rewriting at the wire level gives the same
// combined XSpace (proto.Equal), the same Chrome trace (byte for byte) and
// the same metadata as decoding into the generated types, on synthetic
// traces with every correction and on real ones; and rewriting every line
// by sorting its events gives the very bytes of rewriting lines in order
// where they are.
func TestWireMatchesProto(t *testing.T) {
	real := filepath.Join("..", "..", "testdata", "realdata")
	for _, tc := range []struct {
		name   string
		inputs func(t *testing.T, dir string) ([]Input, Options)
	}{
		{"synthetic", func(t *testing.T, dir string) ([]Input, Options) {
			in, offs := writeSynth(t, dir, synthClocks, 40)
			return in, Options{Offsets: offs, Validate: true, PlanePrefix: "/clusterA"}
		}},
		{"synthetic, lines out of order", func(t *testing.T, dir string) ([]Input, Options) {
			in, offs := writeSynth(t, dir, synthClocks, 40)
			for _, x := range in {
				reverseLines(t, x.Trace)
			}
			return in, Options{Offsets: offs, Validate: true}
		}},
		{"synthetic, host clock steps forward", func(t *testing.T, dir string) ([]Input, Options) {
			in, offs := writeStepped(t, dir, steppedNodes(250e6), stepEvents(5.5e9))
			return in, Options{Offsets: offs, Validate: true}
		}},
		{"synthetic, host clock steps back, lines out of order", func(t *testing.T, dir string) ([]Input, Options) {
			in, offs := writeStepped(t, dir, steppedNodes(-1.5e9), stepEvents(5.5e9))
			for _, x := range in {
				reverseLines(t, x.Trace)
			}
			return in, Options{Offsets: offs, Validate: true}
		}},
		{"synthetic, no correction", func(t *testing.T, dir string) ([]Input, Options) {
			in, offs := writeSynth(t, dir, synthClocks, 10)
			return in, Options{Offsets: offs, NoCorrection: true, Validate: true}
		}},
		{"real Kineto ranks", func(t *testing.T, dir string) ([]Input, Options) {
			in, _ := kinetoRanks(t)
			return in, Options{Validate: true}
		}},
		{"real Kineto and its XSpace", func(t *testing.T, dir string) ([]Input, Options) {
			in, _ := kinetoRanks(t)
			in[1].Trace = kinetoAsXSpace(t, in[1].Trace, filepath.Join(dir, "node1.xplane.pb"))
			return in, Options{Validate: true, PlanePrefix: "/pt"}
		}},
		{"real ROCm Kineto", func(t *testing.T, dir string) ([]Input, Options) {
			return []Input{{Node: 2, Trace: filepath.Join(real, "mi250_minitoy_train_ROCm6_2_kineto.json.gz")}}, Options{Validate: true}
		}},
		{"real XSpaces", func(t *testing.T, dir string) ([]Input, Options) {
			return []Input{{Node: 0, Trace: filepath.Join(real, "gpu_worker.xplane.pb")}, {Node: 1, Trace: filepath.Join(real, "tpu_inference_2.xplane.pb")}},
				Options{Validate: true}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in, o := tc.inputs(t, dir)
			o.Output = filepath.Join(dir, "wire", "combined.xplane.pb")
			wire, err := Combine(in, o)
			if err != nil {
				t.Fatal(err)
			}
			sorting := o
			sorting.Output, sorting.sortLines = filepath.Join(dir, "sorting", "combined.xplane.pb"), true
			if _, err := Combine(in, sorting); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{"combined.xplane.pb", "combined.trace.json.gz"} {
				a, b := readFile(t, filepath.Join(dir, "wire", f)), readFile(t, filepath.Join(dir, "sorting", f))
				if !bytes.Equal(a, b) {
					t.Errorf("%s: rewriting lines in order gives %d bytes, by sorting %d, not the same", f, len(a), len(b))
				}
			}
			o.Output, o.nodeFn = filepath.Join(dir, "proto", "combined.xplane.pb"), (*combiner).nodeProto
			ref, err := Combine(in, o)
			if err != nil {
				t.Fatal(err)
			}
			a, err := xspace.Read(filepath.Join(dir, "wire", "combined.xplane.pb"))
			if err != nil {
				t.Fatal(err)
			}
			b, err := xspace.Read(filepath.Join(dir, "proto", "combined.xplane.pb"))
			if err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(a, b) {
				for i := range min(len(a.Planes), len(b.Planes)) {
					if !proto.Equal(a.Planes[i], b.Planes[i]) {
						t.Fatalf("plane %d (%s) differs", i, a.Planes[i].Name)
					}
				}
				t.Fatalf("combined XSpaces differ (%d and %d planes)", len(a.Planes), len(b.Planes))
			}
			if ja, jb := gunzipFile(t, filepath.Join(dir, "wire", "combined.trace.json.gz")), gunzipFile(t, filepath.Join(dir, "proto", "combined.trace.json.gz")); !bytes.Equal(ja, jb) {
				t.Errorf("trace JSON differs (%d and %d bytes)", len(ja), len(jb))
			}
			wire.Metadata.Validate, ref.Metadata.Validate = nil, nil
			for i := range wire.Metadata.Nodes {
				if wire.Metadata.Nodes[i].Events != ref.Metadata.Nodes[i].Events ||
					wire.Metadata.Nodes[i].MaxCorrectionNS != ref.Metadata.Nodes[i].MaxCorrectionNS ||
					wire.Metadata.Nodes[i].UncertaintyMaxNS != ref.Metadata.Nodes[i].UncertaintyMaxNS ||
					wire.Metadata.Nodes[i].HostSteps != ref.Metadata.Nodes[i].HostSteps ||
					wire.Metadata.Nodes[i].AcrossStepEvents != ref.Metadata.Nodes[i].AcrossStepEvents {
					t.Errorf("node %d metadata: wire %+v, reference %+v", i, wire.Metadata.Nodes[i], ref.Metadata.Nodes[i])
				}
			}
			if wire.Report.Summary() != ref.Report.Summary() {
				t.Errorf("validate: wire %s, reference %s", wire.Report.Summary(), ref.Report.Summary())
			}
		})
	}
}

// reverseLines reverses the order of every line's events in the XSpace
// at path.
func reverseLines(t *testing.T, path string) {
	t.Helper()
	space, err := xspace.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range space.Planes {
		for _, l := range p.Lines {
			slices.Reverse(l.Events)
		}
	}
	if err := xspace.Write(path, space); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gunzipFile(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestParseEvent pins which events parseEvent finds one run of other
// fields in (tail, copied whole by appendEvent) across field layouts.
func TestParseEvent(t *testing.T) {
	v := func(num protowire.Number, x uint64) []byte {
		return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), x)
	}
	stat := func(s string) []byte {
		return protowire.AppendString(protowire.AppendTag(nil, xspace.FieldEventStats, protowire.BytesType), s)
	}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	tests := []struct {
		name     string
		ev       []byte
		tail     []byte
		tailOK   bool
		off, dur int64
	}{
		{"C++ order", cat(v(1, 7), v(2, 300), v(3, 5), stat("a"), stat("b")), cat(stat("a"), stat("b")), true, 300, 5},
		{"Go order (oneof last)", cat(v(1, 7), v(3, 5), stat("a"), stat("b"), v(2, 1<<40)), cat(stat("a"), stat("b")), true, 1 << 40, 5},
		{"others split", cat(stat("a"), v(2, 9), stat("b")), nil, false, 9, 0},
		{"no others", cat(v(1, 7), v(2, 9)), nil, true, 9, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e wireEvent
			if err := parseEvent(&e, tt.ev); err != nil {
				t.Fatal(err)
			}
			if e.tailOK != tt.tailOK || (tt.tailOK && !bytes.Equal(e.tail, tt.tail)) {
				t.Errorf("tail %x (whole %v), want %x (whole %v)", e.tail, e.tailOK, tt.tail, tt.tailOK)
			}
			if e.offset != tt.off || e.dur != tt.dur || !e.timed {
				t.Errorf("offset %d dur %d timed %v, want %d %d true", e.offset, e.dur, e.timed, tt.off, tt.dur)
			}
		})
	}
	if err := parseEvent(&wireEvent{}, []byte{0x10}); err == nil {
		t.Error("a truncated offset_ps parsed")
	}
}
