package timepage

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/chronosync/chronosync/analysis/offsets"
)

var update = flag.Bool("update", false, "rewrite testdata/page.golden")

// epoch is a CLOCK_REALTIME-sized reading (2026-11-27).
const epoch = int64(1_795_000_000_000_000_000)

// recordsCases are node records of a round, as offsets.jsonl holds them.
var recordsCases = []struct {
	name string
	o    offsets.Offset
}{
	{"reference", offsets.Offset{RoundID: 1, WindowID: 1, WindowStartNS: 1e9, WindowEndNS: 2e9}},
	{"small", offsets.Offset{RoundID: 4, WindowID: 4, WindowStartNS: 1e9, WindowEndNS: 2e9, NodeID: 1,
		OffsetNS: 41250.5, DriftPPM: -12.25, UncertaintyNS: 80, DriftUncertaintyPPM: 0.02}},
	{"epoch", offsets.Offset{RoundID: 900, WindowID: 900, WindowStartNS: epoch, WindowEndNS: epoch + 10e9, NodeID: 3,
		OffsetNS: -3.7e6 + 0.25, DriftPPM: 31.5, UncertaintyNS: 450, DriftUncertaintyPPM: 0.3}},
	{"steps", offsets.Offset{RoundID: 7, WindowID: 7, WindowStartNS: 1e9, WindowEndNS: 2e9, NodeID: 2,
		OffsetNS: 1000, DriftPPM: 5, UncertaintyNS: 30, DriftUncertaintyPPM: 0.01,
		Steps: []offsets.Step{
			{AtNS: 1_300_000_000, AtUncertaintyNS: 500, SizeNS: 250000, SizeUncertaintyNS: 30},
			{AtNS: 1_700_000_000, AtUncertaintyNS: 800.5, SizeNS: -40000, SizeUncertaintyNS: 12},
		}}},
	{"epoch steps", offsets.Offset{RoundID: 8, WindowID: 8, WindowStartNS: epoch, WindowEndNS: epoch + 1e9, NodeID: 5,
		OffsetNS: 77.125, DriftPPM: -80, UncertaintyNS: 5, DriftUncertaintyPPM: 0.05,
		Steps: []offsets.Step{{AtNS: epoch + 4e8, AtUncertaintyNS: 100, SizeNS: 1e6 + 0.5, SizeUncertaintyNS: 3}}}},
}

