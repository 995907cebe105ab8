package harness

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/ci/needs"
	"github.com/chronosync/chronosync/harness/phasegaprun"
	"github.com/chronosync/chronosync/phasegap/output"
	"github.com/chronosync/chronosync/phasegap/report"
	"github.com/chronosync/chronosync/real/netlab"
	"github.com/chronosync/chronosync/scenario"
	"github.com/chronosync/chronosync/trace/xspace"
)

// The files a phasegap run writes (package phasegaprun).
const (
	filePGResults  = phasegaprun.Dir + "/" + output.FileResults
	filePGManifest = phasegaprun.Dir + "/" + output.FileManifest
	filePGTrace    = phasegaprun.Dir + "/" + output.FileTrace
)

// pgScenario is a phasegap workload of 3 ranks of 2 threads; the preset
// and mode are filled in.
const pgScenario = `name: pg3
duration: 10s
nodes: 3
topology: {kind: ring}
links:
  default: {preset: PRESET}
workload:
  kind: phasegap
  mode: MODE
  threads: 2
  N: 50000
  halo: 256
  iters: 40
  warmup: 4
  trace_iters: 5
`

func pg(preset, mode string) string {
	return strings.NewReplacer("PRESET", preset, "MODE", mode).Replace(pgScenario)
}

// pgRow reads a phasegap run's results row back.
func pgRow(t *testing.T, dir string) report.Record {
	t.Helper()
	recs, err := report.ReadCSVFile(filepath.Join(dir, filePGResults))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Fatalf("%d rows", len(recs))
	}
	return recs[0]
}

