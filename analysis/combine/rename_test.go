package combine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// TestRename pins the renaming rules of rename.go, plane by plane.
func TestRename(t *testing.T) {
	cases := []struct {
		node   int
		prefix string
		gpuJob bool
		orig   string
		want   string
		err    string
	}{
		{0, "", true, "/device:GPU:3", "/device:GPU:3", ""},
		{2, "", true, "/device:GPU:3", "/device:GPU:131", ""},
		{2, "", false, "/device:GPU:3", "/device:GPU:131", ""},
		{1, "", true, "/device:GPU:64", "", "GPU ordinal 64"},
		{0, "", false, "/device:TPU:1", "/device:TPU:1", ""},
		{1, "", false, "/device:TPU:1", "/device:TPU:65", ""},
		{1, "", true, "/device:TPU:1", "/device:TPU:65", ""},
		{3, "", false, "/device:TPU:0 SparseCore 2", "/device:TPU:192 SparseCore 2", ""},
		{1, "", false, "/device:TPU:70", "", "TPU ordinal 70"},
		{0, "", true, "/host:CPU", "/host:CPU", ""},
		{1, "", true, "/host:CPU", "/device:GPU:10000", ""},
		{3, "", true, "/host:CPU", "/device:GPU:30000", ""},
		{1, "", false, "/host:CPU", "/host:CPU/node:1", ""},
		{1, "/clusterA", false, "/host:CPU", "/host:CPU/clusterA/node:1", ""},
		{0, "", true, "/host:snapshots", "/host:snapshots", ""},
		{1, "", true, "/host:snapshots", "/node:1/host:snapshots", ""},
		{1, "", false, "/host:snapshots", "/node:1/host:snapshots", ""},
		{2, "/c", true, "/host:metadata", "/c/node:2/host:metadata", ""},
		{1, "", false, "Task Environment", "/node:1/Task Environment", ""},
		{0, "", false, "Task Environment", "Task Environment", ""},
		{1, "", false, "#Chip TPU Non-Core HBM", "/node:1/#Chip TPU Non-Core HBM", ""},
		{1, "", true, "/device:CUSTOM:x", "/node:1/device:CUSTOM:x", ""},
		{1, "", true, "/device:GPU:x", "/node:1/device:GPU:x", ""},
		{1, "", true, "/device:GPU:+1", "/node:1/device:GPU:+1", ""},
		{1, "", true, "/host:CPUx", "/node:1/host:CPUx", ""},
		{1, "", true, "", "/node:1", ""},
	}
	for _, tc := range cases {
		r := &renamer{node: tc.node, prefix: tc.prefix, gpuJob: tc.gpuJob}
		got, err := r.rename(tc.orig)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("node %d gpuJob %v: rename(%q) = %q, %v; want an error with %q", tc.node, tc.gpuJob, tc.orig, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("node %d prefix %q gpuJob %v: rename(%q) = %q, %v; want %q", tc.node, tc.prefix, tc.gpuJob, tc.orig, got, err, tc.want)
		}
		isDevice := strings.HasPrefix(tc.orig, gpuPrefix) || strings.HasPrefix(tc.orig, tpuPrefix) || tc.orig == hostCPU
		if tc.node > 0 && posesAsDevice(got) && !isDevice {
			t.Errorf("node %d: rename(%q) = %q poses as a device or the host", tc.node, tc.orig, got)
		}
	}
}

// TestPlanePrefixRefused: a prefix that would make the /node:<id> planes
// pose as devices or the host is refused before anything is written.
func TestPlanePrefixRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "node0.xplane.pb")
	writeSpecNode(t, path, gpuNode)
	for _, tc := range []struct {
		prefix string
		ok     bool
	}{
		{"/device:GPU:9", false}, {"/device", false}, {"/host:CPU", false}, {"#Chip", false},
		{"/clusterA", true}, {"/host:C", true}, {"", true},
	} {
		out := filepath.Join(dir, "out", "c.xplane.pb")
		_, err := Combine([]Input{{Node: 0, Trace: path}}, Options{Output: out, NoCorrection: true, NoTraceJSON: true, PlanePrefix: tc.prefix})
		if (err == nil) != tc.ok {
			t.Errorf("prefix %q: err %v, want ok %v", tc.prefix, err, tc.ok)
		}
	}
}