func publish(t testing.TB, page Page, m Model) *Publisher {
	t.Helper()
	p, err := NewPublisher(page, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Publish(m); err != nil {
		t.Fatal(err)
	}
	return p
}

func reader(t testing.TB, page Page) *Reader {
	t.Helper()
	r, err := NewReader(page)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRoundTrip: a model published from an offsets.Offset and read back
// converts readings after the window's steps as Offset.Global does (within
// 1 ns, at any magnitude through OffsetAfter) with Offset.SigmaAt's σ;
// readings before a step get a σ that covers the error.
func TestRoundTrip(t *testing.T) {
	for _, tc := range recordsCases {
		t.Run(tc.name, func(t *testing.T) {
			page := NewVirtualPage()
			m := FromOffset(tc.o, 0, tc.o.WindowEndNS+1, tc.o.WindowEndNS+1e12, StatusOK)
			publish(t, page, m)
			r := reader(t, page)
			got, err := r.Load()
			if err != nil {
				t.Fatal(err)
			}
			if got != m {
				t.Fatalf("Load = %+v, published %+v", got, m)
			}
			span := tc.o.WindowEndNS - tc.o.WindowStartNS
			// Offset.SigmaAt places a reading at float64 precision (256
			// ns at epoch magnitudes); the page places it exactly.
			slack := int64(0)
			if math.Abs(float64(m.StepsEndNS)) >= 1<<53 {
				slack = 512
			}
			for _, local := range []int64{m.StepsEndNS + slack, tc.o.WindowEndNS, tc.o.WindowEndNS + span/3, tc.o.WindowEndNS + 7*span + 12345} {
				g, sigma, err := r.ToGlobal(local)
				if err != nil {
					t.Fatalf("ToGlobal(%d): %v", local, err)
				}
				n := len(tc.o.Steps)
				if want := tc.o.OffsetAfter(local, n); math.Abs(float64(local-g)-want) > 0.5+1e-6 {
					t.Errorf("ToGlobal(%d) = %d: correction %d, Offset's %.3f", local, g, local-g, want)
				}
				if math.Abs(float64(local)) < 1<<52 {
					if want := tc.o.Global(local); math.Abs(float64(g)-want) > 1 {
						t.Errorf("ToGlobal(%d) = %d, Offset.Global %.3f", local, g, want)
					}
				}
				tol := 1e-12*tc.o.SigmaAt(local) + tc.o.DriftUncertaintyPPM*1e-6*float64(2*slack) + 1e-9
				if want := tc.o.SigmaAt(local); math.Abs(sigma-want) > tol {
					t.Errorf("ToGlobal(%d) σ = %.9g, Offset.SigmaAt %.9g", local, sigma, want)
				}
			}
			// Readings inside the window, before or around its steps: the
			// page cannot tell which steps they come after, and says so
			// in σ.
			for local := tc.o.WindowStartNS; local < m.StepsEndNS; local += span / 50 {
				g, sigma, err := r.ToGlobal(local)
				if err != nil {
					t.Fatal(err)
				}
				miss := math.Abs(float64(local-g) - tc.o.OffsetAfter(local, tc.o.StepsBefore(local)))
				if miss > sigma+1 || sigma < tc.o.SigmaAt(local)-1e-6 {
					t.Errorf("ToGlobal(%d) before the steps: off by %.1f ns with σ %.1f (Offset's σ %.1f)", local, miss, sigma, tc.o.SigmaAt(local))
				}
			}
		})
	}
}

// TestStaleAndStatus: a reading past the deadline is ErrStale, never
// hidden, with the extrapolated values; Expire brings the deadline
// forward; StatusFailed is ErrFailed; degraded is served.
func TestStaleAndStatus(t *testing.T) {
	o := recordsCases[1].o
	deadline := o.WindowEndNS + 30e9
	tests := []struct {
		name    string
		status  Status
		expire  int64 // 0: none
		local   int64
		wantErr error
	}{
		{"within", StatusOK, 0, deadline - 1, nil},
		{"at the deadline", StatusOK, 0, deadline, nil},
		{"one ns past", StatusOK, 0, deadline + 1, ErrStale},
		{"long past", StatusOK, 0, deadline + 3600e9, ErrStale},
		{"degraded is served", StatusDegraded, 0, deadline, nil},
		{"failed", StatusFailed, 0, o.WindowEndNS, ErrFailed},
		{"expired by a clean stop", StatusOK, o.WindowEndNS + 5e9, o.WindowEndNS + 5e9 + 1, ErrStale},
		{"before the expiry", StatusOK, o.WindowEndNS + 5e9, o.WindowEndNS + 5e9, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			page := NewVirtualPage()
			m := FromOffset(o, 0, o.WindowEndNS, deadline, tc.status)
			p := publish(t, page, m)
			if tc.expire != 0 {
				if err := p.Expire(tc.expire); err != nil {
					t.Fatal(err)
				}
			}
			g, s, err := reader(t, page).ToGlobal(tc.local)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("ToGlobal(%d) error %v, want %v", tc.local, err, tc.wantErr)
			}
			wg, ws := m.ToGlobal(tc.local)
			if g != wg || s != ws {
				t.Errorf("ToGlobal(%d) = %d, %g; want the model's %d, %g even with %v", tc.local, g, s, wg, ws, err)
			}
		})
	}
}

