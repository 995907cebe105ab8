// Package metrics exports what a running node measures to Prometheus: on
// the master, each round (latency from ROUND_END to the next ROUND_START,
// sequence skew, retries, nodes missing, solved or not, what the master's
// door refused); per node, its model against global time (offset, drift,
// their σ, the self-check); per edge, its fit, the probes sent, lost and
// impure, the solver's residual and where t3 came from; and, on the real
// backend, how late the event loops and the shaper ran and the datagrams
// dropped.
//
// A [Metrics] holds its own registry (never Prometheus' global one) and is
// fed from the project's own types through small adapters:
// [Metrics.ObserveRound] with a [rounds.RoundReport] (the master's
// rounds.Observer.Round), [Metrics.ObserveModel] with a node's
// [offsets.Offset], [Metrics.ObserveWindow] with a node's closed window
// (rounds.Observer.Window), [Metrics.ObserveProbes] with a prober's
// [probe.Stats] and [Metrics.ObserveReal] with the real world's counters
// ([RealStatsOf]). Every Observe method is safe to call from any goroutine,
// concurrently with scrapes; none blocks on the network or starts a
// goroutine. [Metrics.Handler] serves the exposition; [Serve] runs an HTTP
// server for it until its context ends (the real node's only goroutine of
// this package).
//
// Names follow Prometheus' conventions: the prefix chronosync_, base units
// (_seconds; drift as a _ratio of rates), counters ending in _total, and
// the labels node, src and dst (node ids, decimal), reason, source, status
// and result. docs/node-service.md (section 4) lists every metric.
package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace is the prefix of every metric this package defines.
const Namespace = "chronosync"

// Node statuses that [Metrics.ObserveRound] sets on the master for each
// participant of a round (chronosync_node_status). [Metrics.SetNodeStatus]
// may set others (a node's own verdict on the model it publishes: "ok",
// "degraded", "failed", "stale").
const (
	// StatusOK: the round gave the node a model.
	StatusOK = "ok"
	// StatusUnsolved: the node reported, but the round gave it no model
	// (unsolved round, or the node outside the reference's component).
	StatusUnsolved = "unsolved"
	// StatusMissing: the node's report did not arrive before the gather
	// ended.
	StatusMissing = "missing"
)

// Round results, the label result of chronosync_rounds_total.
const (
	// ResultSolved: every reporting node solved, no error.
	ResultSolved = "solved"
	// ResultPartial: a solution, with an error (a disconnected graph: some
	// nodes outside the reference's component).
	ResultPartial = "partial"
	// ResultUnsolved: no solution.
	ResultUnsolved = "unsolved"
)

// DefaultLatencyBuckets are the buckets, in seconds, of
// chronosync_round_latency_seconds: 1 ms to 60 s. A round's latency is its
// gather wait (up to the gather deadline) plus the solve.
func DefaultLatencyBuckets() []float64 {
	return []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
}

// Options tune [NewWithOptions]; the zero value is what [New] uses.
type Options struct {
	// Now is the wall clock chronosync_round_last_timestamp_seconds is
	// read from; nil means time.Now. A simulated run passes its virtual
	// clock, so that nothing here reads the OS clock.
	Now func() time.Time
	// LatencyBuckets are the buckets of chronosync_round_latency_seconds,
	// in seconds; nil means DefaultLatencyBuckets.
	LatencyBuckets []float64
	// NoRuntime leaves out the Go runtime's and the process's collectors
	// (go_*, process_*), which New registers.
	NoRuntime bool
	// NoEdges leaves out the per-edge series (chronosync_edge_*), whose
	// number grows with the probe graph's edges: about 13 series an edge,
	// so a full mesh of 100 nodes gives 130,000 on the master.
	NoEdges bool
}

