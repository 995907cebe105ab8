package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/phasegap/params"
)

// TestPhasegapDefaults checks the defaults the decoder fills in for a
// phasegap workload (params.DefaultSettings, written out here so that a
// change there shows), and that protocol none is its default protocol.
func TestPhasegapDefaults(t *testing.T) {
	allDefaults := Phasegap{Settings: params.Settings{
		Mode: "phase_nb", Threads: 1, N: 100_000, Halo: 16, Kernel: "stencil3", Radius: 0, Timesteps: 1,
		Flops: 0, Bytes: 0, Iters: 200, Warmup: 20, PollEvery: 1024, Schedule: "static", Chunk: 0,
		Progress: "inline_poll"}, TraceIters: 50, Port: 7300,
	}
	some := allDefaults
	some.Mode, some.Threads, some.N, some.Halo, some.Port = params.ModeBlk, 2, 200_000, 256, 9000
	none := Protocol{Kind: ProtocolNone}
	tests := []struct {
		name     string
		file     string
		want     Phasegap
		protocol Protocol
	}{
		{"phasegap", pgHead(), allDefaults, none},
		{"flow mapping", withHead("workload: {kind: phasegap}"), allDefaults, none},
		{"protocol none written", withHead("protocol: {kind: none}", "workload: {kind: phasegap}"), allDefaults, none},
		{"some keys", pgHead("  mode: phase_blk", "  threads: 2", "  N: 200000", "  halo: 256", "  port: 9000"), some, none},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse("x.yaml", []byte(tt.file))
			if err != nil {
				t.Fatal(err)
			}
			want := Workload{Kind: WorkloadPhasegap, Phasegap: tt.want}
			if s.Workload != want {
				t.Errorf("workload\n%+v\nwant\n%+v", s.Workload, want)
			}
			if s.Protocol != tt.protocol {
				t.Errorf("protocol %+v; want %+v", s.Protocol, tt.protocol)
			}
			if defaultPhasegap() != allDefaults {
				t.Errorf("defaultPhasegap() = %+v\nwant %+v", defaultPhasegap(), allDefaults)
			}
			r := mustResolve(t, s, s.Seed)
			if r.Workload != want || r.Protocol != tt.protocol {
				t.Errorf("resolved %+v, %+v", r.Workload, r.Protocol)
			}
			roundTrip(t, s)
		})
	}
}

// TestPhasegapFile checks that every phasegap key of testdata/phasegap.yaml
// is read, that costs is joined to the file's directory by Load and kept
// as written by Parse, and that Resolve passes the workload through.
func TestPhasegapFile(t *testing.T) {
	want := Phasegap{Settings: params.Settings{
		Mode: "omp_tasks", Threads: 4, N: 50000, Halo: 64, Kernel: "stencil5", Radius: 4, Timesteps: 8,
		Flops: 16, Bytes: 8, Iters: 100, Warmup: 5, PollEvery: 512, Schedule: "dynamic", Chunk: 256,
		Progress: "progress_thread"}, Costs: "costs.json", CostsPath: filepath.Join("testdata", "costs.json"),
		TraceIters: 10, Port: 7400,
	}
	s := mustLoad(t, "testdata/phasegap.yaml")
	if s.Workload != (Workload{Kind: WorkloadPhasegap, Phasegap: want}) {
		t.Errorf("workload\n%+v\nwant\n%+v", s.Workload.Phasegap, want)
	}
	r := mustResolve(t, s, s.Seed)
	if r.Workload != s.Workload || r.Protocol != (Protocol{Kind: ProtocolNone}) {
		t.Errorf("resolved %+v, %+v", r.Workload, r.Protocol)
	}

	data, err := os.ReadFile("testdata/phasegap.yaml")
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := Parse("testdata/phasegap.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	if p := parsed.Workload.Phasegap; p.Costs != "costs.json" || p.CostsPath != "costs.json" {
		t.Errorf("Parse: costs %q, CostsPath %q; want both as written", p.Costs, p.CostsPath)
	}

	// An absolute path stays as written.
	abs := filepath.Join(t.TempDir(), "costs.json")
	file := filepath.Join(t.TempDir(), "abs.yaml")
	text := strings.Replace(string(data), "costs: costs.json", "costs: "+strconv.Quote(abs), 1)
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s = mustLoad(t, file)
	if p := s.Workload.Phasegap; p.Costs != abs || p.CostsPath != abs {
		t.Errorf("absolute costs: Costs %q, CostsPath %q; want both %q", p.Costs, p.CostsPath, abs)
	}
	roundTrip(t, s)
}