func TestNoModelAndLayout(t *testing.T) {
	if _, err := NewReader(NewVirtualPage()); !errors.Is(err, ErrLayout) {
		t.Errorf("NewReader(zero page): %v, want ErrLayout", err)
	}
	page := NewVirtualPage()
	if _, err := NewPublisher(page, 42); err != nil {
		t.Fatal(err)
	}
	r := reader(t, page)
	if _, _, err := r.ToGlobal(1); !errors.Is(err, ErrNoModel) {
		t.Errorf("ToGlobal before any Publish: %v, want ErrNoModel", err)
	}
	bad := NewVirtualPage()
	publish(t, bad, FromOffset(recordsCases[1].o, 0, 0, 1, StatusOK))
	bad.Store64(OffMagic, uint64(Magic)|2<<32)
	if _, err := NewReader(bad); !errors.Is(err, ErrLayout) || !strings.Contains(err.Error(), "version 2 at byte 4") {
		t.Errorf("NewReader(version 2): %v", err)
	}
	for _, m := range []Model{
		{Status: StatusNone},
		{Status: StatusOK, SigmaNS: math.NaN()},
		{Status: StatusOK, SigmaNS: -1},
		{Status: StatusOK, WindowStartNS: 2, WindowEndNS: 1},
		{Status: StatusOK, OffsetNS: 1 << 60},
		{Status: 9},
	} {
		p, _ := NewPublisher(NewVirtualPage(), 0)
		if err := p.Publish(m); err == nil {
			t.Errorf("Publish(%+v) accepted", m)
		}
	}
}

// TestGolden pins the layout: the bytes of a page with a known model, and
// each field at its documented offset.
func TestGolden(t *testing.T) {
	page := NewVirtualPage()
	m := FromOffset(recordsCases[3].o, 0, 2_000_000_100, 2_030_000_000, StatusDegraded)
	p, err := NewPublisher(page, 4242)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Publish(m); err != nil {
		t.Fatal(err)
	}
	b := page.Bytes()
	le := binary.LittleEndian
	f64 := func(off int) float64 { return math.Float64frombits(le.Uint64(b[off:])) }
	fields := []struct {
		name      string
		got, want any
	}{
		{"magic bytes", string(b[0:4]), "CSTP"},
		{"version", le.Uint32(b[OffVersion:]), uint32(1)},
		{"size", le.Uint32(b[OffSize:]), uint32(4096)},
		{"pid", le.Uint32(b[OffPid:]), uint32(4242)},
		{"seq", le.Uint64(b[OffSeq:]), uint64(2)},
		{"round", le.Uint64(b[OffRoundID:]), uint64(7)},
		{"window", le.Uint64(b[OffWindowID:]), uint64(7)},
		{"window start", int64(le.Uint64(b[OffWindowStart:])), int64(1e9)},
		{"window end", int64(le.Uint64(b[OffWindowEnd:])), int64(2e9)},
		{"offset", f64(OffOffset), 1000.0},
		{"drift", f64(OffDrift), 5.0},
		{"sigma", f64(OffSigma), 30.0},
		{"drift sigma", f64(OffDriftSigma), 0.01},
		{"step sum", f64(OffStepSum), 210000.0},
		{"step var", f64(OffStepVar), 30.0*30 + 12*12},
		{"step abs sum", f64(OffStepAbsSum), 290000.0},
		{"steps end", int64(le.Uint64(b[OffStepsEnd:])), int64(1_700_000_801)},
		{"valid until", int64(le.Uint64(b[OffValidUntil:])), int64(2_030_000_000)},
		{"published", int64(le.Uint64(b[OffPublished:])), int64(2_000_000_100)},
		{"node", int32(le.Uint32(b[OffNodeID:])), int32(2)},
		{"reference", int32(le.Uint32(b[OffReference:])), int32(0)},
		{"clock", int32(le.Uint32(b[OffClockID:])), int32(0)},
		{"status", le.Uint16(b[OffStatus:]), uint16(StatusDegraded)},
		{"step count", le.Uint16(b[OffStepCount:]), uint16(2)},
	}
	for _, f := range fields {
		if f.got != f.want {
			t.Errorf("%s: %v, want %v", f.name, f.got, f.want)
		}
	}
	var w [ModelWords]uint64
	for i := range w {
		w[i] = le.Uint64(b[OffModel+8*i:])
	}
	if got := le.Uint64(b[OffChecksum:]); got != Checksum(&w) {
		t.Errorf("checksum %#x, want %#x", got, Checksum(&w))
	}
	if !bytes.Equal(b[OffModel+ModelBytes:], make([]byte, PageSize-OffModel-ModelBytes)) {
		t.Error("bytes after the model region are not zero")
	}
	dump := hex.Dump(b[:OffModel+ModelBytes])
	golden := filepath.Join("testdata", "page.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(dump), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test -run TestGolden -update writes it)", err)
	}
	if dump != string(want) {
		t.Errorf("page bytes changed: the layout is version %d, pinned in %s:\ngot:\n%s\nwant:\n%s", Version, golden, dump, want)
	}
}