// Metrics is one node's set of metrics, in a registry of its own. Create it
// with [New]; it is safe for concurrent use.
type Metrics struct {
	node    int
	master  bool
	noEdges bool
	reg     *prometheus.Registry
	now     func() time.Time

	// The master's, per round (nil on an agent).
	round *roundMetrics

	// Per node.
	nodeOffset, nodeOffsetSigma    *prometheus.GaugeVec
	nodeDrift, nodeDriftSigma      *prometheus.GaugeVec
	nodeModelRound                 *prometheus.GaugeVec
	nodeSteps                      *prometheus.CounterVec
	selfPredictions, selfWithin    *prometheus.CounterVec
	selfWorst                      *prometheus.GaugeVec
	nodeStatus                     *prometheus.GaugeVec
	reference                      *prometheus.GaugeVec
	edgeOffset, edgeSigma          *prometheus.GaugeVec
	edgeDrift, edgeResidual        *prometheus.GaugeVec
	edgeSent, edgeAnswered         *prometheus.CounterVec
	edgeImpure, edgeLost           *prometheus.CounterVec
	edgeRejected, edgeInsufficient *prometheus.CounterVec
	edgeT3                         *prometheus.CounterVec
	snap                           *snapshots

	mu sync.Mutex
	// modelRound is the round of the last model counted per node (its
	// steps and self-check), so that a model observed twice (by
	// ObserveRound and ObserveModel on the master) counts once.
	modelRound map[int]uint64
	// edgeWindow is the last (round, window) whose probe counts were
	// counted per edge, for the same reason (ObserveRound and
	// ObserveWindow).
	edgeWindow map[[2]int][2]uint64
	// t3Window is the last (round, window) whose t3 sources were counted
	// per edge.
	t3Window map[[2]int][2]uint64
	// statuses are the status labels set per node so far, so that
	// setting one zeroes the others.
	statuses map[int][]string
	// ref is the reference node set, -1 before any.
	ref int
}

// roundMetrics are the master's per-round metrics.
type roundMetrics struct {
	latency                  prometheus.Histogram
	latencyLast, gatherWait  prometheus.Gauge
	skew, window             prometheus.Gauge
	retries                  prometheus.Counter
	missing                  prometheus.Gauge
	missedBy                 *prometheus.CounterVec
	results                  *prometheus.CounterVec
	refused                  *prometheus.CounterVec
	id, last                 prometheus.Gauge
	residualRMS, residualMax prometheus.Gauge
	birge                    prometheus.Gauge
	inconsistent             prometheus.Counter
	bytes                    prometheus.Counter
}

// New returns the metrics of node (its id in the cluster), with the
// master's per-round metrics where master is set, in a registry of their
// own that also holds the Go runtime's and the process's collectors.
func New(node int, master bool) *Metrics {
	return NewWithOptions(node, master, Options{})
}

