package harness

import (
	"regexp"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/harness/pingrun"
	"github.com/chronosync/chronosync/harness/syncrun"

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

// TestPrintSays checks a run summary's lines: rounded figures, and counts
// that differ next to the reason they differ.
func TestPrintSays(t *testing.T) {
	r := &Result{Dir: "runs/x", Summary: Summary{
		Scenario: "x", Seed: 1, Backend: "sim", Nodes: 4, Virtual: 10, Events: 5204, EventHash: "ab",
		Network: NetworkStats{Packets: 11170204, Delivered: 11114225, Lost: 55979},
		Ping: &pingrun.Summary{Sent: 1200, Answered: 1200, Received: 1200,
			RTT:         stats.Summary{N: 1188, P50: 100078, P95: 106734, P99: 108507, Max: 109521},
			OffsetError: stats.Summary{N: 1188, P50: 1416, P95: 3820, P99: 4557, Max: 4887}},
		Sync: &syncrun.SyncSummary{Mode: "rounds", Estimator: "svm", Rounds: 10, ConvergedFrom: 3,
			Online: offsetAccuracy(7.72, 22.02, 25.75, 27.84, 1),
			Probes: syncrun.ProbeSummary{PairsSent: 2799620, Lost: 56037, T3Kernel: 5543123, T3User: 80}},
		Trace: &syncrun.TraceSummary{Nodes: 3, Events: 360, AlignedEvents: 360,
			Raw:     syncrun.ValidateCounts{Violations: 60},
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
