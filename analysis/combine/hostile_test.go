package combine

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// Hostile inputs (issue 18): corrupt XSpaces that the wire-level rewriter
// would copy unparsed into a file that xspace.Read refuses, and gzip
// bombs in compressed_str_value stats.

// wireMsg concatenates encoded fields into a message.
func wireMsg(fields ...[]byte) []byte { return bytes.Join(fields, nil) }

// wireBytes is a length-delimited field.
func wireBytes(num protowire.Number, v []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), v)
}

// wireVarint is a varint field.
func wireVarint(num protowire.Number, v uint64) []byte {
	return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), v)
}

// hostileSpace is an XSpace with one GPU plane whose one line has one
// timed event, with the given extra fields in the space, the plane, the
// line, the event and the event's metadata (map entry value).
func hostileSpace(space, plane, line, event, meta []byte) []byte {
	ev := wireMsg(wireVarint(xspace.FieldEventMeta, 1), wireVarint(xspace.FieldEventOffset, 10), wireVarint(xspace.FieldEventDuration, 5), event)
	ln := wireMsg(wireVarint(1, 1), wireBytes(xspace.FieldLineEvents, ev), line)
	md := wireMsg(wireVarint(xspace.FieldMetaID, 1), wireBytes(xspace.FieldMetaName, []byte("kernel")), meta)
	entry := wireMsg(wireVarint(xspace.FieldMapKey, 1), wireBytes(xspace.FieldMapValue, md))
	pl := wireMsg(wireVarint(xspace.FieldPlaneID, 1), wireBytes(xspace.FieldPlaneName, []byte("/device:GPU:0")),
		wireBytes(xspace.FieldPlaneLines, ln), wireBytes(xspace.FieldPlaneEventMeta, entry), plane)
	return wireMsg(wireBytes(xspace.FieldSpacePlanes, pl), space)
}

// hostileInputs are XSpaces that proto.Unmarshal refuses, each with the
// error Combine gives for it after "combine: read <path>: ".
var hostileInputs = []struct {
	name, hex, want string
}{
	// The two inputs of the report.
	{"plane name not UTF-8", "0a031201ff",
		"corrupt protobuf at byte 4 (in planes[0].name): not valid UTF-8"},
	{"event stat with field number 0", "0a210801120d2f6465766963653a4750553a301a0e0801220a0801100a180522020000",
		"corrupt protobuf at byte 33 (in planes[0].lines[0].events[0].stats[0]): invalid field number"},
	// The other places the rewriter copies without parsing.
	{"host name not UTF-8", hex.EncodeToString(hostileSpace(wireBytes(xspace.FieldSpaceHostnames, []byte("h\xc3")), nil, nil, nil, nil)),
		"corrupt protobuf at byte 50 (in hostnames[0]): not valid UTF-8"},
	{"space error not UTF-8", hex.EncodeToString(hostileSpace(wireBytes(2, []byte("\xff")), nil, nil, nil, nil)),
		"corrupt protobuf at byte 49 (in errors[0]): not valid UTF-8"},
	{"line name not UTF-8", hex.EncodeToString(hostileSpace(nil, nil, wireBytes(2, []byte("stream \xe2\x82")), nil, nil)),
		"corrupt protobuf at byte 40 (in planes[0].lines[0].name): not valid UTF-8"},
	{"event stat str_value not UTF-8", hex.EncodeToString(hostileSpace(nil, nil, nil,
		wireBytes(xspace.FieldEventStats, wireMsg(wireVarint(xspace.FieldStatMeta, 1), wireBytes(xspace.FieldStatStr, []byte{0x80}))), nil)),
		"corrupt protobuf at byte 37 (in planes[0].lines[0].events[0].stats[0].str_value): not valid UTF-8"},
	{"event stat truncated", hex.EncodeToString(hostileSpace(nil, nil, nil, wireBytes(xspace.FieldEventStats, []byte{0x08}), nil)),
		"corrupt protobuf at byte 34 (in planes[0].lines[0].events[0].stats[0]): truncated"},
	{"event metadata display_name not UTF-8", hex.EncodeToString(hostileSpace(nil, nil, nil, nil, wireBytes(xspace.FieldMetaDisplay, []byte("\xff")))),
		"corrupt protobuf at byte 49 (in planes[0].event_metadata[0].value.display_name): not valid UTF-8"},
	{"event metadata stat with field number 0", hex.EncodeToString(hostileSpace(nil, nil, nil, nil, wireBytes(xspace.FieldMetaStats, []byte{0, 0}))),
		"corrupt protobuf at byte 49 (in planes[0].event_metadata[0].value.stats[0]): invalid field number"},
	{"event metadata child_id packed, truncated", hex.EncodeToString(hostileSpace(nil, nil, nil, nil, wireBytes(6, []byte{0x80}))),
		"corrupt protobuf at byte 49 (in planes[0].event_metadata[0].value.child_id[0]): truncated"},
	{"stat metadata description not UTF-8", hex.EncodeToString(hostileSpace(nil, wireBytes(xspace.FieldPlaneStatMeta, wireMsg(wireVarint(xspace.FieldMapKey, 1),
		wireBytes(xspace.FieldMapValue, wireMsg(wireVarint(xspace.FieldMetaID, 1), wireBytes(xspace.FieldMetaName, []byte("s")), wireBytes(3, []byte("\xff")))))), nil, nil, nil)),
		"corrupt protobuf at byte 60 (in planes[0].stat_metadata[0].value.description): not valid UTF-8"},
	{"plane stat str_value not UTF-8", hex.EncodeToString(hostileSpace(nil, wireBytes(xspace.FieldPlaneStats, wireMsg(wireVarint(xspace.FieldStatMeta, 1), wireBytes(xspace.FieldStatStr, []byte("\xff")))), nil, nil, nil)),
		"corrupt protobuf at byte 53 (in planes[0].stats[0].str_value): not valid UTF-8"},
}

