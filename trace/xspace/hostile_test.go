package xspace_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/chronosync/chronosync/trace/snapshotpb"
	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// Hostile inputs (issue 18): gzip bombs in compressed_str_value stats, and
// Check, which tells the combiner up front what xspace.Read refuses.

// gzipZeros is a gzip stream of n zeros: members of 1 MiB of zeros (about
// 1 KiB each) and one of the rest, as gzip readers read the members of a
// stream one after the other; 1 GiB takes about 1 MiB.
func gzipZeros(t testing.TB, n int64) []byte {
	t.Helper()
	member := func(size int64) []byte {
		var b bytes.Buffer
		zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := zw.Write(make([]byte, size)); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	out := bytes.Repeat(member(1<<20), int(n>>20))
	if rest := n & (1<<20 - 1); rest != 0 || len(out) == 0 {
		out = append(out, member(rest)...)
	}
	return out
}

// compressedStat is a plane with one stat metadata, kernel_details, and a
// stat of it whose compressed_str_value is b.
func compressedStat(b []byte) (*xplanepb.XPlane, *xplanepb.XStat) {
	plane := &xplanepb.XPlane{StatMetadata: map[int64]*xplanepb.XStatMetadata{1: {Id: 1, Name: "kernel_details"}}}
	return plane, &xplanepb.XStat{MetadataId: 1, Value: &xplanepb.XStat_CompressedStrValue{CompressedStrValue: b}}
}

// TestDecompressLimit: a compressed string of MaxDecompressedStat bytes
// renders, one byte more is an error that names the stat and the limit,
// never a truncated string; and a bomb of 1 GiB costs next to no memory.
func TestDecompressLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("inflates 64 MiB a case")
	}
	const tooLarge = "decompresses to more than 64 MiB (xspace.MaxDecompressedStat)"
	for _, tc := range []struct {
		name     string
		size     int64
		maxAlloc uint64 // bytes StatValue may allocate
	}{
		{"at the limit", xspace.MaxDecompressedStat, xspace.MaxDecompressedStat + 1<<20},
		{"one byte beyond", xspace.MaxDecompressedStat + 1, 1 << 20},
		{"1 GiB bomb", 1 << 30, 1 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plane, stat := compressedStat(gzipZeros(t, tc.size))
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			s, err := xspace.StatValue(plane, stat)
			runtime.ReadMemStats(&after)
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > tc.maxAlloc {
				t.Errorf("StatValue allocated %d KiB, want at most %d KiB", alloc>>10, tc.maxAlloc>>10)
			}
			if tc.size <= xspace.MaxDecompressedStat {
				if err != nil || int64(len(s)) != tc.size || strings.Trim(s, "\x00") != "" {
					t.Errorf("got %d bytes, %v; want %d zeros", len(s), err, tc.size)
				}
				return
			}
			if want := `stat "kernel_details": compressed_str_value: ` + tooLarge; err == nil || err.Error() != want || s != "" {
				t.Errorf("got %d bytes, %v; want no string and the error %s", len(s), err, want)
			}
			if !errors.Is(err, xspace.ErrStatTooLarge) {
				t.Errorf("%v does not wrap ErrStatTooLarge", err)
			}
			if got, want := xspace.StatString(plane, stat), "<bad compressed string: "+tooLarge+">"; got != want {
				t.Errorf("StatString: got %.100q, want %q", got, want)
			}
		})
	}
}

// TestStatValueErrors: StatValue names the stat whose compressed string
// does not decompress (by its id when its metadata is unknown); other
// kinds never fail, and StatString renders as StatValue.
func TestStatValueErrors(t *testing.T) {
	plane, stat := compressedStat([]byte("no"))
	if _, err := xspace.StatValue(plane, stat); err == nil || err.Error() != `stat "kernel_details": compressed_str_value: unexpected EOF` {
		t.Errorf("bad gzip: %v", err)
	}
	stat.MetadataId = 7
	if _, err := xspace.StatValue(plane, stat); err == nil || err.Error() != `stat with metadata id 7: compressed_str_value: unexpected EOF` {
		t.Errorf("bad gzip, unknown metadata: %v", err)
	}
	if got := xspace.StatString(plane, stat); got != "<bad compressed string: unexpected EOF>" {
		t.Errorf("StatString: %q", got)
	}
	for _, st := range []*xplanepb.XStat{
		{Value: &xplanepb.XStat_RefValue{RefValue: 9}},
		{Value: &xplanepb.XStat_BytesValue{BytesValue: []byte{1}}},
		{Value: &xplanepb.XStat_DoubleValue{DoubleValue: 0.5}},
		{Value: &xplanepb.XStat_CompressedStrValue{CompressedStrValue: gzipZeros(t, 3)}},
		nil,
	} {
		v, err := xspace.StatValue(plane, st)
		if err != nil || v != xspace.StatString(plane, st) {
			t.Errorf("%v: StatValue %q, %v; StatString %q", st, v, err, xspace.StatString(plane, st))
		}
	}
}

