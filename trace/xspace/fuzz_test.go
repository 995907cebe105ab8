package xspace_test

import (
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/chronosync/chronosync/trace/snapshotpb"
	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// FuzzUnmarshal checks that the wire walk agrees with proto.Unmarshal: every
// input that does not parse gets an offset inside the input.
func FuzzUnmarshal(f *testing.F) {
	b := xspace.NewPlaneBuilder(1, "/device:GPU:0")
	b.AddStat(xspace.Str("device_name", "sim"))
	b.Line(1, "stream 1", 100).Add("kernel", 150, 20, xspace.Int("correlation_id", 7), xspace.Float("f", 0.5))
	space, err := proto.Marshal(&xplanepb.XSpace{Planes: []*xplanepb.XPlane{b.Plane()}, Hostnames: []string{"h"}})
	if err != nil {
		f.Fatal(err)
	}
	snaps, err := proto.Marshal(&snapshotpb.SnapshotPairs{Pairs: []*snapshotpb.SnapshotPair{{SysClockNs: -1, TracerClockNs: 2}}, RunId: "r"})
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range [][]byte{space, snaps, []byte("\x0a\x08\x22\x06\x12\x04\x32\x02\x01\xff"), []byte("\x0c")} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, m := range []proto.Message{&xplanepb.XSpace{}, &snapshotpb.SnapshotPairs{}} {
			err := xspace.Unmarshal(data, m)
			if err == nil {
				continue
			}
			var ce *xspace.CorruptError
			if !errors.As(err, &ce) || ce.Offset < 0 || ce.Offset > int64(len(data)) {
				t.Fatalf("%s: %v: want a CorruptError with an offset in [0, %d]", m.ProtoReflect().Descriptor().Name(), err, len(data))
			}
		}
	})
}
