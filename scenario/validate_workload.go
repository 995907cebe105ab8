package scenario

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

// The sync protocol's ports (probe.Port and rounds.Port), which a training
// workload's port must differ from: the workload runs beside the protocol
// on every node.
const (
	syncProbePort uint16 = 7100
	syncRoundPort uint16 = 7101
)

func (v *validator) workload() {
	w := v.s.Workload
	switch w.Kind {
	case WorkloadNone:
		if w.Training != (Training{}) {
			v.addf("workload", "training settings apply only to kind training, not %q; expected Workload.Training to be zero", w.Kind)
		}
	case WorkloadTraining:
		if p := v.s.Protocol.Kind; p != ProtocolSync {
			v.addf("workload.kind", "a training workload needs protocol kind sync, not %q (its offsets place the nodes' traces on one timeline); expected protocol: {kind: sync}", p)
		}
		v.training("workload", w.Training)
	default:
		v.addf("workload.kind", "unknown workload kind %q; expected one of: none, training", w.Kind)
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
	switch t.Port {
	case 0:
		v.addf(key(path, "port"), "port 0 is out of range; expected a port number from 1 to 65535")
	case syncProbePort, syncRoundPort:
		v.addf(key(path, "port"), "port %d is a port of the sync protocol (%d probes, %d rounds); expected another port, like 7200",
			t.Port, syncProbePort, syncRoundPort)
	}
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