// TestChecksumCatchesTear: a page whose words mix two models with an even,
// unchanged sequence (a writer that skipped the seqlock) is refused by the
// checksum on every try: ErrTorn, every try counted.
func TestChecksumCatchesTear(t *testing.T) {
	a := FromOffset(recordsCases[1].o, 0, 1, 2e12, StatusOK)
	b := FromOffset(recordsCases[2].o, 0, 1, 2e12, StatusOK)
	wa := a.words()
	for _, tear := range []int{1, 4, 8, 15} {
		page := NewVirtualPage()
		publish(t, page, b)
		for i := 0; i < tear; i++ {
			page.Store64(OffModel+8*i, wa[i])
		}
		r := reader(t, page)
		_, _, err := r.ToGlobal(3e9)
		if !errors.Is(err, ErrTorn) {
			t.Fatalf("torn at word %d: %v, want ErrTorn", tear, err)
		}
		if st := r.Stats(); st.ChecksumFailures < MaxRetries || st.Reads != 0 {
			t.Errorf("torn at word %d: stats %+v, want every one of %d+ tries a checksum failure", tear, st, MaxRetries)
		}
	}
	// A writer that died mid-write leaves the sequence odd: the seqlock
	// refuses it, then a new publisher repairs the page.
	page := NewVirtualPage()
	publish(t, page, a)
	page.Store64(OffSeq, page.Load64(OffSeq)+1)
	r := reader(t, page)
	if _, err := r.Load(); !errors.Is(err, ErrTorn) || r.Stats().SeqRetries != MaxRetries {
		t.Fatalf("odd sequence: %v, %+v", err, r.Stats())
	}
	if _, err := NewPublisher(page, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Load(); !errors.Is(err, ErrNoModel) {
		t.Errorf("after a new publisher on a torn page: %v, want ErrNoModel", err)
	}
}

// stressModel is model k of the stress tests: every field follows from k,
// so a reader can tell a mix of two models without the checksum.
func stressModel(k uint64) Model {
	return Model{
		RoundID: k, WindowID: 3 * k, WindowStartNS: int64(k) * 1000, WindowEndNS: int64(k)*1000 + 500,
		OffsetNS: float64(k) * 0.5, DriftPPM: float64(k) * 1e-3, SigmaNS: float64(k), DriftSigmaPPM: float64(k) * 1e-6,
		StepSumNS: float64(k) * 2, StepVarNS2: float64(k) * 4, StepAbsSumNS: float64(k) * 2,
		StepsEndNS: int64(k) * 1000, ValidUntilNS: int64(k)*1000 + 1e15, PublishedNS: int64(k) * 7,
		NodeID: int(k % 1000), ReferenceNode: int(k % 7), ClockID: ClockRealtime, Status: StatusOK, StepCount: int(k % 100),
	}
}

func consistent(m Model) bool { return m == stressModel(m.RoundID) }

// TestConcurrentStress: a writer publishing as fast as it can on an mmapped
// file and readers on their own mappings: no model read is a mix (checked
// field by field), and the seqlock lets no torn read through to the
// checksum.
func TestConcurrentStress(t *testing.T) {
	path := filepath.Join(t.TempDir(), "page")
	wp, err := CreateFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer wp.Close()
	pub, err := NewPublisher(wp, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if err := pub.Publish(stressModel(1)); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var published atomic.Uint64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for k := uint64(2); !stop.Load(); k++ {
			if err := pub.Publish(stressModel(k)); err != nil {
				t.Error(err)
				return
			}
			published.Store(k)
			// A breath between publishes (about 100 ns), so that readers
			// get through as well as collide.
			for j := 0; j < 50 && !stop.Load(); j++ {
			}
		}
	}()
	const readers = 2
	stats := make([]Stats, readers)
	mixed := make([]int, readers)
	starved := make([]int, readers)
	for i := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rp, err := OpenFile(path)
			if err != nil {
				t.Error(err)
				return
			}
			defer rp.Close()
			r, err := NewReader(rp)
			if err != nil {
				t.Error(err)
				return
			}
			for !stop.Load() {
				m, err := r.Load()
				if errors.Is(err, ErrTorn) {
					starved[i]++ // the writer held the sequence odd for every try
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				if !consistent(m) {
					mixed[i]++
				}
			}
			stats[i] = r.Stats()
		}()
	}
	time.Sleep(time.Second)
	stop.Store(true)
	wg.Wait()
	var total Stats
	var starvedAll int
	for i, s := range stats {
		starvedAll += starved[i]
		total.Reads += s.Reads
		total.SeqRetries += s.SeqRetries
		total.ChecksumFailures += s.ChecksumFailures
		if mixed[i] != 0 {
			t.Errorf("reader %d: %d models mixed from two publishes", i, mixed[i])
		}
	}
	t.Logf("1 s: %d models published, %d reads, %d seqlock retries, %d torn reads past the seqlock, %d loads starved (ErrTorn)",
		published.Load(), total.Reads, total.SeqRetries, total.ChecksumFailures, starvedAll)
	if total.ChecksumFailures != 0 {
		t.Errorf("%d torn reads got past the seqlock", total.ChecksumFailures)
	}
	if total.Reads < 1000 || published.Load() < 1000 {
		t.Errorf("too little contention to mean anything: %d reads, %d publishes", total.Reads, published.Load())
	}
}

