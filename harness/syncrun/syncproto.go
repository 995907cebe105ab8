package syncrun

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/chronosync/chronosync/analysis/groundtruth"
	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/estimate"
	"github.com/chronosync/chronosync/graphcalc"
	"github.com/chronosync/chronosync/harness/engine"
	"github.com/chronosync/chronosync/probe/probelog"
	"github.com/chronosync/chronosync/real"
	"github.com/chronosync/chronosync/rounds"
	"github.com/chronosync/chronosync/rounds/syncpb"
	"github.com/chronosync/chronosync/scenario"
	"github.com/chronosync/chronosync/world"
)

// Files a sync run writes.
const (
	FileOffsets = "offsets.jsonl"
	FileRounds  = "rounds.jsonl"
	FileProbes  = "probes.bin"
	FileTruth   = "truth.jsonl"
)

// Config turns a scenario's sync section into the protocol's
// configuration.
func Config(sc *scenario.Scenario, r *scenario.Resolved) rounds.Config {
	s := sc.Protocol.Sync
	cfg := rounds.Config{
		Mode: rounds.Mode(s.Mode),
		Estimate: estimate.Options{
			Kind:          estimate.Kind(s.Estimator),
			Purity:        estimate.Purity(s.Purity),
			PureThreshold: s.PureThreshold,
			MinPairs:      s.MinPairs,
			StepThreshold: s.StepThreshold,
		},
		Cadence: s.Cadence, Window: s.Window, WindowMin: s.WindowMin, WindowMax: s.WindowMax,
		Rounds: s.Rounds, Master: world.NodeID(s.Master), Reference: world.NodeID(s.Reference),
		GatherDeadline: s.GatherDeadline, Heartbeat: s.Heartbeat, ConsensusGain: s.ConsensusGain,
		GraphCalc: graphcalc.Options{Seed: sc.Seed},
	}
	seen := make([]bool, len(r.Nodes))
	out := make([]bool, len(r.Nodes))
	for _, e := range r.Edges {
		seen[e.From], seen[e.To], out[e.From] = true, true, true
	}
	for i := range r.Nodes {
		if seen[i] {
			cfg.Nodes = append(cfg.Nodes, world.NodeID(i))
		}
		if out[i] {
			cfg.Participants = append(cfg.Participants, world.NodeID(i))
		}
	}
	if !slices.Contains(cfg.Nodes, cfg.Reference) {
		cfg.Nodes = append(cfg.Nodes, cfg.Reference)
		slices.Sort(cfg.Nodes)
	}
	return cfg
}

// syncProtocol runs the sync protocol in the simulator and records its
// outputs, its probe stream and the ground truth in the run directory.
type syncProtocol struct {
	cfg   rounds.Config
	sc    *scenario.Scenario
	runID string
	w     engine.Truth
	dir   string
	boots []uint64
	nodes []*rounds.Node // every incarnation of every node, in boot order
	err   error          // the first recording error

	probeFile *os.File
	probes    *probelog.Writer
	offs      *offsets.Writer
	rnds      *offsets.Writer
	// files holds offs and rnds (rotated in a run until stopped); inPlace,
	// rotateBytes and runLog are the run's (runFiles).
	files       *runFiles
	inPlace     bool
	rotateBytes int64
	runLog      io.Writer
	incarnation int // of a run until stopped (startIncarnation); 0 otherwise
	probeMeta   probelog.Meta
	// segmentProbes counts the blocks written to the open probes.bin,
	// rotatedProbes those of the segments rotated away (rotateProbes).
	segmentProbes, rotatedProbes ProbeSummary

	truthFile *os.File
	truth     *groundtruth.Writer

	online   []offsets.Offset
	windows  []groundtruth.Window
	reports  []roundFigures
	faults   []scenario.Fault // the scenario's, to explain unsolved rounds
	unsolved []UnsolvedRound
	// reportsSeen are the nodes' reports in consensus mode, for its
	// self-check (consensusSelfCheck).
	reportsSeen []*syncpb.NodeWindowData
	// tamper, if not nil, changes a node's report after Window recorded
	// it and before the node sends it, as a faulty or hostile node would
	// (tests only).
	tamper func(node world.NodeID, d *syncpb.NodeWindowData)
	// leftOut are the consensus records left out of offsets.jsonl (see
	// writable), with why, for the summary.
	leftOut []roundFigures
	// graphcalc holds the offline estimates with their GraphCalc wall
	// times, which vary between runs and so stay out of summary.json.
	graphcalc []EstimateResult
	// onModel is Options.OnModel: each model a node takes.
	onModel func(node world.NodeID, m rounds.Model)
	// onRound is Options.OnRound: each round the master gathered.
	onRound func(r *rounds.RoundReport)
	// onWindow and onStats are Options.OnWindow and OnStats: each window
	// a node closed, and its counters then (windowHooks).
	onWindow func(node world.NodeID, blocks []probelog.Block, data *syncpb.NodeWindowData)
	onStats  func(node world.NodeID, st NodeStats)
	// current is each node's latest incarnation, by node id (for
	// onStats), and realWorld the real backend's world (nil in the
	// simulator).
	current   []*rounds.Node
	realWorld *real.World
}

