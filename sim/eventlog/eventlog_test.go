package eventlog

import (
	"bytes"
	"strings"
	"testing"
)

func records(n int, salt int64) []Record {
	rs := make([]Record, n)
	for i := range rs {
		rs[i] = Record{T: int64(i) * 1000, Node: int32(i % 4), Kind: Send, Peer: int32((i + 1) % 4), A: Ports(7000, 7001), B: 64, C: int64(i)*999 + salt}
	}
	return rs
}

func TestHashDependsOnEveryField(t *testing.T) {
	base := Record{T: 1, Node: 2, Kind: Recv, Peer: 3, A: 4, B: 5, C: 6}
	hashOf := func(r Record) uint64 { l := New(nil); l.Add(r); return l.Hash() }
	h0 := hashOf(base)
	tests := []struct {
		name string
		mod  func(*Record)
	}{
		{"T", func(r *Record) { r.T++ }},
		{"Node", func(r *Record) { r.Node++ }},
		{"Kind", func(r *Record) { r.Kind = Send }},
		{"Peer", func(r *Record) { r.Peer++ }},
		{"A", func(r *Record) { r.A++ }},
		{"B", func(r *Record) { r.B++ }},
		{"C", func(r *Record) { r.C++ }},
	}
	for _, tc := range tests {
		r := base
		tc.mod(&r)
		if hashOf(r) == h0 {
			t.Errorf("changing %s did not change the hash", tc.name)
		}
	}
	// The high bits too: words are folded whole, not their low bytes.
	high := []func(*Record){
		func(r *Record) { r.T ^= -1 << 63 }, func(r *Record) { r.Node ^= -1 << 31 },
		func(r *Record) { r.Peer ^= -1 << 31 }, func(r *Record) { r.A ^= -1 << 63 },
		func(r *Record) { r.B ^= -1 << 63 }, func(r *Record) { r.C ^= -1 << 63 },
	}
	for i, mod := range high {
		r := base
		mod(&r)
		if hashOf(r) == h0 {
			t.Errorf("flipping the top bit of field %d did not change the hash", i)
		}
	}
	// Order matters: the same two records swapped.
	a, b := base, base
	b.T = 2
	l1, l2 := New(nil), New(nil)
	l1.Add(a)
	l1.Add(b)
	l2.Add(b)
	l2.Add(a)
	if l1.Hash() == l2.Hash() {
		t.Error("swapping two records did not change the hash")
	}
}

func TestLinesAndCheckpoints(t *testing.T) {
	var buf bytes.Buffer
	l := New(&buf)
	for _, r := range records(3000, 0) {
		l.Add(r)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 3000 {
		t.Fatalf("%d lines, want 3000", len(lines))
	}
	if want := "2 1000 send n=1 to=2 ports=7000>7001 len=64 tx=999"; lines[1] != want {
		t.Fatalf("line 2 = %q, want %q", lines[1], want)
	}
	if got := len(l.Checkpoints()); got != 2 {
		t.Fatalf("%d checkpoints after 3000 events, want 2", got)
	}
	var file bytes.Buffer
	if _, err := l.Summary().WriteTo(&file); err != nil {
		t.Fatal(err)
	}
	back, err := ReadSummary("events.ckpt", &file)
	if err != nil {
		t.Fatal(err)
	}
	if back.Hash != l.Hash() || back.Count != 3000 || len(back.Checkpoints) != 2 {
		t.Fatalf("round trip gave %+v", back)
	}
}

func TestDivergeNamesTheBlock(t *testing.T) {
	run := func(rs []Record) Summary {
		l := New(nil)
		for _, r := range rs {
			l.Add(r)
		}
		return l.Summary()
	}
	a := records(5000, 0)
	b := records(5000, 0)
	b[2500].C++
	if d := Diverge(run(a), run(a)); d.Upto != 0 {
		t.Fatalf("equal logs diverge at %+v", d)
	}
	d := Diverge(run(a), run(b))
	if d.After != 2048 || d.Upto != 3072 {
		t.Fatalf("divergence %+v, want (2048, 3072] (event 2501 differs)", d)
	}
	d = Diverge(run(a), run(a[:4500]))
	if d.After != 4096 || d.Upto != 5000 {
		t.Fatalf("truncated log: divergence %+v, want (4096, 5000]", d)
	}
}

func TestReadSummaryErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty", "", "empty checkpoint file"},
		{"bad header", "hello\n", "ckpt:1: bad header"},
		{"bad hash", ckptHeader + " count=1024 hash=00 every=1024\nxyz\n", "ckpt:2: bad checkpoint"},
		{"missing", ckptHeader + " count=2048 hash=00 every=1024\n0000000000000001\n", "1 checkpoints for 2048 events"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadSummary("ckpt", strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestLegendNamesEveryKind(t *testing.T) {
	leg := Legend()
	for k := Kind(1); k < numKinds; k++ {
		if !strings.Contains(leg, k.String()) {
			t.Errorf("legend lacks %s", k)
		}
	}
}

// BenchmarkAdd: a record into a log without lines (the hash and the
// checkpoints), and beside it the byte-wise FNV-1a the log used before
// (issue 34): compare their ns/event in one run.
func BenchmarkAdd(b *testing.B) {
	r := records(1, 0)[0]
	b.Run("words", func(b *testing.B) {
		l := New(nil)
		b.ReportAllocs()
		for i := range b.N {
			r.T = int64(i)
			l.Add(r)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/event")
	})
	b.Run("bytes", func(b *testing.B) {
		h := uint64(fnvOffset)
		for i := range b.N {
			r.T = int64(i)
			h = foldBytes(h, r)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/event")
		if h == 0 {
			b.Log(h)
		}
	})
}

// foldBytes is the former hash: FNV-1a over each field's 8 bytes.
func foldBytes(h uint64, r Record) uint64 {
	for _, v := range [...]uint64{uint64(r.T), uint64(uint32(r.Node)), uint64(r.Kind), uint64(uint32(r.Peer)), uint64(r.A), uint64(r.B), uint64(r.C)} {
		for range 8 {
			h ^= v & 0xff
			h *= fnvPrime
			v >>= 8
		}
	}
	return h
}