// TestPhasegapParams checks the params.Params that a phasegap workload
// builds: its settings, the ranks given, DefaultParams for the rest.
func TestPhasegapParams(t *testing.T) {
	s := mustLoad(t, "testdata/phasegap.yaml")
	got := s.Workload.Phasegap.Params(s.Nodes)
	want := params.DefaultParams()
	want.Mode, want.Ranks, want.Threads, want.N, want.Halo = "omp_tasks", 6, 4, 50000, 64
	want.Kernel, want.Radius, want.Timesteps, want.Flops, want.Bytes = "stencil5", 4, 8, 16, 8
	want.Iters, want.Warmup, want.PollEvery = 100, 5, 512
	want.Schedule, want.Chunk, want.Progress = "dynamic", 256, "progress_thread"
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Params(6) =\n%+v\nwant\n%+v", got, want)
	}
	if _, err := got.Validate(s.Nodes); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

// TestMarshalPhasegapKeys checks that Marshal writes every phasegap key,
// defaults included, in the documented order, and protocol none.
func TestMarshalPhasegapKeys(t *testing.T) {
	s, err := Parse("x.yaml", []byte(pgHead("  costs: c.json")))
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := doc("workload:",
		"  kind: phasegap",
		"  mode: phase_nb",
		"  threads: 1",
		"  N: 100000",
		"  halo: 16",
		"  kernel: stencil3",
		"  radius: 0",
		"  timesteps: 1",
		"  flops_per_point: 0",
		"  bytes_per_point: 0",
		"  iters: 200",
		"  warmup: 20",
		"  poll_every: 1024",
		"  omp_schedule: static",
		"  omp_chunk: 0",
		"  progress: inline_poll",
		"  costs: c.json",
		"  trace_iters: 50",
		"  port: 7300",
		"protocol:",
		"  kind: none")
	if !strings.HasSuffix(string(out), want) {
		t.Errorf("Marshal wrote\n%s\nwant it to end with\n%s", out, want)
	}
	for _, k := range phasegapKeys {
		if !strings.Contains(want, "\n  "+k+": ") {
			t.Errorf("key %s is not written", k)
		}
	}
}

// TestPhasegapValid lists phasegap settings at the edges of what is
// allowed.
func TestPhasegapValid(t *testing.T) {
	for _, file := range []string{
		pgHead("  threads: 1", "  N: 1", "  halo: 1", "  iters: 1", "  warmup: 0", "  poll_every: 1", "  trace_iters: 1"),
		pgHead("  threads: 1024", "  trace_iters: 1000", "  port: 1"),
		// halo = B = radius × timesteps, and halo = N.
		pgHead("  kernel: stencil5", "  timesteps: 3", "  halo: 6", "  N: 6"),
		pgHead("  kernel: axpy", "  halo: 0"),
		pgHead("  omp_schedule: guided", "  omp_chunk: 1", "  progress: progress_thread", "  mode: nb_test"),
		withHead("topology: {kind: ring}", "workload: {kind: phasegap, mode: phase_persist}", "protocol: {kind: none}"),
		doc("name: t", "duration: 1s", "nodes: 1", "workload: {kind: phasegap}"),
		doc("name: t", "duration: 1s", "nodes: 1024", "topology: {kind: ring}", "workload: {kind: phasegap}"),
		withHead("workload: {kind: phasegap}", "faults: []"),
	} {
		s, err := Parse("x.yaml", []byte(file))
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		roundTrip(t, s)
	}
}

