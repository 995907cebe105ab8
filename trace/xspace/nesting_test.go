package xspace_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// nestedGroups is depth groups of the unknown field 99, each inside the
// one before, and the offset in it of the start tag of group i (0-based).
func nestedGroups(depth int) (b []byte, at func(i int) int) {
	start := protowire.AppendTag(nil, 99, protowire.StartGroupType)
	end := protowire.AppendTag(nil, 99, protowire.EndGroupType)
	b = append(bytes.Repeat(start, depth), bytes.Repeat(end, depth)...)
	return b, func(i int) int { return i * len(start) }
}

// TestNestingTooDeep: unknown group fields nested more than
// xspace.MaxNesting deep (proto.Unmarshal's limit) are refused with the
// byte offset of the group that goes too deep, the path of the message
// that holds them and the limit; before, the error was "parse error" at
// the start of the outermost group. One level less parses, and Check (the
// combiner's) agrees with Read.
func TestNestingTooDeep(t *testing.T) {
	if xspace.MaxNesting != 10000 {
		t.Fatalf("MaxNesting = %d, want proto's 10000", xspace.MaxNesting)
	}
	// A plane named /host:CPU with a line whose events hold the groups.
	inLine := func(groups []byte) (b []byte, base int) {
		line := protowire.AppendTag(nil, 2, protowire.BytesType) // XLine.name
		line = protowire.AppendString(line, "stream 0")
		base = len(line)
		line = append(line, groups...)
		plane := protowire.AppendTag(nil, 2, protowire.BytesType)
		plane = protowire.AppendString(plane, "/host:CPU")
		plane = protowire.AppendTag(plane, 3, protowire.BytesType) // lines
		plane = protowire.AppendVarint(plane, uint64(len(line)))
		base += len(plane)
		plane = append(plane, line...)
		b = protowire.AppendTag(nil, 1, protowire.BytesType) // planes
		b = protowire.AppendVarint(b, uint64(len(plane)))
		base += len(b)
		return append(b, plane...), base
	}
	top := func(groups []byte) ([]byte, int) { return groups, 0 }
	cases := []struct {
		name  string
		wrap  func([]byte) ([]byte, int)
		depth int
		path  string // "" where it parses
	}{
		{"top level, at the limit", top, xspace.MaxNesting + 1, ""},
		{"top level, one deeper", top, xspace.MaxNesting + 2, "-"},
		{"top level, far deeper", top, 100_000, "-"},
		{"in a line, at the limit", inLine, xspace.MaxNesting + 1, ""},
		{"in a line, one deeper", inLine, xspace.MaxNesting + 2, "planes[0].lines[0]"},
	}
	dir := t.TempDir()
	checker := xspace.NewChecker((*xplanepb.XSpace)(nil).ProtoReflect().Descriptor())
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			groups, at := nestedGroups(tc.depth)
			b, base := tc.wrap(groups)
			protoErr := proto.Unmarshal(b, &xplanepb.XSpace{})
			path := filepath.Join(dir, fmt.Sprintf("n%d.xplane.pb", i))
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			_, readErr := xspace.Read(path)
			checkErr := checker.Check(b)
			if tc.path == "" {
				if protoErr != nil || readErr != nil || checkErr != nil {
					t.Fatalf("depth %d: proto %v, Read %v, Check %v; want all to accept", tc.depth, protoErr, readErr, checkErr)
				}
				return
			}
			if protoErr == nil {
				t.Fatalf("depth %d: proto.Unmarshal accepts it: the limit moved", tc.depth)
			}
			field := tc.path
			if field == "-" {
				field = ""
			}
			// The group inside MaxNesting others: the (MaxNesting+1)-th
			// after the outermost.
			want := &xspace.CorruptError{Offset: int64(base + at(xspace.MaxNesting+1)), Field: field,
				Reason: "field 99: groups nested deeper than 10000 levels (xspace.MaxNesting)"}
			for _, err := range []error{readErr, checkErr} {
				var ce *xspace.CorruptError
				if !errors.As(err, &ce) || *ce != *want {
					t.Errorf("got %v, want %v", err, want)
				}
			}
			if !strings.Contains(readErr.Error(), path) {
				t.Errorf("%v does not name the file", readErr)
			}
		})
	}
}