type roundFigures struct {
	round   uint64
	figures rounds.Figures
	missing []int
	err     string
	warning string // the round's inconsistency, if any
	// refused counts what the master refused in the round and the
	// records left out of the run files, by reason (see
	// rounds.RoundReport.Refused, syncProtocol.writable).
	refused map[string]int
}

func newSyncProtocol(sc *scenario.Scenario, r *scenario.Resolved) (*syncProtocol, error) {
	cfg := Config(sc, r)
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	return &syncProtocol{cfg: cfg, sc: sc, runID: fmt.Sprintf("%s-seed%d", sc.Name, sc.Seed), boots: make([]uint64, len(r.Nodes)), faults: r.Faults}, nil
}

// Program is node id's sync program (engine.Protocol).
func (p *syncProtocol) Program(id world.NodeID) world.Program {
	p.boots[id]++
	n := rounds.New(p.cfg, p.boots[id], p)
	p.nodes = append(p.nodes, n)
	p.setCurrent(id, n)
	return n
}

// Artifacts lists the sync run's files.
func (p *syncProtocol) Artifacts() []engine.Artifact {
	return []engine.Artifact{
		{Name: FileOffsets, What: "per node per round clock model (offset, drift, uncertainty)"},
		{Name: FileRounds, What: "the master's per-edge view and round figures"},
		{Name: FileProbes, What: "the probe stream: every answered probe's four timestamps, per edge and window"},
		{Name: FileTruth, What: "ground truth of every node window, for error measurement"},
	}
}

// Attach opens the run files in dir.
func (p *syncProtocol) Attach(w engine.Truth, dir string) error {
	p.w, p.dir = w, dir
	p.realWorld = realWorldOf(w)
	timestampFloors(&p.cfg.Estimate, w.Backend())
	var err error
	meta := offsets.Meta{RunID: p.runID, Reference: int(p.cfg.Reference), Estimator: string(p.cfg.Estimate.Kind), Mode: string(p.cfg.Mode)}
	runLog := p.runLog
	if runLog == nil {
		runLog = io.Discard
	}
	var rep offsets.Repaired
	if p.files, rep, err = openRunFiles(dir, offsetsMeta(meta, "offsets"), offsetsMeta(meta, "rounds"), p.inPlace, p.rotateBytes, runLog); err != nil {
		return err
	}
	p.offs, p.rnds = p.files.offs, p.files.rnds
	if p.inPlace {
		// A restarted master continues the rounds after the last whole one.
		p.cfg.LastRound = rep.LastRound
		if p.incarnation, err = startIncarnation(dir, rep); err != nil {
			return err
		}
	}
	if p.probeFile, err = os.Create(filepath.Join(dir, FileProbes)); err != nil {
		return err
	}
	p.probeMeta = probelog.Meta{Schema: probelog.Schema, RunID: p.runID, Nodes: w.Nodes(), Units: "ns", Source: w.Backend()}
	if p.probes, err = probelog.NewWriter(p.probeFile, p.probeMeta); err != nil {
		return err
	}
	if p.truthFile, err = os.Create(filepath.Join(dir, FileTruth)); err != nil {
		return err
	}
	p.truth, err = groundtruth.NewWriter(p.truthFile, groundtruth.Meta{RunID: p.runID, Reference: int(p.cfg.Reference)})
	return err
}

