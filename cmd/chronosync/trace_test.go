package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/chronosync/chronosync/analysis/combine"
	"github.com/chronosync/chronosync/trace/snapshotpb"
	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// writeNodeTraces writes node<i>.xplane.pb for nodes 0..n-1 of a job of
// world nodes: a host plane, a GPU plane with 4 collectives and a
// snapshots plane, as a traced run writes them; with record, the run's
// traces.json too.
func writeNodeTraces(t *testing.T, dir string, n, world int, record bool) []string {
	t.Helper()
	rec := &xspace.TraceRecord{RunID: "test"}
	var paths []string
	for i := range n {
		host := xspace.NewPlaneBuilder(0, "/host:CPU")
		host.AddStat(xspace.Int("node_id", int64(i)))
		host.AddStat(xspace.Int(combine.StatWorldSize, int64(world)))
		host.AddStat(xspace.Str("run_id", "test"))
		gpu := xspace.NewPlaneBuilder(1, "/device:GPU:0")
		hl, gl := host.Line(0, "host thread", 1000), gpu.Line(0, "stream 0", 1000)
		for k := range 4 {
			at := int64(1e6 + k*1e5)
			hl.Add("launch", at-1000, 500)
			gl.Add("rcclAllReduceKernel", at, 5e4, xspace.Str("hlo_op", fmt.Sprintf("all-reduce.%d", k)))
		}
		snaps := xspace.NewPlaneBuilder(2, "/host:snapshots")
		snaps.Line(0, "snapshot pairs", 0).Add("snapshot", 0, 0, xspace.Int("sys_clock_ns", 5))
		space := &xplanepb.XSpace{Planes: []*xplanepb.XPlane{host.Plane(), gpu.Plane(), snaps.Plane()}, Hostnames: []string{fmt.Sprintf("node%d", i)}}
		path := filepath.Join(dir, fmt.Sprintf("node%d.xplane.pb", i))
		if err := xspace.Write(path, space); err != nil {
			t.Fatal(err)
		}
		_, c, err := xspace.ReadCounted(path)
		if err != nil {
			t.Fatal(err)
		}
		rec.Traces = append(rec.Traces, xspace.TraceEntry{Node: i, File: filepath.Base(path), Counts: c})
		paths = append(paths, path)
	}
	if record {
		if err := xspace.WriteTraceRecord(dir, rec); err != nil {
			t.Fatal(err)
		}
	}
	return paths
}

