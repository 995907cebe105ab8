package combine

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// specPlane is a plane of a synthetic node: its name and how many events
// it has (on one line).
type specPlane struct {
	name   string
	events int
}

// Synthetic nodes as the tracers write them: a GPU worker (as chronosync's
// simulator and TensorFlow write it), a TPU host (as the XLA TPU profiler
// writes it, with a SparseCore and a non-core plane).
var (
	gpuNode = []specPlane{{"/host:CPU", 5}, {"/device:GPU:0", 4}, {"/device:GPU:1", 3}, {"/host:snapshots", 2},
		{"/host:metadata", 0}, {"Task Environment", 0}}
	tpuNode = []specPlane{{"/device:TPU:0", 6}, {"/device:TPU:1", 5}, {"/device:TPU:0 SparseCore 0", 2},
		{"#Chip TPU Non-Core HBM", 1}, {"/host:metadata", 0}, {"/host:CPU", 7}, {"Task Environment", 0}}
)

// writeSpecNode writes a node's trace of planes, its plane ids in order.
func writeSpecNode(t *testing.T, path string, planes []specPlane) {
	t.Helper()
	space := &xplanepb.XSpace{Hostnames: []string{"host-" + filepath.Base(path)}}
	for i, ps := range planes {
		b := xspace.NewPlaneBuilder(int64(i), ps.name)
		if ps.events > 0 {
			l := b.Line(1, "line", 1000)
			for k := range ps.events {
				l.Add("op", 1000+int64(k)*100, 50)
			}
		}
		space.Planes = append(space.Planes, b.Plane())
	}
	if err := xspace.Write(path, space); err != nil {
		t.Fatal(err)
	}
}

// realData is a file of ../shared/realdata, or the test is skipped.
func realData(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join("..", "..", "..", "shared", "realdata", name)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("real data %s: %v", name, err)
	}
	return path
}

// shownKey is a plane xprof shows, by the node it came from and its name
// there, with its events.
type shownKey struct {
	node   int
	name   string
	events int
}

// wellFormed matches the names a plane of a node > 0 may get.
var wellFormed = regexp.MustCompile(`^(/device:GPU:\d+|/device:TPU:\d+( [^/].*)?|/host:CPU/node:\d+|/node:\d+(/[^/].*)?)$`)

// TestPlaneRules combines GPU, TPU and mixed jobs and checks the combined
// trace against the model of what xprof shows (planerules_model_test.go):
// every plane a node's own trace shows is shown in the combined trace,
// with its events, but for what xprof cannot show (TPU planes beside GPU
// planes; in the non-streaming viewer, hosts past the first in a job
// without GPU planes); nothing else is shown (no snapshot plane posing as
// a GPU); device process ids are distinct; names are unique and well
// formed; every input plane says its original name.
func TestPlaneRules(t *testing.T) {
	type node struct {
		spec []specPlane
		real string // a file of shared/realdata instead
	}
	cases := []struct {
		name   string
		nodes  []node
		gpuJob bool
		// tpuEvents: the events on TPU planes both viewers show.
		tpuEvents int
	}{
		{"gpu-only", []node{{spec: gpuNode}, {spec: gpuNode}, {spec: gpuNode}}, true, 0},
		{"tpu-only", []node{{spec: tpuNode}, {spec: tpuNode}, {spec: tpuNode}}, false, 3 * (6 + 5 + 2)},
		{"mixed", []node{{spec: gpuNode}, {spec: tpuNode}, {spec: gpuNode}}, true, 0},
		{"tpu-first-mixed", []node{{spec: tpuNode}, {spec: gpuNode}}, true, 0},
		// tpu_inference_2: 2,317 + 3 × 1,712 events on its 4 TPU planes.
		{"real-tpu-x2", []node{{real: "tpu_inference_2.xplane.pb"}, {real: "tpu_inference_2.xplane.pb"}}, false, 2 * 7453},
		{"real-gpu-x2", []node{{real: "gpu_worker.xplane.pb"}, {real: "gpu_worker.xplane.pb"}}, true, 0},
		{"real-mixed", []node{{real: "tpu_inference_2.xplane.pb"}, {real: "gpu_worker.xplane.pb"}}, true, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var inputs []Input
			for i, n := range tc.nodes {
				path := filepath.Join(dir, fmt.Sprintf("node%d.xplane.pb", i))
				if n.real != "" {
					path = realData(t, n.real)
				} else {
					writeSpecNode(t, path, n.spec)
				}
				inputs = append(inputs, Input{Node: i, Trace: path})
			}
			if got := jobHasGPU(inputs); got != tc.gpuJob {
				t.Fatalf("jobHasGPU = %v, want %v", got, tc.gpuJob)
			}
			out := filepath.Join(dir, "out", "combined.xplane.pb")
			res, err := Combine(inputs, Options{Output: out, NoCorrection: true, NoTraceJSON: true})
			if err != nil {
				t.Fatal(err)
			}
			combined, err := xspace.Read(out)
			if err != nil {
				t.Fatal(err)
			}
			nodeSpaces := make([]*xplanepb.XSpace, len(inputs))
			for i, in := range inputs {
				if nodeSpaces[i], err = xspace.Read(in.Trace); err != nil {
					t.Fatal(err)
				}
			}
			checkPlaneNames(t, combined, nodeSpaces, &res.Metadata)
			for _, v := range []xprofViewer{tslViewer, streamingViewer} {
				checkShown(t, v, combined, nodeSpaces, tc.gpuJob)
				tpu := 0
				for _, sp := range xprofShows(combined, v) {
					if strings.HasPrefix(sp.plane.Name, tpuPrefix) {
						tpu += eventCount(sp.plane)
					}
				}
				if tpu != tc.tpuEvents {
					t.Errorf("%s shows %d events on TPU planes, want %d", v, tpu, tc.tpuEvents)
				}
			}
		})
	}
}

