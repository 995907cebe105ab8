package metrics

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/estimate"
	"github.com/chronosync/chronosync/graphcalc"
	"github.com/chronosync/chronosync/model/netem"
	"github.com/chronosync/chronosync/probe"
	"github.com/chronosync/chronosync/probe/probelog"
	"github.com/chronosync/chronosync/real"
	"github.com/chronosync/chronosync/real/shaper"
	"github.com/chronosync/chronosync/rounds"
	"github.com/chronosync/chronosync/rounds/syncpb"
)

// fixedNow is the wall clock the tests give their Metrics.
var fixedNow = time.Unix(1_800_000_000, 500_000_000)

func newTest(node int, master bool) *Metrics {
	return NewWithOptions(node, master, Options{Now: func() time.Time { return fixedNow }})
}

// model is node's model in round, with a self-check when predictions > 0.
func nodeModel(round uint64, node int, offNS, driftPPM float64, predictions, within int, worst float64) offsets.Offset {
	o := offsets.Offset{
		RoundID: round, WindowID: round, NodeID: node, WindowStartNS: 1e9, WindowEndNS: 2e9,
		OffsetNS: offNS, DriftPPM: driftPPM, UncertaintyNS: 4, DriftUncertaintyPPM: 0.002,
	}
	if predictions > 0 {
		o.SelfCheck = &offsets.SelfCheck{Predictions: predictions, Within3Sigma: within, MaxSigma: worst}
	}
	return o
}

// data is node's report of round with one edge to each of dsts.
func data(round uint64, node int, dsts ...int) *syncpb.NodeWindowData {
	d := &syncpb.NodeWindowData{NodeId: int32(node), RoundId: round, WindowId: round}
	for _, dst := range dsts {
		d.Edges = append(d.Edges, &syncpb.EdgeAlphaBeta{
			SrcNodeId: int32(node), DstNodeId: int32(dst), Alpha: 1e-6, Beta: float64(1000 * dst), SigmaNs: 8,
			SentPairs: 100, PairsCount: 98, PurePairs: 90, LostCount: 3,
		})
	}
	return d
}

// solvedRound is a round of nodes 0–2 (node 3 missing), reference 0.
func solvedRound(round uint64) *rounds.RoundReport {
	res := 12.0
	return &rounds.RoundReport{
		Round: round, Window: round, Sequence: 2 * round,
		Nodes:   []*syncpb.NodeWindowData{data(round, 0, 1), data(round, 1, 0, 2), data(round, 2, 1)},
		Missing: []int{3},
		Summary: &graphcalc.RoundSummary{Round: round, Reference: 0, RMSResidual: 12, MaxResidual: 20,
			Consistency: graphcalc.Consistency{Birge: 1.25, Consistent: false}},
		Offsets: []offsets.Offset{nodeModel(round, 0, 0, 0, 0, 0, 0), nodeModel(round, 1, 2500, 1.5, 4, 3, 3.5), nodeModel(round, 2, -700, -0.25, 2, 2, 0.5)},
		Edges: []offsets.Edge{
			{RoundID: round, Src: 0, Dst: 1, Alpha: 1e-6, Beta: 2500, Sigma: 8, Residual: &res},
			{RoundID: round, Src: 1, Dst: 2, Alpha: 2e-6, Beta: -3200, Sigma: 9, Rejected: true},
		},
		Refused: map[string]int{"report node_id": 2, "edge beta_ns": 1},
		Figures: rounds.Figures{Window: time.Second, GatherWait: 120 * time.Millisecond, EndToStart: 150 * time.Millisecond,
			SequenceSkew: 3 * time.Microsecond, Retries: 2, MessageBytes: 4096},
	}
}

// sample is one expected series: its family's name and type, its labels
// (all of them) and its value (a histogram's sum, with count its count).
type sample struct {
	name   string
	typ    dto.MetricType
	labels map[string]string
	value  float64
	count  uint64
}

func gauge(name string, v float64, kv ...string) sample {
	return sample{name: name, typ: dto.MetricType_GAUGE, labels: labels(kv), value: v}
}

func counter(name string, v float64, kv ...string) sample {
	return sample{name: name, typ: dto.MetricType_COUNTER, labels: labels(kv), value: v}
}

