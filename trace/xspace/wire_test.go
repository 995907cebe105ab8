package xspace

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"pgregory.net/rapid"
)

// TestVarints: ConsumeVarint reads what protowire.ConsumeVarint reads,
// whatever lies past the slice's end, and PutVarint writes what
// protowire.AppendVarint writes.
func TestVarints(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		// A varint of 1 to 10 bytes, each as likely.
		size := rapid.IntRange(1, 10).Draw(t, "groups")
		v := rapid.Uint64().Draw(t, "v") >> max(0, 64-7*size)
		v |= 1 << min(63, 7*(size-1))
		enc := protowire.AppendVarint(nil, v)
		var put [binary.MaxVarintLen64]byte
		if n := PutVarint(put[:], v); !bytes.Equal(put[:n], enc) {
			t.Fatalf("PutVarint(%d) = %x, want %x", v, put[:n], enc)
		}
		// The encoding, cut or not, with arbitrary bytes after it in the
		// slice's capacity.
		buf := append(slices.Clone(enc), rapid.SliceOfN(rapid.Byte(), 0, 12).Draw(t, "after")...)
		b := buf[:len(enc)]
		if rapid.Bool().Draw(t, "cut") {
			b = buf[:rapid.IntRange(0, len(enc)).Draw(t, "len")]
		}
		gv, gn := ConsumeVarint(b)
		wv, wn := protowire.ConsumeVarint(b)
		if gn != wn || (wn > 0 && gv != wv) {
			t.Fatalf("ConsumeVarint(%x, then %x) = %d, %d; want %d, %d", b, buf[len(b):], gv, gn, wv, wn)
		}
	})
}

// TestNext: the iterator hands out each field with its bytes; a field of
// a schema number but another wire type comes out as number 0 (unknown,
// as proto.Unmarshal takes it); a truncated field is ErrWire.
func TestNext(t *testing.T) {
	var ev []byte
	ev = protowire.AppendTag(ev, FieldEventOffset, protowire.VarintType)
	ev = protowire.AppendVarint(ev, 1<<40)
	ev = protowire.AppendTag(ev, FieldEventStats, protowire.BytesType)
	ev = protowire.AppendBytes(ev, []byte{8, 1})
	ev = protowire.AppendTag(ev, FieldEventDuration, protowire.BytesType) // a varint by the schema
	ev = protowire.AppendBytes(ev, []byte{1})
	ev = protowire.AppendTag(ev, 100, protowire.Fixed64Type) // a two-byte tag
	ev = protowire.AppendFixed64(ev, 7)
	want := []struct {
		num   protowire.Number
		value uint64
		data  string
	}{{FieldEventOffset, 1 << 40, ""}, {FieldEventStats, 0, "\x08\x01"}, {0, 0, "\x01"}, {100, 7, ""}}
	b := ev
	for i, w := range want {
		f, rest, err := Next(b, EventSpec)
		if err != nil {
			t.Fatalf("field %d: %v", i, err)
		}
		if f.Num != w.num || f.Value != w.value || string(f.Data) != w.data || len(f.Raw) != len(b)-len(rest) {
			t.Errorf("field %d: %+v; want number %d, value %d, data %q", i, f, w.num, w.value, w.data)
		}
		b = rest
	}
	if len(b) != 0 {
		t.Errorf("%d bytes left", len(b))
	}
	for cut := 1; cut < 7; cut++ { // within the first field, the varint of 6 bytes
		if _, _, err := Next(ev[:cut], EventSpec); err != ErrWire {
			t.Errorf("cut at %d: %v; want ErrWire", cut, err)
		}
	}
}
