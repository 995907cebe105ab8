package probelog

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/estimate"
)

func TestImpossibleValues(t *testing.T) {
	frame := func(payload []byte) []byte {
		var buf bytes.Buffer
		if _, err := NewWriter(&buf, Meta{Nodes: 8}); err != nil {
			t.Fatal(err)
		}
		out := append(buf.Bytes(), appendUvarint(nil, uint64(len(payload)))...)
		out = append(out, payload...)
		return appendCRC(out, payload)
	}
	ok := appendPayload(nil, &Block{Src: 1, Dst: 2, Probes: []estimate.Probe{{T1: 5, Pair: 9, Slot: 1}}})
	if got, _, err := readAll(frame(ok)); !isEOF(err) || len(got) != 1 {
		t.Fatalf("the valid payload: %v", err)
	}
	cases := map[string][]byte{
		"node outside meta": appendPayload(nil, &Block{Src: 8}),
		"T3 source 3":       bytes.Replace(ok, []byte{18, 1}, []byte{18, 7}, 1),
		"trailing bytes":    append(bytes.Clone(ok), 0),
		"count too large":   append(bytes.Clone(ok[:8]), 0xff, 0xff, 0xff, 0xff, 0x0f),
		"pair outside u32":  append(bytes.Clone(ok[:9]), 0xfe, 0xff, 0xff, 0xff, 0x3f, 0, 0, 0, 0, 0),
		"varint overflow":   append(bytes.Clone(ok[:4]), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f),
		"short probe":       ok[:len(ok)-1],
	}
	for name, p := range cases {
		if _, _, err := readAll(frame(p)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
}

// TestLyingLengths checks that lengths and counts the input cannot back cost
// no memory.
func TestLyingLengths(t *testing.T) {
	hdr, _ := encode(t, testMeta, nil)
	huge := append(bytes.Clone(hdr), appendUvarint(nil, MaxPayloadBytes)...)
	huge = append(huge, "only a few bytes"...)
	hugeCount := appendUvarint(appendPayload(nil, &Block{})[:8], 1<<40)
	over := append(bytes.Clone(hdr), appendUvarint(nil, MaxPayloadBytes+1)...)
	if _, _, err := readAll(over); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "exceeds") {
		t.Errorf("a length over the limit: %v", err)
	}
	for name, data := range map[string][]byte{
		"payload length": huge,
		"probe count":    appendCRC(append(append(bytes.Clone(hdr), appendUvarint(nil, uint64(len(hugeCount)))...), hugeCount...), hugeCount),
		"meta length":    append([]byte(Magic), appendUvarint(nil, MaxMetaBytes)...),
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, _, err := readAll(data)
		runtime.ReadMemStats(&after)
		if err == nil || isEOF(err) {
			t.Errorf("%s: no error", name)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
			t.Errorf("%s: allocated %d bytes for %d bytes of input", name, n, len(data))
		}
	}
}

// failingReader returns its data, then an I/O error.
type failingReader struct{ data []byte }

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, errors.New("device gone")
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func TestReaderErrorPassesThrough(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	data, starts := encode(t, testMeta, []*Block{randomBlock(rng), randomBlock(rng)})
	r, err := NewReader(&failingReader{data[:starts[1]+3]})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	_, err = r.Next()
	if err == nil || errors.Is(err, ErrTruncated) || errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "device gone") {
		t.Errorf("got %v, want the reader's error", err)
	}
}
