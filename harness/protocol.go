package harness

import (
	"fmt"
	"math"

	"github.com/chronosync/chronosync/analysis/stats"
	"github.com/chronosync/chronosync/harness/engine"
	"github.com/chronosync/chronosync/ping"
	"github.com/chronosync/chronosync/scenario"
	"github.com/chronosync/chronosync/world"
)

// protocol is a workload adapter as the root drives it (engine.Protocol).
type protocol = engine.Protocol

// truth is what protocols measure against (engine.Truth): a backend.
type truth = engine.Truth

// newProtocol makes sc's protocol: the adapter registered for its workload
// kind (adapters), else the protocol kind's own.
func newProtocol(sc *scenario.Scenario, r *scenario.Resolved) (protocol, error) {
	if n, ok := adapters().Lookup(string(sc.Workload.Kind)); ok {
		return n(sc, r)
	}
	switch sc.Protocol.Kind {
	case scenario.ProtocolSync:
		if sc.Workload.Kind == scenario.WorkloadTraining {
			return newTracedProtocol(sc, r)
		}
		return newSyncProtocol(sc, r)
	case scenario.ProtocolNone:
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

type pingProtocol struct {
	cfg      ping.Config
	w        truth
	programs []*ping.Node // every incarnation of every node, in boot order
	rtt      []float64
	errs     []float64
	within   int // exchanges whose |error| is within half their round trip
}

// Attach keeps the truth the exchanges are measured against.
func (p *pingProtocol) Attach(w truth, _ string) error { p.w = w; return nil }

// Finish has nothing to flush: ping writes no files.
func (p *pingProtocol) Finish() error { return nil }

// Artifacts: none.
func (p *pingProtocol) Artifacts() []Artifact { return nil }

// Program is node id's ping program.
func (p *pingProtocol) Program(id world.NodeID) world.Program {
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

// Summarize puts the exchanges' figures in the summary's ping section.
func (p *pingProtocol) Summarize(s engine.Sections) {
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
	s.Put(out)
}
