package xspace_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/trace/xspace"
)

// TestTraceRecord: traces.json reads back as written; a directory without
// one has no record; a record that could mislead (unknown fields, a path
// for a file name, a file twice, a negative count) is refused, naming the
// file and the entry.
func TestTraceRecord(t *testing.T) {
	dir := t.TempDir()
	if r, err := xspace.ReadTraceRecord(dir); r != nil || err != nil {
		t.Fatalf("no traces.json: got %v, %v; want no record and no error", r, err)
	}
	want := &xspace.TraceRecord{RunID: "r", Traces: []xspace.TraceEntry{
		{Node: 0, File: "node0.xplane.pb", Counts: xspace.Counts{Bytes: 93972, Planes: 3, Events: 2422}},
		{Node: 1, File: "node1.xplane.pb", Counts: xspace.Counts{Bytes: 94009, Planes: 3, Events: 2422}}}}
	if err := xspace.WriteTraceRecord(dir, want); err != nil {
		t.Fatal(err)
	}
	got, err := xspace.ReadTraceRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := got.Lookup("node1.xplane.pb"); !ok || e != want.Traces[1] {
		t.Errorf("Lookup: %+v, %v; want %+v", e, ok, want.Traces[1])
	}
	if _, ok := got.Lookup("node2.xplane.pb"); ok {
		t.Error("Lookup found a trace the record does not name")
	}
	for _, tc := range []struct{ name, text, want string }{
		{"unknown field", `{"traces": [{"node": 0, "file": "a.pb", "evnts": 3}]}`, `unknown field "evnts"`},
		{"a path", `{"traces": [{"node": 0, "file": "../a.pb"}]}`, `traces[0]: file "../a.pb": want a file name in the record's directory`},
		{"no name", `{"traces": [{"node": 0}]}`, `traces[0]: file "": want a file name`},
		{"twice", `{"traces": [{"file": "a.pb"}, {"file": "a.pb"}]}`, `traces[1]: a.pb is recorded twice`},
		{"negative", `{"traces": [{"file": "a.pb", "events": -1}]}`, `traces[0]: negative count`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := t.TempDir()
			if err := os.WriteFile(filepath.Join(d, xspace.FileTraceRecord), []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := xspace.ReadTraceRecord(d)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), filepath.Join(d, xspace.FileTraceRecord)) {
				t.Errorf("got %v; want an error naming the file and %q", err, tc.want)
			}
		})
	}
}