func offsetsMeta(m offsets.Meta, file string) offsets.Meta {
	m.Type, m.Schema, m.File, m.Units = "meta", offsets.Schema, file, "ns"
	m.Model, m.Uncertainty = offsets.Model, offsets.UncertaintyModel
	return m
}

func (p *syncProtocol) fail(err error) {
	if err != nil && p.err == nil {
		p.err = err
	}
}

// Window implements [rounds.Observer]: it appends the window's probes and
// records the window's truth.
func (p *syncProtocol) Window(node world.NodeID, blocks []probelog.Block, data *syncpb.NodeWindowData) {
	for i := range blocks {
		p.fail(p.probes.Write(&blocks[i]))
	}
	if p.inPlace {
		countProbes(&p.segmentProbes, blocks)
	}
	p.fail(p.rotateProbes())
	ref := p.cfg.Reference
	tw := groundtruth.Window{Round: data.RoundId, Node: int(node), Start: data.WindowStartNs, End: data.WindowEndNs}
	for _, local := range []int64{data.WindowStartNs, data.WindowStartNs + (data.WindowEndNs-data.WindowStartNs)/2, data.WindowEndNs} {
		t := p.w.HostTrueTime(node, local)
		tw.Points = append(tw.Points, groundtruth.Point{Local: p.w.HostIdealAt(node, t), Ref: p.w.HostIdealAt(ref, t)})
	}
	p.windows = append(p.windows, tw)
	p.fail(p.truth.Write(tw))
	if p.cfg.Mode == rounds.ModeConsensus {
		// Consensus mode has no Solver to self-check its rounds: the
		// summary does, from the nodes' records and these reports.
		p.reportsSeen = append(p.reportsSeen, data)
	}
	p.windowHooks(node, blocks, data)
	if p.tamper != nil {
		p.tamper(node, data)
	}
}

// Round implements [rounds.Observer]: it appends the round to offsets.jsonl
// and rounds.jsonl.
func (p *syncProtocol) Round(r *rounds.RoundReport) {
	p.online = append(p.online, r.Offsets...)
	refused := maps.Clone(r.Refused)
	var left []string // the records left out
	recs := make([]any, 0, len(r.Offsets))
	for _, o := range r.Offsets {
		recs = append(recs, o)
	}
	recs = p.writable(recs, &refused, &left)
	p.fail(p.offs.Append(recs...))
	line := offsets.Round{
		Type: "round", RoundID: r.Round, WindowID: r.Window, SequenceNumber: r.Sequence,
		Missing: r.Missing, WindowNS: int64(r.Figures.Window), GatherWaitNS: int64(r.Figures.GatherWait),
		EndToStartNS: int64(r.Figures.EndToStart), SequenceSkewNS: int64(r.Figures.SequenceSkew),
		Retries: r.Figures.Retries, MessageBytes: r.Figures.MessageBytes,
	}
	for _, d := range r.Nodes {
		line.Reported = append(line.Reported, int(d.NodeId))
	}
	if r.Summary != nil {
		// Solved counts the records offsets.jsonl has of the round, which
		// offsets.ReadStrict holds it to: a solved node whose record was
		// left out (by the master, or by writable) is not counted.
		line.Solved, line.RMSResidualNS, line.MaxResidualNS, line.Rejected = len(recs), r.Summary.RMSResidual, r.Summary.MaxResidual, r.Summary.Rejected
		c := &r.Summary.Consistency
		line.Chi2, line.Chi2DOF, line.PValue, line.BirgeRatio = c.Chi2, c.DOF, c.PValue, c.Birge
		line.Inconsistent, line.Warning = !c.Consistent, c.Warning()
	}
	if len(r.Notes) > 0 {
		line.Warning = strings.Join(append(slices.DeleteFunc([]string{line.Warning}, func(w string) bool { return w == "" }), r.Notes...), "; ")
	}
	if r.Err != nil {
		line.Error = r.Err.Error()
	}
	rr := make([]any, 0, len(r.Edges)+1)
	for _, e := range r.Edges {
		rr = append(rr, e)
	}
	rr = p.writable(append(rr, line), &refused, &left)
	if len(left) > 0 {
		line.Warning = strings.Join(slices.DeleteFunc(append([]string{line.Warning}, left...), func(w string) bool { return w == "" }), "; ")
		if n := len(rr); n > 0 {
			if _, ok := rr[n-1].(offsets.Round); ok {
				rr[n-1] = line
			}
		}
	}
	fig := roundFigures{round: r.Round, figures: r.Figures, missing: r.Missing, warning: line.Warning, err: line.Error, refused: refused}
	p.reports = append(p.reports, fig)
	if u := p.unsolvedRound(r, p.w.Now()); u != nil {
		p.unsolved = append(p.unsolved, *u)
	}
	p.fail(p.rnds.Append(rr...))
	p.afterRound()
	if p.onRound != nil {
		p.onRound(r)
	}
}

