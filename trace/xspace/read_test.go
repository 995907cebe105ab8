package xspace_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/chronosync/chronosync/trace/snapshotpb"
	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// realTraces are the real XSpace files of testdata/realdata.
func realTraces(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "realdata", "*.xplane.pb"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 2 {
		t.Fatalf("want the real traces of testdata/realdata (gpu_worker, tpu_inference_2), found %v", paths)
	}
	return paths
}

func TestReadRealTraces(t *testing.T) {
	for _, path := range realTraces(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			s, err := xspace.Read(path)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: hostnames %q, %d errors, %d warnings", filepath.Base(path), s.GetHostnames(), len(s.GetErrors()), len(s.GetWarnings()))
			for _, p := range s.GetPlanes() {
				events, stats := 0, map[string]int{}
				for _, l := range p.GetLines() {
					events += len(l.GetEvents())
					for _, ev := range l.GetEvents() {
						for _, st := range ev.GetStats() {
							stats[strings.TrimPrefix(fmt.Sprintf("%T", st.GetValue()), "*xplanepb.XStat_")]++
							if v := xspace.StatString(p, st); strings.HasPrefix(v, "<unknown ref") || strings.HasPrefix(v, "<bad compressed") {
								t.Errorf("plane %q: stat %d renders as %q", p.GetName(), st.GetMetadataId(), v)
							}
						}
					}
				}
				t.Logf("  plane %d %q: %d lines, %d events, %d event and %d stat metadata; event stats %v",
					p.GetId(), p.GetName(), len(p.GetLines()), events, len(p.GetEventMetadata()), len(p.GetStatMetadata()), stats)
			}
			if len(s.GetPlanes()) == 0 {
				t.Fatal("no planes")
			}
			// Round trip: what Write writes reads back equal.
			out := filepath.Join(t.TempDir(), "copy.xplane.pb")
			if err := xspace.Write(out, s); err != nil {
				t.Fatal(err)
			}
			back, err := xspace.Read(out)
			if err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(s, back) {
				t.Fatal("read, written and read back: not equal to what was read")
			}
		})
	}
}

func TestReadTruncatedRealTraces(t *testing.T) {
	for _, path := range realTraces(t) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, cut := range []int{1, 2, 7, 100, len(data) / 3, len(data) / 2, len(data) - 1} {
			t.Run(filepath.Base(path)+"/"+strconv.Itoa(cut), func(t *testing.T) {
				short := filepath.Join(t.TempDir(), filepath.Base(path))
				if err := os.WriteFile(short, data[:cut], 0o644); err != nil {
					t.Fatal(err)
				}
				_, err := xspace.Read(short)
				ce := checkCorrupt(t, err, short)
				if ce.Offset != int64(cut) {
					t.Errorf("offset %d, want %d (the end of the truncated data)", ce.Offset, cut)
				}
				t.Log(err)
			})
		}
	}
}

// checkCorrupt checks that err names path, wraps ErrCorrupt and carries a
// byte offset, and returns its CorruptError.
func checkCorrupt(t *testing.T, err error, path string) *xspace.CorruptError {
	t.Helper()
	var ce *xspace.CorruptError
	switch {
	case err == nil:
		t.Fatal("no error")
	case !errors.Is(err, xspace.ErrCorrupt) || !errors.As(err, &ce):
		t.Fatalf("%v: does not wrap ErrCorrupt in a CorruptError", err)
	case !strings.HasPrefix(err.Error(), "read "+path+": corrupt protobuf at byte "+strconv.FormatInt(ce.Offset, 10)):
		t.Fatalf("%q: want it to name %s and the byte offset", err, path)
	}
	return ce
}

func TestReadGarbage(t *testing.T) {
	tests := []struct {
		name   string
		data   string
		offset int64
		field  string
		reason string
	}{
		{"varint overflow", strings.Repeat("\xff", 11), 0, "", "variable length integer overflow"},
		{"field number 0", "\x00\x01", 0, "", "invalid field number"},
		{"reserved wire type", "\x22\x00\x0e", 2, "", "cannot parse reserved wire type"},
		{"end group alone", "\x0c", 0, "", "mismatching end group marker"},
		{"truncated tag", "\x22\x00\x80", 3, "", "truncated"},
		{"truncated string", "\x12\x05ab", 4, "errors[0]", "truncated: 5 bytes declared, 2 present"},
		{"truncated plane", "\x0a\x08\x10\x05", 4, "planes[0]", "truncated: 8 bytes declared, 2 present"},
		{"plane name not UTF-8", "\x0a\x00\x0a\x04\x12\x02a\xff", 7, "planes[1].name", "not valid UTF-8"},
		{"bad event in line", "\x0a\x06\x1a\x04\x22\x02\x08\x80", 8, "planes[0].lines[0].events[0]", "truncated"},
		{"bad metadata stat", "\x0a\x0a\x22\x08\x08\x01\x12\x04\x2a\x02\x10\xff", 12, "planes[0].event_metadata[0].value.stats[0]", "truncated"},
		{"bad packed child_id", "\x0a\x08\x22\x06\x12\x04\x32\x02\x01\xff", 9, "planes[0].event_metadata[0].value.child_id[0]", "truncated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "garbage.xplane.pb")
			if err := os.WriteFile(path, []byte(tt.data), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := xspace.Read(path)
			ce := checkCorrupt(t, err, path)
			want := xspace.CorruptError{Offset: tt.offset, Field: tt.field, Reason: tt.reason}
			if *ce != want {
				t.Errorf("got %+v, want %+v", *ce, want)
			}
		})
	}
}

func TestReadMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "absent.xplane.pb")
	_, err := xspace.Read(path)
	if !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "read "+path+": ") {
		t.Fatalf("got %v, want a not-exist error naming %s", err, path)
	}
	if _, err := xspace.ReadSnapshots(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadSnapshots: got %v, want a not-exist error", err)
	}
}

func TestSnapshotsRoundTrip(t *testing.T) {
	want := &snapshotpb.SnapshotPairs{
		Pairs: []*snapshotpb.SnapshotPair{
			{SysClockNs: -5_000, TracerClockNs: 1_000_000},
			{SysClockNs: 995_000, TracerClockNs: 2_000_017},
		},
		SamplingPeriodNs: 1_000_000,
		RunId:            "quickstart-1",
		NodeId:           3,
		Hostname:         "node3",
		SnapshotsTaken:   2,
		MissedDeadline:   1,
	}
	path := filepath.Join(t.TempDir(), "node3.snapshots.pb")
	if err := xspace.Write(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := xspace.ReadSnapshots(path)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	// Truncated, with the pair's path.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data[:5], 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = xspace.ReadSnapshots(path)
	if ce := checkCorrupt(t, err, path); ce.Offset != 5 || !strings.HasPrefix(ce.Field, "pairs[0]") {
		t.Fatalf("got %+v, want offset 5 in pairs[0]", *ce)
	}
}

func TestUnmarshalEmpty(t *testing.T) {
	var s xplanepb.XSpace
	if err := xspace.Unmarshal(nil, &s); err != nil || len(s.GetPlanes()) != 0 {
		t.Fatalf("empty input: %v, %d planes; want an empty XSpace", err, len(s.GetPlanes()))
	}
}
