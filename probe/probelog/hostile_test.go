package probelog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rawLog is a log as a hostile or broken writer may leave it: a header of
// meta as is and the payloads framed as they are, neither checked.
func rawLog(t *testing.T, meta Meta, payloads ...[]byte) []byte {
	t.Helper()
	js, err := json.Marshal(meta)
	if err != nil {
		t.Fatal(err)
	}
	out := appendUvarint([]byte(Magic), uint64(len(js)))
	out = append(out, js...)
	for _, p := range payloads {
		out = appendUvarint(out, uint64(len(p)))
		out = append(out, p...)
		out = appendCRC(out, p)
	}
	return out
}

// TestHostileLog: a header must state a node count within [MinNodes,
// MaxNodes], every block's nodes must lie below it and its window must
// not run backwards. The reader says ErrCorrupt naming the block (index
// and byte offset) and the field; the writer refuses to write what the
// reader would refuse.
func TestHostileLog(t *testing.T) {
	good := func(src, dst int) []byte {
		return appendPayload(nil, &Block{Src: src, Dst: dst, RoundID: 1, WindowID: 1, WindowStart: 10, WindowEnd: 20})
	}
	meta := func(nodes int) Meta {
		return Meta{Schema: Schema, RunID: "r", Nodes: nodes, Units: "ns", Source: "sim"}
	}
	goods := [][]byte{good(0, 1), good(1, 2), good(2, 3)}
	at3 := len(rawLog(t, meta(4), goods...)) // where block 3 starts
	for _, tc := range []struct {
		name string
		log  []byte
		want string // the whole error
	}{
		{"7a-nodes-0", rawLog(t, meta(0), good(5, 4294967297)),
			"probelog: header at byte 0: corrupt probe log: nodes 0 out of range [1, 1048576]"},
		{"7a-nodes-negative", rawLog(t, meta(-1)),
			"probelog: header at byte 0: corrupt probe log: nodes -1 out of range [1, 1048576]"},
		{"7a-nodes-above-max", rawLog(t, meta(MaxNodes+1)),
			"probelog: header at byte 0: corrupt probe log: nodes 1048577 out of range [1, 1048576]"},
		{"7a-dst-beyond-int32", rawLog(t, meta(4), append(goods, good(1, 1<<32+2))...),
			fmt.Sprintf("probelog: block 3 at byte %d: corrupt probe log: payload byte 1: dst 4294967298 out of range [0, 4)", at3)},
		{"7a-src-beyond-int32", rawLog(t, meta(4), append(goods, good(1<<32+1, 2))...),
			fmt.Sprintf("probelog: block 3 at byte %d: corrupt probe log: payload byte 0: src 4294967297 out of range [0, 4)", at3)},
		{"7a-src-at-nodes", rawLog(t, meta(4), append(goods, good(4, 2))...),
			fmt.Sprintf("probelog: block 3 at byte %d: corrupt probe log: payload byte 0: src 4 out of range [0, 4)", at3)},
		{"7a-src-beyond-uint63", rawLog(t, meta(4), append(goods, append(appendUvarint(nil, 1<<63+5), good(0, 1)[1:]...))...),
			fmt.Sprintf("probelog: block 3 at byte %d: corrupt probe log: payload byte 0: src 9223372036854775813 out of range [0, 4)", at3)},
		{"7c-window-backwards", rawLog(t, meta(4), append(goods, appendPayload(nil, &Block{Src: 1, Dst: 0, WindowStart: 20, WindowEnd: 10}))...),
			fmt.Sprintf("probelog: block 3 at byte %d: corrupt probe log: payload byte 5: window end 10 before window start 20", at3)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := readAll(tc.log)
			if !errors.Is(err, ErrCorrupt) || err.Error() != tc.want {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if strings.HasPrefix(tc.want, "probelog: block 3") && len(got) != 3 {
				t.Errorf("%d blocks before the error, want 3", len(got))
			}
		})
	}
	// The whole window of int64 is one window, not a backwards one.
	full := appendPayload(nil, &Block{Src: 0, Dst: 1, WindowStart: -1 << 63, WindowEnd: 1<<63 - 1})
	if got, _, err := readAll(rawLog(t, meta(2), full)); !isEOF(err) || len(got) != 1 {
		t.Errorf("the widest window: %v", err)
	}
}

