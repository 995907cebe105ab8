package syncrun

import (
	"regexp"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/analysis/groundtruth"
	"github.com/chronosync/chronosync/analysis/stats"
)

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
