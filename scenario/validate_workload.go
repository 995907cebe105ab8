package scenario

import (
	"github.com/chronosync/chronosync/phasegap/params"
)

// The ranges of the training workload's counts. The upper bounds keep step
// and collective numbers inside the 32-bit fields of the workload's wire
// messages and a node's event count reasonable.
const (
	maxTrainingSteps       = 1 << 20
	maxTrainingCollectives = 1 << 10
	maxTrainingCompute     = 1 << 12
	maxTrainingStreams     = 64
	minSnapshotCapacity    = 2
	maxSnapshotBurst       = 64
)

// The sync protocol's ports (probe.Port and rounds.Port), which a
// workload's port must differ from: a training workload runs beside the
// protocol on every node (and a phasegap workload keeps clear of them too).
const (
	syncProbePort uint16 = 7100
	syncRoundPort uint16 = 7101
)

// The phasegap workload's limit beyond package params's own.
const maxPhasegapRanks = 1024 // nodes: one rank per node

func (v *validator) workload() {
	w := v.s.Workload
	switch w.Kind {
	case WorkloadNone:
		v.onlyKind(w, WorkloadTraining)
		v.onlyKind(w, WorkloadPhasegap)
	case WorkloadTraining:
		v.onlyKind(w, WorkloadPhasegap)
		if p := v.s.Protocol.Kind; p != ProtocolSync {
			v.addf("workload.kind", "a training workload needs protocol kind sync, not %q (its offsets place the nodes' traces on one timeline); expected protocol: {kind: sync}", p)
		}
		v.training("workload", w.Training)
	case WorkloadPhasegap:
		v.onlyKind(w, WorkloadTraining)
		v.phasegapRun()
		v.phasegap("workload", w.Phasegap)
	default:
		v.addf("workload.kind", "unknown workload kind %q; expected one of: none, training, phasegap", w.Kind)
	}
}

// onlyKind checks that the settings of the workload kind other, which is
// not w's kind, are zero.
func (v *validator) onlyKind(w Workload, other WorkloadKind) {
	set := false
	field := "Workload.Training"
	switch other {
	case WorkloadTraining:
		set = w.Training != (Training{})
	case WorkloadPhasegap:
		set, field = w.Phasegap != (Phasegap{}), "Workload.Phasegap"
	}
	if set {
		v.addf("workload", "%s settings apply only to kind %s, not %q; expected %s to be zero", other, other, w.Kind, field)
	}
}

// phasegapRun checks what a phasegap workload asks of the rest of the
// scenario: no protocol, a topology that links its ranks' neighbours, at
// most maxPhasegapRanks nodes, no faults.
func (v *validator) phasegapRun() {
	s := v.s
	if p := s.Protocol.Kind; p != ProtocolNone {
		v.addf("workload.kind", "a phasegap workload runs alone: another protocol's traffic would share its links (protocol kind %q); expected protocol: {kind: none} or no protocol section", p)
	}
	if n := s.Nodes; n > maxPhasegapRanks {
		v.addf("nodes", "%d nodes for a phasegap workload (one rank per node); expected at most %d", n, maxPhasegapRanks)
	}
	switch k := s.Topology.Kind; k {
	case Ring, FullMesh:
	default:
		v.addf("topology.kind", "a phasegap workload runs on topology %q, but its ranks talk to (i±1) mod n; expected topology ring or full_mesh", k)
	}
	if len(s.Faults) > 0 {
		v.addf("faults", "a phasegap run has no fault model yet; expected no faults")
	}
}

// phasegap checks a phasegap workload's settings: each key of package
// params's table on its own, then, when they all pass, the cross-key
// rules of params.Params.
func (v *validator) phasegap(path string, p Phasegap) {
	before := len(v.list)
	q := params.Params{Settings: p.Settings}
	for _, f := range params.Fields() {
		switch {
		case !f.Scenario:
		case f.Int != nil:
			v.intIn(key(path, f.Key), f.Key, *f.Int(&q), f.Min, f.Max, f.Unit)
		case f.Str != nil:
			oneOf(v, key(path, f.Key), f.Name(), *f.Str(&q), f.OneOf)
		}
	}
	if (p.Costs == "") != (p.CostsPath == "") {
		v.addf(key(path, "costs"), "costs %q with CostsPath %q; expected both set (CostsPath is where the file Costs names is) or both empty", p.Costs, p.CostsPath)
	}
	v.intIn(key(path, "trace_iters"), "trace_iters", p.TraceIters, 1, params.MaxIters, "an iteration count")
	v.port(key(path, "port"), p.Port, defaultPhasegapPort)
	if len(v.list) > before || v.s.Nodes < 1 {
		return
	}
	run := p.Params(v.s.Nodes)
	if _, err := run.Validate(v.s.Nodes); err != nil {
		v.addf(path, "%s", keyed(err))
	}
}

