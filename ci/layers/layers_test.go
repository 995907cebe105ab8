// Package layers holds the test that keeps the import graph pointing one
// way, as docs/architecture.md states it: every package of the module has
// a layer, and a package imports only packages of its own layer or below,
// with the seam's rule on top (protocol code never sees a world, and a
// world never sees protocol code). It reads `go list` output, with every
// build tag the project uses.
package layers

import (
	"bytes"
	"encoding/json"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/chronosync/chronosync"

// Layers, bottom to top, as docs/architecture.md's table lists them.
const (
	data     = iota // formats, models, schemas: import nothing above
	seam            // world and its conformance suite
	protocol        // code that runs on a node, through world only
	worlds          // the simulator and the real backend
	offline         // analysis of what runs wrote
	running         // the harness, services, tools and the CLI
)

var layerNames = []string{"data and models", "the seam", "protocol code", "the worlds", "offline analysis", "running it"}

// layerOf is each package's layer; a package missing from it fails the
// test, so that a new package is placed (and documented) when it is added.
func layerOf() map[string]int {
	return map[string]int{
		"analysis/stats": data, "analysis/offsets": data, "analysis/selfcheck": data,
		"model/clockmodel": data, "model/globaltime": data, "model/netem": data, "model/rng": data, "model/topology": data,
		"infile": data, "infile/readers": data, "lockfile": data, "auth": data, "mpi": data,
		"scenario": data, "scenarios": data, "phasegap/params": data, "phasegap/buildstamp": data, "phasegap/report": data,
		"probe/probelog": data, "rounds/syncpb": data, "rounds/wire": data,
		"trace/xplanepb": data, "trace/snapshotpb": data, "trace/xspace": data, "trace/kineto": data,
		"trace/perfetto": data, "trace/perfetto/perfettotest": data, "trace/chromejson": data,

		"world": seam, "world/worldtest": seam,

		"ping": protocol, "probe": protocol, "estimate": protocol, "graphcalc": protocol, "rounds": protocol,
		"workload/training": protocol, "workload/snapshots": protocol, "workload/halo": protocol,
		"phasegap": protocol, "phasegap/mpicomm": protocol,

		"sim": worlds, "sim/kernel": worlds, "sim/eventlog": worlds,
		"real": worlds, "real/tsudp": worlds, "real/netlab": worlds, "real/shaper": worlds, "real/rocm": worlds, "real/hostload": worlds,

		"analysis": offline, "analysis/groundtruth": offline, "analysis/align": offline, "analysis/combine": offline,
		"analysis/validate": offline, "report": offline,
		"phasegap/plot": offline, "phasegap/output": offline, "phasegap/sweep": offline,

		"harness": running, "harness/engine": running, "harness/phasegaprun": running, "harness/pingrun": running, "harness/syncrun": running, "harness/simbackend": running, "harness/realbackend": running, "harness/cluster": running, "peers": running, "timepage": running, "ntpshm": running, "metrics": running,
		"nodestatus": running, "phasegap/mpirun": running, "cmd/chronosync": running, "bench": running,
		"ci/busy": running, "ci/needs": running, "ci/layers": running,
	}
}

// allowed are the imports the layers' order alone would refuse, each with
// why it is right (docs/architecture.md names them too).
var allowed = map[[2]string]string{
	{"probe/probelog", "estimate"}: "probes.bin stores estimate.Probe values",
}

// pkg is what go list says of one package.
type pkg struct {
	ImportPath string
	Imports    []string
}

func list(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-tags", "mpi rocm", "-json=ImportPath,Imports", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// own is a module path without the module's prefix; ok false for a path
// outside the module.
func own(path string) (string, bool) {
	if path == module {
		return "", true
	}
	return strings.CutPrefix(path, module+"/")
}

func TestLayers(t *testing.T) {
	layers := layerOf()
	pkgs := list(t)
	if len(pkgs) < 50 {
		t.Fatalf("go list found %d packages: the listing is wrong", len(pkgs))
	}
	seen := map[string]bool{}
	for _, p := range pkgs {
		name, _ := own(p.ImportPath)
		seen[name] = true
		from, ok := layers[name]
		if !ok {
			t.Errorf("%s has no layer: add it to layerOf and to docs/architecture.md's table", name)
			continue
		}
		for _, imp := range p.Imports {
			to, mine := own(imp)
			if !mine {
				continue
			}
			lt, ok := layers[to]
			if !ok {
				continue // reported as a package of its own
			}
			why := ""
			switch {
			case from == worlds && lt == protocol:
				why = "a world never imports protocol code"
			case lt > from:
				why = "imports a higher layer (" + layerNames[lt] + ")"
			}
			if why == "" {
				continue
			}
			if _, ok := allowed[[2]string{name, to}]; ok {
				continue
			}
			t.Errorf("%s (%s) imports %s: %s", name, layerNames[from], to, why)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(layers)) {
		if !seen[name] {
			t.Errorf("layerOf lists %s, which go list does not know: remove it", name)
		}
	}
}

// TestSeam is the seam's own rule, stated on its own: nothing outside the
// simulator imports sim but harness and its simulator backend
// (harness/simbackend; and bench, which benchmarks it), and
// no protocol package reaches a world, also indirectly.
func TestSeam(t *testing.T) {
	for _, p := range list(t) {
		name, _ := own(p.ImportPath)
		for _, imp := range p.Imports {
			to, _ := own(imp)
			if (to == "sim" || strings.HasPrefix(to, "sim/")) && !strings.HasPrefix(name, "sim") &&
				name != "harness" && name != "harness/simbackend" && name != "bench" {
				t.Errorf("%s imports %s: only harness (and its simulator backend) knows the simulator", name, to)
			}
		}
	}
	layers := layerOf()
	var proto []string
	for n, l := range layers {
		if l == protocol {
			proto = append(proto, module+"/"+n)
		}
	}
	slices.Sort(proto)
	args := append([]string{"list", "-tags", "mpi rocm", "-deps", "-f", "{{.ImportPath}}"}, proto...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if to, mine := own(dep); mine && layers[to] == worlds {
			t.Errorf("protocol code depends on %s, a world", to)
		}
	}
}
