package sweep

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/phasegap/report"
)

const matrixYAML = `name: demo
transports: [sim, mpi]
base: {N: 10000, iters: 10, warmup: 1}
link: {delay: 20us}
sweeps:
  - name: threads
    ranks: [4]
    threads: [1, 2]
    halo: [16, 256]
  - name: split
    transports: [sim]
    split: [[1, 2], [2, 1]]
    mode: [phase_nb, phase_blk]
    preset: [none, lat_1ms]
`

func TestPlan(t *testing.T) {
	m, err := Parse([]byte(matrixYAML), "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	plan := m.Plan()
	var ids []string
	for _, p := range plan {
		ids = append(ids, p.Sweep+"/"+p.Transport+"/"+p.ID())
	}
	want := []string{
		"threads/sim/P4-T1-H16-F0-B0-phase_nb-none", "threads/sim/P4-T1-H256-F0-B0-phase_nb-none",
		"threads/sim/P4-T2-H16-F0-B0-phase_nb-none", "threads/sim/P4-T2-H256-F0-B0-phase_nb-none",
		"threads/mpi/P4-T1-H16-F0-B0-phase_nb-none", "threads/mpi/P4-T1-H256-F0-B0-phase_nb-none",
		"threads/mpi/P4-T2-H16-F0-B0-phase_nb-none", "threads/mpi/P4-T2-H256-F0-B0-phase_nb-none",
		"split/sim/P1-T2-H16-F0-B0-phase_nb-none", "split/sim/P1-T2-H16-F0-B0-phase_nb-lat_1ms",
		"split/sim/P1-T2-H16-F0-B0-phase_blk-none", "split/sim/P1-T2-H16-F0-B0-phase_blk-lat_1ms",
		"split/sim/P2-T1-H16-F0-B0-phase_nb-none", "split/sim/P2-T1-H16-F0-B0-phase_nb-lat_1ms",
		"split/sim/P2-T1-H16-F0-B0-phase_blk-none", "split/sim/P2-T1-H16-F0-B0-phase_blk-lat_1ms",
	}
	if !slices.Equal(ids, want) {
		t.Errorf("plan:\n%s\nwant:\n%s", strings.Join(ids, "\n"), strings.Join(want, "\n"))
	}
	if p := plan[0].Params; p.N != 10000 || p.Iters != 10 || p.Warmup != 1 || p.Kernel != "stencil3" {
		t.Errorf("base not applied: %+v", p)
	}
}

func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"unknown key", "sweeps: [{name: a}]\nbogus: 1\n", "m.yaml:2: field bogus not found (expected a key of the matrix)"},
		{"no sweeps", "name: x\n", "m.yaml:1: no sweeps"},
		{"transport", "transports: [sim, carrier_pigeon]\nsweeps: [{name: a}]\n", `m.yaml:1: transport "carrier_pigeon"`},
		{"preset", "sweeps:\n  - name: a\n    preset: [none, lat_2ms]\n", `m.yaml:3: unknown link preset "lat_2ms"; expected one of none, lat_1ms`},
		{"mode", "sweeps:\n  - name: a\n    mode: [fast]\n", `m.yaml:3: mode "fast"`},
		{"duplicate name", "sweeps:\n  - name: a\n  - name: a\n", `m.yaml:3: sweep name "a"`},
		{"split and ranks", "sweeps:\n  - name: a\n    ranks: [2]\n    split: [[1, 2]]\n", "m.yaml:4: split gives"},
		{"point", "sweeps:\n  - name: a\n    halo: [0]\n", "m.yaml:2: sweep a, point P1-T1-H0-F0-B0-phase_nb-none: --halo 0 is smaller than B"},
		{"not a list", "sweeps:\n  - name: a\n    threads: 4\n", "m.yaml:3: cannot unmarshal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.in), "m.yaml")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v\nwant %q", err, tc.want)
			}
		})
	}
}

// fakeRunner writes a results.csv for each run, skips MPI with a preset,
// fails the points listed in fail, and cancels the context after stopAt
// runs (0: never).
type fakeRunner struct {
	ran    []string
	fail   map[string]bool
	stopAt int
	cancel context.CancelFunc
	// loaded makes the MPI runs judge their machine degraded, as an MPI
	// run under load does (results.csv's status and degraded_reason).
	loaded bool
}

func (f *fakeRunner) Skip(p Point) string {
	if p.Transport == TransportMPI && p.Params.Ranks*p.Params.Threads > 4 {
		return "more ranks × threads than the machine's 4 CPUs"
	}
	return ""
}

func (f *fakeRunner) Run(ctx context.Context, p Point, dir string) (string, error) {
	if f.stopAt > 0 && len(f.ran) == f.stopAt {
		f.cancel()
		return "", ctx.Err()
	}
	f.ran = append(f.ran, key(p))
	if f.fail[p.ID()] {
		return "", errors.New("mpirun exited 1\nmore detail")
	}
	cfg := report.Config{Params: p.Params, Transport: p.Transport}
	row := report.Aggregate(cfg, nil, 0)
	row.WaitFrac = float64(p.Params.Threads) / 10
	status := "ok"
	if f.loaded && p.Transport == TransportMPI {
		row.Host = report.Host{Measured: true, CPUs: 2, LoadStart: 9, LoadEnd: 9}
		row.Host.Judge(p.Params.Ranks, p.Params.Threads)
		status = row.Host.Status
	}
	var b bytes.Buffer
	if err := report.WriteCSV(&b, []report.Row{row}, true); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return status, os.WriteFile(filepath.Join(dir, "results.csv"), b.Bytes(), 0o644)
}

