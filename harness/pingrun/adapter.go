package pingrun

import (
	"math"

	"github.com/chronosync/chronosync/analysis/stats"
	"github.com/chronosync/chronosync/harness/engine"
	"github.com/chronosync/chronosync/ping"
	"github.com/chronosync/chronosync/scenario"
	"github.com/chronosync/chronosync/world"
)

// New makes a scenario's ping adapter (engine.New): its interval and
// payload (at least ping.HeaderSize) from the scenario's protocol section.
func New(sc *scenario.Scenario, _ *scenario.Resolved) (engine.Protocol, error) {
	a, err := NewAdapter(ping.Config{Interval: sc.Protocol.Interval, Payload: max(sc.Protocol.Payload, ping.HeaderSize)})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// Adapter runs ping on every node and measures its exchanges
// (engine.Protocol).
type Adapter struct {
	cfg      ping.Config
	w        engine.Truth
	programs []*ping.Node // every incarnation of every node, in boot order
	rtt      []float64
	errs     []float64
	within   int // exchanges whose |error| is within half their round trip
}

// NewAdapter returns the adapter of cfg, an error if ping refuses cfg.
func NewAdapter(cfg ping.Config) (*Adapter, error) {
	if _, err := ping.New(cfg, nil); err != nil {
		return nil, err
	}
	return &Adapter{cfg: cfg}, nil
}

// Attach keeps the truth the exchanges are measured against.
func (p *Adapter) Attach(w engine.Truth, _ string) error { p.w = w; return nil }

// Finish has nothing to flush: ping writes no files.
func (p *Adapter) Finish() error { return nil }

// Artifacts: none.
func (p *Adapter) Artifacts() []engine.Artifact { return nil }

// Program is node id's ping program.
func (p *Adapter) Program(id world.NodeID) world.Program {
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
		// The configuration was checked in NewAdapter.
		panic(err)
	}
	p.programs = append(p.programs, prog)
	return prog
}

// Summarize puts the exchanges' figures in the summary's ping section.
func (p *Adapter) Summarize(s engine.Sections) {
	out := &Summary{RTT: stats.Summarize(p.rtt), OffsetError: stats.Summarize(stats.Abs(p.errs))}
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
