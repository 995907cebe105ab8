package phasegaprun

import (
	"crypto/sha256"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/chronosync/chronosync/harness/engine"
	"github.com/chronosync/chronosync/infile"
	"github.com/chronosync/chronosync/model/netem"
	"github.com/chronosync/chronosync/phasegap/buildstamp"
	"github.com/chronosync/chronosync/phasegap/output"
	"github.com/chronosync/chronosync/phasegap/params"
	"github.com/chronosync/chronosync/phasegap/report"
	"github.com/chronosync/chronosync/scenario"
	"github.com/chronosync/chronosync/workload/halo"
	"github.com/chronosync/chronosync/world"
)

// Dir and the files of a phasegap run, in the run directory's phasegap/: the same
// files as an MPI run of `chronosync phasegap` writes, so that one
// analysis reads both.
const (
	Dir              = "phasegap"
	filePGResults    = Dir + "/" + output.FileResults
	filePGManifest   = Dir + "/" + output.FileManifest
	filePGTrace      = Dir + "/" + output.FileTrace
	filePGCosts      = "phasegap/costs.yaml"
	phasegapCostsRel = "phasegap/costs.yaml" // the costs as the scenario.yaml of the run names them
)

// protocol runs a phasegap workload: one halo.Rank per node, no
// synchronization protocol. The run ends when every rank has run its
// iterations (or one failed), before the scenario's duration if it can.
type protocol struct {
	sc     *scenario.Scenario
	params params.Params
	derive params.Derived
	costs  halo.Costs
	// costsFrom names the costs: "defaults", or the start of the costs
	// file's SHA-256 (the same for the run and its replay, which reads the
	// copy in the run directory).
	costsFrom string
	costsYAML []byte // the costs file as read, copied into the run directory
	ranks     []*halo.Rank
	w         engine.Truth
	dir       string
	left      atomic.Int32 // ranks still running
	done      chan struct{}
	sum       *Summary
	spin      time.Duration // halo.Rank.Spin: realSpin on the real backend
	// streamless are the link settings of the ring's edges that the
	// simulator's streams do not apply (they take a link's delay and
	// rate only): a simulated run says it ignored them.
	streamless []string
}