// keyed is a refusal of params.Params.Validate with its parameters named
// as a phasegap workload's keys (halo, not --halo).
func keyed(err error) string {
	if fe, ok := err.(*params.FieldError); ok {
		return fe.Text(func(k string) string { return k })
	}
	return err.Error()
}

// Params returns the parameters of phasegap's benchmark that p describes,
// for a run of ranks ranks (the scenario's nodes): p's settings, and
// params.DefaultParams for those a scenario does not set (the checksum,
// the start barrier, the pure-communication exchanges, CPU binding).
func (p Phasegap) Params(ranks int) params.Params {
	q := params.DefaultParams()
	q.Settings = p.Settings
	q.Ranks = ranks
	return q
}

// port checks a workload's port: not 0, not the sync protocol's; like is
// the workload's default, which the message suggests.
func (v *validator) port(path string, port, like uint16) {
	switch port {
	case 0:
		v.addf(path, "port 0 is out of range; expected a port number from 1 to 65535")
	case syncProbePort, syncRoundPort:
		v.addf(path, "port %d is a port of the sync protocol (%d probes, %d rounds); expected another port, like %d",
			port, syncProbePort, syncRoundPort, like)
	}
}

// intIn checks that an integer lies in [lo, hi].
func (v *validator) intIn(path, what string, n, lo, hi int, unit string) {
	if n < lo || n > hi {
		v.addf(path, "%s %d is out of range; expected %s from %d to %d", what, n, unit, lo, hi)
	}
}

func (v *validator) training(path string, t Training) {
	v.intIn(key(path, "steps"), "steps", t.Steps, 1, maxTrainingSteps, "a step count")
	v.intIn(key(path, "collectives_per_step"), "collectives_per_step", t.CollectivesPerStep, 1, maxTrainingCollectives, "a collective count")
	v.intIn(key(path, "compute_per_step"), "compute_per_step", t.ComputePerStep, 0, maxTrainingCompute, "a kernel count")
	v.intIn(key(path, "streams"), "streams", t.Streams, 1, maxTrainingStreams, "a stream count")
	v.positive(key(path, "compute_duration"), "compute_duration", t.ComputeDuration)
	v.positive(key(path, "collective_duration"), "collective_duration", t.CollectiveDuration)
	if s := t.Spread; !(s >= 0 && s < 1) {
		v.addf(key(path, "spread"), "spread %s is outside [0, 1); expected a fraction >= 0 and below 1", formatFloat(s))
	}
	v.positive(key(path, "launch_gap"), "launch_gap", t.LaunchGap)
	v.positive(key(path, "step_gap"), "step_gap", t.StepGap)
	switch d := t.StartDelay; {
	case d < 0:
		v.nonNegative(key(path, "start_delay"), "start_delay", d)
	case d >= v.s.Duration && v.s.Duration > 0:
		v.addf(key(path, "start_delay"), "start_delay %q leaves no time to train; expected start_delay < duration (%s)",
			formatDuration(d), formatDuration(v.s.Duration))
	}
	v.port(key(path, "port"), t.Port, defaultTraining().Port)
	switch p := t.SnapshotPeriod; {
	case p <= 0:
		v.positive(key(path, "snapshot_period"), "snapshot_period", p)
	case p > v.s.Duration && v.s.Duration > 0:
		v.addf(key(path, "snapshot_period"), "snapshot_period %q is longer than the run; expected snapshot_period <= duration (%s)",
			formatDuration(p), formatDuration(v.s.Duration))
	}
	if t.SnapshotCapacity < minSnapshotCapacity {
		v.addf(key(path, "snapshot_capacity"), "snapshot_capacity %d; expected at least %d snapshots", t.SnapshotCapacity, minSnapshotCapacity)
	}
	v.intIn(key(path, "snapshot_burst"), "snapshot_burst", t.SnapshotBurst, 1, maxSnapshotBurst, "a pair count")
}
