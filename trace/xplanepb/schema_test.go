package xplanepb_test

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/chronosync/chronosync/trace/xplanepb"
)

// schema is XLA/TSL's xplane.proto as shared/reference/xplane_schema.md
// gives it: changing a name, number or type breaks compatibility with XLA,
// JAX, TensorFlow and xprof.
var schema = map[string][]string{
	"XSpace": {"planes 1 repeated XPlane", "errors 2 repeated string", "warnings 3 repeated string", "hostnames 4 repeated string"},
	"XPlane": {"id 1 int64", "name 2 string", "lines 3 repeated XLine",
		"event_metadata 4 map<int64, XEventMetadata>", "stat_metadata 5 map<int64, XStatMetadata>", "stats 6 repeated XStat"},
	"XLine": {"id 1 int64", "display_id 10 int64", "name 2 string", "display_name 11 string",
		"timestamp_ns 3 int64", "duration_ps 9 int64", "events 4 repeated XEvent"},
	"XEvent": {"metadata_id 1 int64", "offset_ps 2 int64 oneof data", "num_occurrences 5 int64 oneof data",
		"duration_ps 3 int64", "stats 4 repeated XStat"},
	"XStat": {"metadata_id 1 int64", "double_value 2 double oneof value", "uint64_value 3 uint64 oneof value",
		"int64_value 4 int64 oneof value", "str_value 5 string oneof value", "bytes_value 6 bytes oneof value",
		"ref_value 7 uint64 oneof value", "compressed_str_value 8 bytes oneof value"},
	"XEventMetadata": {"id 1 int64", "name 2 string", "display_name 4 string", "metadata 3 bytes",
		"stats 5 repeated XStat", "child_id 6 repeated int64"},
	"XStatMetadata": {"id 1 int64", "name 2 string", "description 3 string"},
}

func TestSchema(t *testing.T) {
	fd := xplanepb.File_trace_xplanepb_xplane_proto
	if fd.Package() != "tensorflow.profiler" || fd.Syntax() != protoreflect.Proto3 {
		t.Fatalf("package %s, syntax %s; want tensorflow.profiler, proto3", fd.Package(), fd.Syntax())
	}
	if n := fd.Messages().Len(); n != len(schema) {
		t.Errorf("%d messages, want %d", n, len(schema))
	}
	for name, want := range schema {
		md := fd.Messages().ByName(protoreflect.Name(name))
		if md == nil {
			t.Errorf("no message %s", name)
			continue
		}
		if md.Fields().Len() != len(want) {
			t.Errorf("%s: %d fields, want %d", name, md.Fields().Len(), len(want))
		}
		for i, w := range want {
			if i < md.Fields().Len() {
				if got := describe(md.Fields().Get(i)); got != w {
					t.Errorf("%s field %d: %q, want %q", name, i, got, w)
				}
			}
		}
	}
	rr := fd.Messages().ByName("XLine").ReservedRanges()
	for n := protoreflect.FieldNumber(1); n <= 12; n++ {
		if rr.Has(n) != (n >= 5 && n <= 8) {
			t.Errorf("XLine reserves %v, want 5 to 8", rr)
			break
		}
	}
}

// describe writes fd as the schema table does.
func describe(fd protoreflect.FieldDescriptor) string {
	typ := func(fd protoreflect.FieldDescriptor) string {
		if fd.Message() != nil {
			return string(fd.Message().Name())
		}
		return fd.Kind().String()
	}
	s := fmt.Sprintf("%s %d ", fd.Name(), fd.Number())
	switch {
	case fd.IsMap():
		s += fmt.Sprintf("map<%s, %s>", typ(fd.MapKey()), typ(fd.MapValue()))
	case fd.IsList():
		s += "repeated " + typ(fd)
	default:
		s += typ(fd)
	}
	if o := fd.ContainingOneof(); o != nil && !o.IsSynthetic() {
		s += " oneof " + string(o.Name())
	}
	return s
}