// combineOne combines the XSpace data as node 0's trace, in dir, and
// returns the trace's and the output's paths and Combine's error.
func combineOne(t *testing.T, dir string, data []byte, o Options) (trace, out string, err error) {
	t.Helper()
	trace = filepath.Join(dir, "node0.xplane.pb")
	if err := os.WriteFile(trace, data, 0o644); err != nil {
		t.Fatal(err)
	}
	o.Output = filepath.Join(dir, "out", "combined.xplane.pb")
	_, err = Combine([]Input{{Node: 0, Trace: trace}}, o)
	return trace, o.Output, err
}

// checkReadsBack is the property the hostile inputs break: whatever
// Combine accepts, xspace.Read reads back, with the Chrome JSON export
// (which renders every stat) and without it; and the reference path (the
// XSpace decoded into the generated types, aligned and encoded again,
// reference_test.go) accepts it too and writes the same XSpace.
func checkReadsBack(t *testing.T, data []byte) {
	t.Helper()
	for _, o := range []Options{{}, {NoTraceJSON: true}} {
		_, out, err := combineOne(t, t.TempDir(), data, o)
		if err != nil {
			continue
		}
		got, err := xspace.Read(out)
		if err != nil {
			t.Errorf("NoTraceJSON %v: Combine accepted the input, but its output does not read back: %v", o.NoTraceJSON, err)
			continue
		}
		o.nodeFn = (*combiner).nodeProto
		_, refOut, err := combineOne(t, t.TempDir(), data, o)
		if err != nil {
			t.Errorf("NoTraceJSON %v: Combine accepted the input, the reference path refused it: %v", o.NoTraceJSON, err)
			continue
		}
		ref, err := xspace.Read(refOut)
		if err != nil {
			t.Errorf("NoTraceJSON %v: the reference path's output does not read back: %v", o.NoTraceJSON, err)
			continue
		}
		if !proto.Equal(got, ref) {
			t.Errorf("NoTraceJSON %v: Combine and the reference path wrote different XSpaces:\n%v\n%v", o.NoTraceJSON, got, ref)
		}
	}
}

// TestCombineRefusesCorrupt: Combine refuses, up front and naming the file
// and the place, an XSpace that xspace.Read refuses, rather than write a
// combined trace that xspace.Read refuses; and whatever it accepts reads
// back.
func TestCombineRefusesCorrupt(t *testing.T) {
	for _, tc := range hostileInputs {
		t.Run(tc.name, func(t *testing.T) {
			data, err := hex.DecodeString(tc.hex)
			if err != nil {
				t.Fatal(err)
			}
			if err := proto.Unmarshal(data, &xplanepb.XSpace{}); err == nil {
				t.Fatal("the input parses: not a corrupt input")
			}
			checkReadsBack(t, data)
			for _, o := range []Options{{}, {NoTraceJSON: true}} {
				trace, out, err := combineOne(t, t.TempDir(), data, o)
				if want := "combine: read " + trace + ": " + tc.want; err == nil || err.Error() != want {
					t.Errorf("NoTraceJSON %v: got error %v\nwant %s", o.NoTraceJSON, err, want)
				}
				if !errors.Is(err, xspace.ErrCorrupt) {
					t.Errorf("%v does not wrap xspace.ErrCorrupt", err)
				}
				if left, _ := os.ReadDir(filepath.Dir(out)); len(left) != 0 {
					t.Errorf("left behind: %v", left)
				}
			}
		})
	}
}