// NewWithOptions is [New] with o.
func NewWithOptions(node int, master bool, o Options) *Metrics {
	m := &Metrics{
		node: node, master: master, noEdges: o.NoEdges, reg: prometheus.NewRegistry(), now: o.Now,
		modelRound: map[int]uint64{}, edgeWindow: map[[2]int][2]uint64{}, t3Window: map[[2]int][2]uint64{},
		statuses: map[int][]string{}, ref: -1,
	}
	if m.now == nil {
		m.now = time.Now
	}
	buckets := o.LatencyBuckets
	if buckets == nil {
		buckets = DefaultLatencyBuckets()
	}
	f := factory{reg: m.reg}

	role := "agent"
	if master {
		role = "master"
	}
	f.gaugeVec("node_info", "The node this process runs, with its role (master or agent); always 1.", "node", "role").
		WithLabelValues(strconv.Itoa(node), role).Set(1)

	if master {
		m.round = &roundMetrics{
			latency: f.histogram("round_latency_seconds",
				"Round latency on the master's clock: ROUND_END to the next ROUND_START (the gather, the solve and the start), per round.", buckets),
			latencyLast: f.gauge("round_latency_last_seconds", "The last round's latency: ROUND_END to the next ROUND_START."),
			gatherWait:  f.gauge("round_gather_wait_seconds", "The last round's gather wait: ROUND_END to the last report, or to the gather deadline."),
			skew:        f.gauge("round_sequence_skew_seconds", "The last round's sequence skew: the spread of the solved nodes' window starts on the global timeline."),
			window:      f.gauge("round_window_seconds", "The window length the last round ran with."),
			retries:     f.counter("round_retries_total", "Reconnections of nodes to the master, counted at each round."),
			missing:     f.gauge("round_missing_nodes", "Participants whose report the last round did not get."),
			missedBy:    f.counterVec("node_rounds_missed_total", "Rounds whose gather ended without the node's report.", "node"),
			results:     f.counterVec("rounds_total", "Rounds completed, by result: solved, partial (a solution with an error, e.g. a disconnected graph) or unsolved.", "result"),
			refused:     f.counterVec("round_refused_total", "What the master's door refused and the solution left out, by reason (\"report FIELD\", \"edge FIELD\", \"record FIELD\").", "reason"),
			id:          f.gauge("round_id", "The id of the last round completed."),
			last:        f.gauge("round_last_timestamp_seconds", "When the last round completed, Unix time."),
			residualRMS: f.gauge("round_residual_rms_seconds", "RMS of the last solved round's edge residuals (measured minus solution) over its kept edges."),
			residualMax: f.gauge("round_residual_max_seconds", "Largest |residual| of the last solved round's kept edges."),
			birge:       f.gauge("round_birge_ratio", "Birge ratio (sqrt of chi2 per degree of freedom) of the last solved round's offsets; about 1 when the σ are honest."),
			inconsistent: f.counter("rounds_inconsistent_total",
				"Solved rounds whose loops did not close within their uncertainty (their σ were inflated to cover it)."),
			bytes: f.counter("round_message_bytes_total", "Bytes of NodeWindowData frames gathered by the master."),
		}
		for _, r := range []string{ResultSolved, ResultPartial, ResultUnsolved} {
			m.round.results.WithLabelValues(r)
		}
	}

	m.nodeOffset = f.gaugeVec("node_offset_seconds", "The node's clock minus global time at the start of its last model's window.", "node")
	m.nodeOffsetSigma = f.gaugeVec("node_offset_sigma_seconds", "1σ uncertainty of the node's offset at its last model's window middle.", "node")
	m.nodeDrift = f.gaugeVec("node_drift_ratio", "The node's clock rate minus the global rate, as a ratio (1e-6 is 1 ppm), in its last model.", "node")
	m.nodeDriftSigma = f.gaugeVec("node_drift_sigma_ratio", "1σ uncertainty of node_drift_ratio.", "node")
	m.nodeModelRound = f.gaugeVec("node_model_round_id", "The round id of the node's last model.", "node")
	m.nodeSteps = f.counterVec("node_clock_steps_total", "Clock steps found in the node's models.", "node")
	m.selfPredictions = f.counterVec("node_selfcheck_predictions_total",
		"Self-check: the node's edges that the previous round's models predicted (no ground truth needed).", "node")
	m.selfWithin = f.counterVec("node_selfcheck_within_3sigma_total",
		"Self-check: predictions whose measured offset lay within 3σ of the prediction; honest σ keep 99.73 %.", "node")
	m.selfWorst = f.gaugeVec("node_selfcheck_worst_ratio",
		"Self-check: the last checked round's largest |measured − predicted| over the prediction's σ.", "node")
	m.nodeStatus = f.gaugeVec("node_status", "1 for the node's current status, 0 for its others.", "node", "status")
	m.reference = f.gaugeVec("reference_info", "The reference node, whose clock is global time; 1 on one series.", "node")

	m.edgeOffset = f.gaugeVec("edge_offset_seconds", "The edge's last fit: dst's clock minus src's at the window's middle.", "src", "dst")
	m.edgeSigma = f.gaugeVec("edge_offset_sigma_seconds", "1σ uncertainty of edge_offset_seconds.", "src", "dst")
	m.edgeDrift = f.gaugeVec("edge_drift_ratio", "The edge's last fit: dst's clock rate minus src's, as a ratio.", "src", "dst")
	m.edgeResidual = f.gaugeVec("edge_residual_seconds",
		"The solver's residual of the edge in the last solved round (its fit minus the solution); absent when the solver did not use it.", "src", "dst")
	m.edgeSent = f.counterVec("edge_probe_pairs_sent_total", "Probe pairs src sent to dst.", "src", "dst")
	m.edgeAnswered = f.counterVec("edge_probe_pairs_answered_total", "Probe pairs of src to dst answered.", "src", "dst")
	m.edgeImpure = f.counterVec("edge_probe_pairs_impure_total", "Answered probe pairs judged impure (their spacing not kept: queuing), which the fit leaves out where enough pairs are pure.", "src", "dst")
	m.edgeLost = f.counterVec("edge_probes_lost_total", "Probes of src to dst never answered.", "src", "dst")
	m.edgeRejected = f.counterVec("edge_rejected_total", "Rounds whose solver rejected the edge as an outlier.", "src", "dst")
	m.edgeInsufficient = f.counterVec("edge_insufficient_total", "Windows with too few probes on the edge to fit.", "src", "dst")
	m.edgeT3 = f.counterVec("edge_probe_t3_total",
		"Answered probes of src to dst by the source of their t3: kernel (the reply's transmit timestamp), user (dst's user-space reading) or unrecorded.", "src", "dst", "source")

	m.snap = newSnapshots(node)
	m.reg.MustRegister(m.snap)
	if !o.NoRuntime {
		m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	return m
}

// Node returns the node id New was given.
func (m *Metrics) Node() int { return m.node }

// Master reports whether m has the master's per-round metrics.
func (m *Metrics) Master() bool { return m.master }

// Registry returns m's registry, for a caller that adds collectors of its
// own or gathers without HTTP.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler returns the HTTP handler of m's exposition (the text format, or
// OpenMetrics or protobuf where the scraper asks for it).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		Registry:          m.reg, // promhttp_metric_handler_errors_total
		ErrorHandling:     promhttp.ContinueOnError,
		EnableOpenMetrics: true,
	})
}