// checkPlaneNames checks the names of the combined trace's planes: unique,
// well formed, not posing as devices unless they are, each input plane's
// original_plane_name its name in its node's trace, as metadata.json says.
func checkPlaneNames(t *testing.T, combined *xplanepb.XSpace, nodes []*xplanepb.XSpace, md *Metadata) {
	t.Helper()
	seen := map[string]bool{}
	var renames []PlaneRename
	for _, n := range md.Nodes {
		renames = append(renames, n.Planes...)
	}
	inputPlanes := 0
	for _, s := range nodes {
		inputPlanes += len(s.Planes)
	}
	if len(renames) != inputPlanes {
		t.Errorf("metadata renames %d planes, the inputs have %d", len(renames), inputPlanes)
	}
	k := 0 // the next input plane, in combined order
	for _, p := range combined.Planes {
		if seen[p.Name] {
			t.Errorf("plane name %q twice", p.Name)
		}
		seen[p.Name] = true
		if strings.HasSuffix(p.Name, "/clock_metadata") {
			if posesAsDevice(p.Name) || !regexp.MustCompile(`^/node:\d+/clock_metadata$`).MatchString(p.Name) {
				t.Errorf("clock metadata plane %q", p.Name)
			}
			if _, ok := xspace.StatByName(p, p.Stats, statOriginalName); ok {
				t.Errorf("clock metadata plane %q carries %s", p.Name, statOriginalName)
			}
			continue
		}
		ns, ok := xspace.StatByName(p, p.Stats, statNodeID)
		if !ok {
			t.Errorf("plane %q has no %s", p.Name, statNodeID)
			continue
		}
		node := int(ns.GetInt64Value())
		os, ok := xspace.StatByName(p, p.Stats, statOriginalName)
		if !ok {
			t.Errorf("plane %q (node %d) has no %s", p.Name, node, statOriginalName)
			continue
		}
		orig := os.GetStrValue()
		if k < len(renames) && (renames[k].From != orig || renames[k].To != p.Name) {
			t.Errorf("plane %q: %s %q, metadata renames %q to %q", p.Name, statOriginalName, orig, renames[k].From, renames[k].To)
		}
		k++
		if !slices.ContainsFunc(nodes[node].Planes, func(q *xplanepb.XPlane) bool { return q.Name == orig }) {
			t.Errorf("plane %q: %s %q is no plane of node %d", p.Name, statOriginalName, orig, node)
		}
		if node == 0 && p.Name != orig {
			t.Errorf("node 0's plane %q renamed %q", orig, p.Name)
		}
		if node > 0 && !wellFormed.MatchString(p.Name) {
			t.Errorf("node %d's plane %q: malformed name %q", node, orig, p.Name)
		}
		isDevice := strings.HasPrefix(orig, gpuPrefix) || strings.HasPrefix(orig, tpuPrefix) || orig == hostCPU
		if !isDevice && posesAsDevice(p.Name) && p.Name != orig {
			t.Errorf("node %d's plane %q poses as a device or host: %q", node, orig, p.Name)
		}
		if strings.HasPrefix(orig, "/host:snapshots") && (strings.HasPrefix(p.Name, devicePrefix) || strings.HasPrefix(p.Name, hostCPU)) {
			t.Errorf("snapshot plane named %q", p.Name)
		}
		if strings.HasPrefix(orig, tpuPrefix) && !strings.HasPrefix(p.Name, tpuPrefix) {
			t.Errorf("TPU plane %q of node %d named %q", orig, node, p.Name)
		}
	}
}

// checkShown compares what viewer v shows of the combined trace with what
// it shows of each node's own trace.
func checkShown(t *testing.T, v xprofViewer, combined *xplanepb.XSpace, nodes []*xplanepb.XSpace, gpuJob bool) {
	t.Helper()
	want := map[shownKey]bool{}
	for i, s := range nodes {
		for _, sp := range xprofShows(s, v) {
			k := shownKey{node: i, name: sp.plane.Name, events: eventCount(sp.plane)}
			lost := ""
			switch {
			case gpuJob && strings.HasPrefix(sp.plane.Name, tpuPrefix):
				lost = "a TPU plane in a job with GPU planes"
			case !gpuJob && v == tslViewer && i > 0 && sp.host:
				lost = "a later node's host in the non-streaming viewer of a job without GPU planes"
			}
			if lost == "" {
				want[k] = true
			}
		}
	}
	got := map[shownKey]bool{}
	pids := map[uint32]string{}
	for _, sp := range xprofShows(combined, v) {
		p := sp.plane
		if prev, dup := pids[sp.pid]; dup {
			t.Errorf("%s: %q and %q share process id %d", v, prev, p.Name, sp.pid)
		}
		pids[sp.pid] = p.Name
		ns, _ := xspace.StatByName(p, p.Stats, statNodeID)
		os, _ := xspace.StatByName(p, p.Stats, statOriginalName)
		k := shownKey{node: int(ns.GetInt64Value()), name: os.GetStrValue(), events: eventCount(p)}
		if got[k] {
			t.Errorf("%s: %v shown twice", v, k)
		}
		got[k] = true
		if !want[k] {
			t.Errorf("%s shows %q (node %d's %q, %d events), which its node's own trace does not show", v, p.Name, k.node, k.name, k.events)
		}
	}
	for k := range want {
		if !got[k] {
			t.Errorf("%s does not show node %d's %q (%d events), which its node's own trace shows", v, k.node, k.name, k.events)
		}
	}
}
