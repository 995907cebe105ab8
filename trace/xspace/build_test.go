package xspace_test

import (
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

func TestPlaneBuilder(t *testing.T) {
	b := xspace.NewPlaneBuilder(3, "/device:GPU:1")
	b.AddStat(xspace.Str("device_vendor", "sim"))
	s1 := b.Line(7, "stream 7", 1_000)
	s1.Add("gemm", 1_000, 50, xspace.Int("correlation_id", -4), xspace.Uint("group_id", 9))
	s1.Add("allreduce", 1_200, 30, xspace.Float("bytes_gb", 0.25))
	b.Line(2, "stream 2", 900).Add("gemm", 950, 10, xspace.Int("correlation_id", 5))
	if b.Line(7, "stream 7", 1_000) != s1 {
		t.Fatal("Line with an existing id returned another line")
	}
	if got := []int64{b.EventMetadata("gemm"), b.EventMetadata("allreduce"), b.EventMetadata("memcpy"), b.StatMetadata("group_id")}; got[0] != 1 || got[1] != 2 || got[2] != 3 || got[3] != 3 {
		t.Fatalf("metadata ids %v, want [1 2 3 3]", got)
	}

	i64 := func(id, v int64) *xplanepb.XStat {
		return &xplanepb.XStat{MetadataId: id, Value: &xplanepb.XStat_Int64Value{Int64Value: v}}
	}
	ev := func(meta, offPs, durPs int64, stats ...*xplanepb.XStat) *xplanepb.XEvent {
		return &xplanepb.XEvent{MetadataId: meta, Data: &xplanepb.XEvent_OffsetPs{OffsetPs: offPs}, DurationPs: durPs, Stats: stats}
	}
	want := &xplanepb.XPlane{
		Id:   3,
		Name: "/device:GPU:1",
		Lines: []*xplanepb.XLine{
			{Id: 7, Name: "stream 7", TimestampNs: 1_000, DurationPs: 230_000, Events: []*xplanepb.XEvent{
				ev(1, 0, 50_000, i64(2, -4), &xplanepb.XStat{MetadataId: 3, Value: &xplanepb.XStat_Uint64Value{Uint64Value: 9}}),
				ev(2, 200_000, 30_000, &xplanepb.XStat{MetadataId: 4, Value: &xplanepb.XStat_DoubleValue{DoubleValue: 0.25}}),
			}},
			{Id: 2, Name: "stream 2", TimestampNs: 900, DurationPs: 60_000, Events: []*xplanepb.XEvent{
				ev(1, 50_000, 10_000, i64(2, 5)),
			}},
		},
		EventMetadata: map[int64]*xplanepb.XEventMetadata{
			1: {Id: 1, Name: "gemm"}, 2: {Id: 2, Name: "allreduce"}, 3: {Id: 3, Name: "memcpy"},
		},
		StatMetadata: map[int64]*xplanepb.XStatMetadata{
			1: {Id: 1, Name: "device_vendor"}, 2: {Id: 2, Name: "correlation_id"}, 3: {Id: 3, Name: "group_id"}, 4: {Id: 4, Name: "bytes_gb"},
		},
		Stats: []*xplanepb.XStat{{MetadataId: 1, Value: &xplanepb.XStat_StrValue{StrValue: "sim"}}},
	}
	if got := b.Plane(); !proto.Equal(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", prototext.Format(got), prototext.Format(want))
	}
	line := b.Plane().GetLines()[0]
	if s, e := xspace.StartPs(line, line.GetEvents()[1]), xspace.EndPs(line, line.GetEvents()[1]); s != 1_200_000 || e != 1_230_000 {
		t.Fatalf("StartPs, EndPs = %d, %d; want 1200000, 1230000", s, e)
	}
}

func TestPlaneBuilderPanics(t *testing.T) {
	tests := []struct {
		name string
		do   func(b *xspace.PlaneBuilder)
	}{
		{"event before its line", func(b *xspace.PlaneBuilder) { b.Line(1, "l", 100).Add("e", 99, 1) }},
		{"negative duration", func(b *xspace.PlaneBuilder) { b.Line(1, "l", 100).Add("e", 100, -1) }},
		{"offset overflows ps", func(b *xspace.PlaneBuilder) { b.Line(1, "l", 0).Add("e", 1<<62, 0) }},
		{"line renamed", func(b *xspace.PlaneBuilder) { b.Line(1, "l", 0); b.Line(1, "m", 0) }},
		{"line moved", func(b *xspace.PlaneBuilder) { b.Line(1, "l", 0); b.Line(1, "l", 5) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			tt.do(xspace.NewPlaneBuilder(0, "p"))
		})
	}
}
