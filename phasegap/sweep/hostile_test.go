package sweep

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// axisOf is a YAML flow list of n copies of v.
func axisOf(n int, v string) string {
	return "[" + strings.TrimSuffix(strings.Repeat(v+", ", n), ", ") + "]"
}

// aliasBomb is issue 30's sweep matrix: every axis ten values long, most
// of them one anchored list named again, 1e9 points in under 4 KB.
func aliasBomb() string {
	return fmt.Sprintf(`# 1e9 points: nine axes of ten values, through aliases
name: bomb
transports: &t %s
base: {N: 10000, iters: 10, warmup: 1}
sweeps:
  - name: big
    transports: *t
    ranks: &one %s
    threads: *one
    halo: %s
    flops_per_point: &zero %s
    bytes_per_point: *zero
    mode: %s
    preset: %s
    progress: %s
`, axisOf(10, "sim"), axisOf(10, "1"), axisOf(10, "16"), axisOf(10, "0"), axisOf(10, "phase_nb"),
		axisOf(10, "none"), axisOf(10, "inline_poll"))
}

// laughs is a billion laughs under key: nine levels of ten aliases each.
func laughs(key string) string {
	var b strings.Builder
	b.WriteString("l0: &l0 [lol]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "l%d: &l%d %s\n", i, i, axisOf(10, fmt.Sprintf("*l%d", i-1)))
	}
	return fmt.Sprintf("%s:\n  %s\nsweeps: [{name: a}]\n", key, strings.ReplaceAll(strings.TrimSpace(b.String()), "\n", "\n  "))
}

// parseBounded parses in as file, apart, so that a bomb that goes off
// fails the test after 10 s rather than hanging it; it returns what Parse
// returned and the bytes it allocated.
func parseBounded(t *testing.T, in, file string) (*Matrix, uint64, error) {
	t.Helper()
	type result struct {
		m     *Matrix
		err   error
		alloc uint64
	}
	done := make(chan result, 1)
	go func() {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		m, err := Parse([]byte(in), file)
		runtime.ReadMemStats(&after)
		done <- result{m, err, after.TotalAlloc - before.TotalAlloc}
	}()
	select {
	case r := <-done:
		return r.m, r.alloc, r.err
	case <-time.After(10 * time.Second):
		t.Fatal("still parsing after 10 s")
	}
	return nil, 0, nil
}

// TestSweepAliasBomb: a small matrix that asks, through YAML aliases, for
// 1e9 points (issue 30: 3 GB in 5 s) or for a billion nodes is refused
// before anything is expanded, naming the file, the count and the limit,
// in a few MiB; an alias inside the node it names is refused too.
func TestSweepAliasBomb(t *testing.T) {
	// 400 (ranks, threads) pairs anchored once and named by 100 sweeps:
	// 40,000 points (allowed), but 120,000 nodes from 1,704 of its own.
	var expand strings.Builder
	expand.WriteString("sweeps:\n  - {name: s0, split: &p " + axisOf(400, "[1, 1]") + "}\n")
	for i := 1; i < 100; i++ {
		fmt.Fprintf(&expand, "  - {name: s%d, split: *p}\n", i)
	}
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"1e9 points", aliasBomb(), []string{"bomb.yaml:6: 1000000000 points: more than 100000 (sweep.MaxPoints)",
			`sweep "big" has 1000000000 (10 transports × 10 ranks × 10 threads × 10 halo`}},
		{"billion laughs in an unknown key", laughs("x"), []string{"bomb.yaml: its 120 YAML nodes expand through aliases to more than 100000",
			"(sweep.AliasAllowance, sweep.MaxAliasExpansion, sweep.MaxMatrixNodes)"}},
		{"billion laughs in a sweep's name", strings.Replace(laughs("x"), "{name: a}", "{name: *l9}", 1),
			[]string{"bomb.yaml: its 120 YAML nodes expand through aliases to more than 100000"}},
		{"one list named by every sweep", expand.String(), []string{"bomb.yaml: its 1704 YAML nodes expand through aliases to more than 100000"}},
		{"alias inside its node", "sweeps: &s [{name: a}, *s]\n", []string{"bomb.yaml:1: alias *s is inside the node it names"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.in) > 4096 && tc.name != "one list named by every sweep" {
				t.Fatalf("the bomb is %d bytes, want at most 4 KiB", len(tc.in))
			}
			start := time.Now()
			_, alloc, err := parseBounded(t, tc.in, "bomb.yaml")
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %v\nwant %q", err, w)
				}
			}
			if alloc > 8<<20 {
				t.Errorf("refusing it allocated %d bytes, want at most 8 MiB", alloc)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("refusing it took %v, want under 2 s", d)
			}
		})
	}
}

