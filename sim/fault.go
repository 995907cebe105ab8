package sim

import (
	"github.com/chronosync/chronosync/model/clockmodel"
	"github.com/chronosync/chronosync/sim/eventlog"
	"github.com/chronosync/chronosync/world"
)

// faultEvent applies one step of a fault. step says which: 0 is the
// fault's start; what later steps mean depends on the kind.
type faultEvent struct {
	s *Sim
	f *Fault
}

func (s *Sim) scheduleFault(f Fault) {
	s.k.After(int64(f.At), faultEvent{s, &f}, 0)
}

func (e faultEvent) Fire(step uint64) {
	s, f := e.s, e.f
	switch f.Kind {
	case Crash:
		n := s.nodes[f.Node]
		if step == 0 {
			n.crash()
			if f.RestartAfter > 0 {
				s.k.After(int64(f.RestartAfter), e, 1)
			}
		} else if !n.up {
			n.boot()
		}
	case Partition:
		if step == 0 {
			s.partition(f.Groups)
			if f.HealAfter > 0 {
				s.k.After(int64(f.HealAfter), e, 1)
			}
		} else {
			s.group = nil
			s.record(eventlog.Record{Node: -1, Kind: eventlog.Heal})
		}
	case LinkFlap:
		// Even steps take the link down, odd steps bring it up.
		down := step%2 == 0
		s.setLink(f.From, f.To, down)
		if f.Both {
			s.setLink(f.To, f.From, down)
		}
		switch {
		case down:
			s.k.After(int64(f.Down), e, step+1)
		case int(step/2)+1 < f.Count:
			s.k.After(int64(f.Up), e, step+1)
		}
	case ClockStep:
		n := s.nodes[f.Node]
		// Steps are scheduled at the current time, never in the past.
		_ = n.host.AddStep(clockmodel.Step{At: s.Now(), By: f.By})
		s.record(eventlog.Record{Node: int32(f.Node), Kind: eventlog.Step, A: int64(f.By)})
	case SlowNode:
		n := s.nodes[f.Node]
		if step == 0 {
			n.slow = int64(f.ExtraDelay)
			s.record(eventlog.Record{Node: int32(f.Node), Kind: eventlog.Slow, A: int64(f.ExtraDelay)})
			if f.For > 0 {
				s.k.After(int64(f.For), e, 1)
			}
		} else {
			n.slow = 0
			s.record(eventlog.Record{Node: int32(f.Node), Kind: eventlog.SlowEnd})
		}
	}
}

func (s *Sim) partition(groups [][]int) {
	s.group = make([]int, len(s.nodes))
	for i := range s.group {
		s.group[i] = -1 - i // alone unless listed
	}
	for g, members := range groups {
		for _, m := range members {
			s.group[m] = g
		}
	}
	s.record(eventlog.Record{Node: -1, Kind: eventlog.Partition, A: int64(len(groups))})
	s.checkStreams()
}

// checkStreams schedules a break check for every stream whose path is now
// cut: if it is still cut after the timeout, the stream breaks, as TCP's
// would once keepalives or retransmissions give up.
func (s *Sim) checkStreams() {
	for _, n := range s.nodes {
		for _, st := range n.streams {
			if st.peer != nil && s.cut(n.id, st.remote.Node) != 0 {
				st.breakAfter(s.timeout)
			}
		}
	}
}

func (s *Sim) setLink(from, to int, down bool) {
	key := s.key(from, to)
	kind := eventlog.LinkUp
	if down {
		s.down[key]++
		kind = eventlog.LinkDown
	} else if s.down[key]--; s.down[key] <= 0 {
		delete(s.down, key)
	}
	s.record(eventlog.Record{Node: int32(from), Kind: kind, Peer: int32(to)})
	if down {
		s.checkStreams()
	}
}

var _ world.Env = (*node)(nil)
