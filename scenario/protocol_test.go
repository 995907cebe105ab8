package scenario

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestProtocolDefaults checks the defaults the decoder fills in for each
// protocol kind, and that the fields of the other kind stay zero.
func TestProtocolDefaults(t *testing.T) {
	allDefaults := Sync{
		Mode:           SyncRounds,
		Estimator:      "svm",
		Cadence:        800 * time.Microsecond,
		Window:         4 * time.Second,
		GatherDeadline: 500 * time.Millisecond,
		Heartbeat:      200 * time.Millisecond,
		Purity:         "auto",
		PureThreshold:  time.Microsecond,
		MinPairs:       10,
		StepThreshold:  0,
		ConsensusGain:  0.5,
		ConvergedFrom:  3,
	}
	some := allDefaults
	some.Mode, some.Window, some.WindowMin, some.WindowMax, some.Master = SyncConsensus, 2*time.Second, time.Second, 3*time.Second, 3
	tests := []struct {
		name string
		file string
		want Protocol
	}{
		{"no protocol", withHead(), Protocol{Kind: ProtocolPing, Interval: 100 * time.Millisecond, Payload: 64}},
		{"ping", withHead("protocol: {kind: ping, payload: 100}"), Protocol{Kind: ProtocolPing, Interval: 100 * time.Millisecond, Payload: 100}},
		{"ping without kind", withHead("protocol: {interval: 1s}"), Protocol{Kind: ProtocolPing, Interval: time.Second, Payload: 64}},
		{"sync", withHead("protocol: {kind: sync}"), Protocol{Kind: ProtocolSync, Sync: allDefaults}},
		{"sync with some keys", withHead("protocol:", "  kind: sync", "  mode: consensus", "  window: 2s",
			"  adaptive_window: {min: 1s, max: 3s}", "  master: 3"), Protocol{Kind: ProtocolSync, Sync: some}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse("x.yaml", []byte(tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if s.Protocol != tt.want {
				t.Errorf("protocol\n%+v\nwant\n%+v", s.Protocol, tt.want)
			}
			if tt.want.Kind == ProtocolSync && defaultSync() != allDefaults {
				t.Errorf("defaultSync() = %+v\nwant %+v", defaultSync(), allDefaults)
			}
			roundTrip(t, s)
		})
	}
}

// TestSyncFile checks that every sync key of testdata/sync.yaml is read,
// and that Resolve passes the protocol through unchanged.
func TestSyncFile(t *testing.T) {
	s := mustLoad(t, "testdata/sync.yaml")
	want := Protocol{Kind: ProtocolSync, Sync: Sync{
		Mode:           SyncWindows,
		Estimator:      "regression",
		Cadence:        time.Millisecond,
		Window:         2 * time.Second,
		WindowMin:      500 * time.Millisecond,
		WindowMax:      5 * time.Second,
		Rounds:         20,
		Master:         1,
		Reference:      2,
		GatherDeadline: 250 * time.Millisecond,
		Heartbeat:      100 * time.Millisecond,
		Purity:         "on",
		PureThreshold:  2 * time.Microsecond,
		MinPairs:       20,
		StepThreshold:  500 * time.Microsecond,
		ConsensusGain:  0.25,
		ConvergedFrom:  5,
	}}
	if s.Protocol != want {
		t.Errorf("protocol\n%+v\nwant\n%+v", s.Protocol, want)
	}
	r := mustResolve(t, s, s.Seed)
	if r.Protocol != want {
		t.Errorf("resolved protocol\n%+v\nwant\n%+v", r.Protocol, want)
	}
}

// TestSyncValid lists sync settings at the edges of what is allowed.
func TestSyncValid(t *testing.T) {
	for _, file := range []string{
		// consensus_gain is simply unused outside mode consensus.
		withHead("protocol: {kind: sync, mode: rounds, consensus_gain: 0.9}"),
		withHead("protocol: {kind: sync, consensus_gain: 1}"),
		// Exactly 10 cadences, and rounds filling the whole run.
		withHead("protocol: {kind: sync, cadence: 1ms, window: 10ms}"),
		withHead("protocol: {kind: sync, window: 5s, rounds: 2}"),
		// min = window = max; an explicit fixed window.
		withHead("protocol: {kind: sync, window: 4s, adaptive_window: {min: 4s, max: 4s}}"),
		withHead("protocol: {kind: sync, adaptive_window: {min: 0s, max: 0s}}"),
		withHead("protocol: {kind: sync, master: 3, reference: 3, min_pairs: 2, converged_from: 1, purity: off}"),
	} {
		s, err := Parse("x.yaml", []byte(file))
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		roundTrip(t, s)
	}
}

// TestProtocolBuiltInCode checks Validate on protocols built in code,
// where nothing keeps the fields of the other kind zero, and round-trips
// a valid one.
func TestProtocolBuiltInCode(t *testing.T) {
	base := Scenario{Name: "in-code", Seed: 1, Duration: time.Minute, Nodes: 3,
		Topology: Topology{Kind: FullMesh}, Workload: Workload{Kind: WorkloadNone}}
	consensus := defaultSync()
	consensus.Mode, consensus.ConsensusGain, consensus.Rounds = SyncConsensus, 0.125, 15
	tests := []struct {
		name     string
		protocol Protocol
		err      string // "" if valid
	}{
		{"sync", Protocol{Kind: ProtocolSync, Sync: consensus}, ""},
		{"zero sync", Protocol{Kind: ProtocolSync}, `protocol.mode: unknown sync mode ""; expected one of: rounds, windows, consensus`},
		{"sync with an interval", Protocol{Kind: ProtocolSync, Interval: time.Second, Sync: consensus},
			`protocol: interval and payload apply only to kind ping, not "sync"; expected them to be zero`},
		{"ping with sync settings", Protocol{Kind: ProtocolPing, Interval: time.Second, Sync: consensus},
			`protocol: sync settings apply only to kind sync, not "ping"; expected Protocol.Sync to be zero`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := base
			s.Protocol = tt.protocol
			validates(t, &s, tt.err)
		})
	}
}

// TestReadmeSyncExample parses the sync example of the protocol section
// of scenarios/README.md in place of the full example's protocol.
func TestReadmeSyncExample(t *testing.T) {
	readme, err := os.ReadFile("../scenarios/README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n### protocol\n")
	_, rest, ok2 := strings.Cut(section, "```yaml\n")
	example, _, ok3 := strings.Cut(rest, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("README.md has no ```yaml block in its protocol section")
	}
	s, err := Parse("README.md sync example", []byte(doc("name: t", "duration: 60s", "nodes: 4")+example))
	if err != nil {
		t.Fatal(err)
	}
	if s.Protocol.Kind != ProtocolSync {
		t.Fatalf("the example's protocol is %q; want sync", s.Protocol.Kind)
	}
	r := mustResolve(t, s, s.Seed)
	if !reflect.DeepEqual(r.Protocol, s.Protocol) {
		t.Errorf("Resolve changed the protocol:\n%+v\n%+v", s.Protocol, r.Protocol)
	}
	roundTrip(t, s)
}
