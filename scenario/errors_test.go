package scenario

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// doc joins lines into a file, so that a line's index plus one is its line
// number.
func doc(lines ...string) string { return strings.Join(lines, "\n") + "\n" }

// pgHead is withHead with the start of a phasegap workload (lines 4 and
// 5), so that lines[i] is line 6+i.
func pgHead(lines ...string) string {
	return withHead(append([]string{"workload:", "  kind: phasegap"}, lines...)...)
}

// withHead prefixes lines with a valid beginning of 3 lines (4 nodes,
// 10s), so that lines[i] is line 4+i.
func withHead(lines ...string) string {
	return doc(append([]string{"name: t", "duration: 10s", "nodes: 4"}, lines...)...)
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		file string
		line int      // the first error's line
		want []string // substrings of the first error
	}{
		{"empty file", "", 1, []string{"empty scenario file"}},
		{"only a comment", "# nothing\n", 1, []string{"empty scenario file"}},
		{"null document", "---\n~\n", 2, []string{"empty scenario file"}},
		{"not a mapping", "- a\n- b\n", 1, []string{"the scenario is a list", "expected a mapping"}},
		{"two documents", "name: a\n---\nname: b\n", 3, []string{"second YAML document"}},
		{"syntax error", "name: t\n  duration: 10s\n", 2, []string{"YAML syntax error"}},
		{"unknown key at top level", doc("name: t", "duration: 10s", "nodez: 4"), 3,
			[]string{`unknown key "nodez" in scenario; did you mean "nodes"?`, "expected one of: name, description, seed"}},
		{"unknown key far from any", withHead("colour: red"), 4,
			[]string{`unknown key "colour" in scenario; expected one of:`}},
		{"unquoted spec in a flow mapping", withHead("clocks:", "  default: {offset: uniform(-1ms, 1ms)}"), 5,
			[]string{"random spec split at its comma: quote specs inside {...}"}},
		{"unknown key nested", withHead("links:", "  default:", "    dalay: 5ms"), 6,
			[]string{`unknown key "dalay" in links.default`, "delay, jitter"}},
		{"unknown key in list item", withHead("faults:", "  - {at: 1s, kind: crash, nod: 1}"), 5,
			[]string{`unknown key "nod" in faults[0]`, "node, restart_after"}},
		{"key of another fault kind", withHead("faults:", "  - {at: 1s, kind: crash, node: 1, groups: [[1]]}"), 5,
			[]string{`unknown key "groups" in faults[0]`, "at, kind, node, restart_after"}},
		{"duplicate key", doc("name: t", "duration: 10s", "nodes: 4", "duration: 5s"), 4,
			[]string{`duration: duplicate key "duration" (first at line 2)`}},
		{"duplicate nested key", withHead("links:", "  default:", "    delay: 1ms", "    jitter: 1us", "    delay: 2ms"), 8,
			[]string{`links.default.delay: duplicate key "delay" (first at line 6)`}},
		{"missing required key", doc("name: t", "nodes: 4"), 1, []string{`missing key "duration" in scenario`}},
		{"missing fault kind", withHead("faults:", "  - at: 1s", "    node: 1"), 5, []string{`faults[0]: missing key "kind"`}},
		{"string where number expected", doc("name: t", "duration: 10s", "nodes: four"), 3,
			[]string{`nodes: expected an integer; got string "four"`}},
		{"mapping where scalar expected", withHead("seed: {a: 1}"), 4, []string{"seed: expected an integer >= 0; got a mapping"}},
		{"number where mapping expected", withHead("links: 5"), 4, []string{"links: expected a mapping", "got integer 5"}},
		{"string where number spec expected", withHead("clocks:", "  default:", "    drift_ppm: fast"), 6,
			[]string{"clocks.default.drift_ppm: expected a number, uniform(a, b) or normal(mean, sd)", `"fast"`}},
		{"malformed duration", withHead("links:", "  default:", "    delay: 5"), 6,
			[]string{`links.default.delay: malformed duration "5"`, "expected a duration like"}},
		{"malformed duration text", withHead("protocol:", "  interval: 10 parsecs"), 5,
			[]string{`protocol.interval: malformed duration "10 parsecs"`}},
		{"malformed random spec", withHead("clocks:", "  default:", "    offset: uniform(5ms)"), 6,
			[]string{`clocks.default.offset: malformed random spec "uniform(5ms)"`, "expected uniform(a, b) or normal(mean, sd)"}},
		{"unknown random spec", withHead("clocks:", "  default:", "    offset: gauss(0, 5ms)"), 6,
			[]string{`clocks.default.offset: unknown random spec "gauss"`}},
		{"random spec with bad argument", withHead("clocks:", "  default:", "    drift_ppm: uniform(-5, x)"), 6,
			[]string{`clocks.default.drift_ppm: malformed random spec "uniform(-5, x)"`, `malformed number " x"`}},
		{"reversed uniform", withHead("clocks:", "  default:", "    offset: uniform(5ms, -5ms)"), 6,
			[]string{"clocks.default.offset: uniform(5ms, -5ms) has its lower bound above its upper bound"}},
		{"normal on a non-negative field", withHead("clocks:", "  default:", "    read_noise: normal(20ns, 5ns)"), 6,
			[]string{"clocks.default.read_noise: normal(20ns, 5ns) can draw negative values"}},
		{"percent without sign", withHead("links:", "  default:", "    duplicate: 1"), 6,
			[]string{"links.default.duplicate: percentage 1 needs a % sign"}},
		{"malformed rate", withHead("links:", "  default:", "    rate: {rate: 1gigabit}"), 6,
			[]string{`links.default.rate.rate: unknown rate unit "gigabit"`}},
		{"rate without unit", withHead("links:", "  default:", "    rate: {rate: 1000}"), 6,
			[]string{"links.default.rate.rate: rate 1000 has no unit"}},
		{"malformed nic", withHead("links:", "  nic: fast"), 5,
			[]string{`links.nic: `}},
		{"bad name", doc("name: Quick Start", "duration: 10s", "nodes: 4"), 1,
			[]string{`name: invalid name "Quick Start"`}},
		{"zero duration", doc("name: t", "duration: 0s", "nodes: 4"), 2,
			[]string{`duration: duration "0s" is not positive; expected a duration > 0`}},
		{"nodes below one", doc("name: t", "duration: 10s", "nodes: 0"), 3,
			[]string{"nodes: 0 nodes; expected at least 1"}},
		{"negative delay", withHead("links:", "  default:", "    delay: -5ms"), 6,
			[]string{`links.default.delay: negative delay "-5ms"; expected a duration >= 0`}},
		{"loss above 100%", withHead("links:", "  default:", "    loss: {random: 150%}"), 6,
			[]string{"links.default.loss.random: loss 150% is above 100%"}},
		{"two loss models", withHead("links:", "  default:", "    loss:", "      random: 1%", "      state: {p13: 1%}"), 6,
			[]string{"links.default.loss: 2 loss models given; expected exactly one of random, gemodel, state"}},
		{"bad distribution", withHead("links:", "  default:", "    distribution: gaussian"), 6,
			[]string{`links.default.distribution: unknown distribution "gaussian"`, "uniform, normal, pareto, paretonormal"}},
		{"unknown topology kind", withHead("topology:", "  kind: mesh"), 5,
			[]string{`topology.kind: unknown topology kind "mesh"`, "full_mesh, ring, star, random_regular"}},
		{"random_regular impossible degree", doc("name: t", "duration: 10s", "nodes: 5", "topology:", "  kind: random_regular", "  degree: 3"), 6,
			[]string{"topology.degree: degree 3 is impossible with 5 nodes"}},
		{"random_regular degree too large", withHead("topology: {kind: random_regular, degree: 4}"), 4,
			[]string{"topology.degree: degree 4 is impossible with 4 nodes"}},
		{"star hub out of range", withHead("topology:", "  kind: star", "  hub: 4"), 6,
			[]string{"topology.hub: hub 4 does not exist; expected a node number from 0 to 3"}},
		{"hub on a ring", withHead("topology:", "  kind: ring", "  hub: 1"), 6, []string{"topology.hub: hub applies only to kind star"}},
		{"fault names a missing node", withHead("faults:", "  - at: 1s", "    kind: crash", "    node: 4"), 7,
			[]string{"faults[0].node: node 4 does not exist; expected a node number from 0 to 3 (nodes: 4)"}},
		{"fault after the end", withHead("faults:", "  - {at: 10s, kind: clock_step, node: 1, by: 1ms}"), 5,
			[]string{`faults[0].at: time "10s" is outside the run`}},
		{"unknown fault kind", withHead("faults:", "  - {at: 1s, kind: explode, node: 1}"), 5,
			[]string{`faults[0].kind: unknown fault kind "explode"`}},
		{"crash without node", withHead("faults:", "  - {at: 1s, kind: crash}"), 5, []string{"faults[0]: a crash fault needs a node"}},
		{"overlapping partition groups", withHead("faults:", "  - at: 1s", "    kind: partition", "    groups:", "      - [0, 1]", "      - [1, 2]"), 9,
			[]string{"faults[0].groups[1][0]: node 1 is in groups[0] and groups[1]; expected disjoint groups"}},
		{"link flap on a non-edge", withHead("topology: {kind: ring}", "faults:", "  - {at: 1s, kind: link_flap, between: [0, 2], down: 1ms, up: 1ms}"), 6,
			[]string{"faults[0].between: nodes 0 and 2 are not linked in the ring topology"}},
		{"override names a missing node", withHead("links:", "  overrides:", "    - {from: 0, to: 7, delay: 1ms}"), 6,
			[]string{"links.overrides[0].to: node 7 does not exist"}},
		{"override names a non-edge", withHead("topology: {kind: star, hub: 0}", "links:", "  overrides:", "    - between: [1, 2]", "      delay: 1ms"), 7,
			[]string{"links.overrides[0].between: nodes 1 and 2 are not linked in the star topology; expected an edge of the topology"}},
		{"override names no edge", withHead("links:", "  overrides:", "    - delay: 1ms"), 6,
			[]string{"links.overrides[0]: the override names no link"}},
		{"cross traffic without rate", withHead("links:", "  default:", "    cross_traffic: {kind: poisson, load: 50%}"), 6,
			[]string{"links.default.cross_traffic: cross traffic needs a rate"}},
		{"override cross traffic without rate", withHead("links:", "  overrides:", "    - from: 0", "      to: 1", "      cross_traffic: {kind: onoff, load: 50%, on: 1ms, off: 1ms}"), 8,
			[]string{"links.overrides[0].cross_traffic: cross traffic on edge 0->1 has no rate"}},
		{"onoff without periods", withHead("links:", "  default:", "    rate: {rate: 1gbit}", "    cross_traffic: {kind: onoff, load: 50%}"), 7,
			[]string{`links.default.cross_traffic.on: on "0s" is not positive`}},
		{"clock override for a missing node", withHead("clocks:", "  nodes:", "    - node: 9", "      offset: 1ms"), 6,
			[]string{"clocks.nodes[0].node: node 9 does not exist"}},
		{"step outside the run", withHead("clocks:", "  default:", "    steps: [{at: 20s, by: 1ms}]"), 6,
			[]string{`clocks.default.steps[0].at: time "20s" is outside the run`}},
		{"unknown protocol", withHead("protocol: {kind: gossip}"), 4,
			[]string{`protocol.kind: unknown protocol kind "gossip"; expected one of: ping, sync, none`}},

		// Link presets.
		{"unknown preset", withHead("links:", "  default:", "    preset: lat_2ms"), 6,
			[]string{`links.default.preset: unknown link preset "lat_2ms"; expected one of none, lat_1ms, lat_10ms, jitter_5ms_2ms, loss_0.1, bw_100mbit`}},
		{"unknown preset in an override", withHead("links:", "  overrides:", "    - {between: [0, 1], preset: lat_2ms}"), 6,
			[]string{`links.overrides[0].preset: unknown link preset "lat_2ms"; expected one of none, lat_1ms,`}},
		{"preset not a string", withHead("links:", "  default: {delay: 1ms, preset: [lat_1ms]}"), 5,
			[]string{`links.default.preset: expected a string; got a list`}},
		{"preset's fields are validated", withHead("links:", "  default:", "    preset: jitter_5ms_2ms", "    delay: -1ms"), 7,
			[]string{`links.default.delay: negative delay "-1ms"; expected a duration >= 0`}},

		// The phasegap workload and protocol none.
		{"unknown phasegap mode", pgHead("  mode: phase_xx"), 6,
			[]string{`workload.mode: unknown phasegap mode "phase_xx"; expected one of: phase_nb, phase_blk, nb_test, phase_persist, omp_tasks`}},
		{"halo smaller than B", pgHead("  halo: 4", "  timesteps: 8"), 4,
			[]string{`workload: halo 4 is smaller than B = radius × timesteps = 1 × 8 = 8, the boundary points that depend on the halo: a halo must be at least B wide`}},
		{"training key under phasegap", pgHead("  steps: 10"), 6,
			[]string{`workload.steps: steps applies only to kind training, not "phasegap"; expected one of: kind, mode, threads, N, halo, kernel,`}},
		{"phasegap key under training", trainHead("  kernel: axpy"), 7,
			[]string{`workload.kernel: kernel applies only to kind phasegap, not "training"; expected one of: kind, steps,`}},
		{"phasegap with protocol sync", withHead("protocol: {kind: sync}", "workload: {kind: phasegap}"), 5,
			[]string{`workload.kind: a phasegap workload runs alone: another protocol's traffic would share its links (protocol kind "sync"); expected protocol: {kind: none} or no protocol section`}},
		{"protocol none without workload", withHead("protocol: {kind: none}"), 4,
			[]string{`protocol.kind: protocol none runs nothing; expected a workload: {kind: phasegap}`}},
		{"ping key with protocol none", withHead("workload: {kind: phasegap}", "protocol:", "  kind: none", "  interval: 1s"), 7,
			[]string{`protocol.interval: interval applies only to kind ping, not "none"; expected one of: kind`}},
		{"faults with phasegap", withHead("workload: {kind: phasegap}", "faults:", "  - {at: 1s, kind: crash, node: 1}"), 5,
			[]string{`faults: a phasegap run has no fault model yet; expected no faults`}},
		{"phasegap on a star", withHead("topology: {kind: star}", "workload: {kind: phasegap}"), 4,
			[]string{`topology.kind: a phasegap workload runs on topology "star", but its ranks talk to (i±1) mod n; expected topology ring or full_mesh`}},
		{"phasegap on too many nodes", doc("name: t", "duration: 10s", "nodes: 1025", "topology: {kind: ring}", "workload: {kind: phasegap}"), 3,
			[]string{`nodes: 1025 nodes for a phasegap workload (one rank per node); expected at most 1024`}},

		// The sync protocol.
		{"sync key with kind ping", withHead("protocol:", "  kind: ping", "  interval: 1s", "  cadence: 1ms"), 7,
			[]string{`protocol.cadence: cadence applies only to kind sync, not "ping"; expected one of: kind, interval, payload`}},
		{"sync key with the default kind", withHead("protocol:", "  adaptive_window: {min: 1s, max: 8s}"), 5,
			[]string{`protocol.adaptive_window: adaptive_window applies only to kind sync, not "ping"`}},
		{"ping key with kind sync", withHead("protocol:", "  kind: sync", "  payload: 64"), 6,
			[]string{`protocol.payload: payload applies only to kind ping, not "sync"; expected one of: kind, mode, estimator, cadence`}},
		{"unknown key with kind sync", withHead("protocol:", "  kind: sync", "  cadense: 1ms"), 6,
			[]string{`unknown key "cadense" in protocol; did you mean "cadence"? expected one of: kind, mode, estimator`}},
		{"unknown key in adaptive_window", withHead("protocol:", "  kind: sync", "  adaptive_window: {min: 1s, mx: 8s}"), 6,
			[]string{`unknown key "mx" in protocol.adaptive_window; expected one of: min, max`}},
		{"adaptive_window without max", withHead("protocol:", "  kind: sync", "  adaptive_window:", "    min: 1s"), 7,
			[]string{`protocol.adaptive_window: missing key "max" in protocol.adaptive_window`}},
		{"consensus_gain not a number", withHead("protocol: {kind: sync, consensus_gain: half}"), 4,
			[]string{`protocol.consensus_gain: expected a number; got string "half"`}},
		{"unknown sync mode", withHead("protocol:", "  kind: sync", "  mode: leader"), 6,
			[]string{`protocol.mode: unknown sync mode "leader"; expected one of: rounds, windows, consensus`}},
		{"unknown estimator", withHead("protocol:", "  kind: sync", "  estimator: kalman"), 6,
			[]string{`protocol.estimator: unknown estimator "kalman"; expected one of: regression, minfilter, svm`}},
		{"unknown purity", withHead("protocol:", "  kind: sync", "  purity: maybe"), 6,
			[]string{`protocol.purity: unknown purity "maybe"; expected one of: auto, on, off`}},
		{"zero cadence", withHead("protocol:", "  kind: sync", "  cadence: 0s"), 6,
			[]string{`protocol.cadence: cadence "0s" is not positive; expected a duration > 0`}},
		{"negative window", withHead("protocol:", "  kind: sync", "  window: -4s"), 6,
			[]string{`protocol.window: window "-4s" is not positive; expected a duration > 0`}},
		{"zero gather_deadline", withHead("protocol:", "  kind: sync", "  gather_deadline: 0s"), 6,
			[]string{`protocol.gather_deadline: gather_deadline "0s" is not positive; expected a duration > 0`}},
		{"zero heartbeat", withHead("protocol:", "  kind: sync", "  heartbeat: 0s"), 6,
			[]string{`protocol.heartbeat: heartbeat "0s" is not positive; expected a duration > 0`}},
		{"zero pure_threshold", withHead("protocol:", "  kind: sync", "  pure_threshold: 0s"), 6,
			[]string{`protocol.pure_threshold: pure_threshold "0s" is not positive; expected a duration > 0`}},
		{"negative step_threshold", withHead("protocol:", "  kind: sync", "  step_threshold: -1ms"), 6,
			[]string{`protocol.step_threshold: negative step_threshold "-1ms"; expected a duration >= 0`}},
		{"adaptive_window min not positive", withHead("protocol:", "  kind: sync", "  adaptive_window:", "    min: 0s", "    max: 8s"), 7,
			[]string{`protocol.adaptive_window.min: adaptive_window min "0s" is not positive; expected a duration > 0 (or min and max both 0 for a fixed window)`}},
		{"adaptive_window min above window", withHead("protocol:", "  kind: sync", "  window: 4s", "  adaptive_window:", "    min: 5s", "    max: 8s"), 8,
			[]string{`protocol.adaptive_window.min: adaptive_window min "5s" is above window "4s"; expected min <= window <= max`}},
		{"adaptive_window max below window", withHead("protocol:", "  kind: sync", "  adaptive_window:", "    min: 1s", "    max: 2s"), 8,
			[]string{`protocol.adaptive_window.max: adaptive_window max "2s" is below window "4s"; expected min <= window <= max`}},
		{"window below 10 cadences", withHead("protocol:", "  kind: sync", "  cadence: 1ms", "  window: 9ms"), 7,
			[]string{`protocol.window: window "9ms" is shorter than 10 cadences of "1ms" (10ms); expected a window >= 10 × cadence`}},
		{"negative rounds", withHead("protocol:", "  kind: sync", "  rounds: -1"), 6,
			[]string{`protocol.rounds: negative rounds -1; expected a round count >= 0`}},
		{"rounds beyond the duration", doc("name: t", "duration: 30s", "nodes: 4", "protocol:", "  kind: sync", "  rounds: 10"), 6,
			[]string{`protocol.rounds: 10 rounds of 4s need at least 40s; duration is 30s; expected rounds × window <= duration`}},
		{"rounds overflowing", withHead("protocol:", "  kind: sync", "  rounds: 9223372036"), 6,
			[]string{`protocol.rounds: 9223372036 rounds of 4s need more than the longest duration; duration is 10s`}},
		{"master out of range", withHead("protocol:", "  kind: sync", "  master: 4"), 6,
			[]string{`protocol.master: master 4 does not exist; expected a node number from 0 to 3 (nodes: 4)`}},
		{"negative reference", withHead("protocol:", "  kind: sync", "  reference: -1"), 6,
			[]string{`protocol.reference: reference -1 does not exist; expected a node number from 0 to 3 (nodes: 4)`}},
		{"min_pairs below two", withHead("protocol:", "  kind: sync", "  min_pairs: 1"), 6,
			[]string{`protocol.min_pairs: min_pairs 1; expected at least 2 probe pairs`}},
		{"zero consensus_gain", withHead("protocol:", "  kind: sync", "  mode: consensus", "  consensus_gain: 0"), 7,
			[]string{`protocol.consensus_gain: consensus_gain 0 is outside (0, 1]; expected a number above 0 and at most 1`}},
		{"consensus_gain above one", withHead("protocol:", "  kind: sync", "  consensus_gain: 1.5"), 6,
			[]string{`protocol.consensus_gain: consensus_gain 1.5 is outside (0, 1]`}},
		{"converged_from zero", withHead("protocol:", "  kind: sync", "  converged_from: 0"), 6,
			[]string{`protocol.converged_from: converged_from 0; expected a round number >= 1`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(tt.file))
			if err == nil {
				t.Fatalf("Parse succeeded; want an error at line %d", tt.line)
			}
			first := strings.SplitN(err.Error(), "\n", 2)[0]
			if prefix := "x.yaml:" + strconv.Itoa(tt.line) + ": "; !strings.HasPrefix(first, prefix) {
				t.Errorf("error %q\ndoes not start with %q", first, prefix)
			}
			for _, w := range tt.want {
				if !strings.Contains(first, w) {
					t.Errorf("error %q\ndoes not contain %q", first, w)
				}
			}
			var e *Error
			if !errors.As(err, &e) || e.File != "x.yaml" || e.Line != tt.line {
				t.Errorf("errors.As: %+v; want an *Error at x.yaml:%d", e, tt.line)
			}
		})
	}
}

