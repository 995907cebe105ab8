package timepage

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// C return codes (include/chronosync_time.h).
const (
	cOK      = 0
	cStale   = 1
	cNoModel = 2
	cTorn    = 3
	cFailed  = 4
)

// buildC compiles testdata/creader.c against include/chronosync_time.h
// with warnings as errors, skipping where gcc is missing.
func buildC(tb testing.TB) string {
	tb.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		tb.Skip("gcc not found: the C header's tests need it")
	}
	bin := filepath.Join(tb.TempDir(), "creader")
	cmd := exec.Command(gcc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-pedantic",
		"-I"+filepath.Join("..", "include"), "-o", bin, filepath.Join("testdata", "creader.c"), "-lm")
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("%v: %v\n%s", cmd, err, out)
	}
	return bin
}

// goCode is the C return code Go's answer corresponds to.
func goCode(err error) int {
	switch {
	case err == nil:
		return cOK
	case errors.Is(err, ErrStale):
		return cStale
	case errors.Is(err, ErrNoModel):
		return cNoModel
	case errors.Is(err, ErrTorn):
		return cTorn
	case errors.Is(err, ErrFailed):
		return cFailed
	}
	return -1
}

// crossCase is one page and the readings every reader converts on it.
type crossCase struct {
	name   string
	model  *Model // nil: a page with a header and no model
	locals []int64
}

func crossCases() []crossCase {
	var cs []crossCase
	for _, tc := range recordsCases {
		o := tc.o
		m := FromOffset(o, 0, o.WindowEndNS, o.WindowEndNS+30e9, StatusOK)
		span := o.WindowEndNS - o.WindowStartNS
		cs = append(cs, crossCase{tc.name, &m, []int64{o.WindowStartNS, o.WindowStartNS + span/3, m.StepsEndNS,
			o.WindowEndNS, o.WindowEndNS + 29e9, o.WindowEndNS + 30e9, o.WindowEndNS + 30e9 + 1, o.WindowEndNS + 86400e9, -5, 0}})
	}
	failed := FromOffset(recordsCases[1].o, 3, 2e9, 3e9, StatusFailed)
	degraded := FromOffset(recordsCases[2].o, 3, epoch, epoch+1e9, StatusDegraded)
	cs = append(cs,
		crossCase{"failed", &failed, []int64{2e9, 4e9}},
		crossCase{"degraded", &degraded, []int64{epoch + 5e8, epoch + 2e9}},
		crossCase{"no model", nil, []int64{1}},
	)
	return cs
}

func writePage(t testing.TB, path string, m *Model) {
	t.Helper()
	fp, err := CreateFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fp.Close()
	p, err := NewPublisher(fp, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if m != nil {
		if err := p.Publish(*m); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCReaderMatchesGo: the C header reads pages Go wrote and gives Go's
// answers: the same return code, global time within 1 ns, the same σ.
func TestCReaderMatchesGo(t *testing.T) {
	bin := buildC(t)
	for _, tc := range crossCases() {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "page")
			writePage(t, path, tc.model)
			args := []string{"convert", path}
			for _, l := range tc.locals {
				args = append(args, strconv.FormatInt(l, 10))
			}
			out, err := exec.Command(bin, args...).Output()
			if err != nil {
				t.Fatalf("creader: %v", err)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if len(lines) != len(tc.locals) {
				t.Fatalf("creader printed %d lines for %d readings:\n%s", len(lines), len(tc.locals), out)
			}
			fp, err := OpenFile(path)
			if err != nil {
				t.Fatal(err)
			}
			defer fp.Close()
			r := reader(t, fp)
			for i, local := range tc.locals {
				var rc int
				var g int64
				var s float64
				if _, err := fmt.Sscanf(lines[i], "%d %d %g", &rc, &g, &s); err != nil {
					t.Fatalf("line %d %q: %v", i+1, lines[i], err)
				}
				wg, ws, err := r.ToGlobal(local)
				if rc != goCode(err) {
					t.Errorf("local %d: C rc %d, Go %v", local, rc, err)
				}
				if d := g - wg; d < -1 || d > 1 || math.Abs(s-ws) > 1e-12*ws {
					t.Errorf("local %d: C %d ± %.17g, Go %d ± %.17g", local, g, s, wg, ws)
				}
			}
		})
	}
}

// stressWriter publishes stressModel(k) for k = 1, 2, ... on path until
// stopped, with a breath between publishes; it returns the stop function,
// which reports how many it published.
func stressWriter(t testing.TB, path string) (stop func() uint64) {
	t.Helper()
	fp, err := CreateFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := NewPublisher(fp, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if err := pub.Publish(stressModel(1)); err != nil {
		t.Fatal(err)
	}
	var done atomic.Bool
	var n atomic.Uint64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for k := uint64(2); !done.Load(); k++ {
			if err := pub.Publish(stressModel(k)); err != nil {
				t.Error(err)
				return
			}
			n.Store(k)
			for j := 0; j < 50 && !done.Load(); j++ {
			}
		}
	}()
	return func() uint64 {
		done.Store(true)
		wg.Wait()
		fp.Close()
		return n.Load()
	}
}

// TestCStress: the C reader reads in a tight loop for 2 s while Go
// publishes as fast as it can: no model it takes is a mix of two
// publishes, and no torn read gets past its seqlock to the checksum.
func TestCStress(t *testing.T) {
	bin := buildC(t)
	path := filepath.Join(t.TempDir(), "page")
	stop := stressWriter(t, path)
	out, err := exec.Command(bin, "stress", path, "2").Output()
	published := stop()
	if err != nil {
		t.Fatalf("creader stress: %v", err)
	}
	var res struct {
		Reads, SeqRetries, ChecksumFailures, Mixed, TornRC, OtherRC, RoundsSeen uint64
	}
	dec := json.NewDecoder(strings.NewReader(strings.NewReplacer("seq_retries", "SeqRetries", "checksum_failures", "ChecksumFailures",
		"torn_rc", "TornRC", "other_rc", "OtherRC", "rounds_seen", "RoundsSeen").Replace(string(out))))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&res); err != nil {
		t.Fatalf("creader stress printed %q: %v", out, err)
	}
	t.Logf("2 s, Go writer (%d publishes), C reader: %+v", published, res)
	if res.ChecksumFailures != 0 || res.Mixed != 0 || res.OtherRC != 0 {
		t.Errorf("C reader: %d torn reads past the seqlock, %d mixed models, %d unexpected return codes", res.ChecksumFailures, res.Mixed, res.OtherRC)
	}
	if res.Reads < 10000 || res.RoundsSeen < 100 {
		t.Errorf("too little contention to mean anything: %d reads, %d models seen", res.Reads, res.RoundsSeen)
	}
}