// TestPhasegapErrors checks the errors of a phasegap workload's keys: each
// is reported alone, at its line, naming the key path.
func TestPhasegapErrors(t *testing.T) {
	tests := []struct {
		name string
		file string
		line int
		want string // the first error, after "x.yaml:LINE: "
	}{
		// Keys and kinds.
		{"unknown key", pgHead("  modee: phase_nb"), 6,
			`unknown key "modee" in workload; did you mean "mode"? expected one of: kind, mode, threads, N, halo, kernel, radius, timesteps, flops_per_point, bytes_per_point, iters, warmup, poll_every, omp_schedule, omp_chunk, progress, costs, trace_iters, port`},
		{"phasegap key with kind none", withHead("workload: {halo: 8}"), 4,
			`workload.halo: halo applies only to kind phasegap, not "none"; expected one of: kind`},
		{"port with kind none", withHead("workload:", "  kind: none", "  port: 7000"), 6,
			`workload.port: port applies only to kind training or phasegap, not "none"; expected one of: kind`},
		{"phasegap key under training", trainHead("  iters: 10"), 7,
			`workload.iters: iters applies only to kind phasegap, not "training"`},

		// Types.
		{"threads not an integer", pgHead("  threads: two"), 6, `workload.threads: expected an integer; got string "two"`},
		{"costs not a string", pgHead("  costs: {file: c.json}"), 6, `workload.costs: expected a string; got a mapping`},
		{"port out of range", pgHead("  port: 70000"), 6,
			`workload.port: port 70000 is out of range; expected a port number from 1 to 65535`},

		// Values.
		{"unknown kernel", pgHead("  kernel: stencil7"), 6,
			`workload.kernel: unknown kernel "stencil7"; expected one of: stencil3, stencil5, axpy`},
		{"unknown omp_schedule", pgHead("  omp_schedule: auto"), 6,
			`workload.omp_schedule: unknown omp_schedule "auto"; expected one of: static, dynamic, guided`},
		{"unknown progress", pgHead("  progress: async"), 6,
			`workload.progress: unknown progress "async"; expected one of: inline_poll, progress_thread`},
		{"zero threads", pgHead("  threads: 0"), 6,
			`workload.threads: threads 0 is out of range; expected a thread count from 1 to 1024`},
		{"too many threads", pgHead("  threads: 1025"), 6,
			`workload.threads: threads 1025 is out of range; expected a thread count from 1 to 1024`},
		{"zero N", pgHead("  N: 0"), 6,
			`workload.N: N 0 is out of range; expected an element count from 1 to 1073741824`},
		{"negative halo", pgHead("  halo: -1"), 6,
			`workload.halo: halo -1 is out of range; expected an element count from 0 to 1073741824`},
		{"radius too large", pgHead("  radius: 65"), 6,
			`workload.radius: radius 65 is out of range; expected a radius (0: the kernel's) from 0 to 64`},
		{"zero timesteps", pgHead("  timesteps: 0"), 6,
			`workload.timesteps: timesteps 0 is out of range; expected a step count from 1 to 65536`},
		{"negative flops_per_point", pgHead("  flops_per_point: -1"), 6,
			`workload.flops_per_point: flops_per_point -1 is out of range; expected a count from 0 to 1048576`},
		{"zero iters", pgHead("  iters: 0"), 6,
			`workload.iters: iters 0 is out of range; expected an iteration count from 1 to 1073741824`},
		{"negative warmup", pgHead("  warmup: -1"), 6,
			`workload.warmup: warmup -1 is out of range; expected an iteration count from 0 to 1073741824`},
		{"zero poll_every", pgHead("  poll_every: 0"), 6,
			`workload.poll_every: poll_every 0 is out of range; expected a point count from 1 to 1073741824`},
		{"negative omp_chunk", pgHead("  omp_chunk: -1"), 6,
			`workload.omp_chunk: omp_chunk -1 is out of range; expected a point count (0: the default) from 0 to 1073741824`},
		{"zero trace_iters", pgHead("  trace_iters: 0"), 6,
			`workload.trace_iters: trace_iters 0 is out of range; expected an iteration count from 1 to 1073741824`},
		{"port zero", pgHead("  port: 0"), 6,
			`workload.port: port 0 is out of range; expected a port number from 1 to 65535`},
		{"probe port", pgHead("  port: 7100"), 6,
			`workload.port: port 7100 is a port of the sync protocol (7100 probes, 7101 rounds); expected another port, like 7300`},

		// Cross-key rules (params.Params.Validate), on the section.
		{"halo smaller than B", pgHead("  kernel: stencil5", "  timesteps: 4", "  halo: 7"), 4,
			`workload: halo 7 is smaller than B = radius × timesteps = 2 × 4 = 8,`},
		{"halo wider than N", pgHead("  N: 8"), 4,
			`workload: halo 16 is wider than the 8 points a rank owns (N): a neighbour cannot send more than it owns`},
		{"radius below the kernel's", pgHead("  kernel: stencil5", "  radius: 1"), 4,
			`workload: radius 1 is smaller than kernel stencil5's own radius 2: its updates would read past the halo`},

		// The rest of the scenario.
		{"phasegap with ping", withHead("workload: {kind: phasegap}", "protocol: {kind: ping}"), 4,
			`workload.kind: a phasegap workload runs alone: another protocol's traffic would share its links (protocol kind "ping"); expected protocol: {kind: none} or no protocol section`},
		{"phasegap on random_regular", withHead("topology: {kind: random_regular, degree: 2}", "workload: {kind: phasegap}"), 4,
			`topology.kind: a phasegap workload runs on topology "random_regular", but its ranks talk to (i±1) mod n; expected topology ring or full_mesh`},
		{"protocol none with training", withHead("protocol: {kind: none}", "workload: {kind: training}"), 4,
			`protocol.kind: protocol none runs nothing; expected a workload: {kind: phasegap}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(tt.file))
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("Parse: %v; want an ErrorList", err)
			}
			want := "x.yaml:" + strconv.Itoa(tt.line) + ": " + tt.want
			if got := list[0].Error(); !strings.HasPrefix(got, want) {
				t.Errorf("error %q\nwant prefix %q", got, want)
			}
			// A training workload under protocol none is also told it
			// needs sync; every other case is one error.
			if len(list) != 1 && tt.name != "protocol none with training" {
				t.Errorf("%d errors; want 1:\n%v", len(list), err)
			}
		})
	}
}

// TestPhasegapBuiltInCode checks Validate on phasegap workloads and
// protocol none built in code, and round-trips the valid ones.
func TestPhasegapBuiltInCode(t *testing.T) {
	base := Scenario{Name: "in-code", Seed: 1, Duration: time.Minute, Nodes: 3,
		Topology: Topology{Kind: Ring}, Protocol: Protocol{Kind: ProtocolNone}}
	custom := defaultPhasegap()
	custom.Threads, custom.Costs, custom.CostsPath = 8, "c.json", "c.json"
	tests := []struct {
		name     string
		workload Workload
		protocol Protocol
		err      string // "" if valid
	}{
		{"phasegap", Workload{Kind: WorkloadPhasegap, Phasegap: custom}, Protocol{Kind: ProtocolNone}, ""},
		{"zero phasegap", Workload{Kind: WorkloadPhasegap}, Protocol{Kind: ProtocolNone},
			`workload.mode: unknown phasegap mode ""; expected one of: phase_nb, phase_blk, nb_test, phase_persist, omp_tasks`},
		{"costs without CostsPath", Workload{Kind: WorkloadPhasegap, Phasegap: Phasegap{Settings: params.Settings{
			Mode: "phase_nb", Threads: 1, N: 100, Halo: 1, Kernel: "axpy", Timesteps: 1, Iters: 1, PollEvery: 1,
			Schedule: "static", Progress: "inline_poll"}, Costs: "c.json", TraceIters: 1, Port: 7300}}, Protocol{Kind: ProtocolNone},
			`workload.costs: costs "c.json" with CostsPath ""; expected both set`},
		{"training with phasegap settings", Workload{Kind: WorkloadTraining, Training: defaultTraining(), Phasegap: custom},
			Protocol{Kind: ProtocolSync, Sync: defaultSync()},
			`workload: phasegap settings apply only to kind phasegap, not "training"; expected Workload.Phasegap to be zero`},
		{"phasegap with training settings", Workload{Kind: WorkloadPhasegap, Phasegap: custom, Training: defaultTraining()},
			Protocol{Kind: ProtocolNone},
			`workload: training settings apply only to kind training, not "phasegap"; expected Workload.Training to be zero`},
		{"none with phasegap settings", Workload{Kind: WorkloadNone, Phasegap: custom}, Protocol{Kind: ProtocolPing, Interval: time.Second},
			`workload: phasegap settings apply only to kind phasegap, not "none"; expected Workload.Phasegap to be zero`},
		{"protocol none with an interval", Workload{Kind: WorkloadPhasegap, Phasegap: custom}, Protocol{Kind: ProtocolNone, Interval: time.Second},
			`protocol: interval and payload apply only to kind ping, not "none"; expected them to be zero`},
		{"protocol none with sync settings", Workload{Kind: WorkloadPhasegap, Phasegap: custom}, Protocol{Kind: ProtocolNone, Sync: defaultSync()},
			`protocol: sync settings apply only to kind sync, not "none"; expected Protocol.Sync to be zero`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := base
			s.Workload, s.Protocol = tt.workload, tt.protocol
			validates(t, &s, tt.err)
		})
	}
}

// TestReadmePhasegapExample parses the phasegap example of the workload
// section of scenarios/README.md (its second YAML block).
func TestReadmePhasegapExample(t *testing.T) {
	readme, err := os.ReadFile("../scenarios/README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n### workload\n")
	section, _, _ = strings.Cut(section, "\n### ")
	_, rest, ok2 := strings.Cut(section, "`phasegap`, with every key written")
	_, rest, ok3 := strings.Cut(rest, "```yaml\n")
	example, _, ok4 := strings.Cut(rest, "```")
	if !ok || !ok2 || !ok3 || !ok4 {
		t.Fatal("README.md has no phasegap ```yaml block in its workload section")
	}
	s, err := Parse("README.md phasegap example", []byte(doc("name: t", "duration: 10s", "nodes: 4", "topology: {kind: ring}")+example))
	if err != nil {
		t.Fatal(err)
	}
	want := defaultPhasegap()
	want.Costs, want.CostsPath = "costs.json", "costs.json"
	if s.Workload != (Workload{Kind: WorkloadPhasegap, Phasegap: want}) {
		t.Errorf("the example's workload is %+v; want the defaults with costs.json", s.Workload)
	}
	for _, k := range phasegapKeys {
		if !strings.Contains(example, "\n  "+k+": ") {
			t.Errorf("the example does not write %s", k)
		}
		if !strings.Contains(section, "\n| `"+k+"` |") {
			t.Errorf("the workload table does not document %s", k)
		}
	}
	mustResolve(t, s, s.Seed)
	roundTrip(t, s)
}