// TestFilePage: the page file gets mode 0640 whatever the umask, and a new
// publisher on an existing page keeps its model for the readers that have
// it mapped.
func TestFilePage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chronosync-test-node1")
	old := syscall.Umask(0o077)
	p1, err := CreateFile(path)
	syscall.Umask(old)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != FileMode || st.Size() != PageSize {
		t.Errorf("page file mode %v size %d, want %v %d", st.Mode().Perm(), st.Size(), os.FileMode(FileMode), PageSize)
	}
	m := FromOffset(recordsCases[2].o, 0, epoch, epoch+60e9, StatusOK)
	publish(t, p1, m)
	rp, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rp.Close()
	r := reader(t, rp)
	if err := p1.Close(); err != nil {
		t.Fatal(err)
	}
	p2, err := CreateFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	if _, err := NewPublisher(p2, 7); err != nil {
		t.Fatal(err)
	}
	if got, err := r.Load(); err != nil || got != m {
		t.Fatalf("after a restart, before its first Publish: %+v, %v; want the old model", got, err)
	}
	if _, err := OpenFile(filepath.Join(t.TempDir(), "missing")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("OpenFile(missing): %v", err)
	}
	short := filepath.Join(t.TempDir(), "short")
	if err := os.WriteFile(short, []byte("CSTP"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenFile(short); !errors.Is(err, ErrLayout) {
		t.Errorf("OpenFile(4-byte file): %v, want ErrLayout", err)
	}
}

// TestVirtualPageDeterministic: the same publishes give the same bytes.
func TestVirtualPageDeterministic(t *testing.T) {
	run := func() []byte {
		page := NewVirtualPage()
		p, _ := NewPublisher(page, 0)
		for _, tc := range recordsCases {
			if err := p.Publish(FromOffset(tc.o, 0, tc.o.WindowEndNS, tc.o.WindowEndNS+1e9, StatusOK)); err != nil {
				t.Fatal(err)
			}
		}
		return page.Bytes()
	}
	if !bytes.Equal(run(), run()) {
		t.Error("two identical publish sequences gave different pages")
	}
}

func BenchmarkToGlobal(b *testing.B) {
	page := NewVirtualPage()
	publish(b, page, FromOffset(recordsCases[2].o, 0, epoch, math.MaxInt64, StatusOK))
	r := reader(b, page)
	local := epoch + 20e9
	var sink int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g, _, err := r.ToGlobal(local + int64(i))
		if err != nil {
			b.Fatal(err)
		}
		sink += g
	}
	_ = sink
}

