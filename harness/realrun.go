//go:build linux

package harness

import (
	"bufio"
	"io"

	"github.com/chronosync/chronosync/harness/realbackend"
	"github.com/chronosync/chronosync/scenario"
)

// newReal builds the real backend (harness/realbackend) for sc, judged
// by judgeReal.
func newReal(sc *scenario.Scenario, r *scenario.Resolved, opts Options, proto protocol, log *bufio.Writer, tr *tracker) (backend, error) {
	b, err := realbackend.New(sc, r, realOptions(opts), proto, log, tr.Tracker)
	if err != nil {
		return backend{}, err
	}
	return backend{b, judgeReal(b)}, nil
}

// judgeReal measures a real run's conditions: the backend's own first
// (the run's length, CPU, shaper, timers, steal, pressure, its drops and
// probes), then the workload's and the ground truth's, in summary.json's
// order. A sync run that measured nothing failed.
func judgeReal(b *realbackend.Backend) func(s *Summary) {
	return func(s *Summary) {
		var cs conditions
		m := realbackend.Measured{Network: s.Network}
		if sy := s.Sync; sy != nil {
			p := sy.Probes
			m.Sync = &realbackend.SyncFigures{Lost: p.Lost, PairsSent: p.PairsSent, Blocks: p.Blocks, Rounds: sy.Rounds, WindowsClosed: sy.WindowsClosed}
		}
		b.Judge(&cs, s.Real, m)
		judgeUnsolved(&cs, s)
		judgeSelfCheck(&cs, s)
		judgeTrust(&cs, s)
		judgeSections(&cs, s)
		s.Conditions, s.Status = cs, cs.status()
		if why := b.SawNothing(m); why != "" {
			s.Status, s.StatusReason = StatusFailed, why
		}
	}
}

// Network is a real run's namespaces and, when links are impaired, the
// shaper relaying between them (realbackend.Network).
type Network = realbackend.Network

// StartNetwork builds the namespaces and links of sc (at its own seed) as
// a real run would, logging to log (nil discards). Close removes them
// (realbackend.StartNetwork).
func StartNetwork(sc *scenario.Scenario, log io.Writer) (*Network, error) {
	return realbackend.StartNetwork(sc, log)
}

// realOptions are opts' fields the real backend reads.
func realOptions(opts Options) realbackend.Options {
	return realbackend.Options{
		Cluster: opts.Cluster, Force: opts.Force, Key: opts.Key,
		LogLevel: opts.LogLevel, LogJSON: opts.LogJSON, Attack: opts.attack,
	}
}