func labels(kv []string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// scrape GETs m's handler over HTTP and parses the text exposition.
func scrape(t *testing.T, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: status %s", resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("scrape: Content-Type %q, want text/plain", ct)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("scrape: parse the exposition: %v", err)
	}
	return fams
}

// find returns the series of fams that s names, with exactly s's labels.
func find(fams map[string]*dto.MetricFamily, s sample) (*dto.MetricFamily, *dto.Metric) {
	f := fams[s.name]
	if f == nil {
		return nil, nil
	}
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		if fmt.Sprint(got) == fmt.Sprint(s.labels) {
			return f, m
		}
	}
	return f, nil
}

func value(f *dto.MetricFamily, m *dto.Metric) float64 {
	switch f.GetType() {
	case dto.MetricType_COUNTER:
		return m.GetCounter().GetValue()
	case dto.MetricType_GAUGE:
		return m.GetGauge().GetValue()
	case dto.MetricType_HISTOGRAM:
		return m.GetHistogram().GetSampleSum()
	}
	return m.GetUntyped().GetValue()
}

func near(a, b float64) bool {
	return a == b || (a-b)/max(abs(a), abs(b)) < 1e-9 && (b-a)/max(abs(a), abs(b)) < 1e-9
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

func checkSamples(t *testing.T, fams map[string]*dto.MetricFamily, want []sample) {
	t.Helper()
	for _, s := range want {
		f, m := find(fams, s)
		switch {
		case f == nil:
			t.Errorf("%s: no such metric", s.name)
			continue
		case m == nil:
			var have []string
			for _, m := range f.GetMetric() {
				have = append(have, fmt.Sprint(m.GetLabel()))
			}
			t.Errorf("%s%v: no such series; have %v", s.name, s.labels, have)
			continue
		case f.GetType() != s.typ:
			t.Errorf("%s: type %v, want %v", s.name, f.GetType(), s.typ)
		}
		if got := value(f, m); !near(got, s.value) {
			t.Errorf("%s%v = %v, want %v", s.name, s.labels, got, s.value)
		}
		if s.typ == dto.MetricType_HISTOGRAM && m.GetHistogram().GetSampleCount() != s.count {
			t.Errorf("%s%v: count %d, want %d", s.name, s.labels, m.GetHistogram().GetSampleCount(), s.count)
		}
	}
}

func TestExposition(t *testing.T) {
	second := solvedRound(2)
	second.Missing = []int{2, 3}
	second.Nodes = second.Nodes[:2]
	second.Offsets = []offsets.Offset{nodeModel(2, 0, 0, 0, 0, 0, 0), nodeModel(2, 1, 2600, 1.5, 3, 3, 1.0)}
	second.Figures.EndToStart = 250 * time.Millisecond
	second.Refused = nil

	unsolved := solvedRound(5)
	unsolved.Summary, unsolved.Offsets, unsolved.Edges = nil, nil, nil
	unsolved.Err = errors.New("no reference report")

	partial := solvedRound(6)
	partial.Err = &graphcalc.DisconnectedError{Round: 6, Components: [][]int{{0, 1, 2}, {3}}}

	block := probelog.Block{Src: 1, Dst: 0, RoundID: 7, WindowID: 7, SentPairs: 3, Probes: []estimate.Probe{
		{Pair: 0, Slot: 0, T3Source: estimate.T3Kernel}, {Pair: 0, Slot: 1, T3Source: estimate.T3Kernel},
		{Pair: 1, Slot: 0, T3Source: estimate.T3User}, {Pair: 2, Slot: 1, T3Source: estimate.T3Kernel},
	}}

	tests := []struct {
		name    string
		node    int
		master  bool
		noEdges bool
		feed    func(m *Metrics)
		want    []sample
		absent  []string
	}{{
		name: "master, one solved round", master: true,
		feed: func(m *Metrics) { m.ObserveRound(solvedRound(1)) },
		want: []sample{
			gauge("chronosync_node_info", 1, "node", "0", "role", "master"),
			{name: "chronosync_round_latency_seconds", typ: dto.MetricType_HISTOGRAM, labels: map[string]string{}, value: 0.15, count: 1},
			gauge("chronosync_round_latency_last_seconds", 0.15),
			gauge("chronosync_round_gather_wait_seconds", 0.12),
			gauge("chronosync_round_sequence_skew_seconds", 3e-6),
			gauge("chronosync_round_window_seconds", 1),
			counter("chronosync_round_retries_total", 2),
			counter("chronosync_round_message_bytes_total", 4096),
			gauge("chronosync_round_missing_nodes", 1),
			counter("chronosync_node_rounds_missed_total", 1, "node", "3"),
			counter("chronosync_rounds_total", 1, "result", "solved"),
			counter("chronosync_rounds_total", 0, "result", "unsolved"),
			counter("chronosync_round_refused_total", 2, "reason", "report node_id"),
			counter("chronosync_round_refused_total", 1, "reason", "edge beta_ns"),
			gauge("chronosync_round_id", 1),
			gauge("chronosync_round_last_timestamp_seconds", 1_800_000_000.5),
			gauge("chronosync_round_residual_rms_seconds", 12e-9),
			gauge("chronosync_round_residual_max_seconds", 20e-9),
			gauge("chronosync_round_birge_ratio", 1.25),
			counter("chronosync_rounds_inconsistent_total", 1),
			gauge("chronosync_node_offset_seconds", 2.5e-6, "node", "1"),
			gauge("chronosync_node_offset_seconds", -0.7e-6, "node", "2"),
			gauge("chronosync_node_offset_sigma_seconds", 4e-9, "node", "1"),
			gauge("chronosync_node_drift_ratio", 1.5e-6, "node", "1"),
			gauge("chronosync_node_drift_sigma_ratio", 2e-9, "node", "1"),
			gauge("chronosync_node_model_round_id", 1, "node", "2"),
			counter("chronosync_node_selfcheck_predictions_total", 4, "node", "1"),
			counter("chronosync_node_selfcheck_within_3sigma_total", 3, "node", "1"),
			gauge("chronosync_node_selfcheck_worst_ratio", 3.5, "node", "1"),
			gauge("chronosync_node_status", 1, "node", "1", "status", "ok"),
			gauge("chronosync_node_status", 1, "node", "3", "status", "missing"),
			gauge("chronosync_reference_info", 1, "node", "0"),
			gauge("chronosync_edge_offset_seconds", 2.5e-6, "src", "0", "dst", "1"),
			gauge("chronosync_edge_offset_sigma_seconds", 9e-9, "src", "1", "dst", "2"),
			gauge("chronosync_edge_drift_ratio", 2e-6, "src", "1", "dst", "2"),
			gauge("chronosync_edge_residual_seconds", 12e-9, "src", "0", "dst", "1"),
			counter("chronosync_edge_rejected_total", 1, "src", "1", "dst", "2"),
			counter("chronosync_edge_probe_pairs_sent_total", 100, "src", "1", "dst", "2"),
			counter("chronosync_edge_probe_pairs_answered_total", 98, "src", "1", "dst", "2"),
			counter("chronosync_edge_probe_pairs_impure_total", 8, "src", "1", "dst", "2"),
			counter("chronosync_edge_probes_lost_total", 3, "src", "1", "dst", "2"),
		},
		// Not used by the solver: no residual.
		absent: []string{`chronosync_edge_residual_seconds{dst="2",src="1"}`},
	}, {
		name: "master, two rounds: totals add, status follows, a model seen twice counts once", master: true,
		feed: func(m *Metrics) {
			m.ObserveRound(solvedRound(1))
			for _, o := range solvedRound(1).Offsets {
				m.ObserveModel(o, 0) // the master's own record of the same round
			}
			m.ObserveRound(second)
		},
		want: []sample{
			{name: "chronosync_round_latency_seconds", typ: dto.MetricType_HISTOGRAM, labels: map[string]string{}, value: 0.4, count: 2},
			gauge("chronosync_round_latency_last_seconds", 0.25),
			counter("chronosync_round_retries_total", 4),
			gauge("chronosync_round_missing_nodes", 2),
			counter("chronosync_node_rounds_missed_total", 2, "node", "3"),
			counter("chronosync_node_rounds_missed_total", 1, "node", "2"),
			counter("chronosync_rounds_total", 2, "result", "solved"),
			counter("chronosync_round_refused_total", 2, "reason", "report node_id"),
			counter("chronosync_node_selfcheck_predictions_total", 7, "node", "1"),
			counter("chronosync_node_selfcheck_within_3sigma_total", 6, "node", "1"),
			gauge("chronosync_node_selfcheck_worst_ratio", 1.0, "node", "1"),
			gauge("chronosync_node_offset_seconds", 2.6e-6, "node", "1"),
			gauge("chronosync_node_status", 0, "node", "2", "status", "ok"),
			gauge("chronosync_node_status", 1, "node", "2", "status", "missing"),
			counter("chronosync_edge_probe_pairs_sent_total", 200, "src", "1", "dst", "0"),
			counter("chronosync_edge_probe_pairs_sent_total", 100, "src", "2", "dst", "1"),
		},
	}, {
		name: "master, unsolved and partial rounds: the status goes back and forth", master: true,
		feed: func(m *Metrics) { m.ObserveRound(unsolved); m.ObserveRound(partial) },
		want: []sample{
			counter("chronosync_rounds_total", 1, "result", "unsolved"),
			counter("chronosync_rounds_total", 1, "result", "partial"),
			counter("chronosync_rounds_total", 0, "result", "solved"),
			gauge("chronosync_round_id", 6),
			gauge("chronosync_node_status", 0, "node", "1", "status", "unsolved"),
			gauge("chronosync_node_status", 1, "node", "1", "status", "ok"),
		},
	}, {
		name: "master, unsolved again after a solution", master: true,
		feed: func(m *Metrics) { m.ObserveRound(unsolved); m.ObserveRound(partial); m.ObserveRound(unsolved) },
		want: []sample{
			counter("chronosync_rounds_total", 2, "result", "unsolved"),
			gauge("chronosync_node_status", 1, "node", "1", "status", "unsolved"),
			gauge("chronosync_node_status", 0, "node", "1", "status", "ok"),
			gauge("chronosync_node_status", 1, "node", "3", "status", "missing"),
		},
	}, {
		name: "agent: its windows, its model and its status; no round metrics", node: 1,
		feed: func(m *Metrics) {
			d := data(7, 1, 0)
			m.ObserveWindow(1, []probelog.Block{block}, d)
			m.ObserveWindow(1, []probelog.Block{block}, d) // the same window again: not counted twice
			m.ObserveModel(nodeModel(7, 1, -1500, 0.5, 2, 1, 4.5), 0)
			m.SetNodeStatus(1, "stale")
		},
		want: []sample{
			gauge("chronosync_node_info", 1, "node", "1", "role", "agent"),
			counter("chronosync_edge_probe_t3_total", 3, "src", "1", "dst", "0", "source", "kernel"),
			counter("chronosync_edge_probe_t3_total", 1, "src", "1", "dst", "0", "source", "user"),
			counter("chronosync_edge_probe_pairs_sent_total", 100, "src", "1", "dst", "0"),
			gauge("chronosync_edge_offset_seconds", 0, "src", "1", "dst", "0"),
			gauge("chronosync_node_offset_seconds", -1.5e-6, "node", "1"),
			counter("chronosync_node_selfcheck_predictions_total", 2, "node", "1"),
			gauge("chronosync_node_selfcheck_worst_ratio", 4.5, "node", "1"),
			gauge("chronosync_node_status", 0, "node", "1", "status", "ok"),
			gauge("chronosync_node_status", 1, "node", "1", "status", "stale"),
			gauge("chronosync_reference_info", 1, "node", "0"),
		},
		absent: []string{"chronosync_round_latency_seconds", "chronosync_rounds_total", "chronosync_round_id", "chronosync_node_rounds_missed_total"},
	}, {
		name: "master without per-edge series", master: true, noEdges: true,
		feed: func(m *Metrics) {
			m.ObserveRound(solvedRound(1))
			m.ObserveWindow(0, []probelog.Block{block}, data(1, 0, 1))
		},
		want: []sample{
			counter("chronosync_rounds_total", 1, "result", "solved"),
			gauge("chronosync_node_offset_seconds", 2.5e-6, "node", "1"),
		},
		absent: []string{"chronosync_edge_offset_seconds", "chronosync_edge_probe_pairs_sent_total", "chronosync_edge_probe_t3_total",
			"chronosync_edge_residual_seconds", "chronosync_edge_rejected_total"},
	}, {
		name: "real node: prober, loops, drops, shaper", node: 2,
		feed: func(m *Metrics) {
			m.ObserveProbes(2, probe.Stats{PairsSent: 10, PairsMissed: 1, RepliesReceived: 18, ProbesAnswered: 20, Late: 1, Spoofed: 2, T3Kernel: 15, T3User: 3, T3Late: 2})
			m.ObserveProbes(2, probe.Stats{PairsSent: 12, PairsMissed: 1, RepliesReceived: 22, ProbesAnswered: 24, Late: 1, Spoofed: 2, T3Kernel: 19, T3User: 3, T3Late: 2})
			info := shaper.Info{RealTime: true, WakeLate: shaper.Lateness{P50: 20 * time.Microsecond, P99: 60 * time.Microsecond, Max: 300 * time.Microsecond}}
			m.ObserveReal(RealStats{
				TimerLateness: real.Lateness{Samples: 500, P50: 660 * time.Microsecond, P99: 1310 * time.Microsecond, Max: 3870 * time.Microsecond},
				NotNodeDrops:  4, BacklogDrops: 1, Auth: real.AuthDrops{Forged: 7},
				Timestamps: real.TimestampStats{TxKernel: 100, TxUser: 2, RxKernel: 102},
				Shaper: []shaper.LinkStats{{From: 0, To: 2, Connected: true, Stats: netem.Stats{Lost: 5}, Written: 95,
					Late: shaper.Lateness{P50: 550 * time.Nanosecond, P99: 21 * time.Microsecond, Max: 2700 * time.Microsecond}}},
				ShaperInfo: &info,
			})
		},
		want: []sample{
			counter("chronosync_probe_pairs_sent_total", 12, "node", "2"),
			counter("chronosync_probe_replies_received_total", 22, "node", "2"),
			counter("chronosync_probe_requests_answered_total", 24, "node", "2"),
			counter("chronosync_probe_replies_dropped_total", 2, "node", "2", "reason", "spoofed"),
			counter("chronosync_probe_replies_dropped_total", 0, "node", "2", "reason", "malformed"),
			counter("chronosync_probe_t3_total", 19, "node", "2", "source", "kernel"),
			counter("chronosync_probe_t3_late_total", 2, "node", "2"),
			counter("chronosync_probe_pairs_missed_total", 1, "node", "2"),
			gauge("chronosync_loop_lateness_p50_seconds", 660e-6, "node", "2"),
			gauge("chronosync_loop_lateness_p99_seconds", 1310e-6, "node", "2"),
			gauge("chronosync_loop_lateness_max_seconds", 3870e-6, "node", "2"),
			counter("chronosync_loop_timers_total", 500, "node", "2"),
			counter("chronosync_datagrams_dropped_total", 4, "node", "2", "reason", "not_node"),
			counter("chronosync_datagrams_dropped_total", 1, "node", "2", "reason", "backlog"),
			counter("chronosync_datagrams_dropped_total", 7, "node", "2", "reason", "auth_forged"),
			counter("chronosync_datagrams_dropped_total", 0, "node", "2", "reason", "read_error"),
			counter("chronosync_datagram_timestamps_total", 2, "node", "2", "direction", "tx", "source", "user"),
			gauge("chronosync_shaper_release_lateness_p99_seconds", 21e-6, "src", "0", "dst", "2"),
			gauge("chronosync_shaper_release_lateness_max_seconds", 2.7e-3, "src", "0", "dst", "2"),
			counter("chronosync_shaper_frames_written_total", 95, "src", "0", "dst", "2"),
			counter("chronosync_shaper_frames_dropped_total", 5, "src", "0", "dst", "2", "reason", "lost"),
			gauge("chronosync_shaper_wake_lateness_p99_seconds", 60e-6),
			gauge("chronosync_shaper_realtime", 1),
		},
		absent: []string{"chronosync_round_latency_seconds"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewWithOptions(tt.node, tt.master, Options{Now: func() time.Time { return fixedNow }, NoEdges: tt.noEdges})
			tt.feed(m)
			fams := scrape(t, m)
			checkSamples(t, fams, tt.want)
			for _, a := range tt.absent {
				name, lbl, _ := strings.Cut(a, "{")
				if lbl == "" {
					if fams[name] != nil {
						t.Errorf("%s: present, want absent", name)
					}
					continue
				}
				s := sample{name: name, labels: map[string]string{}}
				for _, kv := range strings.Split(strings.TrimSuffix(lbl, "}"), ",") {
					k, v, _ := strings.Cut(kv, "=")
					s.labels[k] = strings.Trim(v, `"`)
				}
				if _, m := find(fams, s); m != nil {
					t.Errorf("%s: present, want absent", a)
				}
			}
			lint(t, fams)
		})
	}
}

// lint runs promlint over the scrape and checks the house's naming rules
// on every chronosync_ family: a help text, _total on counters only, a
// base unit (no _ns, _ms, _us, _ppm), the known labels only.
func lint(t *testing.T, fams map[string]*dto.MetricFamily) {
	t.Helper()
	var all []*dto.MetricFamily
	for _, f := range fams {
		all = append(all, f)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].GetName() < all[j].GetName() })
	problems, err := promlint.NewWithMetricFamilies(all).Lint()
	if err != nil {
		t.Fatalf("promlint: %v", err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	allowed := []string{"node", "role", "src", "dst", "reason", "source", "status", "result", "direction", "le"}
	for _, f := range all {
		name := f.GetName()
		if !strings.HasPrefix(name, Namespace+"_") {
			continue
		}
		if f.GetHelp() == "" {
			t.Errorf("%s: no help", name)
		}
		if (f.GetType() == dto.MetricType_COUNTER) != strings.HasSuffix(name, "_total") {
			t.Errorf("%s: a %v; counters, and only they, end in _total", name, f.GetType())
		}
		for _, bad := range []string{"_ns", "_ms", "_us", "_ppm", "_nanoseconds", "_microseconds"} {
			if strings.Contains(name+"_", bad+"_") {
				t.Errorf("%s: not a base unit (%s)", name, bad)
			}
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if !slices.Contains(allowed, l.GetName()) {
					t.Errorf("%s: label %q, want one of %v", name, l.GetName(), allowed)
				}
			}
		}
	}
}

