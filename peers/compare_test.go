package peers

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/scenario"
)

// pairYAML is a short real2-idle: two nodes on a direct link, node 1 10ms
// ahead and 50ppm fast, five 2s rounds of svm.
const pairYAML = `name: peers-pair
seed: 1
duration: 12s
nodes: 2
clocks:
  default: {offset: 0s, drift_ppm: 0}
  nodes:
    - {node: 1, offset: 10ms, drift_ppm: 50}
topology: {kind: full_mesh}
protocol:
  kind: sync
  mode: rounds
  estimator: svm
  cadence: 1ms
  window: 2s
  rounds: 5
`

// TestCompare runs the whole comparison on pairYAML (about a minute) and
// checks that every tool measured something, that chronosync's exported
// offsets are within 5 µs at p99, and that no namespace is left.
func TestCompare(t *testing.T) {
	if testing.Short() {
		t.Skip("runs chronosync and three daemon pairs for about a minute; skipped with -short")
	}
	needDaemons(t)
	sc, err := scenario.Parse("pair.yaml", []byte(pairYAML))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var log strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tab, err := Compare(ctx, CompareConfig{Scenarios: []*scenario.Scenario{sc}, Duration: 12 * time.Second, Dir: dir, Log: &log})
	t.Log(log.String())
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := tab.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", text.String())

	tools := map[string]Row{}
	for _, r := range tab.Rows {
		tools[r.Tool] = r
		if r.Scenario != sc.Name || r.Samples == 0 || r.Note != "" {
			t.Errorf("row %+v: want samples of scenario %s and no note", r, sc.Name)
		}
	}
	for _, tool := range []string{"chronosync-svm", "chronosync-exported", ToolChronyBasic, ToolChronyXLeave, ToolPTP4l} {
		if _, ok := tools[tool]; !ok {
			t.Errorf("no %s row", tool)
		}
	}
	if p99 := tools["chronosync-exported"].P99; p99 >= 5e3 {
		t.Errorf("chronosync-exported p99 |error| %.0f ns, want < 5000", p99)
	}
	checkNamespacesGone(t, dir)
}

// checkNamespacesGone finds the namespace prefixes the runs under dir
// logged and fails if any of their namespaces remain.
func checkNamespacesGone(t *testing.T, dir string) {
	t.Helper()
	prefix := regexp.MustCompile(`real backend: namespaces (cs[a-z0-9]+)-n0\.\.`)
	logs, _ := filepath.Glob(filepath.Join(dir, "*", "*", networkLog))
	runLogs, _ := filepath.Glob(filepath.Join(dir, "*", ToolChronosync, "run.log"))
	logs = append(logs, runLogs...)
	if len(logs) != 4 {
		t.Errorf("network logs %v, want chronosync's and three daemons'", logs)
	}
	for _, path := range logs {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		m := prefix.FindSubmatch(b)
		if m == nil {
			t.Errorf("%s names no namespaces", path)
			continue
		}
		if _, err := os.Stat(filepath.Join("/run/netns", string(m[1])+"-n0")); err == nil {
			t.Errorf("namespace %s-n0 (of %s) is left", m[1], path)
		} else {
			t.Logf("namespaces %s-* (of %s) removed", m[1], filepath.Base(filepath.Dir(path)))
		}
	}
}

func TestCompareValidate(t *testing.T) {
	sc, err := scenario.Parse("pair.yaml", []byte(pairYAML))
	if err != nil {
		t.Fatal(err)
	}
	ping := *sc
	ping.Protocol.Kind = scenario.ProtocolPing
	one := *sc
	one.Nodes = 1
	for name, cfg := range map[string]CompareConfig{
		"no scenarios":   {Dir: "d"},
		"no dir":         {Scenarios: []*scenario.Scenario{sc}},
		"files mismatch": {Scenarios: []*scenario.Scenario{sc}, Files: []string{"a", "b"}, Dir: "d"},
		"negative":       {Scenarios: []*scenario.Scenario{sc}, Dir: "d", Duration: -time.Second},
		"twice":          {Scenarios: []*scenario.Scenario{sc, sc}, Dir: "d"},
		"nil":            {Scenarios: []*scenario.Scenario{nil}, Dir: "d"},
		"ping":           {Scenarios: []*scenario.Scenario{&ping}, Dir: "d"},
		"one node":       {Scenarios: []*scenario.Scenario{&one}, Dir: "d"},
	} {
		if tab, err := Compare(context.Background(), cfg); err == nil || tab != nil {
			t.Errorf("%s: Compare = %v, %v; want an error and no table", name, tab, err)
		}
	}
}