// TestSweepTooManyPoints: a matrix of more than MaxPoints points (1e6,
// issue 30: accepted and started running; MaxPoints+1; over 2^64; two
// sweeps together) is refused from the axes' lengths; MaxPoints points
// are accepted and Count says so (no point is run or expanded here).
func TestSweepTooManyPoints(t *testing.T) {
	ten := axisOf(10, "1")
	million := fmt.Sprintf("name: million\nsweeps:\n  - name: big\n    ranks: %s\n    threads: %s\n    halo: %s\n    flops_per_point: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n    bytes_per_point: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n    mode: [phase_nb, phase_blk, nb_test, phase_persist, omp_tasks]\n    progress: [inline_poll, progress_thread]\n",
		"[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]", "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]", "[16, 32, 48, 64, 80, 96, 112, 128, 144, 160]")
	// 100,000 = 10 × 10 × 10 × 10 × 10 (flops and bytes: any values pass).
	hundredK := fmt.Sprintf("sweeps:\n  - name: a\n    ranks: %s\n    threads: %s\n    halo: %s\n    flops_per_point: %s\n    bytes_per_point: %s\n",
		ten, ten, axisOf(10, "16"), ten, ten)
	for _, tc := range []struct {
		name, in string
		want     string // the error; "": accepted, with count points
		count    int
	}{
		{"1e6", million, "m.yaml:3: 1000000 points: more than 100000 (sweep.MaxPoints); sweep \"big\" has 1000000 (1 transports × 10 ranks × 10 threads × 10 halo × 10 flops_per_point × 10 bytes_per_point × 5 mode × 1 preset × 2 progress)", 0},
		{"MaxPoints", hundredK, "", MaxPoints},
		{"MaxPoints+1", strings.Replace(hundredK, "sweeps:\n", "sweeps:\n  - {name: b}\n", 1), "m.yaml:3: 100001 points: more than 100000 (sweep.MaxPoints)", 0},
		{"two sweeps", hundredK + "  - name: b\n    halo: " + axisOf(10, "16") + "\n", "m.yaml:2: 100010 points: more than 100000 (sweep.MaxPoints); sweep \"a\" has 100000", 0},
		{"over 2^64", "sweeps:\n  - name: a\n    ranks: &a " + axisOf(256, "1") + "\n    threads: *a\n    halo: *a\n    flops_per_point: *a\n    bytes_per_point: *a\n    mode: &m " + axisOf(256, "phase_nb") + "\n    preset: " + axisOf(256, "none") + "\n    progress: " + axisOf(256, "inline_poll") + "\n    transports: " + axisOf(256, "sim") + "\n",
			"m.yaml:2: more than 18446744073709551615 points: more than 100000 (sweep.MaxPoints); sweep \"a\" has more than 18446744073709551615 (256 transports × 256 ranks", 0},
		{"no transport", "sweeps:\n  - name: a\n    transports: []\n    ranks: &a " + axisOf(256, "1") + "\n    threads: *a\n    halo: *a\n    flops_per_point: *a\n    bytes_per_point: *a\n", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _, err := parseBounded(t, tc.in, "m.yaml")
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("error %v\nwant %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n := m.Count(); n != tc.count {
				t.Errorf("Count %d, want %d", n, tc.count)
			}
		})
	}
}

// TestSweepRanksChecked: ranks below 1 (before: each such point failed
// when it ran, "nodes: 0 nodes") are refused with the matrix.
func TestSweepRanksChecked(t *testing.T) {
	_, err := Parse([]byte("sweeps:\n  - name: a\n    ranks: [2, -1, 0]\n"), "m.yaml")
	if want := "m.yaml:2: sweep a, point P-1-T1-H16-F0-B0-phase_nb-none: -1 ranks: expected 1 to 4194304 (scenario.MaxNodes)"; err == nil || err.Error() != want {
		t.Errorf("error %v\nwant %q", err, want)
	}
}

// TestSweepCostsCheckedOnce: a bad costs file (before: every point failed
// alike, one error each) is one error, naming the matrix's line and the
// costs file's, before the first point runs and before the output
// directory exists; a good one lets the sweep run.
func TestSweepCostsCheckedOnce(t *testing.T) {
	dir := t.TempDir()
	matrix := "costs: costs.yaml\nsweeps:\n  - name: a\n    threads: [1, 2]\n    halo: [16, 32]\n"
	if err := os.WriteFile(filepath.Join(dir, "costs.yaml"), []byte("point_ns: 1\nflop_ns: -3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Parse([]byte(matrix), filepath.Join(dir, "m.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	f := &fakeRunner{}
	o, err := Run(context.Background(), m, out, f, nil, nil)
	if err == nil {
		t.Fatal("a bad costs file: the sweep ran")
	}
	msg := err.Error()
	for _, want := range []string{filepath.Join(dir, "m.yaml") + ":1: costs: " + filepath.Join(dir, "costs.yaml") + ":2: flop_ns: -3: expected a finite number",
		"(no point run)"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q\nwant %q", msg, want)
		}
	}
	if n := strings.Count(msg, "flop_ns: -3"); n != 1 {
		t.Errorf("the costs error %d times, want once:\n%s", n, msg)
	}
	if len(f.ran) != 0 || o.Entries != nil {
		t.Errorf("ran %v, entries %d: want nothing run or planned", f.ran, len(o.Entries))
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the output directory: %v, want none", err)
	}

	// Missing: the same, naming the file.
	os.Remove(filepath.Join(dir, "costs.yaml"))
	if _, err := Run(context.Background(), m, out, f, nil, nil); err == nil || !strings.Contains(err.Error(), "costs.yaml: no such file") || len(f.ran) != 0 {
		t.Errorf("a missing costs file: %v, ran %v", err, f.ran)
	}

	// Good costs: every point runs.
	good := "point_ns: 1\nflop_ns: 1\nbyte_ns: 1\nfork_ns: 1\nmem_bytes_per_ns: 1\npoint_bytes: 8\ncall_ns: 1\neager_limit: 1024\nimbalance_ns: 0\nimbalance_frac: 0\n"
	if err := os.WriteFile(filepath.Join(dir, "costs.yaml"), []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := m.CheckCosts(); err != nil {
		t.Fatalf("good costs: %v", err)
	}
	if o, err := Run(context.Background(), m, out, f, nil, nil); err != nil || o.Ran != 4 {
		t.Errorf("good costs: ran %d, %v", o.Ran, err)
	}
}
