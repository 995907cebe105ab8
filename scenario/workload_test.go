package scenario

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// trainHead is withHead with the sync protocol and the start of a training
// workload (lines 4 to 6), so that lines[i] is line 7+i.
func trainHead(lines ...string) string {
	return withHead(append([]string{"protocol: {kind: sync}", "workload:", "  kind: training"}, lines...)...)
}

// TestWorkloadDefaults checks the defaults the decoder fills in for each
// workload kind, and that the training settings of kind none stay zero.
func TestWorkloadDefaults(t *testing.T) {
	allDefaults := Training{
		Steps:              50,
		CollectivesPerStep: 8,
		ComputePerStep:     16,
		Streams:            2,
		ComputeDuration:    200 * time.Microsecond,
		CollectiveDuration: 100 * time.Microsecond,
		Spread:             0.2,
		LaunchGap:          10 * time.Microsecond,
		StepGap:            time.Millisecond,
		StartDelay:         0,
		Port:               7200,
		SnapshotPeriod:     4 * time.Second,
		SnapshotCapacity:   4096,
		SnapshotBurst:      4,
	}
	doubled := allDefaults
	doubled.CollectivesPerStep, doubled.ComputePerStep = 3, 6
	some := allDefaults
	some.CollectivesPerStep, some.ComputePerStep, some.StartDelay, some.Spread, some.Port = 3, 0, 2*time.Second, 0, 9000
	kineto := allDefaults
	kineto.Kineto = true
	tests := []struct {
		name string
		file string
		want Workload
	}{
		{"no workload", withHead(), Workload{Kind: WorkloadNone}},
		{"none", withHead("workload: {kind: none}"), Workload{Kind: WorkloadNone}},
		{"none without kind", withHead("workload: {}"), Workload{Kind: WorkloadNone}},
		{"training", trainHead(), Workload{Kind: WorkloadTraining, Training: allDefaults}},
		{"compute_per_step follows collectives_per_step", trainHead("  collectives_per_step: 3"),
			Workload{Kind: WorkloadTraining, Training: doubled}},
		{"training with some keys", trainHead("  collectives_per_step: 3", "  compute_per_step: 0",
			"  start_delay: 2s", "  spread: 0", "  port: 9000"), Workload{Kind: WorkloadTraining, Training: some}},
		{"kineto", trainHead("  kineto: true"), Workload{Kind: WorkloadTraining, Training: kineto}},
		{"kineto false", trainHead("  kineto: false"), Workload{Kind: WorkloadTraining, Training: allDefaults}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse("x.yaml", []byte(tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if s.Workload != tt.want {
				t.Errorf("workload\n%+v\nwant\n%+v", s.Workload, tt.want)
			}
			if defaultTraining() != allDefaults {
				t.Errorf("defaultTraining() = %+v\nwant %+v", defaultTraining(), allDefaults)
			}
			r := mustResolve(t, s, s.Seed)
			if r.Workload != tt.want {
				t.Errorf("resolved workload\n%+v\nwant\n%+v", r.Workload, tt.want)
			}
			roundTrip(t, s)
		})
	}
}

// TestTrainingFile checks that every training key of testdata/training.yaml
// is read, and that Resolve passes the workload through unchanged.
func TestTrainingFile(t *testing.T) {
	s := mustLoad(t, "testdata/training.yaml")
	want := Workload{Kind: WorkloadTraining, Training: Training{
		Steps:              20,
		CollectivesPerStep: 4,
		ComputePerStep:     6,
		Streams:            3,
		ComputeDuration:    150 * time.Microsecond,
		CollectiveDuration: 80 * time.Microsecond,
		Spread:             0.1,
		LaunchGap:          5 * time.Microsecond,
		StepGap:            2 * time.Millisecond,
		StartDelay:         5 * time.Second,
		Port:               7300,
		SnapshotPeriod:     2 * time.Second,
		SnapshotCapacity:   256,
		SnapshotBurst:      2,
	}}
	if s.Workload != want {
		t.Errorf("workload\n%+v\nwant\n%+v", s.Workload, want)
	}
	r := mustResolve(t, s, s.Seed)
	if r.Workload != want {
		t.Errorf("resolved workload\n%+v\nwant\n%+v", r.Workload, want)
	}
}

// TestMarshalTrainingKeys checks that Marshal writes every training key,
// defaults included, in the documented order.
func TestMarshalTrainingKeys(t *testing.T) {
	s, err := Parse("x.yaml", []byte(trainHead()))
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := doc("workload:",
		"  kind: training",
		"  steps: 50",
		"  collectives_per_step: 8",
		"  compute_per_step: 16",
		"  streams: 2",
		"  compute_duration: 200us",
		"  collective_duration: 100us",
		"  spread: 0.2",
		"  launch_gap: 10us",
		"  step_gap: 1ms",
		"  start_delay: 0s",
		"  port: 7200",
		"  snapshot_period: 4s",
		"  snapshot_capacity: 4096",
		"  snapshot_burst: 4",
		"  kineto: false",
		"protocol:")
	if !strings.Contains(string(out), want) {
		t.Errorf("Marshal wrote\n%s\nwant it to contain\n%s", out, want)
	}
	if len(trainingKeys) != 15 {
		t.Errorf("%d training keys; want 15", len(trainingKeys))
	}
	for _, k := range trainingKeys {
		if !strings.Contains(want, "\n  "+k+": ") {
			t.Errorf("key %s is not written", k)
		}
	}
}

// TestTrainingValid lists training settings at the edges of what is
// allowed.
func TestTrainingValid(t *testing.T) {
	for _, file := range []string{
		trainHead("  steps: 1", "  collectives_per_step: 1", "  compute_per_step: 0", "  streams: 1"),
		trainHead("  steps: 1048576", "  collectives_per_step: 1024", "  compute_per_step: 4096", "  streams: 64"),
		trainHead("  spread: 0.999", "  compute_duration: 1ns", "  collective_duration: 1ns", "  launch_gap: 1ns", "  step_gap: 1ns"),
		// start_delay just before the end, a period as long as the run.
		trainHead("  start_delay: 9999ms", "  snapshot_period: 10s", "  snapshot_capacity: 2"),
		trainHead("  port: 1"),
		trainHead("  port: 65535"),
		trainHead("  port: 7102"),
	} {
		s, err := Parse("x.yaml", []byte(file))
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		roundTrip(t, s)
	}
}

// TestWorkloadErrors checks every error of the workload section: each is
// reported at its line, naming the key path.
func TestWorkloadErrors(t *testing.T) {
	tests := []struct {
		name string
		file string
		line int
		want string // the first error, after "x.yaml:LINE: "
	}{
		// Keys and kinds.
		{"training key with kind none", withHead("workload:", "  kind: none", "  steps: 10"), 6,
			`workload.steps: steps applies only to kind training, not "none"; expected one of: kind`},
		{"training key without kind", withHead("workload: {snapshot_period: 1s}"), 4,
			`workload.snapshot_period: snapshot_period applies only to kind training, not "none"; expected one of: kind`},
		{"unknown key with kind training", trainHead("  stepz: 10"), 7,
			`unknown key "stepz" in workload; did you mean "steps"? expected one of: kind, steps, collectives_per_step, compute_per_step, streams, compute_duration, collective_duration, spread, launch_gap, step_gap, start_delay, port, snapshot_period, snapshot_capacity`},
		{"unknown key with kind none", withHead("workload:", "  kind: none", "  colour: red"), 6,
			`unknown key "colour" in workload; expected one of: kind`},
		{"duplicate key", trainHead("  steps: 10", "  steps: 20"), 8,
			`workload.steps: duplicate key "steps" (first at line 7); expected each key once`},
		{"unknown workload kind", withHead("protocol: {kind: sync}", "workload:", "  kind: halo", "  steps: 10"), 6,
			`workload.kind: unknown workload kind "halo"; expected one of: none, training, phasegap`},
		{"not a mapping", withHead("workload: training"), 4,
			`workload: expected a mapping with keys kind; got string "training"`},
		{"training without a protocol", withHead("workload:", "  kind: training"), 5,
			`workload.kind: a training workload needs protocol kind sync, not "ping" (its offsets place the nodes' traces on one timeline); expected protocol: {kind: sync}`},
		{"training with ping", withHead("protocol: {kind: ping}", "workload: {kind: training}"), 5,
			`workload.kind: a training workload needs protocol kind sync, not "ping"`},

		// Types.
		{"steps not an integer", trainHead("  steps: many"), 7, `workload.steps: expected an integer; got string "many"`},
		{"spread not a number", trainHead("  spread: wide"), 7, `workload.spread: expected a number; got string "wide"`},
		{"malformed duration", trainHead("  step_gap: 5"), 7, `workload.step_gap: malformed duration "5"`},
		{"port not an integer", trainHead("  port: http"), 7, `workload.port: expected an integer; got string "http"`},
		{"kineto not a boolean", trainHead("  kineto: 1"), 7, `workload.kineto: expected true or false; got integer 1`},
		{"kineto yes", trainHead("  kineto: yes"), 7, `workload.kineto: expected true or false; got string "yes"`},
		{"kineto with kind none", withHead("workload: {kineto: true}"), 4,
			`workload.kineto: kineto applies only to kind training, not "none"; expected one of: kind`},

		// Ranges.
		{"zero steps", trainHead("  steps: 0"), 7,
			`workload.steps: steps 0 is out of range; expected a step count from 1 to 1048576`},
		{"too many steps", trainHead("  steps: 1048577"), 7,
			`workload.steps: steps 1048577 is out of range; expected a step count from 1 to 1048576`},
		{"zero collectives_per_step", trainHead("  collectives_per_step: 0"), 7,
			`workload.collectives_per_step: collectives_per_step 0 is out of range; expected a collective count from 1 to 1024`},
		{"too many collectives_per_step", trainHead("  collectives_per_step: 1025"), 7,
			`workload.collectives_per_step: collectives_per_step 1025 is out of range; expected a collective count from 1 to 1024`},
		{"negative compute_per_step", trainHead("  compute_per_step: -1"), 7,
			`workload.compute_per_step: compute_per_step -1 is out of range; expected a kernel count from 0 to 4096`},
		{"too many compute_per_step", trainHead("  compute_per_step: 4097"), 7,
			`workload.compute_per_step: compute_per_step 4097 is out of range; expected a kernel count from 0 to 4096`},
		{"zero streams", trainHead("  streams: 0"), 7,
			`workload.streams: streams 0 is out of range; expected a stream count from 1 to 64`},
		{"too many streams", trainHead("  streams: 65"), 7,
			`workload.streams: streams 65 is out of range; expected a stream count from 1 to 64`},
		{"zero compute_duration", trainHead("  compute_duration: 0s"), 7,
			`workload.compute_duration: compute_duration "0s" is not positive; expected a duration > 0`},
		{"negative collective_duration", trainHead("  collective_duration: -1us"), 7,
			`workload.collective_duration: collective_duration "-1us" is not positive; expected a duration > 0`},
		{"negative spread", trainHead("  spread: -0.1"), 7,
			`workload.spread: spread -0.1 is outside [0, 1); expected a fraction >= 0 and below 1`},
		{"spread of one", trainHead("  spread: 1"), 7,
			`workload.spread: spread 1 is outside [0, 1); expected a fraction >= 0 and below 1`},
		{"zero launch_gap", trainHead("  launch_gap: 0s"), 7,
			`workload.launch_gap: launch_gap "0s" is not positive; expected a duration > 0`},
		{"zero step_gap", trainHead("  step_gap: 0s"), 7,
			`workload.step_gap: step_gap "0s" is not positive; expected a duration > 0`},
		{"negative start_delay", trainHead("  start_delay: -1s"), 7,
			`workload.start_delay: negative start_delay "-1s"; expected a duration >= 0`},
		{"start_delay at the end", trainHead("  start_delay: 10s"), 7,
			`workload.start_delay: start_delay "10s" leaves no time to train; expected start_delay < duration (10s)`},
		{"zero snapshot_burst", trainHead("  snapshot_burst: 0"), 7,
			`workload.snapshot_burst: snapshot_burst 0 is out of range; expected a pair count from 1 to 64`},
		{"too large a snapshot_burst", trainHead("  snapshot_burst: 65"), 7,
			`workload.snapshot_burst: snapshot_burst 65 is out of range; expected a pair count from 1 to 64`},
		{"port zero", trainHead("  port: 0"), 7,
			`workload.port: port 0 is out of range; expected a port number from 1 to 65535`},
		{"port too large", trainHead("  port: 65536"), 7,
			`workload.port: port 65536 is out of range; expected a port number from 1 to 65535`},
		{"probe port", trainHead("  port: 7100"), 7,
			`workload.port: port 7100 is a port of the sync protocol (7100 probes, 7101 rounds); expected another port, like 7200`},
		{"round port", trainHead("  port: 7101"), 7,
			`workload.port: port 7101 is a port of the sync protocol (7100 probes, 7101 rounds)`},
		{"zero snapshot_period", trainHead("  snapshot_period: 0s"), 7,
			`workload.snapshot_period: snapshot_period "0s" is not positive; expected a duration > 0`},
		{"snapshot_period beyond the run", trainHead("  snapshot_period: 11s"), 7,
			`workload.snapshot_period: snapshot_period "11s" is longer than the run; expected snapshot_period <= duration (10s)`},
		{"snapshot_capacity below two", trainHead("  snapshot_capacity: 1"), 7,
			`workload.snapshot_capacity: snapshot_capacity 1; expected at least 2 snapshots`},
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
			if len(list) != 1 {
				t.Errorf("%d errors; want 1:\n%v", len(list), err)
			}
		})
	}
}