// runCLI runs chronosync with args and returns its exit code and output.
func runCLI(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// wantLines fails unless every line of want is a line of got.
func wantLines(t *testing.T, what, got string, want ...string) {
	t.Helper()
	lines := strings.Split(got, "\n")
	for _, w := range want {
		found := false
		for _, l := range lines {
			found = found || l == w
		}
		if !found {
			t.Errorf("%s: no line %q in\n%s", what, w, got)
		}
	}
}

// TestEmptyTrace: a 0-byte node trace is a warning on validate (printed,
// and counted in Warnings) and an error on combine that names the node
// and the file; before, validate said nothing of it and combine exited 0
// with the node at 0 events.
func TestEmptyTrace(t *testing.T) {
	dir := t.TempDir()
	paths := writeNodeTraces(t, dir, 2, 3, false)
	empty := filepath.Join(dir, "node2.xplane.pb")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCLI("validate", "--no-fail", paths[0], paths[1], empty)
	if code != 0 {
		t.Errorf("validate --no-fail: exit %d", code)
	}
	wantLines(t, "validate", out,
		"Violations: 0, Overlaps: 4, Warnings: 2",
		fmt.Sprintf("trace %s: node 2, 0 planes and 0 events, no record of its run to compare with (traces.json)", empty),
		fmt.Sprintf("warning: node 2 (%s): the trace has no planes and no events (0 bytes): nothing of it is checked", empty))

	code, _, errOut := runCLI("combine", "--traces", strings.Join(append(paths, empty), ","), "--no-correction", "--output", filepath.Join(dir, "out", "c.xplane.pb"))
	want := fmt.Sprintf("chronosync: combine: node 2 (%s): the trace has no planes and no events (0 bytes): there is nothing to align; give the node's whole trace, or leave the node out\n", empty)
	if code != 1 || errOut != want {
		t.Errorf("combine: exit %d, stderr %q; want 1, %q", code, errOut, want)
	}
}

// TestCutTrace: a node trace cut at a message boundary (its last planes
// and host name gone) still parses; where its run recorded its counts
// (traces.json) validate warns and combine refuses it, each naming the
// node, the file and both counts; before, both took it without a word.
// Whole traces print that they are what the run recorded.
func TestCutTrace(t *testing.T) {
	dir := t.TempDir()
	paths := writeNodeTraces(t, dir, 2, 2, true)
	out := filepath.Join(dir, "out", "c.xplane.pb")
	code, stdout, _ := runCLI("combine", "--traces", strings.Join(paths, ","), "--no-correction", "--output", out)
	if code != 0 {
		t.Fatalf("combine of whole traces: exit %d", code)
	}
	wantLines(t, "combine", stdout, "counts: as their runs recorded (traces.json), nodes 0-1")

	whole, err := os.ReadFile(paths[1])
	if err != nil {
		t.Fatal(err)
	}
	_, typ, n := protowire.ConsumeTag(whole)
	m := protowire.ConsumeFieldValue(0, typ, whole[n:])
	if err := os.WriteFile(paths[1], whole[:n+m], 0o644); err != nil { // its host plane alone
		t.Fatal(err)
	}
	code, stdout, _ = runCLI("validate", "--no-fail", paths[0], paths[1])
	if code != 0 {
		t.Errorf("validate --no-fail: exit %d", code)
	}
	wantLines(t, "validate", stdout,
		fmt.Sprintf("trace %s: node 1, 1 plane and 4 events, not what its run recorded (see the warning)", paths[1]),
		fmt.Sprintf("warning: node 1 (%s): trace has 1 plane and 4 events; the run recorded 3 planes and 9 events: the trace is cut", paths[1]))
	code, _, errOut := runCLI("combine", "--traces", strings.Join(paths, ","), "--no-correction", "--output", filepath.Join(dir, "cut", "c.xplane.pb"))
	want := fmt.Sprintf("chronosync: combine: node 1 (%s): trace has 1 plane and 4 events; the run recorded 3 planes and 9 events: the trace is cut (%s)\n",
		paths[1], filepath.Join(dir, "traces.json"))
	if code != 1 || errOut != want {
		t.Errorf("combine: exit %d, stderr %q; want 1, %q", code, errOut, want)
	}

	// A record of another run is no record of these traces: the counts
	// are printed as unchecked.
	rec, err := xspace.ReadTraceRecord(dir)
	if err != nil {
		t.Fatal(err)
	}
	rec.RunID = "another"
	if err := xspace.WriteTraceRecord(dir, rec); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ = runCLI("combine", "--traces", strings.Join(paths, ","), "--no-correction", "--output", filepath.Join(dir, "other", "c.xplane.pb"))
	if code != 0 {
		t.Errorf("combine against another run's record: exit %d", code)
	}
	wantLines(t, "combine", stdout, "counts: no record to compare with (traces.json), nodes 0-1: what the files hold, unchecked")
	_, stdout, _ = runCLI("validate", "--no-fail", paths[0], paths[1])
	wantLines(t, "validate", stdout, fmt.Sprintf("trace %s: node 1, 1 plane and 4 events, no record of its run to compare with (traces.json)", paths[1]))
}

// TestManyEmptyPlanes: an XSpace of empty planes reads as snapshot pairs
// of zeros, and validate skipped it as "a snapshot-pairs file"; it is an
// empty trace, with a warning, and a real snapshot file is still skipped.
// combine names the colliding planes by index and id (before: "plane
// would be named , as a plane of … already is").
func TestManyEmptyPlanes(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "node0.xplane.pb")
	if err := os.WriteFile(empty, bytes.Repeat([]byte{0x0a, 0x00}, 10), 0o644); err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join(dir, "node0.snapshots.pb")
	if err := xspace.Write(snap, &snapshotpb.SnapshotPairs{Pairs: []*snapshotpb.SnapshotPair{{SysClockNs: 5, TracerClockNs: 7}}}); err != nil {
		t.Fatal(err)
	}
	_, stdout, _ := runCLI("validate", "--no-fail", empty, snap)
	if strings.Contains(stdout, "skipped "+empty) {
		t.Errorf("validate took the empty planes for a snapshot file:\n%s", stdout)
	}
	wantLines(t, "validate", stdout,
		fmt.Sprintf("skipped %s: %v", snap, errSnapshotFile),
		fmt.Sprintf("warning: node 0 (%s): the trace has 10 planes and no events: nothing of it is checked", empty))

	code, _, errOut := runCLI("combine", "--traces", empty, "--no-correction", "--output", filepath.Join(dir, "out", "c.xplane.pb"))
	want := fmt.Sprintf(`chronosync: combine: node 0 (%s): planes[1] (id 0, no name) would be named "" in the combined trace, as planes[0] (id 0, no name) of %s already is: every plane needs a name of its own`+"\n", empty, empty)
	if code != 1 || errOut != want {
		t.Errorf("combine: exit %d, stderr %q; want 1, %q", code, errOut, want)
	}
}
