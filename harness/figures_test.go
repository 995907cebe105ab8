package harness

import (
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/analysis/groundtruth"
	"github.com/chronosync/chronosync/analysis/stats"
)

// TestFormatNS pins the rounding of single figures: half away from zero,
// never truncated, each in the unit that suits it.
func TestFormatNS(t *testing.T) {
	tests := []struct {
		ns   float64
		want string
	}{
		// mesh8-jitter's exported svm errors in summary.json, which the
		// CLI once printed truncated as 7/22/25/27 ns.
		{7.72, "8 ns"},
		{22.02, "22 ns"},
		{25.75, "26 ns"},
		{27.84, "28 ns"},
		{7.5, "8 ns"},
		{6.5, "7 ns"}, // half away from zero, not half to even
		{-7.5, "-8 ns"},
		{0, "0 ns"},
		{-0.2, "0 ns"}, // no "-0"
		{999.4, "999 ns"},
		{999.6, "1.00 µs"}, // rounds to 1000 ns: the next unit
		{1416, "1.42 µs"},
		{100078.4, "100.08 µs"},
		{13015, "13.02 µs"},
		{999_996, "1.00 ms"},
		{1.5e6, "1.50 ms"},
		{2.5e9, "2.50 s"},
		{math.NaN(), "NaN ns"},
	}
	for _, tc := range tests {
		if got := FormatNS(tc.ns); got != tc.want {
			t.Errorf("FormatNS(%v) = %q; want %q", tc.ns, got, tc.want)
		}
	}
}

// TestUnitFor pins the choice of one unit for figures of mixed magnitudes:
// the largest decides, and every figure is then written in it.
func TestUnitFor(t *testing.T) {
	tests := []struct {
		name   string
		vs     []float64
		unit   string
		format []string // each of vs formatted in the unit
	}{
		{"all ns", []float64{7.72, 22.02, 325.4}, "ns", []string{"8", "22", "325"}},
		{"ns and µs", []float64{7.72, 760, 13015.4}, "µs", []string{"0.01", "0.76", "13.02"}},
		{"negative largest", []float64{5, -2500}, "µs", []string{"0.01", "-2.50"}},
		{"just under 1 µs after rounding", []float64{999.4}, "ns", []string{"999"}},
		{"none", nil, "ns", nil},
		{"zeros", []float64{0, 0}, "ns", []string{"0", "0"}},
		{"NaN ignored", []float64{math.NaN(), 40}, "ns", []string{"NaN", "40"}},
		{"ms", []float64{8.22e6, 4.6e6, 12}, "ms", []string{"8.22", "4.60", "0.00"}},
	}
	for _, tc := range tests {
		u := UnitFor(tc.vs...)
		if u.Name != tc.unit {
			t.Errorf("%s: UnitFor(%v) = %s; want %s", tc.name, tc.vs, u.Name, tc.unit)
			continue
		}
		for i, v := range tc.vs {
			if got := u.Format(v); got != tc.format[i] {
				t.Errorf("%s: %s.Format(%v) = %q; want %q", tc.name, u.Name, v, got, tc.format[i])
			}
		}
	}
}

// TestCount pins the thousands separators of printed counts.
func TestCount(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0"}, {7, "7"}, {999, "999"}, {1000, "1,000"}, {1200, "1,200"},
		{11170204, "11,170,204"}, {-1234567, "-1,234,567"}, {math.MinInt64, "-9,223,372,036,854,775,808"},
	}
	for _, tc := range tests {
		if got := Count(tc.n); got != tc.want {
			t.Errorf("Count(%d) = %q; want %q", tc.n, got, tc.want)
		}
	}
	if got := Count(uint64(math.MaxUint64)); got != "18,446,744,073,709,551,615" {
		t.Errorf("Count(MaxUint64) = %q", got)
	}
}

// offsetAccuracy is a groundtruth.Accuracy with the given offset-error
// percentiles.
func offsetAccuracy(p50, p95, p99, maxNS float64, conv uint64) groundtruth.Accuracy {
	return groundtruth.Accuracy{
		OffsetError:    stats.Summary{N: 10, P50: p50, P95: p95, P99: p99, Max: maxNS},
		ConvergedRound: conv,
	}
}

