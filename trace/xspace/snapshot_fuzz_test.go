package xspace_test

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/chronosync/chronosync/trace/snapshotpb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// FuzzReadSnapshots (issue 18) reads arbitrary bytes as a snapshot-pairs
// file with ReadSnapshots. Nothing may panic; it must accept exactly what
// the Checker of SnapshotPairs calls valid; an error must be a
// *CorruptError at an offset inside the file (or -1) that names the path;
// and accepted pairs must marshal and read back equal, and marshal again
// to the same bytes.
func FuzzReadSnapshots(f *testing.F) {
	full, err := proto.Marshal(&snapshotpb.SnapshotPairs{
		Pairs: []*snapshotpb.SnapshotPair{
			{SysClockNs: 1_700_000_000_123_456_789, TracerClockNs: 5_000_123},
			{SysClockNs: 1_700_000_000_223_456_790, TracerClockNs: 105_000_124},
			{SysClockNs: -1, TracerClockNs: math.MinInt64},
			{},
		},
		SamplingPeriodNs: 100_000_000,
		RunId:            "quickstart-2024",
		NodeId:           3,
		Hostname:         "node-3.cluster",
		SnapshotsTaken:   4,
		MissedDeadline:   1,
	})
	if err != nil {
		f.Fatal(err)
	}
	one, err := proto.Marshal(&snapshotpb.SnapshotPairs{Pairs: []*snapshotpb.SnapshotPair{{SysClockNs: 42, TracerClockNs: 7}}, RunId: "r"})
	if err != nil {
		f.Fatal(err)
	}
	// An unknown field (number 99, a varint), which proto keeps.
	unknown := protowire.AppendVarint(protowire.AppendTag(bytes.Clone(one), 99, protowire.VarintType), 1234)
	for _, seed := range [][]byte{
		full, one, unknown, {},
		full[:len(full)-3],                     // truncated
		[]byte("\x2a\x02\xff\xfe"),             // hostname of invalid UTF-8
		[]byte("\x0a\x04\x08\x01\x10\x02\x0a"), // a pair, then a torn tag
		[]byte("\x0f"),                         // wire type 7
	} {
		f.Add(seed)
	}
	checker := xspace.NewChecker((&snapshotpb.SnapshotPairs{}).ProtoReflect().Descriptor())
	path := filepath.Join(f.TempDir(), "snapshots.pb")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		pairs, err := xspace.ReadSnapshots(path)
		if valid := checker.Valid(data); valid != (err == nil) {
			t.Fatalf("Checker.Valid %v, ReadSnapshots: %v", valid, err)
		}
		if err != nil {
			var ce *xspace.CorruptError
			if !errors.As(err, &ce) || !errors.Is(err, xspace.ErrCorrupt) || ce.Offset < -1 || ce.Offset > int64(len(data)) {
				t.Fatalf("error %q: want a *CorruptError with an offset in [-1, %d]", err, len(data))
			}
			if !bytes.Contains([]byte(err.Error()), []byte(path)) {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if pairs == nil {
			t.Fatal("ReadSnapshots: nil pairs and no error")
		}
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(pairs)
		if err != nil {
			t.Fatalf("accepted pairs do not marshal: %v", err)
		}
		if err := checker.Check(b); err != nil {
			t.Fatalf("the Checker refuses the marshalled pairs: %v", err)
		}
		back := &snapshotpb.SnapshotPairs{}
		if err := xspace.Unmarshal(b, back); err != nil { // what ReadSnapshots reads a file with
			t.Fatalf("xspace.Unmarshal refuses the marshalled pairs: %v", err)
		}
		if !proto.Equal(pairs, back) {
			t.Fatalf("the pairs do not read back equal:\n read %v\nagain %v", pairs, back)
		}
		again, err := proto.MarshalOptions{Deterministic: true}.Marshal(back)
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("marshalled twice, differently (%v):\n%x\n%x", err, b, again)
		}
	})
}
