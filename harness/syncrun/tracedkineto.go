package syncrun

import (
	"cmp"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/chronosync/chronosync/analysis/combine"
	"github.com/chronosync/chronosync/analysis/validate"
	"github.com/chronosync/chronosync/harness/engine"
	"github.com/chronosync/chronosync/trace/kineto"
	"github.com/chronosync/chronosync/trace/xspace"
	"github.com/chronosync/chronosync/workload/training"
)

// The Kineto path of a traced run (the workload's kineto: true). Besides
// its XSpace, every node writes its trace as torch.profiler (Kineto) writes
// one per rank, node<i>.pt.trace.json.gz, gzipped Chrome JSON:
//
//   - host events on the node's host clock S, read where the workload read
//     its tracer clock (see Started and Finished): every launch, a
//     cuda_runtime event named as the workload names it (hipLaunchKernel);
//     a collective's launch also inside a cpu_op record_param_comms (its
//     collective, process group, sequence number and message sizes) inside
//     a user_annotation nccl:<collective>, both with the launch's times.
//   - GPU kernels (category kernel; pid the device, 0; tid the stream;
//     args device and stream), named as the workload names them (its
//     collectives as RCCL names its kernels, which HTA counts as
//     communication), at the times the profiler gives them. Kineto converts the GPU clock's
//     readings to host time itself; the model is a fixed offset taken when
//     the profiler starts, P = R − R0 + S0, where (S0, R0) are the host and
//     tracer readings at the node's first traced event. So the GPU events
//     drift from the true host time as the tracer clock's rate differs
//     from the host clock's (drift_ppm × the time since the start), and a
//     step of the host clock after the start shows in the host events but
//     not in the GPU events. Correcting the conversion with the snapshot
//     pairs (H = S0 + a·(P − S0) + …) is the combiner's job.
//   - a flow (ph s/f, cat ac2g, id the correlation, bp e) from each launch
//     to its kernel, and the metadata events that name the processes and
//     threads.
//
// Every complete event carries its chronosync_event_id in args (the
// launch's for its op and annotation), so that the combined trace can be
// measured against the truth. "External id" is the correlation throughout.
// Times are exact: ts and dur in µs with three decimals, ts counted from
// baseTimeNanoseconds, the trace's earliest time rounded down to the whole
// second. A real trace's base is a Unix time; here base + ts is the host
// clock's reading (the simulator's clocks count from about 0), which is
// what the combiner takes it for. The same run writes the same bytes.

// Files of the Kineto path.
const (
	// FileCombinedKineto is the nodes' Kineto traces combined; its
	// siblings are combined-kineto.trace.json.gz, .metadata.json and
	// .validate.json.
	FileCombinedKineto = "combined-kineto.xplane.pb"
	// FileRawKinetoValidate is the happens-before check of the raw Kineto
	// traces.
	FileRawKinetoValidate = "raw-kineto.validate.json"
	fileNodeKineto        = "node%d.pt.trace.json.gz"
)

// kinetoSnapshots says whether the combiner gets each node's snapshot
// pairs with its Kineto trace, to correct the profiler's conversion of GPU
// times (false: the GPU events keep the profiler's drift, and the figures
// show it).
const kinetoSnapshots = true

// kinetoHostPID is node 0's host pid (and launching thread's tid) in its
// Kineto trace; node i's is kinetoHostPID + i. The GPU's pid is 0.
const kinetoHostPID = 1000

// kinetoArtifacts lists the files of the Kineto path.
func (p *tracedProtocol) kinetoArtifacts() []engine.Artifact {
	var a []engine.Artifact
	for i := range p.nodes {
		a = append(a, engine.Artifact{Name: fmt.Sprintf(fileNodeKineto, i), What: fmt.Sprintf("node %d's trace as the PyTorch profiler (Kineto) writes it, on its host clock", i)})
	}
	return append(a,
		engine.Artifact{Name: FileRawKinetoValidate, What: "collective happens-before check of the raw Kineto traces"},
		engine.Artifact{Name: FileCombinedKineto, What: "the Kineto traces on the global timeline (XSpace)"},
		engine.Artifact{Name: "combined-kineto.trace.json.gz", What: "the combined Kineto traces as Chrome trace events, for Perfetto"},
		engine.Artifact{Name: "combined-kineto.perfetto-trace", What: "the combined Kineto traces in Perfetto's native protobuf format"},
		engine.Artifact{Name: "combined-kineto.metadata.json", What: "per node of the Kineto path: offset windows, corrections, uncertainty"},
		engine.Artifact{Name: "combined-kineto.validate.json", What: "collective happens-before check of the combined Kineto traces"},
		engine.Artifact{Name: "combined-kineto.kineto/", What: "every node's Kineto trace on the global timeline, in PyTorch's format"})
}

