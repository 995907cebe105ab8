package harness

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/harness/syncrun"
	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/scenario"
	"github.com/chronosync/chronosync/world"
)

// sync3 is a three-node sync run in the simulator: four rounds of 1 s.
const sync3 = `
name: sync3
seed: 5
duration: 4500ms
nodes: 3
clocks:
  default:
    offset: uniform(-1ms, 1ms)
    drift_ppm: uniform(-20, 20)
links:
  default:
    delay: 100us
    jitter: 10us
protocol: {kind: sync, mode: rounds, estimator: svm, cadence: 5ms, window: 1s}
`

// tamperedProtocol is sc's sync protocol whose node's report of round
// gets pairs_count -5 on its first edge, as a faulty or hostile node
// would send it; *done counts the reports changed.
func tamperedProtocol(t *testing.T, sc *scenario.Scenario, node world.NodeID, round uint64, done *int) protocol {
	t.Helper()
	r, err := sc.Resolve(sc.Seed)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	p, err := syncrun.NewTampered(sc, r, func(n world.NodeID, d *syncpb.NodeWindowData) {
		if n == node && d.RoundId == round && len(d.Edges) > 0 {
			mu.Lock()
			defer mu.Unlock()
			d.Edges[0].PairsCount = -5
			*done++
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// checkRunDir fails unless dir is a whole run directory: its manifest and
// summary, and offsets.jsonl and rounds.jsonl as the strict readers take
// them, with records when master (another rank records none); it returns
// the rounds' lines.
func checkRunDir(t *testing.T, dir string, master bool) []offsets.Round {
	t.Helper()
	if _, err := ReadManifest(dir); err != nil {
		t.Fatal(err)
	}
	read(t, filepath.Join(dir, FileSummary))
	if _, offs, err := offsets.ReadOffsets(filepath.Join(dir, FileOffsets)); err != nil || (len(offs) == 0) == master {
		t.Fatalf("%s: %d records, %v", FileOffsets, len(offs), err)
	}
	_, _, rs, err := offsets.ReadRounds(filepath.Join(dir, FileRounds))
	if err != nil || (len(rs) == 0) == master {
		t.Fatalf("%s: %d rounds, %v", FileRounds, len(rs), err)
	}
	return rs
}

// TestReportNegativePairsCount (issue 30, "a run lost to one message"):
// one report whose edge says pairs_count -5 was accepted by the master,
// whose edge check did not look at counts; the run went to its end and
// then failed writing rounds.jsonl (`record outputs: offsets: Append:
// record 1: pairs_count: -5`), exiting 1 with no run directory. Now the
// master's door drops the edge, counts it ("edge pairs_count") and notes
// it in the round, and the run writes its whole directory with every
// other round and edge.
func TestReportNegativePairsCount(t *testing.T) {
	sc := parse(t, sync3)
	done := 0
	p := tamperedProtocol(t, sc, 1, 2, &done)
	res := runOnce(t, sc, Options{protocol: p})
	if done != 1 {
		t.Fatalf("%d reports tampered with, want 1", done)
	}
	sy := res.Summary.Sync
	if sy == nil || sy.Rounds < 3 {
		t.Fatalf("sync summary %+v; want the run's rounds", sy)
	}
	if got := sy.Control.Refused; len(got) != 1 || got["edge pairs_count"] != 1 {
		t.Errorf("refused %v; want {edge pairs_count: 1}", got)
	}
	var out strings.Builder
	res.Print(&out)
	if !strings.Contains(out.String(), "refused by the master: edge pairs_count 1 ") {
		t.Errorf("the summary does not print the refusal:\n%s", out.String())
	}
	rs := checkRunDir(t, res.Dir, true)
	for _, r := range rs {
		noted := strings.Contains(r.Warning, "dropped 1 edges")
		if noted != (r.RoundID == 2) {
			t.Errorf("round %d: warning %q", r.RoundID, r.Warning)
		}
		if r.Error != "" || r.Solved != 3 {
			t.Errorf("round %d: %d nodes solved, error %q; want all 3 (the other edges hold the graph)", r.RoundID, r.Solved, r.Error)
		}
	}
}

// TestLiveClusterMalformedReport: a two-node cluster on loopback (two
// real worlds, the report crossing a real stream to the master), node 1's
// report of round 1 made malformed (pairs_count -5) as it leaves. The
// master drops that edge (node 1's only one: its part of the round is
// lost), counts and prints it, completes the run, and writes a whole run
// directory.
func TestLiveClusterMalformedReport(t *testing.T) {
	if testing.Short() {
		t.Skip("a real two-node run of 3 s")
	}
	c, addrs := loopbackCluster(t)
	done := 0
	p := tamperedProtocol(t, c.Scenario, 1, 1, &done)
	dirs := []string{filepath.Join(t.TempDir(), "rank0"), filepath.Join(t.TempDir(), "rank1")}
	results := make([]*Result, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for rank := range 2 {
		opts := Options{Out: dirs[rank], Backend: "real", Context: context.Background(),
			Cluster: &ClusterNode{Addresses: addrs, Rank: rank}}
		if rank == 1 {
			opts.protocol = p
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[rank], errs[rank] = Run(c.Scenario, opts)
		}()
	}
	wg.Wait()
	for rank, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", rank, err)
		}
	}
	if done != 1 {
		t.Fatalf("%d reports tampered with, want 1", done)
	}
	master := results[0]
	sy := master.Summary.Sync
	if sy == nil || sy.Rounds < 2 {
		t.Fatalf("master's sync summary %+v; want its rounds", sy)
	}
	if got := sy.Control.Refused; len(got) != 1 || got["edge pairs_count"] != 1 {
		t.Errorf("refused %v; want {edge pairs_count: 1}", got)
	}
	var out strings.Builder
	master.Print(&out)
	if !strings.Contains(out.String(), "refused by the master: edge pairs_count 1 ") {
		t.Errorf("the summary does not print the refusal:\n%s", out.String())
	}
	rs := checkRunDir(t, dirs[0], true)
	_, edges, _, err := offsets.ReadRounds(filepath.Join(dirs[0], FileRounds))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if (r.RoundID == 1) != strings.Contains(r.Warning, "dropped 1 edges") {
			t.Errorf("round %d: warning %q", r.RoundID, r.Warning)
		}
	}
	for _, e := range edges {
		if e.RoundID == 1 && e.Src == 1 {
			t.Errorf("round 1 records node 1's malformed edge: %+v", e)
		}
	}
	checkRunDir(t, dirs[1], false)
}