// TestCombineRefusesPlanePrefix: a plane prefix that is not UTF-8 would
// name planes that xspace.Read refuses.
func TestCombineRefusesPlanePrefix(t *testing.T) {
	valid := hostileSpace(nil, nil, nil, nil, nil)
	_, out, err := combineOne(t, t.TempDir(), valid, Options{PlanePrefix: "/cluster\xff"})
	if want := `combine: plane prefix "/cluster\xff" is not valid UTF-8`; err == nil || err.Error() != want {
		t.Errorf("got error %v, want %s", err, want)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s: %v", out, err)
	}
}

// FuzzCombineReadsBack: whatever Combine accepts, xspace.Read reads back.
// The seeds are the hostile inputs and a valid trace.
func FuzzCombineReadsBack(f *testing.F) {
	for _, tc := range hostileInputs {
		data, err := hex.DecodeString(tc.hex)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add(hostileSpace(wireBytes(xspace.FieldSpaceHostnames, []byte("host-0")), nil, wireBytes(2, []byte("stream 1")),
		wireBytes(xspace.FieldEventStats, wireMsg(wireVarint(xspace.FieldStatMeta, 1), wireBytes(xspace.FieldStatStr, []byte("all-reduce.1")))), nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkReadsBack(t, data)
	})
}

// gzipBomb is a gzip stream of size zeros (a multiple of 1 MiB): one
// member of 1 MiB of zeros (about 1 KiB) repeated, as gzip readers read
// the members of a stream one after the other.
func gzipBomb(t testing.TB, size int64) []byte {
	t.Helper()
	var member bytes.Buffer
	zw, err := gzip.NewWriterLevel(&member, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return bytes.Repeat(member.Bytes(), int(size>>20))
}

// TestCombineGzipBomb: a compressed_str_value that inflates to 1 GiB, in
// an event's stats, in its metadata's (where it is the hlo_op the
// collectives are keyed by) and in the plane's (as run_id), makes Combine
// fail, naming the file and the stat and the limit, having allocated far
// less than the 1 GiB.
func TestCombineGzipBomb(t *testing.T) {
	if testing.Short() {
		t.Skip("inflates 64 MiB a case")
	}
	bomb := gzipBomb(t, 1<<30)
	statMeta := func(id uint64, name string) []byte {
		return wireBytes(xspace.FieldPlaneStatMeta, wireMsg(wireVarint(xspace.FieldMapKey, id),
			wireBytes(xspace.FieldMapValue, wireMsg(wireVarint(xspace.FieldMetaID, id), wireBytes(xspace.FieldMetaName, []byte(name))))))
	}
	zstat := func(num protowire.Number, id uint64) []byte {
		return wireBytes(num, wireMsg(wireVarint(xspace.FieldStatMeta, id), wireBytes(xspace.FieldStatZStr, bomb)))
	}
	const tooLarge = `compressed_str_value: decompresses to more than 64 MiB (xspace.MaxDecompressedStat)`
	for _, tc := range []struct {
		name string
		data []byte
		o    Options
		want string // after "combine: "
	}{
		{"event stat, in the JSON export",
			hostileSpace(nil, statMeta(1, "kernel_details"), nil, zstat(xspace.FieldEventStats, 1), nil), Options{},
			`node 0 (TRACE): plane /device:GPU:0 line 1: event "kernel" at offset_ps 10: stat "kernel_details": ` + tooLarge},
		{"event metadata stat, in the JSON export",
			hostileSpace(nil, statMeta(1, "kernel_details"), nil, nil, zstat(xspace.FieldMetaStats, 1)), Options{},
			`TRACE: plane /device:GPU:0: event metadata 1 ("kernel"): stat "kernel_details": ` + tooLarge},
		{"event metadata hlo_op",
			hostileSpace(nil, statMeta(1, statHloOp), nil, nil, zstat(xspace.FieldMetaStats, 1)), Options{NoTraceJSON: true},
			`TRACE: plane /device:GPU:0: event metadata 1: stat "hlo_op": ` + tooLarge},
		{"plane run_id",
			hostileSpace(nil, wireMsg(statMeta(1, "run_id"), zstat(xspace.FieldPlaneStats, 1)), nil, nil, nil), Options{NoTraceJSON: true},
			`TRACE: plane /device:GPU:0: stat "run_id": ` + tooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := proto.Unmarshal(tc.data, &xplanepb.XSpace{}); err != nil {
				t.Fatalf("the input does not parse: %v", err)
			}
			dir := t.TempDir()
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			trace, _, err := combineOne(t, dir, tc.data, tc.o)
			runtime.ReadMemStats(&after)
			if want := "combine: " + strings.ReplaceAll(tc.want, "TRACE", trace); err == nil || err.Error() != want {
				t.Errorf("got error %v\nwant %s", err, want)
			}
			if !errors.Is(err, xspace.ErrStatTooLarge) {
				t.Errorf("%v does not wrap xspace.ErrStatTooLarge", err)
			}
			// The stat is measured before it is kept: the run allocates
			// a few MiB (the input, the outputs' buffers), a quarter of
			// the limit at most, against the 1 GiB the stat inflates to.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > xspace.MaxDecompressedStat/4 {
				t.Errorf("allocated %d MiB", alloc>>20)
			}
		})
	}
}