// recordKineto checks the nodes' Kineto traces (written beside xs, the
// XSpace inputs), combines them and measures the result against the truth.
func (p *tracedProtocol) recordKineto(dir string, xs []combine.Input, truth map[[2]int64]tracedEvent, sum *KinetoTraceSummary) error {
	var inputs []combine.Input
	var raw []validate.Node
	for _, in := range xs {
		path := nodeFile(dir, fileNodeKineto, in.Node)
		t, err := kineto.Read(path)
		if err != nil {
			return fmt.Errorf("kineto path: %w", err)
		}
		nd := validate.FromKineto(in.Node, t)
		nd.Source = filepath.Base(path) // dir may be a staging directory
		raw = append(raw, nd)
		snap := ""
		if kinetoSnapshots {
			snap = in.Snapshots
		}
		inputs = append(inputs, combine.Input{Node: in.Node, Trace: path, Snapshots: snap})
	}
	rep := validate.Check(raw)
	if err := xspace.WriteFile(filepath.Join(dir, FileRawKinetoValidate), rep.WriteJSON); err != nil {
		return err
	}
	sum.Raw, sum.SnapshotCorrected = brief(rep), kinetoSnapshots
	out := filepath.Join(dir, FileCombinedKineto)
	// The Chrome JSON spans the training only (the XSpace keeps the whole
	// run): what a user opening it in Perfetto looks for.
	res, err := combine.Combine(inputs, combine.Options{Offsets: filepath.Join(dir, FileOffsets), Output: out, Validate: true, Window: combine.WindowWorkload})
	if err != nil {
		return fmt.Errorf("kineto path: %w", err)
	}
	sum.Combined = brief(res.Report)
	if err := linkTensorBoard(dir, FileCombinedKineto); err != nil {
		return err
	}
	al, err := measureTrace(out, truth)
	if err != nil {
		return err
	}
	sum.AlignedEvents, sum.ErrorNS, sum.ErrorSigmas, sum.Within3Sigma = al.aligned, al.errNS, al.sigmas, al.within
	sum.HostErrorNS, sum.GPUErrorNS = al.hostNS, al.gpuNS
	return nil
}

// writeKineto writes the node's Kineto trace to path, gzipped and
// atomically, and adds its events and flows to sum.
func (n *tracedNode) writeKineto(path string, sum *KinetoTraceSummary) error {
	meta, evs := n.kinetoEvents()
	for _, e := range evs {
		switch e.Ph {
		case "X":
			sum.Events++
		case "s":
			sum.Flows++
		}
	}
	h := kineto.Header{Name: filepath.Base(path), Rank: int(n.id), WorldSize: len(n.p.nodes)}
	return xspace.WriteFile(path, func(w io.Writer) error {
		return kineto.WriteGzip(w, h, append(meta, evs...))
	})
}

// Building events: the event id arg, a duration that is never negative
// (an event that ended before it started on its clock gets 0, as in the
// XSpace).
func argID(id uint64) kineto.Arg       { return kineto.IntArg(statEventID, int64(id)) }
func kinetoDur(start, end int64) int64 { return max(0, end-start) }

