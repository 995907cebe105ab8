package probelog

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/estimate"
)

func TestRoundTripRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var blocks []*Block
	for range 200 {
		blocks = append(blocks, randomBlock(rng))
	}
	data, _ := encode(t, testMeta, blocks)
	got, r, err := readAll(data)
	if !isEOF(err) {
		t.Fatalf("reading: %v", err)
	}
	if r.Meta() != testMeta {
		t.Errorf("meta = %+v, want %+v", r.Meta(), testMeta)
	}
	if r.Offset() != int64(len(data)) {
		t.Errorf("Offset() = %d, want %d", r.Offset(), len(data))
	}
	if len(got) != len(blocks) {
		t.Fatalf("read %d blocks, wrote %d", len(got), len(blocks))
	}
	for i := range blocks {
		if !reflect.DeepEqual(got[i], blocks[i]) {
			t.Fatalf("block %d:\n got %+v\nwant %+v", i, got[i], blocks[i])
		}
	}
}

func TestRoundTripLimits(t *testing.T) {
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	b := &Block{Src: 3, Dst: 1, RoundID: math.MaxUint64, WindowID: math.MaxUint64,
		WindowStart: lo, WindowEnd: hi, SentPairs: math.MaxInt, Lost: math.MaxInt,
		Probes: []estimate.Probe{
			{T1: lo, T2: hi, T3: lo, T4: hi, Pair: math.MaxUint32, Slot: 1},
			{T1: hi, T2: lo, T3: hi, T4: lo, Pair: 0, Slot: 0},
			{T1: -1, T2: hi, T3: 0, T4: lo, Pair: math.MaxUint32, Slot: 1},
		}}
	data, _ := encode(t, testMeta, []*Block{b})
	got, _, err := readAll(data)
	if !isEOF(err) || len(got) != 1 || !reflect.DeepEqual(got[0], b) {
		t.Fatalf("got %+v, %v; want %+v", got, err, b)
	}
}

func TestMeta(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Meta{RunID: "r", Nodes: 4, Source: "real/so_timestamping"})
	if err != nil {
		t.Fatal(err)
	}
	want := Meta{Schema: Schema, RunID: "r", Nodes: 4, Units: "ns", Source: "real/so_timestamping"}
	if w.Meta() != want {
		t.Errorf("writer meta = %+v, want %+v", w.Meta(), want)
	}
	if !strings.HasPrefix(buf.String(), Magic) {
		t.Errorf("header %q lacks the magic", buf.String())
	}
	if err := w.Write(&Block{Src: 4, Dst: 0}); err == nil || !strings.Contains(err.Error(), "src 4 out of range [0, 4)") {
		t.Errorf("a node outside the meta's count: %v", err)
	}
	r, err := NewReader(&buf)
	if err != nil || r.Meta() != want {
		t.Fatalf("reader: %+v, %v", r, err)
	}
	for _, schema := range []int{SchemaV1, Schema + 1} {
		if _, err := NewWriter(&buf, Meta{Schema: schema}); err == nil {
			t.Errorf("writing schema %d accepted", schema)
		}
	}
}

func TestWriteRefuses(t *testing.T) {
	cases := map[string]Block{
		"negative src":   {Src: -1},
		"negative pairs": {SentPairs: -1},
		"negative lost":  {Lost: -2},
		"slot 2":         {Probes: []estimate.Probe{{Slot: 2}}},
		"T3Source 3":     {Probes: []estimate.Probe{{T3Source: estimate.T3Kernel + 1}}},
	}
	for name, b := range cases {
		var c counter
		w, err := NewWriter(&c, testMeta)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(&b); err == nil {
			t.Errorf("%s: accepted", name)
		}
		if c.calls != 1 {
			t.Errorf("%s: %d Write calls, want only the header's", name, c.calls)
		}
	}
}

// counter counts Write calls.
type counter struct{ calls, bytes int }

func (c *counter) Write(p []byte) (int, error) { c.calls++; c.bytes += len(p); return len(p), nil }

func TestOneWritePerBlock(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var c counter
	w, err := NewWriter(&c, testMeta)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := w.Write(randomBlock(rng)); err != nil {
			t.Fatal(err)
		}
		if c.calls != i+2 {
			t.Fatalf("after %d blocks: %d Write calls", i+1, c.calls)
		}
	}
}

func TestTruncation(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	blocks := []*Block{randomBlock(rng), realisticBlock(rng, 0, 1, 7, -5e9, 40), realisticBlock(rng, 1, 0, 8, 3e9, 100)}
	data, starts := encode(t, testMeta, blocks)
	last := starts[len(starts)-1]
	for cut := last; cut < len(data); cut++ {
		got, r, err := readAll(data[:cut])
		if !reflect.DeepEqual(got, blocks[:len(blocks)-1]) {
			t.Fatalf("cut at %d: the earlier blocks differ", cut)
		}
		if cut == last {
			if !isEOF(err) {
				t.Fatalf("cut at the block boundary %d: %v, want io.EOF", cut, err)
			}
			continue
		}
		if !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), fmt.Sprintf("block %d at byte %d:", len(blocks)-1, last)) {
			t.Fatalf("cut at %d: %v, want ErrTruncated at byte %d", cut, err, last)
		}
		if r.Offset() != int64(last) {
			t.Fatalf("cut at %d: Offset() = %d, want %d", cut, r.Offset(), last)
		}
		if _, again := r.Next(); again != err {
			t.Fatalf("error not sticky: %v then %v", err, again)
		}
	}
	for cut := range starts[0] {
		_, _, err := readAll(data[:cut])
		if !errors.Is(err, ErrTruncated) {
			t.Fatalf("header cut at %d: %v, want ErrTruncated", cut, err)
		}
	}
}