// TestPythonReaderMatchesGo: tools/chronosync_time.py gives Go's answers on
// the same pages.
func TestPythonReaderMatchesGo(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: the Python reader's test needs it")
	}
	for _, tc := range crossCases() {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "page")
			writePage(t, path, tc.model)
			args := []string{filepath.Join("..", "tools", "chronosync_time.py"), path}
			for _, l := range tc.locals {
				args = append(args, strconv.FormatInt(l, 10))
			}
			out, err := exec.Command(py, args...).Output()
			if err != nil {
				t.Fatalf("chronosync_time.py: %v", err)
			}
			fp, err := OpenFile(path)
			if err != nil {
				t.Fatal(err)
			}
			defer fp.Close()
			r := reader(t, fp)
			sc := bufio.NewScanner(strings.NewReader(string(out)))
			for i, local := range tc.locals {
				if !sc.Scan() {
					t.Fatalf("chronosync_time.py printed %d lines for %d readings", i, len(tc.locals))
				}
				var got struct {
					LocalNS  int64   `json:"local_ns"`
					Status   string  `json:"status"`
					GlobalNS int64   `json:"global_ns"`
					SigmaNS  float64 `json:"sigma_ns"`
				}
				if err := json.Unmarshal(sc.Bytes(), &got); err != nil {
					t.Fatalf("line %d %q: %v", i+1, sc.Text(), err)
				}
				wg, ws, err := r.ToGlobal(local)
				want := map[int]string{cOK: "ok", cStale: "stale", cFailed: "failed", cNoModel: "no_model", cTorn: "torn"}[goCode(err)]
				if got.Status != want || got.LocalNS != local {
					t.Errorf("local %d: Python %q for %d, Go %v", local, got.Status, got.LocalNS, err)
				}
				if d := got.GlobalNS - wg; d < -1 || d > 1 || math.Abs(got.SigmaNS-ws) > 1e-12*ws {
					t.Errorf("local %d: Python %d ± %.17g, Go %d ± %.17g", local, got.GlobalNS, got.SigmaNS, wg, ws)
				}
			}
		})
	}
}

// BenchmarkToGlobalC times chronosync_to_global (ns/op) and
// chronosync_now_global (now-ns/op) in a C loop on a page Go wrote.
func BenchmarkToGlobalC(b *testing.B) {
	bin := buildC(b)
	path := filepath.Join(b.TempDir(), "page")
	m := FromOffset(recordsCases[2].o, 0, epoch, math.MaxInt64, StatusOK)
	writePage(b, path, &m)
	n := max(b.N, 1_000_000)
	b.ResetTimer()
	out, err := exec.Command(bin, "bench", path, strconv.Itoa(n)).Output()
	if err != nil {
		b.Fatalf("creader bench: %v", err)
	}
	var res struct {
		ToGlobal float64 `json:"to_global_ns"`
		Now      float64 `json:"now_global_ns"`
		RC       int     `json:"rc"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.RC != 0 {
		b.Fatalf("creader bench printed %q (%v)", out, err)
	}
	b.ReportMetric(res.ToGlobal, "ns/op")
	b.ReportMetric(res.Now, "now-ns/op")
}
