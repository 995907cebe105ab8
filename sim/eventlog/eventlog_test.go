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

func BenchmarkAdd(b *testing.B) {
	l := New(nil)
	r := records(1, 0)[0]
	b.ReportAllocs()
	for i := range b.N {
		r.T = int64(i)
		l.Add(r)
	}
}
