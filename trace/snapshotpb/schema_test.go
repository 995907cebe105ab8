package snapshotpb_test

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/chronosync/chronosync/trace/snapshotpb"
)

func TestSchema(t *testing.T) {
	tests := []struct {
		message protoreflect.MessageDescriptor
		fields  []string
	}{
		{(&snapshotpb.SnapshotPair{}).ProtoReflect().Descriptor(), []string{"sys_clock_ns 1 int64", "tracer_clock_ns 2 int64"}},
		{(&snapshotpb.SnapshotPairs{}).ProtoReflect().Descriptor(), []string{
			"pairs 1 repeated message", "sampling_period_ns 2 uint64", "run_id 3 string", "node_id 4 int64",
			"hostname 5 string", "snapshots_taken 6 uint64", "missed_deadline 7 uint64"}},
	}
	for _, tt := range tests {
		md := tt.message
		if got := md.ParentFile().Package(); got != "chronosync.snapshot" {
			t.Errorf("%s: package %s", md.FullName(), got)
		}
		var got []string
		for i := 0; i < md.Fields().Len(); i++ {
			fd := md.Fields().Get(i)
			s := fmt.Sprintf("%s %d %s", fd.Name(), fd.Number(), fd.Kind())
			if fd.IsList() {
				s = fmt.Sprintf("%s %d repeated %s", fd.Name(), fd.Number(), fd.Kind())
			}
			got = append(got, s)
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.fields) {
			t.Errorf("%s: fields %q, want %q", md.Name(), got, tt.fields)
		}
	}
}
