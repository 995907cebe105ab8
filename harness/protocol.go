package harness

import (
	"fmt"

	"github.com/chronosync/chronosync/analysis/stats"
	"github.com/chronosync/chronosync/ping"
	"github.com/chronosync/chronosync/scenario"
	"github.com/chronosync/chronosync/sim"
	"github.com/chronosync/chronosync/world"
)

// protocol adapts one protocol kind to the harness: it makes the nodes'
// programs, and after the run it adds its figures to the summary, measured
// against the simulator's ground truth.
type protocol interface {
	program(world.NodeID) world.Program
	// attach runs once the world exists; dir is the (staging) run
	// directory the protocol may write its artifacts into.
	attach(w *sim.Sim, dir string) error
	// finish runs after the simulation: it flushes and closes the files.
	finish() error
	summarize(s *Summary)
	// artifacts lists the files the protocol writes.
	artifacts() []Artifact
}

func newProtocol(sc *scenario.Scenario, r *scenario.Resolved) (protocol, error) {
	switch sc.Protocol.Kind {
	case scenario.ProtocolSync:
		if sc.Workload.Kind == scenario.WorkloadTraining {
			return newTracedProtocol(sc, r)
		}
		return newSyncProtocol(sc, r)
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
	w        *sim.Sim
	programs []*ping.Node // every incarnation of every node, in boot order
	rtt      []float64
	errs     []float64
}

func (p *pingProtocol) attach(w *sim.Sim, _ string) error { p.w = w; return nil }

func (p *pingProtocol) finish() error { return nil }

func (p *pingProtocol) artifacts() []Artifact { return nil }

func (p *pingProtocol) program(id world.NodeID) world.Program {
	prog, err := ping.New(p.cfg, func(e ping.Exchange) {
		truth := p.w.HostIdeal(e.Peer) - p.w.HostIdeal(id)
		p.errs = append(p.errs, float64(int64(e.Offset())-truth))
		p.rtt = append(p.rtt, float64(e.Delay()))
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
	s.Ping = out
	s.Network = networkStats(p.w)
}

func networkStats(w *sim.Sim) NetworkStats {
	n := NetworkStats{Dropped: w.Drops()}
	for from := range w.Nodes() {
		for to := range w.Nodes() {
			st, ok := w.LinkStats(world.NodeID(from), world.NodeID(to))
			if !ok {
				continue
			}
			n.Packets += st.Sent
			n.Delivered += st.Delivered
			n.Lost += st.Lost
			n.QueueDrops += st.QueueDropped
			n.Duplicated += st.Duplicated
			n.Corrupted += st.Corrupted
			n.Reordered += st.Reordered
		}
	}
	return n
}
