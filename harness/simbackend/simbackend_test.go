package simbackend

import (
	"errors"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/scenario"
	"github.com/chronosync/chronosync/sim"
)

// TestFormatBytes: each size in the largest unit it reaches, three
// significant digits.
func TestFormatBytes(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{512, "0.5 KiB"},
		{3 << 10, "3 KiB"},
		{1 << 20, "1 MiB"},
		{1536 << 20, "1.5 GiB"},
		{962 << 20, "962 MiB"},
	} {
		if got := formatBytes(tc.n); got != tc.want {
			t.Errorf("formatBytes(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

// TestCheckMemory: a world larger than the memory available is refused
// with both figures; one that fits, or a machine without a reading, runs.
func TestCheckMemory(t *testing.T) {
	sc := &scenario.Scenario{Name: "m", Nodes: 4}
	need := Memory(sc)
	if need < 4*simBytesPerNode {
		t.Fatalf("Memory = %d, want at least the nodes' %d", need, 4*simBytesPerNode)
	}
	for _, tc := range []struct {
		name   string
		avail  func() (int64, error)
		refuse bool
	}{
		{"one byte short", func() (int64, error) { return need - 1, nil }, true},
		{"exactly enough", func() (int64, error) { return need, nil }, false},
		{"no reading", func() (int64, error) { return 0, errors.New("no /proc") }, false},
	} {
		err := CheckMemory(sc, tc.avail)
		if tc.refuse != (err != nil) {
			t.Errorf("%s: err = %v, want refusal %v", tc.name, err, tc.refuse)
		}
		if err != nil && !strings.Contains(err.Error(), "too large for this machine") {
			t.Errorf("%s: %v does not say why", tc.name, err)
		}
	}
}

// TestConfigFaults: a scenario's faults reach the simulator with their
// optional fields set, a two-way cut on both directions.
func TestConfigFaults(t *testing.T) {
	node, from, to := 2, 0, 1
	r := &scenario.Resolved{
		Nodes: make([]scenario.ResolvedNode, 3),
		Faults: []scenario.Fault{
			{Kind: "crash", Node: &node},
			{Kind: "linkdown", Between: []int{1, 2}},
			{Kind: "linkdown", From: &from, To: &to},
		},
	}
	cfg := Config(7, r)
	if cfg.Seed != 7 || len(cfg.Nodes) != 3 || len(cfg.Faults) != 3 {
		t.Fatalf("config seed %d, %d nodes, %d faults; want 7, 3, 3", cfg.Seed, len(cfg.Nodes), len(cfg.Faults))
	}
	want := []sim.Fault{
		{Kind: "crash", Node: 2},
		{Kind: "linkdown", From: 1, To: 2, Both: true},
		{Kind: "linkdown", From: 0, To: 1},
	}
	for i, w := range want {
		g := cfg.Faults[i]
		if g.Kind != w.Kind || g.Node != w.Node || g.From != w.From || g.To != w.To || g.Both != w.Both {
			t.Errorf("fault %d = %+v, want %+v", i, g, w)
		}
	}
}
