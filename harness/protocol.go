package harness

import (
	"fmt"
	"math"
	"time"

	"github.com/chronosync/chronosync/analysis/stats"
	"github.com/chronosync/chronosync/ping"
	"github.com/chronosync/chronosync/scenario"
	"github.com/chronosync/chronosync/world"
)

// protocol adapts one protocol kind to the harness: it makes the nodes'
// programs, and after the run it adds its figures to the summary, measured
// against the simulator's ground truth.
type protocol interface {
	program(world.NodeID) world.Program
	// attach runs once the world exists; dir is the (staging) run
	// directory the protocol may write its artifacts into.
	attach(w truth, dir string) error
	// finish runs after the simulation: it flushes and closes the files.
	finish() error
	summarize(s *Summary)
	// artifacts lists the files the protocol writes.
	artifacts() []Artifact
}

// ender is a protocol whose work can end before the scenario's duration
// (a workload that ran all its iterations): the run stops once the channel
// is closed.
type ender interface {
	workloadDone() <-chan struct{}
}

// endOf is the channel that ends proto's run early, nil if none does.
func endOf(proto protocol) <-chan struct{} {
	if e, ok := proto.(ender); ok {
		return e.workloadDone()
	}
	return nil
}

func newProtocol(sc *scenario.Scenario, r *scenario.Resolved) (protocol, error) {
	switch sc.Protocol.Kind {
	case scenario.ProtocolSync:
		if sc.Workload.Kind == scenario.WorkloadTraining {
			return newTracedProtocol(sc, r)
		}
		return newSyncProtocol(sc, r)
	case scenario.ProtocolNone:
		if sc.Workload.Kind == scenario.WorkloadPhasegap {
			return newPhasegapProtocol(sc, r)
		}
		return nil, fmt.Errorf("protocol none with workload %q: nothing to run", sc.Workload.Kind)
	case scenario.ProtocolPing, "":
		cfg := ping.Config{Interval: sc.Protocol.Interval, Payload: max(sc.Protocol.Payload, ping.HeaderSize)}
		if _, err := ping.New(cfg, nil); err != nil {
			return nil, err
		}
		return &pingProtocol{cfg: cfg}, nil
	default:
		return nil, fmt.Errorf("protocol %q is not implemented", sc.Protocol.Kind)
	}
}

// truth is what protocols measure against: the ground truth of the world
// they ran in, the simulator's or the real backend's (a backend).
type truth interface {
	Nodes() int
	// HostIdeal returns node i's host clock now.
	HostIdeal(i world.NodeID) int64
	// HostIdealAt returns node i's host clock at true time t.
	HostIdealAt(i world.NodeID, t int64) int64
	// HostTrueTime returns the true time at which node i's host clock
	// reads local.
	HostTrueTime(i world.NodeID, local int64) int64
	// HostSteps returns how many steps node i's host clock has taken by
	// true time t, and their sum.
	HostSteps(i world.NodeID, t int64) (int, int64)
	// Now is true time.
	Now() time.Duration
	// Backend names the world: "sim" or "real".
	Backend() string
}

type pingProtocol struct {
	cfg      ping.Config
	w        truth
	programs []*ping.Node // every incarnation of every node, in boot order
	rtt      []float64
	errs     []float64
	within   int // exchanges whose |error| is within half their round trip
}

func (p *pingProtocol) attach(w truth, _ string) error { p.w = w; return nil }

func (p *pingProtocol) finish() error { return nil }

func (p *pingProtocol) artifacts() []Artifact { return nil }

func (p *pingProtocol) program(id world.NodeID) world.Program {
	prog, err := ping.New(p.cfg, func(e ping.Exchange) {
		// The exchange completes a ping sent an interval ago: the truth
		// is the offset at its midpoint, not now.
		t := p.w.HostTrueTime(id, int64(e.T1+(e.T4-e.T1)/2))
		truth := p.w.HostIdealAt(e.Peer, t) - p.w.HostIdealAt(id, t)
		err := float64(int64(e.Offset()) - truth)
		p.errs = append(p.errs, err)
		p.rtt = append(p.rtt, float64(e.Delay()))
		if 2*math.Abs(err) <= float64(e.Delay()) {
			p.within++
		}
	})
	if err != nil {
		// The configuration was checked in newProtocol.
		panic(err)
	}
	p.programs = append(p.programs, prog)
	return prog
}

func (p *pingProtocol) summarize(s *Summary) {
	out := &PingSummary{RTT: stats.Summarize(p.rtt), OffsetError: stats.Summarize(stats.Abs(p.errs))}
	for _, prog := range p.programs {
		st := prog.Stats()
		out.Sent += st.Sent
		out.Answered += st.Answered
		out.Received += st.Received
	}
	if out.Sent > 0 {
		out.LossFraction = 1 - float64(out.Received)/float64(out.Sent)
	}
	if len(p.errs) > 0 {
		out.WithinBound = float64(p.within) / float64(len(p.errs))
	}
	s.Ping = out
}