func TestFlippedByte(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	blocks := []*Block{realisticBlock(rng, 0, 1, 1, 1e9, 20), randomBlock(rng), realisticBlock(rng, 2, 1, 1, 1e9, 30)}
	data, starts := encode(t, testMeta, blocks)
	starts = append(starts, len(data))
	for k := range blocks {
		prefix := len(binaryUvarint(data[starts[k]:]))
		for pos := starts[k]; pos < starts[k+1]; pos++ {
			bad := bytes.Clone(data)
			bad[pos] ^= 0x5a
			got, _, err := readAll(bad)
			if len(got) != k || (k > 0 && !reflect.DeepEqual(got, blocks[:k])) {
				t.Fatalf("flip at %d: %d blocks before the error, want %d", pos, len(got), k)
			}
			where := fmt.Sprintf("block %d at byte %d:", k, starts[k])
			inPrefix := pos < starts[k]+prefix
			switch {
			case errors.Is(err, ErrCorrupt) && strings.Contains(err.Error(), where):
			case inPrefix && errors.Is(err, ErrTruncated):
				// A longer length makes the last block look torn.
			default:
				t.Fatalf("flip at %d (block %d): %v, want ErrCorrupt %s", pos, k, err, where)
			}
		}
	}
	bad := bytes.Clone(data)
	bad[0] = 'X'
	if _, _, err := readAll(bad); !errors.Is(err, ErrNotProbeLog) || !strings.Contains(err.Error(), "not a probe log") {
		t.Errorf("bad magic: %v", err)
	}
	bad = bytes.Clone(data)
	bad[len(Magic)+3] ^= 0x5a // inside the meta JSON
	if _, _, err := readAll(bad); !errors.Is(err, ErrCorrupt) {
		t.Errorf("bad meta: %v", err)
	}
}

// binaryUvarint returns the bytes of the uvarint that starts p.
func binaryUvarint(p []byte) []byte {
	for i, c := range p {
		if c < 0x80 {
			return p[:i+1]
		}
	}
	return p
}

func TestBytesPerProbe(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var blocks []*Block
	probes := 0
	for round := range uint64(4) {
		for e := range 8 {
			b := realisticBlock(rng, e, (e+1)%8, round, int64(round)*1e9-5e8, 1250) // 1 s windows
			blocks = append(blocks, b)
			probes += len(b.Probes)
		}
	}
	data, _ := encode(t, testMeta, blocks)
	per := float64(len(data)) / float64(probes)
	t.Logf("realistic stream: %d probes in %d bytes, %.2f bytes/probe (header and framing included)", probes, len(data), per)
	if per > 16 {
		t.Errorf("%.2f bytes/probe, want at most 16", per)
	}
}

// TestT3Source round-trips every source in both slots, and reads a log of
// schema 1, whose probes recorded no source.
func TestT3Source(t *testing.T) {
	var probes []estimate.Probe
	for _, src := range []estimate.T3Source{estimate.T3Unrecorded, estimate.T3User, estimate.T3Kernel} {
		for slot := range uint8(2) {
			probes = append(probes, estimate.Probe{T1: 10, T2: 20, T3: 30, T4: 40, Pair: uint32(len(probes)), Slot: slot, T3Source: src})
		}
	}
	b := &Block{Src: 0, Dst: 1, SentPairs: len(probes), Probes: probes}
	if k, u, x := b.T3Sources(); k != 2 || u != 2 || x != 2 {
		t.Errorf("T3Sources() = %d kernel, %d user, %d unrecorded; want 2 of each", k, u, x)
	}
	data, _ := encode(t, testMeta, []*Block{b})
	got, _, err := readAll(data)
	if !isEOF(err) || len(got) != 1 || !reflect.DeepEqual(got[0], b) {
		t.Fatalf("got %+v, %v; want %+v", got, err, b)
	}

	// Schema 1 is schema 2 with every source unrecorded (0), and "schema":1
	// in its header.
	v1 := func(probes []estimate.Probe) []byte {
		data, _ := encode(t, testMeta, []*Block{{Src: 0, Dst: 1, Probes: probes}})
		return bytes.Replace(data, []byte(`"schema":2`), []byte(`"schema":1`), 1)
	}
	old := []estimate.Probe{{T1: 1, T2: 2, T3: 3, T4: 4, Slot: 1}, {T1: 5, T2: 6, T3: 7, T4: 8, Pair: 1}}
	got, r, err := readAll(v1(old))
	if !isEOF(err) || len(got) != 1 || !reflect.DeepEqual(got[0].Probes, old) {
		t.Fatalf("schema 1: got %+v, %v; want the probes %+v", got, err, old)
	}
	if r.Meta().Schema != SchemaV1 {
		t.Errorf("schema 1: meta %+v", r.Meta())
	}
	// In schema 1 the varint is the bare slot: a source there is corrupt.
	if _, _, err := readAll(v1([]estimate.Probe{{T3Source: estimate.T3Kernel}})); !errors.Is(err, ErrCorrupt) ||
		!strings.Contains(err.Error(), "slot 4") {
		t.Errorf("schema 1 with a source: %v, want ErrCorrupt naming slot 4", err)
	}
	// A schema this package does not know.
	data, _ = encode(t, testMeta, nil)
	if _, _, err := readAll(bytes.Replace(data, []byte(`"schema":2`), []byte(`"schema":3`), 1)); !errors.Is(err, ErrCorrupt) ||
		!strings.Contains(err.Error(), "reads schemas 1 and 2") {
		t.Errorf("schema 3: %v", err)
	}
}