func BenchmarkToGlobalFile(b *testing.B) {
	path := filepath.Join(b.TempDir(), "page")
	wp, err := CreateFile(path)
	if err != nil {
		b.Fatal(err)
	}
	defer wp.Close()
	publish(b, wp, FromOffset(recordsCases[2].o, 0, epoch, math.MaxInt64, StatusOK))
	rp, err := OpenFile(path)
	if err != nil {
		b.Fatal(err)
	}
	defer rp.Close()
	r := reader(b, rp)
	local := epoch + 20e9
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := r.ToGlobal(local + int64(i)); err != nil {
			b.Fatal(err)
		}
	}
}

// plainPage hides VirtualPage's direct word access, so that a Reader goes
// through the Page interface (the path of any other Page implementation).
type plainPage struct{ Page }

// TestFastAndPlainPathsAgree: ToGlobal's written-out fast path and the
// general path give the same answers and errors.
func TestFastAndPlainPathsAgree(t *testing.T) {
	for _, tc := range recordsCases {
		for _, status := range []Status{StatusOK, StatusDegraded, StatusFailed} {
			page := NewVirtualPage()
			m := FromOffset(tc.o, 0, tc.o.WindowEndNS, tc.o.WindowEndNS+5e9, status)
			publish(t, page, m)
			fast, plain := reader(t, page), reader(t, plainPage{page})
			if fast.mem == nil || plain.mem != nil {
				t.Fatal("the readers do not take the paths this test means")
			}
			for _, local := range []int64{tc.o.WindowStartNS, m.StepsEndNS - 1, m.StepsEndNS, tc.o.WindowEndNS + 5e9, tc.o.WindowEndNS + 5e9 + 1, -1} {
				g1, s1, e1 := fast.ToGlobal(local)
				g2, s2, e2 := plain.ToGlobal(local)
				if g1 != g2 || s1 != s2 || !errors.Is(e1, e2) || (e1 == nil) != (e2 == nil) {
					t.Errorf("%s %v local %d: fast %d ± %v (%v), plain %d ± %v (%v)", tc.name, status, local, g1, s1, e1, g2, s2, e2)
				}
				if wg, ws := m.ToGlobal(local); g1 != wg || s1 != ws {
					t.Errorf("%s %v local %d: reader %d ± %v, Model.ToGlobal %d ± %v", tc.name, status, local, g1, s1, wg, ws)
				}
			}
		}
	}
	for _, p := range []Page{NewVirtualPage(), plainPage{NewVirtualPage()}} {
		if _, err := NewPublisher(p, 0); err != nil {
			t.Fatal(err)
		}
		if _, _, err := reader(t, p).ToGlobal(5); !errors.Is(err, ErrNoModel) {
			t.Errorf("%T: ToGlobal on an unpublished page: %v", p, err)
		}
	}
}