// wireFixed64 is a fixed64 field.
func wireFixed64(num protowire.Number, v uint64) []byte {
	return protowire.AppendFixed64(protowire.AppendTag(nil, num, protowire.Fixed64Type), v)
}

// TestWrongWireTypes: a field with a number of the schema but another
// wire type is an unknown field to proto.Unmarshal; the rewriter, which
// read it as the field of that number (a varint lines field became an
// empty line; FuzzCombineReadsBack found it), now treats it as unknown
// too, and writes what the reference path writes. So with an event's
// offset_ps and num_occurrences, a oneof whose last field wins (the
// rewriter kept a num_occurrences that an offset_ps after it replaced:
// found the same way).
func TestWrongWireTypes(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"plane lines as a varint", hostileSpace(nil, wireVarint(xspace.FieldPlaneLines, 48), nil, nil, nil)},
		{"plane name as a varint", hostileSpace(nil, wireVarint(xspace.FieldPlaneName, 7), nil, nil, nil)},
		{"plane stats as a varint", hostileSpace(nil, wireVarint(xspace.FieldPlaneStats, 48), nil, nil, nil)},
		{"plane id as bytes", hostileSpace(nil, wireBytes(xspace.FieldPlaneID, []byte("x")), nil, nil, nil)},
		{"line timestamp as bytes", hostileSpace(nil, nil, wireBytes(xspace.FieldLineTimestamp, []byte("12")), nil, nil)},
		{"line events as a varint", hostileSpace(nil, nil, wireVarint(xspace.FieldLineEvents, 3), nil, nil)},
		{"event offset as fixed64", hostileSpace(nil, nil, nil, wireFixed64(xspace.FieldEventOffset, 1<<40), nil)},
		{"event stats as a varint", hostileSpace(nil, nil, nil, wireVarint(xspace.FieldEventStats, 9), nil)},
		{"event stat value as fixed64", hostileSpace(nil, nil, nil, wireBytes(xspace.FieldEventStats, wireMsg(wireVarint(xspace.FieldStatMeta, 1), wireFixed64(xspace.FieldStatInt, 5))), nil)},
		{"metadata name as a varint", hostileSpace(nil, nil, nil, nil, wireVarint(xspace.FieldMetaName, 1))},
		{"space hostnames as a varint", hostileSpace(wireVarint(xspace.FieldSpaceHostnames, 1), nil, nil, nil, nil)},
		// offset_ps and num_occurrences are a oneof: the last one wins.
		{"num_occurrences after offset_ps", hostileSpace(nil, nil, nil, wireVarint(xspace.FieldEventOccurrences, 3), nil)},
		{"offset_ps after num_occurrences", hostileSpace(nil, nil, nil, wireMsg(wireVarint(xspace.FieldEventOccurrences, 3), wireVarint(xspace.FieldEventOffset, 20)), nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := combineOne(t, t.TempDir(), tc.data, Options{NoTraceJSON: true}); err != nil {
				t.Fatalf("refused: %v (proto.Unmarshal accepts it, the field being unknown)", err)
			}
			checkReadsBack(t, tc.data)
		})
	}
}