// afterRound rotates the run files when they have grown to their cap (a
// run until stopped only).
func (p *syncProtocol) afterRound() {
	if p.files == nil {
		return
	}
	p.fail(p.files.afterRound())
	p.offs, p.rnds = p.files.offs, p.files.rnds
}

// writable returns recs without the records the run files' writers would
// refuse (offsets.CheckRecord), counting each under "recorded FIELD" in
// *refused and saying what it was in *left. The master's door keeps such
// values out and the master leaves out any record of its solution they
// would refuse (package rounds), so this never happens in rounds mode but
// for a bug (a consensus record may: its drift comes from the peers'
// adverts); then the run loses that record, never the run directory.
func (p *syncProtocol) writable(recs []any, refused *map[string]int, left *[]string) []any {
	return slices.DeleteFunc(recs, func(rec any) bool {
		field, msg := offsets.CheckRecord(rec)
		if field == "" {
			return false
		}
		if *refused == nil {
			*refused = map[string]int{}
		}
		(*refused)["recorded "+field]++
		*left = append(*left, fmt.Sprintf("a %T record left out of the run files: %s: %s", rec, field, msg))
		return true
	})
}

// Consensus implements [rounds.Observer].
func (p *syncProtocol) Consensus(_ world.NodeID, rec offsets.Offset) {
	var refused map[string]int
	var left []string
	if len(p.writable([]any{rec}, &refused, &left)) == 0 {
		p.leftOut = append(p.leftOut, roundFigures{round: rec.RoundID, warning: strings.Join(left, "; "), refused: refused})
		return
	}
	p.online = append(p.online, rec)
	p.fail(p.offs.Append(rec))
}

// Finish flushes and closes the run files, and, in the simulator (whose
// world has stopped: only the probers' Stats are read from now on), lets
// go of the probers' open windows.
func (p *syncProtocol) Finish() error {
	for _, n := range p.nodes {
		if pr := n.Prober(); pr != nil && p.probeMeta.Source == "sim" {
			pr.Release()
		}
	}
	p.fail(p.probeFile.Close())
	p.fail(p.offs.Close())
	p.fail(p.rnds.Close())
	p.fail(p.truth.Flush())
	p.fail(p.truthFile.Close())
	return p.err
}

// Model implements [rounds.ModelObserver]: it hands node's model to
// Options.OnModel. syncProtocol takes models whether or not a hook is set,
// so that every node asks for its own (rounds.FeatureRoundResult) and a
// run sends the same messages, and so has the same event log, either way.
func (p *syncProtocol) Model(node world.NodeID, m rounds.Model) {
	if p.onModel != nil {
		p.onModel(node, m)
	}
}

var _ rounds.Observer = (*syncProtocol)(nil)
var _ rounds.ModelObserver = (*syncProtocol)(nil)

// The real backend's timestamp floors (estimate.Options.TimestampSigma,
// UserT3Sigma; docs/real-backend.md, "Honest uncertainty").
const (
	// realTimestampSigma: kernel software timestamps of two namespaces on
	// one host, where the run's node-round errors exceed what the probes'
	// spread shows by up to about 13 ns (real2-idle, idle machine).
	realTimestampSigma = 5 * time.Nanosecond
	// realUserT3Sigma: a responder's user-space t3 is read before its
	// reply is handed to the kernel; on a loaded machine the two lie up to
	// tens of µs apart.
	realUserT3Sigma = 20 * time.Microsecond
)

// timestampFloors sets o's timestamp floors for the backend ("sim" or
// "real") whose probes it fits: the simulator's timestamps are what its
// clocks read, the real backend's are not quite.
func timestampFloors(o *estimate.Options, backend string) {
	if backend == "real" {
		o.TimestampSigma, o.UserT3Sigma = realTimestampSigma, realUserT3Sigma
	}
}