// TestClockMetadataNameClaimed: an input plane that would take a clock
// metadata plane's name is an error, not a second plane of that name.
func TestClockMetadataNameClaimed(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "node0.xplane.pb"), filepath.Join(dir, "node1.xplane.pb")
	writeSpecNode(t, a, []specPlane{{"/host:CPU", 1}, {"/node:1/clock_metadata", 0}})
	writeSpecNode(t, b, []specPlane{{"/host:CPU", 1}})
	_, err := Combine([]Input{{Node: 0, Trace: a}, {Node: 1, Trace: b}}, Options{Output: filepath.Join(dir, "c.xplane.pb"), NoCorrection: true, NoTraceJSON: true})
	if err == nil || !strings.Contains(err.Error(), `"/node:1/clock_metadata"`) {
		t.Fatalf("err %v, want the clock metadata plane's name taken", err)
	}
}

// TestScanPlaneNames: the pre-scan finds every plane's name, also one
// written after a long run of lines (read whole), and jobHasGPU a GPU
// plane wherever it lies; a truncated file is an error.
func TestScanPlaneNames(t *testing.T) {
	dir := t.TempDir()
	big := xspace.NewPlaneBuilder(0, "/host:CPU")
	l := big.Line(1, "l", 0)
	for k := range 2000 {
		l.Add("op", int64(k), 1)
	}
	bigBytes, err := proto.Marshal(big.Plane())
	if err != nil {
		t.Fatal(err)
	}
	line, err := proto.Marshal(&xplanepb.XLine{Id: 1, Name: strings.Repeat("x", 5000)})
	if err != nil {
		t.Fatal(err)
	}
	// A plane whose name comes after its lines, as no encoder we know
	// writes it but the format allows.
	late := func(name string) []byte {
		var b []byte
		b = protowire.AppendTag(b, xspace.FieldPlaneLines, protowire.BytesType)
		b = protowire.AppendBytes(b, line)
		b = protowire.AppendTag(b, xspace.FieldPlaneName, protowire.BytesType)
		return protowire.AppendString(b, name)
	}
	space := func(planes ...[]byte) []byte {
		var b []byte
		for _, p := range planes {
			b = protowire.AppendTag(b, xspace.FieldSpacePlanes, protowire.BytesType)
			b = protowire.AppendBytes(b, p)
		}
		b = protowire.AppendTag(b, xspace.FieldSpaceHostnames, protowire.BytesType)
		return protowire.AppendString(b, "host")
	}
	tpu, err := proto.Marshal(xspace.NewPlaneBuilder(1, "/device:TPU:0").Plane())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "a.xplane.pb")
	cases := []struct {
		data  []byte
		names string
		gpu   bool
		err   bool
	}{
		{space(bigBytes, tpu, late("/host:metadata")), "/host:CPU,/device:TPU:0,/host:metadata", false, false},
		{space(bigBytes, late("/device:GPU:7"), tpu), "/host:CPU,/device:GPU:7", true, false},
		{space(tpu, bigBytes)[:len(tpu)+100], "/device:TPU:0", false, true},
	}
	for i, tc := range cases {
		if err := os.WriteFile(path, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		var names []string
		err := scanPlaneNames(path, func(n string) bool { names = append(names, n); return !strings.HasPrefix(n, gpuPrefix) })
		if (err != nil) != tc.err || strings.Join(names, ",") != tc.names {
			t.Errorf("case %d: names %q, err %v; want %q, error %v", i, names, err, tc.names, tc.err)
		}
		if got := jobHasGPU([]Input{{Trace: path}}); got != tc.gpu {
			t.Errorf("case %d: jobHasGPU %v, want %v", i, got, tc.gpu)
		}
	}
}