// TestEveryMetricLintClean feeds every adapter and lints the whole
// exposition, the Go runtime's and process's collectors included.
func TestEveryMetricLintClean(t *testing.T) {
	m := New(0, true)
	m.ObserveRound(solvedRound(1))
	insufficient := data(2, 0, 1)
	insufficient.Edges[0].Insufficient = true
	m.ObserveWindow(0, []probelog.Block{{Src: 0, Dst: 1, Probes: []estimate.Probe{{T3Source: estimate.T3Kernel}}}}, insufficient)
	m.ObserveProbes(0, probe.Stats{PairsSent: 1})
	info := shaper.Info{}
	m.ObserveReal(RealStats{Shaper: []shaper.LinkStats{{From: 0, To: 1}}, ShaperInfo: &info})
	fams := scrape(t, m)
	lint(t, fams)
	var names []string
	for n := range fams {
		if strings.HasPrefix(n, Namespace+"_") {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	// Every family this package defines shows once fed, under the name
	// docs/node-service.md gives it: dashboards and alerts rest on them.
	if want := allFamilies(); !slices.Equal(names, want) {
		t.Errorf("families:\n got %v\nwant %v", names, want)
	}
	for _, want := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if fams[want] == nil {
			t.Errorf("%s: missing; New registers the runtime's and the process's collectors", want)
		}
	}
}

// TestOwnRegistry checks that two Metrics share nothing: each has its own
// registry, and nothing lands in Prometheus' global one.
func TestOwnRegistry(t *testing.T) {
	a, b := newTest(0, true), newTest(1, true)
	a.ObserveRound(solvedRound(1))
	fa, fb := scrape(t, a), scrape(t, b)
	if _, m := find(fa, counter("chronosync_rounds_total", 1, "result", "solved")); m == nil || m.GetCounter().GetValue() != 1 {
		t.Errorf("a: rounds_total{solved} is not 1")
	}
	if _, m := find(fb, counter("chronosync_rounds_total", 0, "result", "solved")); m == nil || m.GetCounter().GetValue() != 0 {
		t.Errorf("b: rounds_total{solved} is not 0: a's observation leaked into b")
	}
	rec := httptest.NewRecorder()
	http.DefaultServeMux.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	if strings.Contains(string(body), "chronosync_") {
		t.Errorf("the default mux serves chronosync metrics: %q", body)
	}
}

// allFamilies are the names of every metric family of this package, sorted.
func allFamilies() []string {
	return []string{
		"chronosync_datagram_timestamps_total",
		"chronosync_datagram_tx_timestamps_late_total",
		"chronosync_datagrams_dropped_total",
		"chronosync_edge_drift_ratio",
		"chronosync_edge_insufficient_total",
		"chronosync_edge_offset_seconds",
		"chronosync_edge_offset_sigma_seconds",
		"chronosync_edge_probe_pairs_answered_total",
		"chronosync_edge_probe_pairs_impure_total",
		"chronosync_edge_probe_pairs_sent_total",
		"chronosync_edge_probe_t3_total",
		"chronosync_edge_probes_lost_total",
		"chronosync_edge_rejected_total",
		"chronosync_edge_residual_seconds",
		"chronosync_loop_lateness_max_seconds",
		"chronosync_loop_lateness_p50_seconds",
		"chronosync_loop_lateness_p99_seconds",
		"chronosync_loop_timers_total",
		"chronosync_node_clock_steps_total",
		"chronosync_node_drift_ratio",
		"chronosync_node_drift_sigma_ratio",
		"chronosync_node_info",
		"chronosync_node_model_round_id",
		"chronosync_node_offset_seconds",
		"chronosync_node_offset_sigma_seconds",
		"chronosync_node_rounds_missed_total",
		"chronosync_node_selfcheck_predictions_total",
		"chronosync_node_selfcheck_within_3sigma_total",
		"chronosync_node_selfcheck_worst_ratio",
		"chronosync_node_status",
		"chronosync_probe_adverts_rejected_total",
		"chronosync_probe_pairs_missed_total",
		"chronosync_probe_pairs_sent_total",
		"chronosync_probe_replies_dropped_total",
		"chronosync_probe_replies_received_total",
		"chronosync_probe_requests_answered_total",
		"chronosync_probe_requests_replayed_total",
		"chronosync_probe_t3_late_total",
		"chronosync_probe_t3_total",
		"chronosync_reference_info",
		"chronosync_round_birge_ratio",
		"chronosync_round_gather_wait_seconds",
		"chronosync_round_id",
		"chronosync_round_last_timestamp_seconds",
		"chronosync_round_latency_last_seconds",
		"chronosync_round_latency_seconds",
		"chronosync_round_message_bytes_total",
		"chronosync_round_missing_nodes",
		"chronosync_round_refused_total",
		"chronosync_round_residual_max_seconds",
		"chronosync_round_residual_rms_seconds",
		"chronosync_round_retries_total",
		"chronosync_round_sequence_skew_seconds",
		"chronosync_round_window_seconds",
		"chronosync_rounds_inconsistent_total",
		"chronosync_rounds_total",
		"chronosync_shaper_frames_dropped_total",
		"chronosync_shaper_frames_written_total",
		"chronosync_shaper_gc_cycles_total",
		"chronosync_shaper_read_lag_max_seconds",
		"chronosync_shaper_read_lag_p50_seconds",
		"chronosync_shaper_read_lag_p99_seconds",
		"chronosync_shaper_realtime",
		"chronosync_shaper_release_lateness_max_seconds",
		"chronosync_shaper_release_lateness_p50_seconds",
		"chronosync_shaper_release_lateness_p99_seconds",
		"chronosync_shaper_wake_lateness_max_seconds",
		"chronosync_shaper_wake_lateness_p50_seconds",
		"chronosync_shaper_wake_lateness_p99_seconds",
		"chronosync_streams_refused_total",
	}
}

// TestConcurrentObserveAndScrape feeds rounds from one goroutine (a
// node's event loop) and probe totals from another while a third scrapes:
// nothing blocks, and the totals at the end are every round's.
func TestConcurrentObserveAndScrape(t *testing.T) {
	m := newTest(0, true)
	const n = 200
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range n {
			m.ObserveRound(solvedRound(uint64(i + 1)))
		}
	}()
	probes := make(chan struct{})
	go func() {
		defer close(probes)
		for i := range n {
			m.ObserveProbes(0, probe.Stats{PairsSent: i + 1})
		}
	}()
	for range 5 {
		scrape(t, m)
	}
	<-done
	<-probes
	checkSamples(t, scrape(t, m), []sample{
		counter("chronosync_rounds_total", n, "result", "solved"),
		counter("chronosync_round_retries_total", 2*n),
		counter("chronosync_node_selfcheck_predictions_total", 4*n, "node", "1"),
		counter("chronosync_probe_pairs_sent_total", n, "node", "0"),
		{name: "chronosync_round_latency_seconds", typ: dto.MetricType_HISTOGRAM, labels: map[string]string{}, value: 0.15 * n, count: n},
	})
}