// TestParseReportsEveryError checks that decoding goes on after an error.
func TestParseReportsEveryError(t *testing.T) {
	file := doc("name: t", "duration: soon", "nodes: many", "bogus: 1")
	_, err := Parse("x.yaml", []byte(file))
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 3 {
		t.Fatalf("got %v; want 3 errors", err)
	}
	for i, line := range []int{2, 3, 4} {
		if list[i].Line != line {
			t.Errorf("error %d at line %d; want %d", i, list[i].Line, line)
		}
	}
}

// TestResolveErrorsHaveLines checks a seed-dependent error: an override for
// a pair that the drawn random_regular graph does not link.
func TestResolveErrorsHaveLines(t *testing.T) {
	file := doc("name: t", "duration: 10s", "nodes: 10",
		"topology: {kind: random_regular, degree: 2}")
	// Find a pair that is not an edge under seed 1, and one that is.
	s, err := Parse("x.yaml", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Resolve(1)
	if err != nil {
		t.Fatal(err)
	}
	out := r.Out(0)
	linked := map[int]bool{}
	for _, e := range out {
		linked[e.To] = true
	}
	other := 1
	for linked[other] {
		other++
	}
	file += "links:\n  overrides:\n"
	file += "    - {from: 0, to: " + strconv.Itoa(out[0].To) + ", delay: 1ms}\n"
	file += "    - {between: [0, " + strconv.Itoa(other) + "], delay: 1ms}\n"
	s, err = Parse("x.yaml", []byte(file))
	if err != nil {
		t.Fatalf("Parse: %v; a random_regular edge can only be checked by Resolve", err)
	}
	_, err = s.Resolve(1)
	want := "x.yaml:8: links.overrides[1].between: nodes 0 and " + strconv.Itoa(other) + " are not linked in the random_regular topology"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("Resolve: %v\nwant prefix %q", err, want)
	}
}

func TestValidateWithoutFile(t *testing.T) {
	s := &Scenario{Name: "t", Seed: 1, Duration: -1, Nodes: 2, Topology: Topology{Kind: FullMesh},
		Workload: Workload{Kind: WorkloadNone}, Protocol: Protocol{Kind: ProtocolPing, Interval: 1}}
	err := s.Validate()
	if err == nil || err.Error() != `duration: duration "-1ns" is not positive; expected a duration > 0` {
		t.Fatalf("Validate: %v", err)
	}
}