// SetNodeStatus sets node's status: chronosync_node_status{node, status}
// is 1 for status and 0 for every other status the node had.
func (m *Metrics) SetNodeStatus(node int, status string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.setStatusLocked(node, status)
}

func (m *Metrics) setStatusLocked(node int, status string) {
	n := strconv.Itoa(node)
	known := m.statuses[node]
	found := false
	for _, s := range known {
		v := 0.0
		if s == status {
			v, found = 1, true
		}
		m.nodeStatus.WithLabelValues(n, s).Set(v)
	}
	if !found {
		m.statuses[node] = append(known, status)
		m.nodeStatus.WithLabelValues(n, status).Set(1)
	}
}

// setReferenceLocked makes ref the one series of chronosync_reference_info.
func (m *Metrics) setReferenceLocked(ref int) {
	if ref == m.ref || ref < 0 {
		return
	}
	m.reference.Reset()
	m.reference.WithLabelValues(strconv.Itoa(ref)).Set(1)
	m.ref = ref
}

// factory registers metrics in one registry under Namespace.
type factory struct{ reg *prometheus.Registry }

func (f factory) gauge(name, help string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help})
	f.reg.MustRegister(g)
	return g
}

func (f factory) counter(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help})
	f.reg.MustRegister(c)
	return c
}

func (f factory) histogram(name, help string, buckets []float64) prometheus.Histogram {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Name: name, Help: help, Buckets: buckets})
	f.reg.MustRegister(h)
	return h
}

func (f factory) gaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help}, labels)
	f.reg.MustRegister(g)
	return g
}

func (f factory) counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help}, labels)
	f.reg.MustRegister(c)
	return c
}