// TestDegradedReason: an MPI point whose run judged its machine degraded
// is degraded in the index, with the run's reason, as the real backend's
// points are.
func TestDegradedReason(t *testing.T) {
	m, err := Parse([]byte(matrixYAML), "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m.Sweeps = m.Sweeps[:1]
	out := t.TempDir()
	var log bytes.Buffer
	if _, err := Run(context.Background(), m, out, &fakeRunner{loaded: true}, nil, &log); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range readIndexRows(t, out) {
		if r[2] != TransportMPI || r[4] == "skipped" {
			continue
		}
		n++
		if r[4] != "degraded" || !strings.Contains(r[5], "load 9.00 before the run > 2 host CPUs") {
			t.Errorf("%s: status %q, reason %q; want degraded with the run's reason", r[3], r[4], r[5])
		}
	}
	if n == 0 || !strings.Contains(log.String(), ": degraded (t_iter") {
		t.Errorf("%d MPI points ran; log:\n%s", n, log.String())
	}
}

func readIndexRows(t *testing.T, out string) [][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, IndexFile))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs[1:]
}

// TestResume: a sweep interrupted after three runs keeps them; the same
// call again runs the rest and none twice; a failed run is retried.
func TestResume(t *testing.T) {
	m, err := Parse([]byte(matrixYAML), "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m.Sweeps = m.Sweeps[:1]
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	f := &fakeRunner{stopAt: 3, cancel: cancel, fail: map[string]bool{"P4-T2-H16-F0-B0-phase_nb-none": true}}
	var log bytes.Buffer
	_, err = Run(ctx, m, out, f, nil, &log)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("interrupted sweep: %v", err)
	}
	if len(f.ran) != 3 {
		t.Fatalf("ran %d before the interrupt", len(f.ran))
	}
	rows := readIndexRows(t, out)
	var statuses []string
	for _, r := range rows {
		statuses = append(statuses, r[4])
	}
	if want := []string{"ok", "ok", "failed", "pending", "pending", "pending", "pending", "pending"}; !slices.Equal(statuses, want) {
		t.Errorf("statuses after the interrupt %v, want %v", statuses, want)
	}
	if rows[2][5] != "mpirun exited 1" {
		t.Errorf("reason %q", rows[2][5])
	}

	first := slices.Clone(f.ran)
	f.ran, f.stopAt, f.fail = nil, 0, nil
	o, err := Run(context.Background(), m, out, f, nil, &log)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range f.ran {
		if slices.Contains(first[:2], k) {
			t.Errorf("%s ran twice", k)
		}
	}
	if o.Kept != 2 || o.Ran != 4 || len(f.ran) != 4 {
		t.Errorf("resumed: kept %d, ran %d (%v)", o.Kept, o.Ran, f.ran)
	}
	rows = readIndexRows(t, out)
	for _, r := range rows {
		want := "ok"
		if r[2] == TransportMPI && r[8] == "2" {
			want = StatusSkipped
		}
		if r[4] != want {
			t.Errorf("%s %s: status %s, want %s", r[2], r[3], r[4], want)
		}
		if r[4] == "ok" && r[18] == "" {
			t.Errorf("%s: no wait_frac in the index", r[3])
		}
	}
}

// TestIndexKeepsOtherTransports: a call that runs only some transports
// keeps the other transports' lines of the index.
func TestIndexKeepsOtherTransports(t *testing.T) {
	m, err := Parse([]byte(matrixYAML), "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m.Sweeps = m.Sweeps[:1]
	out := t.TempDir()
	if _, err := Run(context.Background(), m, out, &fakeRunner{}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := m.Keep([]string{"pigeon"}); err == nil || !strings.Contains(err.Error(), `"pigeon" is not a transport`) {
		t.Errorf("Keep of an unknown transport: %v", err)
	}
	if err := m.Keep([]string{TransportSim}); err != nil {
		t.Fatal(err)
	}
	f := &fakeRunner{}
	if _, err := Run(context.Background(), m, out, f, nil, nil); err != nil {
		t.Fatal(err)
	}
	rows := readIndexRows(t, out)
	n := map[string]int{}
	for _, r := range rows {
		n[r[2]]++
	}
	if len(f.ran) != 0 || n[TransportSim] != 4 || n[TransportMPI] != 4 {
		t.Errorf("ran %v; index lines by transport %v, want 4 sim (kept) and 4 mpi (from before)", f.ran, n)
	}
}

// TestIndexBeforeHiddenFrac: an index written before hidden_frac was a
// column (21 cells a line) is read, its finished points kept, and the
// index is rewritten with the column.
func TestIndexBeforeHiddenFrac(t *testing.T) {
	m, err := Parse([]byte(matrixYAML), "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m.Sweeps = m.Sweeps[:1]
	out := t.TempDir()
	f := &fakeRunner{}
	if _, err := Run(context.Background(), m, out, f, nil, nil); err != nil {
		t.Fatal(err)
	}
	rows := readIndexRows(t, out)
	if len(rows[0]) != len(indexColumns) || indexColumns[len(indexColumns)-1] != "hidden_frac" {
		t.Fatalf("index line %q: want %d cells ending in hidden_frac", rows[0], len(indexColumns))
	}
	// The same index as the former version wrote it.
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(indexColumns[:indexColumnsBefore])
	for _, r := range rows {
		w.Write(r[:indexColumnsBefore])
	}
	w.Flush()
	if err := os.WriteFile(filepath.Join(out, IndexFile), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	f.ran = nil
	o, err := Run(context.Background(), m, out, f, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.ran) != 0 || o.Ran != 0 {
		t.Errorf("ran %v again from the former index", f.ran)
	}
	for _, r := range readIndexRows(t, out) {
		if len(r) != len(indexColumns) {
			t.Errorf("rewritten line %q: %d cells, want %d", r, len(r), len(indexColumns))
		}
	}
}
