package scenario

import (
	"math"
	"slices"
	"strings"
	"time"
)

// The values of the sync protocol's enumerated keys, in the order error
// messages list them.
var (
	syncModes      = []SyncMode{SyncRounds, SyncWindows, SyncConsensus}
	syncEstimators = []string{"regression", "minfilter", "svm"}
	syncPurities   = []string{"auto", "on", "off"}
)

// minWindowCadences is how many probe-pair intervals a window holds at
// least: fewer leave an estimator too few pairs to work with.
const minWindowCadences = 10

func (v *validator) protocol() {
	p := v.s.Protocol
	switch p.Kind {
	case ProtocolPing:
		v.positive("protocol.interval", "interval", p.Interval)
		if p.Payload < 0 {
			v.addf("protocol.payload", "negative payload %d; expected a size in bytes >= 0", p.Payload)
		}
		if p.Sync != (Sync{}) {
			v.addf("protocol", "sync settings apply only to kind sync, not %q; expected Protocol.Sync to be zero", p.Kind)
		}
	case ProtocolSync:
		if p.Interval != 0 || p.Payload != 0 {
			v.addf("protocol", "interval and payload apply only to kind ping, not %q; expected them to be zero", p.Kind)
		}
		v.sync("protocol", p.Sync)
	case ProtocolNone:
		if p.Interval != 0 || p.Payload != 0 {
			v.addf("protocol", "interval and payload apply only to kind ping, not %q; expected them to be zero", p.Kind)
		}
		if p.Sync != (Sync{}) {
			v.addf("protocol", "sync settings apply only to kind sync, not %q; expected Protocol.Sync to be zero", p.Kind)
		}
		if v.s.Workload.Kind != WorkloadPhasegap {
			v.addf("protocol.kind", "protocol none runs nothing; expected a workload: {kind: phasegap}")
		}
	default:
		v.addf("protocol.kind", "unknown protocol kind %q; expected one of: ping, sync, none", p.Kind)
	}
}

// oneOf checks that an enumerated value is one of the valid ones.
func oneOf[T ~string](v *validator, path, what string, got T, valid []T) {
	if !slices.Contains(valid, got) {
		names := make([]string, len(valid))
		for i, s := range valid {
			names[i] = string(s)
		}
		v.addf(path, "unknown %s %q; expected one of: %s", what, got, strings.Join(names, ", "))
	}
}

// times returns n·d, and false if it overflows.
func times(n int, d time.Duration) (time.Duration, bool) {
	if n < 0 || d < 0 || (d > 0 && int64(n) > math.MaxInt64/int64(d)) {
		return 0, false
	}
	return time.Duration(n) * d, true
}

func (v *validator) sync(path string, y Sync) {
	oneOf(v, key(path, "mode"), "sync mode", y.Mode, syncModes)
	oneOf(v, key(path, "estimator"), "estimator", y.Estimator, syncEstimators)
	v.positive(key(path, "cadence"), "cadence", y.Cadence)
	v.positive(key(path, "window"), "window", y.Window)
	if y.Cadence > 0 && y.Window > 0 && y.Window/minWindowCadences < y.Cadence {
		least, _ := times(minWindowCadences, y.Cadence)
		v.addf(key(path, "window"), "window %q is shorter than %d cadences of %q (%s); expected a window >= %d × cadence",
			formatDuration(y.Window), minWindowCadences, formatDuration(y.Cadence), formatDuration(least), minWindowCadences)
	}
	if y.WindowMin != 0 || y.WindowMax != 0 {
		ap := key(path, "adaptive_window")
		switch {
		case y.WindowMin <= 0:
			v.addf(key(ap, "min"), "adaptive_window min %q is not positive; expected a duration > 0 (or min and max both 0 for a fixed window)", formatDuration(y.WindowMin))
		case y.WindowMin > y.Window:
			v.addf(key(ap, "min"), "adaptive_window min %q is above window %q; expected min <= window <= max", formatDuration(y.WindowMin), formatDuration(y.Window))
		}
		if y.WindowMax < y.Window {
			v.addf(key(ap, "max"), "adaptive_window max %q is below window %q; expected min <= window <= max", formatDuration(y.WindowMax), formatDuration(y.Window))
		}
	}
	switch {
	case y.Rounds < 0:
		v.addf(key(path, "rounds"), "negative rounds %d; expected a round count >= 0 (0 runs rounds until the end of the run)", y.Rounds)
	case y.Rounds > 0 && y.Window > 0 && !v.s.UntilStopped():
		if need, ok := times(y.Rounds, y.Window); !ok || need > v.s.Duration {
			least := "more than the longest duration"
			if ok {
				least = "at least " + formatDuration(need)
			}
			v.addf(key(path, "rounds"), "%d rounds of %s need %s; duration is %s; expected rounds × window <= duration (or rounds: 0 to run until the end)",
				y.Rounds, formatDuration(y.Window), least, formatDuration(v.s.Duration))
		}
	}
	v.syncNode(key(path, "master"), "master", y.Master)
	v.syncNode(key(path, "reference"), "reference", y.Reference)
	v.positive(key(path, "gather_deadline"), "gather_deadline", y.GatherDeadline)
	v.positive(key(path, "heartbeat"), "heartbeat", y.Heartbeat)
	oneOf(v, key(path, "purity"), "purity", y.Purity, syncPurities)
	v.positive(key(path, "pure_threshold"), "pure_threshold", y.PureThreshold)
	if y.MinPairs < 2 {
		v.addf(key(path, "min_pairs"), "min_pairs %d; expected at least 2 probe pairs", y.MinPairs)
	}
	v.nonNegative(key(path, "step_threshold"), "step_threshold", y.StepThreshold)
	if g := y.ConsensusGain; !(g > 0 && g <= 1) {
		v.addf(key(path, "consensus_gain"), "consensus_gain %s is outside (0, 1]; expected a number above 0 and at most 1", formatFloat(g))
	}
	if y.ConvergedFrom < 1 {
		v.addf(key(path, "converged_from"), "converged_from %d; expected a round number >= 1", y.ConvergedFrom)
	}
}

// syncNode checks that the master or reference names a node.
func (v *validator) syncNode(path, what string, n int) {
	if n < 0 || n >= v.s.Nodes {
		v.addf(path, "%s %d does not exist; expected a node number from 0 to %d (nodes: %d)", what, n, v.s.Nodes-1, v.s.Nodes)
	}
}