// TestPrintAccuracyOneUnit checks that a table whose errors span ns and µs
// prints every error in the unit of the largest, named in the header, with
// no unit in the cells.
func TestPrintAccuracyOneUnit(t *testing.T) {
	var b strings.Builder
	printAccuracy(&b, "from round 3", []accuracyRow{
		{name: "exported (svm)", acc: offsetAccuracy(7.72, 22.02, 25.75, 27.84, 1)},
		{name: "regression", acc: offsetAccuracy(7330, 12820, 13000, 13015.4, 2), graphCalc: 48580, solved: true},
	})
	out := b.String()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("printAccuracy wrote %d lines; want a header and 2 rows:\n%s", len(lines), out)
	}
	for i, want := range []string{
		`^  \|offset error\| in µs, from round 3 +p50 +p95 +p99 +max +drift p99 \(ppm\) +converged at +GraphCalc p50 \(µs\)$`,
		`^  exported \(svm\) +0\.01 +0\.02 +0\.03 +0\.03 +0\.0000 +round 1 +-$`,
		`^  regression +7\.33 +12\.82 +13\.00 +13\.02 +0\.0000 +round 2 +48\.58$`,
	} {
		if !regexp.MustCompile(want).MatchString(lines[i]) {
			t.Errorf("line %d = %q; want it to match %s", i+1, lines[i], want)
		}
	}
	if strings.Contains(out, "ns") {
		t.Errorf("a table in µs names ns:\n%s", out)
	}
}

// TestPrintSays checks a run summary's lines: rounded figures, and counts
// that differ next to the reason they differ.
func TestPrintSays(t *testing.T) {
	r := &Result{Dir: "runs/x", Summary: Summary{
		Scenario: "x", Seed: 1, Backend: "sim", Nodes: 4, Virtual: 10, Events: 5204, EventHash: "ab",
		Network: NetworkStats{Packets: 11170204, Delivered: 11114225, Lost: 55979},
		Ping: &PingSummary{Sent: 1200, Answered: 1200, Received: 1200,
			RTT:         stats.Summary{N: 1188, P50: 100078, P95: 106734, P99: 108507, Max: 109521},
			OffsetError: stats.Summary{N: 1188, P50: 1416, P95: 3820, P99: 4557, Max: 4887}},
		Sync: &SyncSummary{Mode: "rounds", Estimator: "svm", Rounds: 10, ConvergedFrom: 3,
			Online: offsetAccuracy(7.72, 22.02, 25.75, 27.84, 1),
			Probes: ProbeSummary{PairsSent: 2799620, Lost: 56037, T3Kernel: 5543123, T3User: 80}},
		Trace: &TraceSummary{Nodes: 3, Events: 360, AlignedEvents: 360,
			Raw:     ValidateCounts{Violations: 60},
			ErrorNS: stats.Summary{N: 360, P50: 24.6, P99: 31.4, Max: 31.5}},
	}}
	var b strings.Builder
	r.Print(&b)
	out := b.String()
	for _, want := range []string{
		`(?m)^network: 11,170,204 datagrams sent on the links, 11,114,225 delivered, 55,979 lost, `,
		`(?m)^  in µs +p50 +p95 +p99 +max$`,
		`(?m)^  rtt +100\.08 +106\.73 +108\.51 +109\.52$`,
		`(?m)^  \|offset err\| +1\.42 +3\.82 +4\.56 +4\.89$`,
		`(?m)^  from 1,188 exchanges of the 1,200 replies: a reply brings the peer's timestamps of the exchange before it, so each pair's last exchange gives none`,
		`(?m)^  probes: 2,799,620 pairs sent \(5,599,240 probes\), 56,037 lost: no reply by their window's close \(the request or the reply was lost on a link, among the network's lost datagrams, or the reply came late\)$`,
		`(?m)^  t3: 5,543,123 probes from the reply's transmit timestamp, carried in the next reply, 80 from the responder's user-space reading: each window's last probe per edge, lost follow-ups, late transmit timestamps$`,
		`(?m)^  exported \(svm\) +8 +22 +26 +28 `,
		`(?m)^  from round 3: the scenario's converged_from \(earlier rounds are warm-up\); converged at: the first round from which every round's worst \|offset error\| stays under 1 µs$`,
		`(?m)^  validate raw:      Violations: 60, Overlaps: 0, Warnings: 0$`,
		`(?m)^  validate combined: nothing to compare \(no collective on two nodes\), Warnings: 0$`,
		`(?m)^  \|aligned − true start\| in ns, over 360 events: p50 25  p99 31  max 32; `,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("summary does not match %s:\n%s", want, out)
		}
	}
	if regexp.MustCompile(`\b7ns|\b25ns|\b27ns`).MatchString(out) {
		t.Errorf("summary prints truncated figures:\n%s", out)
	}
}
