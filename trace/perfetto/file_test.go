package perfetto_test

import (
	"maps"
	"os"
	"slices"
	"testing"

	"github.com/chronosync/chronosync/trace/perfetto/perfettotest"
)

// TestCheckFile checks the trace file that CHRONOSYNC_PERFETTO_FILE names
// (perfettotest.Check: Perfetto's protos, the sequence, clocks, interning,
// tracks and nesting), and says what it holds; skipped without it:
//
//	CHRONOSYNC_PERFETTO_FILE=run/combined.perfetto-trace go test -run TestCheckFile -v ./trace/perfetto/
func TestCheckFile(t *testing.T) {
	path := os.Getenv("CHRONOSYNC_PERFETTO_FILE")
	if path == "" {
		t.Skip("set CHRONOSYNC_PERFETTO_FILE to a .perfetto-trace to check it")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := perfettotest.Check(perfettotest.Schema(t), data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	slice, instants, values, counters := 0, 0, 0, 0
	for _, tr := range s.Tracks {
		slice += tr.Slices
		instants += tr.Instants
		values += tr.Values
		if tr.Counter {
			counters++
		}
	}
	t.Logf("%s: %d bytes, %d packets (%d compressed_packets) in %d sequences (%d with incremental clocks), %d tracks, %d slices, %d instants, %d counter tracks with %d values, %d flows, %d event names, clocks %v (primary %d)",
		path, len(data), s.Packets, s.Compressed, s.Sequences, s.Incremental, len(s.Tracks), slice, instants, counters, values, len(s.Flows), len(s.Names), s.Clocks, s.Primary)
	for _, p := range s.Processes() {
		t.Logf("process %s", p)
	}
	for _, name := range slices.Sorted(maps.Keys(s.Args)) {
		t.Logf("arg %s: %s", name, s.Args[name])
	}
}