// streamless lists the settings of the ring's links that the simulator's
// streams ignore: jitter, loss, duplication, corruption, reordering, cross
// traffic. A stream is reliable and ordered; its messages take the link's
// delay and its rate's serialisation only.
func streamless(r *scenario.Resolved) []string {
	var out []string
	add := func(name string, on bool) {
		if on && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	for _, e := range r.Edges {
		l := e.Link
		add("jitter", l.Jitter > 0)
		add("loss", l.Loss != (netem.Loss{}))
		add("duplicate", l.Duplicate > 0)
		add("corrupt", l.Corrupt > 0)
		add("reorder", l.Reorder > 0)
		add("cross_traffic", l.Cross != (netem.CrossTraffic{}))
	}
	return out
}

// realSpin is how early a real run's rank wakes before its modelled work
// ends, to spin the rest: the real backend's timers fire tens of µs to a
// millisecond late (summary.json real.timer_lateness), which would add to
// every modelled phase.
const realSpin = 2 * time.Millisecond

// New makes a phasegap scenario's adapter (an engine.New): it checks the
// workload's parameters and reads its costs file.
func New(sc *scenario.Scenario, r *scenario.Resolved) (engine.Protocol, error) {
	pg := sc.Workload.Phasegap
	p := &protocol{sc: sc, params: pg.Params(len(r.Nodes)), costs: halo.DefaultCosts(), costsFrom: "defaults",
		ranks: make([]*halo.Rank, len(r.Nodes)), done: make(chan struct{})}
	d, err := p.params.Validate(len(r.Nodes))
	if err != nil {
		return nil, fmt.Errorf("scenario %s: workload: %w", sc.Name, err)
	}
	p.derive = d
	if pg.CostsPath != "" {
		// Read once: the costs the run uses are the bytes its directory
		// keeps, even if the file changes meanwhile.
		if p.costsYAML, err = infile.ReadFile(pg.CostsPath, infile.Costs); err != nil {
			return nil, fmt.Errorf("scenario %s: workload.costs: %w", sc.Name, err)
		}
		if p.costs, err = halo.ParseCosts(p.costsYAML, pg.CostsPath); err != nil {
			return nil, fmt.Errorf("scenario %s: workload.costs: %w", sc.Name, err)
		}
		p.costsFrom = fmt.Sprintf("sha256:%x", sha256.Sum256(p.costsYAML))[:19]
	}
	p.streamless = streamless(r)
	p.left.Store(int32(len(r.Nodes)))
	return p, nil
}

// AsRun makes sc the scenario as the run directory records it
// (engine.AsRunner): its costs file is the copy in the run directory, so
// that the run replays from there.
func (p *protocol) AsRun(sc *scenario.Scenario) {
	if sc.Workload.Kind == scenario.WorkloadPhasegap && sc.Workload.Phasegap.Costs != "" {
		sc.Workload.Phasegap.Costs = phasegapCostsRel
	}
}

// Program is node id's rank.
func (p *protocol) Program(id world.NodeID) world.Program {
	r, err := halo.New(p.params, len(p.ranks), p.costs)
	if err != nil {
		panic(err) // checked in New
	}
	r.UsePort(p.sc.Workload.Phasegap.Port)
	r.Spin(p.spin)
	if p.ranks[id] == nil {
		p.ranks[id] = r
		r.Notify(func() {
			if p.left.Add(-1) == 0 {
				close(p.done)
			}
		})
	}
	return r
}

// WorkloadDone is closed once every rank finished or failed: the run can
// end there (engine.Ender).
func (p *protocol) WorkloadDone() <-chan struct{} { return p.done }

// Attach creates phasegap/ in dir and copies the costs file there.
func (p *protocol) Attach(w engine.Truth, dir string) error {
	p.w, p.dir = w, dir
	if err := os.MkdirAll(filepath.Join(dir, Dir), 0o755); err != nil {
		return err
	}
	if p.costsYAML != nil {
		return os.WriteFile(filepath.Join(dir, filePGCosts), p.costsYAML, 0o644)
	}
	return nil
}

// Artifacts lists phasegap/'s files.
func (p *protocol) Artifacts() []engine.Artifact {
	files := []engine.Artifact{
		{Name: filePGResults, What: "the phasegap run's results row (the MPI benchmark's CSV schema)"},
		{Name: filePGManifest, What: "the phasegap run's configuration and results (the MPI benchmark's manifest)"},
		{Name: filePGTrace, What: "the last iterations of every rank as a Chrome trace (Perfetto)"},
	}
	for rank := range p.ranks {
		files = append(files, engine.Artifact{Name: Dir + "/" + output.FileXPlane(rank),
			What: fmt.Sprintf("rank %d's iterations as XSpace planes (xprof, chronosync combine), as an MPI run writes them", rank)})
	}
	if p.costsYAML != nil {
		files = append(files, engine.Artifact{Name: filePGCosts, What: "the cost model the run used (workload.costs)"})
	}
	return files
}

// config is the run's configuration as every transport records it
// (output.Config): a model run asks for and gets funneled, or multiple
// with a progress thread, and computes no checksum.
func (p *protocol) config() report.Config {
	thread := "funneled"
	if p.params.Progress == "progress_thread" {
		thread = "multiple"
	}
	return output.Config(p.params, p.derive, output.Launch{
		Transport: p.w.Backend(), MPIThreadRequested: thread, MPIThreadProvided: thread,
		Trace: true, TraceIters: p.sc.Workload.Phasegap.TraceIters, TraceDetail: "rank",
		OutDir: Dir, RunID: fmt.Sprintf("%s-seed%d", p.sc.Name, p.sc.Seed), CSVMode: "write", Manifest: true,
		MPIImpl: "model", MPIVersion: "workload/halo, costs " + p.costsFrom, Impairment: linkPreset(p.sc.Links),
		GitSHA: buildstamp.Read().SHA,
	})
}

// linkPreset names the links' impairment: the default link's preset (the
// fields written beside it may refine it) when no override changes it,
// "none" for links of no setting, else "custom".
func linkPreset(l scenario.Links) string {
	switch {
	case l.Default.Preset != "" && len(l.Overrides) == 0:
		return l.Default.Preset
	case l.Default == (scenario.LinkSpec{}) && len(l.Overrides) == 0:
		return "none"
	}
	return "custom"
}

// Finish writes phasegap/: results.csv, manifest.json and trace.json, from
// every rank's measured iterations.
func (p *protocol) Finish() error {
	cfg := p.config()
	var ranks []report.Rank
	var sums []report.RankSummary
	sum := &Summary{Ranks: len(p.ranks), Mode: cfg.Params.Mode, Threads: cfg.Params.Threads, Halo: cfg.Params.Halo,
		Impairment: cfg.Impairment, Costs: p.costsFrom}
	for i, r := range p.ranks {
		switch {
		case r == nil:
			sum.Failed = append(sum.Failed, fmt.Sprintf("rank %d: never started", i))
			continue
		case r.Err() != nil:
			sum.Failed = append(sum.Failed, r.Err().Error())
		case !r.Done():
			sum.Failed = append(sum.Failed, fmt.Sprintf("rank %d: did not finish within the scenario's duration (%d of %d iterations measured)",
				i, len(r.Result().Samples), cfg.Params.Iters))
		default:
			sum.Finished++
		}
		ranks = append(ranks, r.Result())
		sums = append(sums, report.Summarize(r.Result()))
	}
	row := report.Aggregate(cfg, sums, 0)
	sum.TIter, sum.TInterior, sum.TWait, sum.TCommWindow = row.TIterMean, row.TInterior.Avg, row.TWait.Avg, row.TCommWindow.Avg
	sum.WaitFrac, sum.WaitSkew, sum.OverlapRatio = row.WaitFrac, row.WaitSkew, row.OverlapRatio
	if !math.IsNaN(row.HiddenFrac) {
		pure, hf := row.TPureCommMean, row.HiddenFrac
		sum.TPureComm, sum.HiddenFrac = &pure, &hf
	}
	if p.w.Backend() == "sim" {
		sum.Ignored = p.streamless
	}
	p.sum = sum
	return output.Write(filepath.Join(p.dir, Dir), output.Run{Config: cfg, Row: row, Ranks: ranks,
		Build: modelBuild(), Env: map[string]string{},
		XPlanes: true})
}

// Summarize puts the run's Summary in the summary's phasegap section.
func (p *protocol) Summarize(s engine.Sections) { s.Put(p.sum) }

// TimersFireLate makes every rank wake realSpin before its modelled work
// ends, to spin the rest (engine.LateTimers): the real backend's timers
// fire late.
func (p *protocol) TimersFireLate() { p.spin = realSpin }

// modelBuild is the binary's build as a model run's manifest records it:
// the revision from the toolchain's stamp or the Makefile's ldflags
// (package buildstamp) and where it came from.
func modelBuild() report.BuildInfo {
	st := buildstamp.Read()
	return report.BuildInfo{GoVersion: runtime.Version(), Compiler: runtime.Compiler,
		GitSHA: st.SHA, GitSHASource: st.Source, GitModified: st.Modified}
}