// TestHostileWrite: the writer refuses a node count and blocks the reader
// would refuse, writing nothing for them.
func TestHostileWrite(t *testing.T) {
	for _, tc := range []struct {
		name  string
		nodes int
		block Block
		want  string
	}{
		{"7a-nodes-0", 0, Block{}, "probelog: meta: nodes 0 out of range [1, 1048576]"},
		{"7a-nodes-above-max", MaxNodes + 1, Block{}, "probelog: meta: nodes 1048577 out of range [1, 1048576]"},
		{"7a-dst-beyond-int32", 4, Block{Src: 1, Dst: 1<<32 + 2, RoundID: 3},
			"probelog: block 1→4294967298 round 3: dst 4294967298 out of range [0, 4)"},
		{"7a-src-negative", 4, Block{Src: -1, Dst: 2, RoundID: 3}, "probelog: block -1→2 round 3: src -1 out of range [0, 4)"},
		{"7c-window-backwards", 4, Block{Src: 1, Dst: 2, RoundID: 3, WindowStart: 20, WindowEnd: 10},
			"probelog: block 1→2 round 3: window end 10 before window start 20"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c counter
			w, err := NewWriter(&c, Meta{Nodes: tc.nodes})
			if tc.nodes < MinNodes || tc.nodes > MaxNodes {
				if err == nil || err.Error() != tc.want || c.calls != 0 {
					t.Fatalf("NewWriter: %v after %d writes, want %q and none", err, c.calls, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(&tc.block); err == nil || err.Error() != tc.want || c.calls != 1 {
				t.Fatalf("Write: %v after %d writes, want %q and only the header's", err, c.calls, tc.want)
			}
		})
	}
}

// TestReadFileNamesTheFile: ReadFile's errors begin with the file's path,
// then the block's index and offset and the field, and it returns the
// blocks before the bad one.
func TestReadFileNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "probes.bin")
	meta := Meta{Schema: Schema, RunID: "r", Nodes: 4, Units: "ns", Source: "sim"}
	var payloads [][]byte
	for dst := range 3 {
		payloads = append(payloads, appendPayload(nil, &Block{Src: 3, Dst: dst, WindowStart: 1, WindowEnd: 2}))
	}
	at3 := len(rawLog(t, meta, payloads...))
	payloads = append(payloads, appendPayload(nil, &Block{Src: 1, Dst: 1<<32 + 2}))
	if err := os.WriteFile(path, rawLog(t, meta, payloads...), 0o600); err != nil {
		t.Fatal(err)
	}
	blocks, m, err := ReadFile(path)
	want := fmt.Sprintf("%s: block 3 at byte %d: corrupt probe log: payload byte 1: dst 4294967298 out of range [0, 4)", path, at3)
	if !errors.Is(err, ErrCorrupt) || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
	if len(blocks) != 3 || m != meta {
		t.Errorf("got %d blocks and meta %+v, want 3 and %+v", len(blocks), m, meta)
	}
	if err := os.WriteFile(path, rawLog(t, meta, payloads[:3]...), 0o600); err != nil {
		t.Fatal(err)
	}
	if blocks, _, err := ReadFile(path); err != nil || len(blocks) != 3 || blocks[2].Dst != 2 {
		t.Errorf("a good file: %d blocks, %v", len(blocks), err)
	}
	if _, _, err := ReadFile(filepath.Join(t.TempDir(), "none.bin")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
	if _, _, err := ReadFile(path + ".x"); err == nil || !strings.HasPrefix(err.Error(), "probelog: open ") {
		t.Errorf("a missing file: %v", err)
	}
	var buf bytes.Buffer
	buf.Write(rawLog(t, Meta{Schema: Schema, Nodes: 0}))
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadFile(path); err == nil || err.Error() != path+": header at byte 0: corrupt probe log: nodes 0 out of range [1, 1048576]" {
		t.Errorf("a header of 0 nodes: %v", err)
	}
}
