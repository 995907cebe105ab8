package syncrun

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/chronosync/chronosync/analysis/combine"
	"github.com/chronosync/chronosync/harness/engine"
	"github.com/chronosync/chronosync/scenario"
	"github.com/chronosync/chronosync/trace/xspace"
	"github.com/chronosync/chronosync/workload/snapshots"
	"github.com/chronosync/chronosync/workload/training"
	"github.com/chronosync/chronosync/world"
)

// Files of a traced run.
const (
	FileCombined     = "combined.xplane.pb"
	FileRawValidate  = "raw.validate.json"
	fileNodeTrace    = "node%d.xplane.pb"
	fileNodeSnapshot = "node%d.snapshots.pb"
	// DirTensorBoard is a TensorBoard log directory (tensorboard --logdir
	// RUN_DIR/tensorboard) holding each combined XSpace of the run as a
	// profile run of its own, as combine --layout tensorboard lays it out:
	// plugins/profile/combined/combined.xplane.pb (and combined-kineto/
	// for the Kineto path), hard links to the combined traces.
	DirTensorBoard = "tensorboard"
)

// tracedProtocol runs the sync protocol with the training workload and the
// snapshot sampler beside it on every node. After the run it writes each
// node's trace (node<i>.xplane.pb, on the node's tracer clock) and
// snapshot pairs (node<i>.snapshots.pb), combines them with offsets.jsonl,
// and checks collective happens-before on the raw traces and on the
// combined one. With kineto (the workload's kineto: true) it does the same
// with each node's trace as the PyTorch profiler writes it (see
// tracedkineto.go).
type tracedProtocol struct {
	*syncProtocol
	train  training.Config
	snap   snapshots.Config
	kineto bool
	nodes  []*tracedNode // by node id; the first incarnation's
	sum    *TraceSummary
}

func newTracedProtocol(sc *scenario.Scenario, r *scenario.Resolved) (*tracedProtocol, error) {
	sp, err := newSyncProtocol(sc, r)
	if err != nil {
		return nil, err
	}
	t := sc.Workload.Training
	p := &tracedProtocol{
		syncProtocol: sp,
		train: training.Config{Steps: t.Steps, CollectivesPerStep: t.CollectivesPerStep, ComputePerStep: t.ComputePerStep,
			Streams: t.Streams, ComputeDuration: t.ComputeDuration, CollectiveDuration: t.CollectiveDuration, Spread: t.Spread,
			LaunchGap: t.LaunchGap, StepGap: t.StepGap, StartDelay: t.StartDelay, Port: t.Port}.WithDefaults(),
		snap:   snapshots.Config{Period: t.SnapshotPeriod, Capacity: t.SnapshotCapacity, Burst: t.SnapshotBurst}.WithDefaults(),
		kineto: t.Kineto,
		nodes:  make([]*tracedNode, len(r.Nodes)),
	}
	if err := p.train.Validate(); err != nil {
		return nil, fmt.Errorf("scenario %s: workload: %w", sc.Name, err)
	}
	if err := p.snap.Validate(); err != nil {
		return nil, fmt.Errorf("scenario %s: workload: %w", sc.Name, err)
	}
	return p, nil
}

// Program runs the three programs on one node.
func (p *tracedProtocol) Program(id world.NodeID) world.Program {
	syncProg := p.syncProtocol.Program(id)
	n := p.nodes[id]
	first := n == nil
	if first {
		n = newTracedNode(p, id)
		p.nodes[id] = n
	}
	var obs training.Observer = n
	if !first {
		obs = nil // a restarted node's workload does not resume (see training)
	}
	wl, err := training.New(p.train, obs)
	if err != nil {
		panic(err) // checked in newTracedProtocol
	}
	sm, err := snapshots.New(p.snap)
	if err != nil {
		panic(err)
	}
	if first {
		n.wl, n.sampler = wl, sm
	}
	return world.ProgramFunc(func(env world.Env) error {
		if err := syncProg.Start(env); err != nil {
			return err
		}
		if err := sm.Start(env); err != nil {
			return err
		}
		return wl.Start(env)
	})
}

// Attach attaches the sync protocol's recorders.
func (p *tracedProtocol) Attach(w engine.Truth, dir string) error {
	return p.syncProtocol.Attach(w, dir)
}

// Artifacts lists the sync run's files and the traces'.
func (p *tracedProtocol) Artifacts() []engine.Artifact {
	a := p.syncProtocol.Artifacts()
	for i := range p.nodes {
		a = append(a,
			engine.Artifact{Name: fmt.Sprintf(fileNodeTrace, i), What: fmt.Sprintf("node %d's trace (XSpace) on its tracer clock", i)},
			engine.Artifact{Name: fmt.Sprintf(fileNodeSnapshot, i), What: fmt.Sprintf("node %d's (host, tracer) snapshot pairs", i)})
	}
	a = append(a,
		engine.Artifact{Name: xspace.FileTraceRecord, What: "what each node's trace holds (bytes, planes, events), to tell a cut trace"},
		engine.Artifact{Name: FileCombined, What: "every node's trace on the global timeline (XSpace)"},
		engine.Artifact{Name: "combined.trace.json.gz", What: "the combined trace as Chrome trace events, for Perfetto"},
		engine.Artifact{Name: "combined.perfetto-trace", What: "the combined trace in Perfetto's native protobuf format (ui.perfetto.dev, trace_processor)"},
		engine.Artifact{Name: "combined.metadata.json", What: "per node: snapshots, offset windows, corrections, uncertainty"},
		engine.Artifact{Name: "combined.validate.json", What: "collective happens-before check of the combined trace"},
		engine.Artifact{Name: FileRawValidate, What: "collective happens-before check of the raw per-node traces"},
		engine.Artifact{Name: DirTensorBoard + "/", What: "the combined traces laid out for tensorboard --logdir (plugins/profile/<run>/combined.xplane.pb)"})
	if p.kineto {
		a = append(a, p.kinetoArtifacts()...)
	}
	return a
}

// Finish finishes the sync run's files, then combines the traces.
func (p *tracedProtocol) Finish() error {
	if err := p.syncProtocol.Finish(); err != nil {
		return err
	}
	sum, err := p.record(p.dir)
	if err != nil {
		return err
	}
	p.sum = sum
	return nil
}

// Summarize puts the sync and trace sections in the summary.
func (p *tracedProtocol) Summarize(s engine.Sections) {
	p.syncProtocol.Summarize(s)
	s.Put(p.sum)
}

// nodeFile is a per-node file of the run directory.
func nodeFile(dir, pattern string, id int) string {
	return filepath.Join(dir, fmt.Sprintf(pattern, id))
}

// linkTensorBoard lays the combined XSpace dir/file out for TensorBoard:
// a hard link (a copy where the file system has none) at
// dir/DirTensorBoard/plugins/profile/<file's base>/combined.xplane.pb, so
// that tensorboard --logdir dir/tensorboard and xprof find it.
func linkTensorBoard(dir, file string) error {
	src := filepath.Join(dir, file)
	dst := combine.TensorBoardPath(filepath.Join(dir, DirTensorBoard), combine.OutputBase(file), combine.DefaultTensorBoardHost)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("tensorboard layout: %w", err)
	}
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	return xspace.WriteFile(dst, func(w io.Writer) error {
		f, err := os.Open(src)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(w, f)
		return err
	})
}
