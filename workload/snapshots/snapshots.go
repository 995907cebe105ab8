// Package snapshots is the snapshot sampler of a node: every Period it reads
// the host clock S and the tracer clock R back to back and keeps the pair,
// so that a node's traces, stamped on R, can later be mapped onto S and from
// there onto the global timeline (seed 002, "snapshot pairs").
//
// It is protocol code: it uses only its [world.Env].
//
// # Schedule
//
// Start takes the first sample at once, at host time S0, and schedules the
// k-th sample for host time S0 + k·Period (a fixed rate: lateness does not
// accumulate). A sample whose callback runs more than Tolerance after its
// scheduled host time, measured by the sample's own S reading, counts as a
// missed deadline; if the callback is so late that further scheduled times
// have passed as well, those slots are skipped and each counts as a missed
// deadline too. (A forward step of the host clock looks the same as a late
// callback and is counted so; after a backward step the schedule is
// re-anchored one Period after the sample that noticed it.) Stop takes one last sample, unscheduled, so the last pair
// covers the end of the run, and cancels the schedule.
//
// Pairs go into a ring buffer of Capacity pairs; when it is full the oldest
// pair is dropped and counted.
//
// The sampler reads each clock once per sample and draws no randomness. It
// uses no ports, so it can share an Env with other programs.
package snapshots

import (
	"fmt"
	"time"

	"github.com/chronosync/chronosync/world"
)

// Defaults applied to zero fields of [Config].
const (
	DefaultPeriod   = 4 * time.Second
	DefaultCapacity = 1024
)

// Config is the sampler's parameters. A zero field takes its default.
type Config struct {
	// Period is the host time between two samples; default DefaultPeriod.
	Period time.Duration
	// Capacity is the ring buffer's size in pairs; default DefaultCapacity
	// (68 minutes at the default period).
	Capacity int
	// Tolerance is how late, on the host clock, a sample may run before it
	// counts as a missed deadline; default Period/10.
	Tolerance time.Duration
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.Period == 0 {
		c.Period = DefaultPeriod
	}
	if c.Capacity == 0 {
		c.Capacity = DefaultCapacity
	}
	if c.Tolerance == 0 {
		c.Tolerance = c.Period / 10
	}
	return c
}

// Validate reports the first problem with c once defaults are applied.
func (c Config) Validate() error {
	c = c.WithDefaults()
	switch {
	case c.Period < 0:
		return fmt.Errorf("snapshots config: Period is %v, want > 0 (0 means %v)", c.Period, DefaultPeriod)
	case c.Capacity < 0:
		return fmt.Errorf("snapshots config: Capacity is %d, want > 0 (0 means %d)", c.Capacity, DefaultCapacity)
	case c.Tolerance < 0:
		return fmt.Errorf("snapshots config: Tolerance is %v, want > 0 (0 means Period/10)", c.Tolerance)
	}
	return nil
}

// Pair is one snapshot: the host clock S and the tracer clock R, read back
// to back (S first).
type Pair struct {
	Sys    world.Time // host clock S
	Tracer world.Time // tracer clock R
}

// Stats are the sampler's counters.
type Stats struct {
	SnapshotsTaken int // samples taken, the one at Stop included
	MissedDeadline int // scheduled samples that ran more than Tolerance late or were skipped
	Dropped        int // pairs pushed out of the full ring buffer
}

// Sampler is the snapshot sampler of one node. Create it with [New].
type Sampler struct {
	cfg Config

	env     world.Env
	timer   world.Timer
	due     world.Time // host time the pending sample is scheduled for
	stopped bool

	ring  []Pair // ring buffer: len(ring) <= Capacity
	head  int    // index of the oldest pair once the ring is full
	stats Stats
}

// New returns a sampler. cfg's zero fields take their defaults.
func New(cfg Config) (*Sampler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	return &Sampler{cfg: cfg, ring: make([]Pair, 0, min(cfg.Capacity, 64))}, nil
}

// Config returns the sampler's configuration, defaults applied.
func (s *Sampler) Config() Config { return s.cfg }

// Start takes the first sample and schedules the next. It implements
// [world.Program].
func (s *Sampler) Start(env world.Env) error {
	s.env = env
	sys := s.sample()
	s.due = sys.Add(s.cfg.Period)
	s.timer = env.AfterFunc(s.cfg.Period, s.tick)
	return nil
}

// tick is a scheduled sample.
func (s *Sampler) tick() {
	sys := s.sample()
	if sys.Sub(s.due) > s.cfg.Tolerance {
		s.stats.MissedDeadline++
	}
	// The next slot after now; slots already past are skipped.
	s.due = s.due.Add(s.cfg.Period)
	if sys >= s.due {
		skipped := int64(sys.Sub(s.due)/s.cfg.Period) + 1
		s.stats.MissedDeadline += int(skipped)
		s.due = s.due.Add(time.Duration(skipped) * s.cfg.Period)
	}
	if s.due.Sub(sys) > s.cfg.Period {
		// The host clock stepped back: re-anchor rather than wait for it
		// to catch up with the old schedule.
		s.due = sys.Add(s.cfg.Period)
	}
	s.timer = s.env.AfterFunc(s.due.Sub(sys), s.tick)
}

// sample reads S and R back to back, stores the pair and returns S.
func (s *Sampler) sample() world.Time {
	p := Pair{Sys: s.env.Host().Now()}
	p.Tracer = s.env.Tracer().Now()
	s.push(p)
	return p.Sys
}

// push stores a pair, dropping the oldest when the ring is full.
func (s *Sampler) push(p Pair) {
	s.stats.SnapshotsTaken++
	if len(s.ring) < s.cfg.Capacity {
		s.ring = append(s.ring, p)
		return
	}
	s.ring[s.head] = p
	s.head = (s.head + 1) % s.cfg.Capacity
	s.stats.Dropped++
}

// newest returns the latest pair held.
func (s *Sampler) newest() (Pair, bool) {
	if len(s.ring) == 0 {
		return Pair{}, false
	}
	return s.ring[(s.head+len(s.ring)-1)%len(s.ring)], true
}

// Stop takes one last sample, so that the last pair covers the end of the
// run, and stops sampling; when the last scheduled sample is less than
// half a period old, it stands for the end and none is added (so that no
// two pairs fall on one instant). It must run on the
// node's event loop (in the simulator: from a callback or between two runs
// of the world). Stop before Start, or a second Stop, does nothing.
func (s *Sampler) Stop() {
	if s.env == nil || s.stopped {
		return
	}
	s.stopped = true
	s.timer.Stop()
	p := Pair{Sys: s.env.Host().Now()}
	if last, ok := s.newest(); ok && p.Sys.Sub(last.Sys) < s.cfg.Period/2 {
		return
	}
	p.Tracer = s.env.Tracer().Now()
	s.push(p)
}

// Pairs returns a copy of the pairs held, oldest first.
func (s *Sampler) Pairs() []Pair {
	out := make([]Pair, 0, len(s.ring))
	out = append(out, s.ring[s.head:]...)
	return append(out, s.ring[:s.head]...)
}

// Stats returns the sampler's counters so far.
func (s *Sampler) Stats() Stats { return s.stats }

var _ world.Program = (*Sampler)(nil)