// TestWorkloadBuiltInCode checks Validate on workloads built in code, where
// nothing fills in defaults or keeps the training settings of kind none
// zero, and round-trips a valid one.
func TestWorkloadBuiltInCode(t *testing.T) {
	base := Scenario{Name: "in-code", Seed: 1, Duration: time.Minute, Nodes: 3,
		Topology: Topology{Kind: FullMesh}, Protocol: Protocol{Kind: ProtocolSync, Sync: defaultSync()}}
	custom := defaultTraining()
	custom.Steps, custom.Spread, custom.StartDelay = 7, 0.125, 30*time.Second
	tests := []struct {
		name     string
		workload Workload
		err      string // "" if valid
	}{
		{"none", Workload{Kind: WorkloadNone}, ""},
		{"training", Workload{Kind: WorkloadTraining, Training: custom}, ""},
		{"zero training", Workload{Kind: WorkloadTraining},
			`workload.steps: steps 0 is out of range; expected a step count from 1 to 1048576`},
		{"none with training settings", Workload{Kind: WorkloadNone, Training: custom},
			`workload: training settings apply only to kind training, not "none"; expected Workload.Training to be zero`},
		{"no kind", Workload{}, `workload.kind: unknown workload kind ""; expected one of: none, training, phasegap`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := base
			s.Workload = tt.workload
			validates(t, &s, tt.err)
		})
	}
}

// TestReadmeTrainingExample parses the training example of the workload
// section of scenarios/README.md, beside the sync protocol it needs.
func TestReadmeTrainingExample(t *testing.T) {
	readme, err := os.ReadFile("../scenarios/README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n### workload\n")
	section, _, _ = strings.Cut(section, "\n### ")
	_, rest, ok2 := strings.Cut(section, "```yaml\n")
	example, _, ok3 := strings.Cut(rest, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("README.md has no ```yaml block in its workload section")
	}
	s, err := Parse("README.md training example", []byte(doc("name: t", "duration: 60s", "nodes: 4", "protocol: {kind: sync}")+example))
	if err != nil {
		t.Fatal(err)
	}
	want := defaultTraining()
	want.StartDelay = 10 * time.Second
	if s.Workload != (Workload{Kind: WorkloadTraining, Training: want}) {
		t.Errorf("the example's workload is %+v; want the defaults with start_delay 10s", s.Workload)
	}
	for _, k := range trainingKeys {
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
