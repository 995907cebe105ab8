package xspace_test

import (
	"bytes"
	"compress/gzip"
	"testing"

	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

func TestStatString(t *testing.T) {
	plane := &xplanepb.XPlane{StatMetadata: map[int64]*xplanepb.XStatMetadata{
		1: {Id: 1, Name: "hlo_op"},
		2: {Id: 2, Name: "fusion.42"},
	}}
	tests := []struct {
		name  string
		value *xplanepb.XStat
		want  string
	}{
		{"none", &xplanepb.XStat{MetadataId: 1}, ""},
		{"double", &xplanepb.XStat{Value: &xplanepb.XStat_DoubleValue{DoubleValue: 0.1}}, "0.1"},
		{"double big", &xplanepb.XStat{Value: &xplanepb.XStat_DoubleValue{DoubleValue: 1e21}}, "1e+21"},
		{"uint64", &xplanepb.XStat{Value: &xplanepb.XStat_Uint64Value{Uint64Value: 1 << 63}}, "9223372036854775808"},
		{"int64", &xplanepb.XStat{Value: &xplanepb.XStat_Int64Value{Int64Value: -7}}, "-7"},
		{"str", &xplanepb.XStat{Value: &xplanepb.XStat_StrValue{StrValue: "all-reduce"}}, "all-reduce"},
		{"bytes", &xplanepb.XStat{Value: &xplanepb.XStat_BytesValue{BytesValue: []byte{0xde, 0xad}}}, "dead"},
		{"ref", &xplanepb.XStat{Value: &xplanepb.XStat_RefValue{RefValue: 2}}, "fusion.42"},
		{"ref unknown", &xplanepb.XStat{Value: &xplanepb.XStat_RefValue{RefValue: 9}}, "<unknown ref 9>"},
		{"compressed", &xplanepb.XStat{Value: &xplanepb.XStat_CompressedStrValue{CompressedStrValue: gz(t, "kernel_details")}}, "kernel_details"},
		{"compressed bad", &xplanepb.XStat{Value: &xplanepb.XStat_CompressedStrValue{CompressedStrValue: []byte("no")}}, "<bad compressed string: unexpected EOF>"},
		{"nil stat", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := xspace.StatString(plane, tt.value); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestStatByName(t *testing.T) {
	b := xspace.NewPlaneBuilder(0, "/host:CPU")
	b.Line(1, "l", 0).Add("e", 0, 1, xspace.Int("correlation_id", 3), xspace.Str("hlo_op", "dot"), xspace.Int("correlation_id", 4))
	plane := b.Plane()
	stats := plane.GetLines()[0].GetEvents()[0].GetStats()
	tests := []struct {
		name   string
		want   string
		wantOK bool
	}{
		{"correlation_id", "3", true}, // the first of two
		{"hlo_op", "dot", true},
		{"group_id", "", false},
	}
	for _, tt := range tests {
		st, ok := xspace.StatByName(plane, stats, tt.name)
		if ok != tt.wantOK || (ok && xspace.StatString(plane, st) != tt.want) {
			t.Errorf("StatByName(%q) = %v, %v; want %q, %v", tt.name, st, ok, tt.want, tt.wantOK)
		}
	}
}

func gz(t *testing.T, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