// kinetoEvents returns the node's metadata events and its other events, in
// the order they are written: host events by event id (a collective's
// annotation, op and launch, then the launch's flow start), then GPU
// events by time, stream and id (each kernel, then its flow's end).
func (n *tracedNode) kinetoEvents() (meta, evs []kineto.WriteEvent) {
	all := slices.Clone(n.events)
	slices.SortFunc(all, func(a, b tracedEvent) int { return cmp.Compare(a.ev.ID, b.ev.ID) })
	host := int64(kinetoHostPID) + int64(n.id)
	cfg := n.p.train
	var s0, r0 int64
	if len(all) > 0 {
		s0, r0 = all[0].hostStart, int64(all[0].ev.StartR)
	}
	meta = kineto.Metadata(host, cfg.Streams, s0)
	kernels := map[uint64]bool{} // correlations of the kernels that ran
	var gpu []kineto.WriteEvent
	for _, e := range all {
		if ev := e.ev; ev.Plane == training.GPUPlane {
			kernels[ev.Correlation] = true
			c, s := int64(ev.Correlation), int64(ev.Line)
			k := kineto.WriteEvent{Ph: "X", Cat: "kernel", Name: ev.Name, Pid: 0, Tid: s,
				Ts: int64(ev.StartR) - r0 + s0, Dur: kinetoDur(int64(ev.StartR), int64(ev.EndR))}
			k.Add(kineto.IntArg("External id", c), kineto.IntArg("device", 0), kineto.IntArg("stream", s), kineto.IntArg("correlation", c), argID(ev.ID))
			gpu = append(gpu, k, kineto.WriteEvent{Ph: "f", Cat: "ac2g", Name: "ac2g", Pid: 0, Tid: s, Ts: k.Ts, Flow: c})
		}
	}
	slots := launchSlots(cfg)
	seq := 0 // collectives launched so far
	for _, e := range all {
		ev := e.ev
		if ev.Plane != training.HostPlane {
			continue
		}
		c := int64(ev.Correlation)
		x := kineto.WriteEvent{Ph: "X", Pid: host, Tid: host, Ts: e.hostStart, Dur: kinetoDur(e.hostStart, e.hostEnd)}
		if ev.Index < len(slots) && slots[ev.Index] >= 0 {
			coll := slots[ev.Index]
			op := collectiveOp(coll)
			ann, rec := x, x
			ann.Cat, ann.Name = "user_annotation", "nccl:"+op
			ann.Add(kineto.IntArg("External id", c), argID(ev.ID))
			in, out := collectiveNelems(coll, op, len(n.p.nodes))
			rec.Cat, rec.Name = "cpu_op", "record_param_comms"
			rec.Add(kineto.IntArg("External id", c), kineto.StrArg("Collective name", op), kineto.StrArg("dtype", "Float"),
				kineto.IntArg("In msg nelems", in), kineto.IntArg("Out msg nelems", out), kineto.IntArg("Group size", int64(len(n.p.nodes))),
				kineto.StrArg("Process Group Name", "0"), kineto.StrArg("Process Group Description", "default_pg"),
				kineto.IntArg("Seq", int64(seq)), argID(ev.ID))
			evs = append(evs, ann, rec)
			seq++
		}
		x.Cat, x.Name = "cuda_runtime", ev.Name
		x.Add(kineto.IntArg("External id", c), kineto.IntArg("correlation", c), argID(ev.ID))
		evs = append(evs, x)
		if kernels[ev.Correlation] {
			evs = append(evs, kineto.WriteEvent{Ph: "s", Cat: "ac2g", Name: "ac2g", Pid: host, Tid: host, Ts: x.Ts, Flow: c})
		}
	}
	// Sort the GPU events' (kernel, flow end) pairs as pairs.
	pairs := make([][2]kineto.WriteEvent, len(gpu)/2)
	for i := range pairs {
		pairs[i] = [2]kineto.WriteEvent{gpu[2*i], gpu[2*i+1]}
	}
	slices.SortStableFunc(pairs, func(a, b [2]kineto.WriteEvent) int {
		return cmp.Or(cmp.Compare(a[0].Ts, b[0].Ts), cmp.Compare(a[0].Tid, b[0].Tid))
	})
	for _, p := range pairs {
		evs = append(evs, p[0], p[1])
	}
	return meta, evs
}

// launchSlots maps a launch's position in its step to the collective it
// launches (its index in the step), or -1 for a compute kernel: the
// layout of a step as training.Node makes it, compute kernels spread
// evenly before the collectives.
func launchSlots(cfg training.Config) []int {
	c, k := cfg.CollectivesPerStep, cfg.ComputePerStep
	var slots []int
	for coll := range c {
		for range (coll+1)*k/c - coll*k/c {
			slots = append(slots, -1)
		}
		slots = append(slots, coll)
	}
	return slots
}

// collectiveOp is the c10d name of collective index's operation.
func collectiveOp(index int) string {
	switch kernel, _ := training.CollectiveName(index); kernel {
	case training.AllReduceKernel:
		return "all_reduce"
	case training.AllGatherKernel:
		return "all_gather"
	}
	return "broadcast"
}

// collectiveNelems is the message sizes, in elements, of collective index:
// 2^18 to 2^21 floats by index; an all-gather's output is every rank's
// input.
func collectiveNelems(index int, op string, ranks int) (in, out int64) {
	in = 1 << (18 + index%4)
	if op == "all_gather" {
		return in, in * int64(ranks)
	}
	return in, in
}