// TestChecker: a Checker accepts what proto.Unmarshal accepts, and refuses
// what it refuses with Unmarshal's error, without decoding.
func TestChecker(t *testing.T) {
	space := xspace.NewChecker((*xplanepb.XSpace)(nil).ProtoReflect().Descriptor())
	for _, tc := range []struct {
		name, data, want string
	}{
		{"empty", "", ""},
		{"plane name not UTF-8", "\x0a\x03\x12\x01\xff", "corrupt protobuf at byte 4 (in planes[0].name): not valid UTF-8"},
		{"event stat with field number 0",
			"\x0a\x21\x08\x01\x12\x0d/device:GPU:0\x1a\x0e\x08\x01\x22\x0a\x08\x01\x10\x0a\x18\x05\x22\x02\x00\x00",
			"corrupt protobuf at byte 33 (in planes[0].lines[0].events[0].stats[0]): invalid field number"},
		{"event stat str_value not UTF-8", "\x0a\x0a\x1a\x08\x22\x06\x22\x04\x2a\x02\xc3\x28",
			"corrupt protobuf at byte 10 (in planes[0].lines[0].events[0].stats[0].str_value): not valid UTF-8"},
		{"bytes_value not UTF-8: fine", "\x0a\x0a\x1a\x08\x22\x06\x22\x04\x32\x02\xc3\x28", ""},
		{"unknown field, length-delimited, not UTF-8: fine", "\x0a\x04\x7a\x02\xc3\x28", ""},
		{"plane name as a varint (an unknown field to Unmarshal): fine", "\x0a\x02\x10\x05", ""},
		{"child_id unpacked and packed", "\x0a\x0c\x22\x0a\x12\x08\x30\x01\x32\x02\x02\x03\x30\x04", ""},
		{"child_id packed, truncated", "\x0a\x06\x22\x04\x12\x02\x32\x01", "corrupt protobuf at byte 8 (in planes[0].event_metadata[0].value.child_id[0]): truncated: 1 bytes declared, 0 present"},
		{"group in an unknown field, unclosed", "\x0a\x01\x7b", "corrupt protobuf at byte 3 (in planes[0]): truncated"},
		{"field number the largest", "\xf8\xff\xff\xff\x0f\x00", ""},
		{"field number beyond the largest", "\x80\x80\x80\x80\x10\x00", "corrupt protobuf at byte 0: invalid field number"},
		{"truncated plane", "\x0a\x05\x08", "corrupt protobuf at byte 3 (in planes[0]): truncated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := space.Check([]byte(tc.data))
			if got := errString(err); got != tc.want {
				t.Errorf("Check: got %q, want %q", got, tc.want)
			}
			if space.Valid([]byte(tc.data)) != (tc.want == "") {
				t.Errorf("Valid: got %v", !(tc.want == ""))
			}
			if got := errString(xspace.Unmarshal([]byte(tc.data), &xplanepb.XSpace{})); got != tc.want {
				t.Errorf("Unmarshal: got %q, want %q", got, tc.want)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestCheckerRealTraces: a Checker accepts the real traces.
func TestCheckerRealTraces(t *testing.T) {
	space := xspace.NewChecker((*xplanepb.XSpace)(nil).ProtoReflect().Descriptor())
	for _, path := range realTraces(t) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := space.Check(b); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
}

// FuzzChecker: a Checker refuses exactly what proto.Unmarshal refuses, with
// Unmarshal's error.
func FuzzChecker(f *testing.F) {
	b := xspace.NewPlaneBuilder(1, "/device:GPU:0")
	b.AddStat(xspace.Str("device_name", "sim"))
	b.Line(1, "stream 1", 100).Add("kernel", 150, 20, xspace.Int("correlation_id", 7), xspace.Float("f", 0.5))
	space, err := proto.Marshal(&xplanepb.XSpace{Planes: []*xplanepb.XPlane{b.Plane()}, Hostnames: []string{"h"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(space)
	f.Add([]byte("\x0a\x03\x12\x01\xff"))
	f.Add([]byte("\x0a\x21\x08\x01\x12\x0d/device:GPU:0\x1a\x0e\x08\x01\x22\x0a\x08\x01\x10\x0a\x18\x05\x22\x02\x00\x00"))
	messages := []proto.Message{&xplanepb.XSpace{}, &xplanepb.XPlane{}, &xplanepb.XEvent{}, &snapshotpb.SnapshotPairs{}}
	var checkers []*xspace.Checker
	for _, m := range messages {
		checkers = append(checkers, xspace.NewChecker(m.ProtoReflect().Descriptor()))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for i, m := range messages {
			want := errString(xspace.Unmarshal(data, m))
			if got := errString(checkers[i].Check(data)); got != want {
				t.Fatalf("%s: Check %q, Unmarshal %q", m.ProtoReflect().Descriptor().Name(), got, want)
			}
			if checkers[i].Valid(data) != (want == "") {
				t.Fatalf("%s: Valid %v, Unmarshal %q", m.ProtoReflect().Descriptor().Name(), !(want == ""), want)
			}
		}
	})
}
