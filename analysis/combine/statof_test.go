package combine

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/chronosync/chronosync/trace/xspace"
)

// TestStatOfFastPath checks that statOf's fast path reads every stat as
// statOfFields, which reads every field, does: the encodings it takes and
// those it leaves to statOfFields (longer ids, more fields, other kinds,
// truncated values, a field of the wrong wire type).
func TestStatOfFastPath(t *testing.T) {
	stat := func(fields ...[]byte) []byte { return bytes.Join(fields, nil) }
	varint := func(num protowire.Number, v uint64) []byte {
		return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), v)
	}
	str := func(num protowire.Number, s string) []byte {
		return protowire.AppendString(protowire.AppendTag(nil, num, protowire.BytesType), s)
	}
	long := string(bytes.Repeat([]byte("x"), 200))
	tests := []struct {
		name    string
		b       []byte
		wantID  int64
		wantNum protowire.Number
		wantErr bool
	}{
		{"uint", stat(varint(1, 7), varint(3, 42)), 7, 3, false},
		{"uint large", stat(varint(1, 7), varint(3, 1<<62)), 7, 3, false},
		{"int negative", stat(varint(1, 9), varint(4, uint64(1<<64-5))), 9, 4, false},
		{"ref", stat(varint(1, 2), varint(7, 5)), 2, 7, false},
		{"str", stat(varint(1, 3), str(5, "all-reduce.3")), 3, 5, false},
		{"str empty", stat(varint(1, 3), str(5, "")), 3, 5, false},
		{"str long", stat(varint(1, 3), str(5, long)), 3, 5, false},
		{"id two bytes", stat(varint(1, 300), varint(3, 1)), 300, 3, false},
		{"value first", stat(varint(3, 1), varint(1, 4)), 4, 3, false},
		{"two values: the last", stat(varint(1, 4), varint(3, 1), varint(4, 2)), 4, 4, false},
		{"trailing id", stat(varint(1, 4), varint(3, 1), varint(1, 6)), 6, 3, false},
		{"double", stat(varint(1, 4), protowire.AppendFixed64(protowire.AppendTag(nil, 2, protowire.Fixed64Type), 1)), 4, 2, false},
		{"wrong wire type", stat(varint(1, 4), str(3, "x")), 4, 0, false},
		{"no value", stat(varint(1, 4)), 4, 0, false},
		{"truncated varint", stat(varint(1, 4), []byte{tagStatUint, 0x80}), 0, 0, true},
		{"truncated string", stat(varint(1, 4), []byte{tagStatStr, 5, 'a'}), 0, 0, true},
		{"non-minimal varint", stat(varint(1, 4), []byte{tagStatUint, 0x81, 0x80, 0x00}), 4, 3, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, val, err := statOf(tt.b)
			sid, sval, serr := statOfFields(tt.b)
			if (err != nil) != tt.wantErr || (serr != nil) != tt.wantErr {
				t.Fatalf("errors %v, %v; want error %v", err, serr, tt.wantErr)
			}
			if err != nil {
				return
			}
			if id != tt.wantID || val.Num != tt.wantNum {
				t.Errorf("statOf: id %d num %d, want %d %d", id, val.Num, tt.wantID, tt.wantNum)
			}
			if id != sid || val.Num != sval.Num || val.Type != sval.Type || val.Value != sval.Value ||
				!bytes.Equal(val.Raw, sval.Raw) || !bytes.Equal(val.Data, sval.Data) {
				t.Errorf("statOf %d %+v, statOfFields %d %+v", id, val, sid, sval)
			}
		})
	}
}

// TestAppendArgsJSONFastPath checks that the stats of a message render
// alike whether their fields take appendArgsJSON's fast path (short
// stats with one-byte tags) or not (a stat over 127 bytes), with other
// fields skipped, keys from the slice and from the map, and an id the
// plane has no name for.
func TestAppendArgsJSONFastPath(t *testing.T) {
	p := &wirePlane{stats: map[int64]string{1: "a", 2: "b", 5000: "far"}, maxID: 5000}
	if err := p.prepareJSON(); err != nil {
		t.Fatal(err)
	}
	statField := func(id int64, s string) []byte {
		var st []byte
		st = protowire.AppendTag(st, xspace.FieldStatMeta, protowire.VarintType)
		st = protowire.AppendVarint(st, uint64(id))
		st = protowire.AppendTag(st, xspace.FieldStatStr, protowire.BytesType)
		st = protowire.AppendString(st, s)
		return protowire.AppendBytes(protowire.AppendTag(nil, xspace.FieldEventStats, protowire.BytesType), st)
	}
	long := string(bytes.Repeat([]byte("y"), 150))
	var msg []byte
	msg = protowire.AppendVarint(protowire.AppendTag(msg, xspace.FieldEventOffset, protowire.VarintType), 5)
	msg = append(msg, statField(1, "x")...)
	msg = append(msg, statField(2, long)...)
	msg = append(msg, statField(5000, "z")...)
	msg = append(msg, statField(7, "q")...)
	got, err := p.appendArgsJSON(nil, msg, xspace.FieldEventStats)
	if err != nil {
		t.Fatal(err)
	}
	want := `"a":"x","b":"` + long + `","far":"z","7":"q",`
	if string(got) != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}