func fig(t *testing.T, r report.Record, col string) float64 {
	t.Helper()
	v, err := r.Float(col)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestPhasegapSim: a phasegap scenario runs in the simulator, ends when
// its ranks have run their iterations, and writes the MPI benchmark's
// files; a 1 ms link exposes a wait phase_blk cannot hide.
func TestPhasegapSim(t *testing.T) {
	none := runOnce(t, parse(t, pg("none", "phase_blk")), Options{})
	lat := runOnce(t, parse(t, pg("lat_1ms", "phase_blk")), Options{})
	for _, res := range []*Result{none, lat} {
		s := res.Summary
		if s.Status != StatusOK || s.Phasegap == nil || s.Phasegap.Finished != 3 {
			t.Fatalf("status %s, phasegap %+v", s.Status, s.Phasegap)
		}
		if s.Virtual >= 10 {
			t.Errorf("virtual %v s: the run did not end with its workload", s.Virtual)
		}
		// The files an MPI run writes, the rank XPlanes among them.
		files := []string{filePGResults, filePGManifest, filePGTrace}
		for rank := range 3 {
			files = append(files, phasegaprun.Dir+"/"+output.FileXPlane(rank))
		}
		for _, f := range files {
			if _, err := os.Stat(filepath.Join(res.Dir, f)); err != nil {
				t.Error(err)
			}
		}
		if space, err := xspace.Read(filepath.Join(res.Dir, phasegaprun.Dir, output.FileXPlane(2))); err != nil {
			t.Error(err)
		} else if len(space.Planes) != 1 || space.Planes[0].Name != "/rank:2" {
			t.Errorf("rank 2's XSpace: %d planes, want one named /rank:2", len(space.Planes))
		}
	}
	a, b := pgRow(t, none.Dir), pgRow(t, lat.Dir)
	if a.Transport() != report.WorldSim || a.Str("impairment") != "none" || b.Str("impairment") != "lat_1ms" {
		t.Errorf("transport %s, impairments %s and %s", a.Transport(), a.Str("impairment"), b.Str("impairment"))
	}
	if w := fig(t, b, "t_wait_mean_avg"); w < 1000 || w > 1100 {
		t.Errorf("phase_blk over a 1 ms link waits %.1f µs, want the link's 1 ms and little more", w)
	}
	if fig(t, b, "wait_frac") <= fig(t, a, "wait_frac") {
		t.Errorf("wait_frac %.3f under lat_1ms, %.3f under none", fig(t, b, "wait_frac"), fig(t, a, "wait_frac"))
	}
	// The model times a pure exchange as the MPI run does: phase_blk
	// over a 1 ms link hides none of it (hidden_frac 0, in the CSV and
	// the summary), and the row's git_sha is the build's stamp.
	if p := fig(t, b, "t_pure_comm_mean"); p < 1000 || p > 1100 || fig(t, b, "hidden_frac") != 0 || b.Str("git_sha") == "" {
		t.Errorf("t_pure_comm_mean %.1f µs, hidden_frac %s, git_sha %q; want the 1 ms link, 0 and a stamp", p, b.Str("hidden_frac"), b.Str("git_sha"))
	}
	if hf := lat.Summary.Phasegap.HiddenFrac; hf == nil || *hf != 0 {
		t.Errorf("summary's hidden_frac %v, want 0", hf)
	}
	var out bytes.Buffer
	lat.Print(&out)
	if !strings.Contains(out.String(), "hidden_frac 0.0000 = 1 − t_wait") {
		t.Errorf("printed summary lacks hidden_frac:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "phasegap: 3 of 3 ranks finished, phase_blk, T=2, H=256, links lat_1ms") {
		t.Errorf("printed summary:\n%s", out.String())
	}
}

// TestPhasegapIgnoredLinks: the simulator's streams take a link's delay
// and rate only; a simulated run on links with jitter or loss says it
// ignored them and is degraded.
func TestPhasegapIgnoredLinks(t *testing.T) {
	for _, tc := range []struct{ preset, want string }{{"loss_0.1", "loss"}, {"jitter_5ms_2ms", "jitter"}} {
		res := runOnce(t, parse(t, pg(tc.preset, "phase_nb")), Options{})
		var out bytes.Buffer
		res.Print(&out)
		if res.Summary.Status != StatusDegraded || !strings.Contains(out.String(), "warning: link settings the simulator's streams ignore 1 > 0 ("+tc.want+": the halos are stream messages") {
			t.Errorf("%s: status %s:\n%s", tc.preset, res.Summary.Status, out.String())
		}
	}
	if res := runOnce(t, parse(t, pg("bw_100mbit", "phase_nb")), Options{}); res.Summary.Status != StatusOK {
		t.Errorf("a rate, which streams do model: status %s", res.Summary.Status)
	}
}

// TestPhasegapDeterminism: the same phasegap scenario gives the same
// bytes under GOMAXPROCS 1 and 2, and its run directory replays.
func TestPhasegapDeterminism(t *testing.T) {
	sc := parse(t, pg("jitter_5ms_2ms", "nb_test"))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var runs []*Result
	for _, procs := range []int{1, 2} {
		runtime.GOMAXPROCS(procs)
		runs = append(runs, runOnce(t, sc, Options{EventLog: true}))
	}
	for _, f := range []string{FileManifest, FileSummary, FileEvents, filePGResults, filePGManifest, filePGTrace} {
		if !bytes.Equal(read(t, filepath.Join(runs[0].Dir, f)), read(t, filepath.Join(runs[1].Dir, f))) {
			t.Errorf("%s differs between GOMAXPROCS 1 and 2", f)
		}
	}
	rep, err := Replay(runs[0].Dir, ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Hash != runs[0].Manifest.EventHash {
		t.Errorf("replay hash %s, run %s", rep.Hash, runs[0].Manifest.EventHash)
	}
}

// TestPhasegapUnfinished: a duration too short for the iterations is
// said: the run is degraded and names the ranks that did not finish.
func TestPhasegapUnfinished(t *testing.T) {
	res := runOnce(t, parse(t, strings.Replace(pg("lat_10ms", "phase_blk"), "duration: 10s", "duration: 100ms", 1)), Options{})
	s := res.Summary
	if s.Status != StatusDegraded || s.Phasegap.Finished != 0 {
		t.Fatalf("status %s, %d finished", s.Status, s.Phasegap.Finished)
	}
	var out bytes.Buffer
	res.Print(&out)
	for _, want := range []string{"warning: phasegap ranks that did not finish 3 > 0", "rank 0: did not finish within the scenario's duration"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("printed summary lacks %q:\n%s", want, out.String())
		}
	}
}

// TestPhasegapCosts: a costs file named by the scenario is used, copied
// into the run directory, and the run replays from that copy.
func TestPhasegapCosts(t *testing.T) {
	dir := t.TempDir()
	runWith := func(pointNS string) *Result {
		costs := "point_ns: " + pointNS + "\nflop_ns: 0.9\nbyte_ns: 0.1\nfork_ns: 0\nmem_bytes_per_ns: 0\npoint_bytes: 16\ncall_ns: 300\neager_limit: 4096\nimbalance_ns: 0\nimbalance_frac: 0\n"
		if err := os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(costs), 0o644); err != nil {
			t.Fatal(err)
		}
		scFile := filepath.Join(dir, "pg.yaml")
		if err := os.WriteFile(scFile, []byte(pg("none", "phase_nb")+"  costs: c.yaml\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return runOnce(t, load(t, scFile), Options{})
	}
	fast, slow := runWith("1"), runWith("3")
	// 3 ns a point against 1, no memory ceiling: the interior triples.
	if r := fig(t, pgRow(t, slow.Dir), "t_interior_mean_avg") / fig(t, pgRow(t, fast.Dir), "t_interior_mean_avg"); math.Abs(r-3) > 0.01 {
		t.Errorf("interior with point_ns 3 / with 1 = %.3f, want 3", r)
	}
	if !strings.HasPrefix(slow.Summary.Phasegap.Costs, "sha256:") || !strings.Contains(string(read(t, filepath.Join(slow.Dir, FileScenario))), "costs: phasegap/costs.yaml") {
		t.Errorf("costs %q; scenario as run:\n%s", slow.Summary.Phasegap.Costs, read(t, filepath.Join(slow.Dir, FileScenario)))
	}
	if _, err := Replay(slow.Dir, ReplayOptions{}); err != nil {
		t.Fatalf("replay from the copied costs: %v", err)
	}
}

// TestPhasegapReal: the same workload over the real backend's TCP streams
// between namespaces, with the shaper's 1 ms links: phase_blk's wait holds
// the link's delay, and the run ends with its workload, not its duration,
// without calling itself short.
func TestPhasegapReal(t *testing.T) {
	if testing.Short() {
		t.Skip("a real run")
	}
	needs.Available(t, netlab.Available())
	sc := parse(t, strings.Replace(pg("lat_1ms", "phase_blk"), "nodes: 3", "nodes: 2", 1))
	start := time.Now()
	res := runOnce(t, sc, Options{Backend: "real"})
	var out bytes.Buffer
	res.Print(&out)
	t.Logf("%s(%v wall)", out.String(), time.Since(start).Round(time.Millisecond))
	s := res.Summary
	if s.Phasegap == nil || s.Phasegap.Finished != 2 {
		t.Fatalf("phasegap %+v", s.Phasegap)
	}
	for _, c := range s.Conditions {
		if strings.HasPrefix(c.Name, "run short") {
			t.Errorf("a run that ended with its workload is judged on its duration: %s", c)
		}
	}
	if s.Real.Phases.Run > 8*time.Second {
		t.Errorf("ran %v of the 10 s: it did not end with its workload", s.Real.Phases.Run)
	}
	row := pgRow(t, res.Dir)
	if row.Transport() != report.WorldReal {
		t.Errorf("transport %s", row.Transport())
	}
	// The link's 1 ms is a floor; the ceiling holds only for a run that
	// says it honoured its scenario (a busy machine delays the shaper's
	// releases, and the run then says it is degraded).
	w := fig(t, row, "t_wait_mean_avg")
	if w < 1000 || (w > 5000 && s.Status == StatusOK) {
		t.Errorf("phase_blk over the shaper's 1 ms links waits %.0f µs (status %s), want 1 ms and some", w, s.Status)
	}
}

func load(t *testing.T, path string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}
