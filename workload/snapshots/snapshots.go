// Package snapshots is the snapshot sampler of a node: every Period it reads
// the host clock S and the tracer clock R back to back, Burst times BurstGap
// apart, and keeps the pairs,
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
// re-anchored one Period after the last pair of the burst that noticed
// it.) Stop takes one last pair, unscheduled, so the last pair covers the
// end of the run, and cancels the schedule (and a burst under way).
//
// # Bursts
//
// A sample is a burst of Burst pairs, the first at the scheduled time and
// each next one BurstGap of host time after the last. The scatter of a
// burst's pairs about their own line measures the error of one pair with
// Burst−2 degrees of freedom per sample, whatever the clocks do between
// samples; with one pair per sample that error can only be told from how
// the samples line up, which a handful of samples does poorly. The pairs
// are BurstGap apart rather than back to back so that their read errors
// are independent (a simulated clock read twice at one instant clamps the
// second read to the first).
//
// Pairs go into a ring buffer of Capacity pairs; when it is full the oldest
// pair is dropped and counted.
//
// The sampler reads each clock once per pair and draws no randomness. It
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
	DefaultCapacity = 4096
	DefaultBurst    = 4
	// DefaultBurstGap is BurstGap's default where the period leaves room
	// for it (see Config.BurstGap).
	DefaultBurstGap = time.Millisecond
)

// Config is the sampler's parameters. A zero field takes its default.
type Config struct {
	// Period is the host time between two samples; default DefaultPeriod.
	Period time.Duration
	// Capacity is the ring buffer's size in pairs; default DefaultCapacity
	// (68 minutes at the default period and burst).
	Capacity int
	// Tolerance is how late, on the host clock, a sample may run before it
	// counts as a missed deadline; default Period/10.
	Tolerance time.Duration
	// Burst is the number of pairs a sample reads; default DefaultBurst.
	Burst int
	// BurstGap is the host time between two pairs of a burst; default
	// DefaultBurstGap, or less where the period is short: a burst may
	// span at most Period/8 (so that a reader tells bursts apart by their
	// gaps, see align.NewSnapshots).
	BurstGap time.Duration
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
	if c.Burst == 0 {
		c.Burst = DefaultBurst
	}
	if c.BurstGap == 0 && c.Burst > 1 {
		c.BurstGap = min(DefaultBurstGap, c.Period/time.Duration(8*(c.Burst-1)))
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
	case c.Burst < 0:
		return fmt.Errorf("snapshots config: Burst is %d, want > 0 (0 means %d)", c.Burst, DefaultBurst)
	case c.Burst > 1 && (c.BurstGap <= 0 || c.BurstGap*time.Duration(c.Burst-1) > c.Period/8):
		return fmt.Errorf("snapshots config: a burst of %d pairs %v apart spans more than Period/8 (%v) or nothing", c.Burst, c.BurstGap, c.Period/8)
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
	SnapshotsTaken int // pairs read, the one at Stop included
	MissedDeadline int // scheduled samples that ran more than Tolerance late or were skipped
	Dropped        int // pairs pushed out of the full ring buffer
}

// Sampler is the snapshot sampler of one node. Create it with [New].
type Sampler struct {
	cfg Config

	env     world.Env
	timer   world.Timer
	due     world.Time // host time the pending sample is scheduled for
	at      world.Time // S of the last sample's first pair
	stopped bool

	left  int    // pairs still to read in the burst under way
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
	s.at, s.due = sys, sys.Add(s.cfg.Period)
	s.left = s.cfg.Burst - 1
	s.schedule(sys)
	return nil
}

// schedule sets the timer for the burst's next pair or, when the burst is
// done, for the next sample; sys is the last pair's S.
func (s *Sampler) schedule(sys world.Time) {
	if s.left > 0 {
		s.timer = s.env.AfterFunc(s.cfg.BurstGap, s.burst)
		return
	}
	if s.due.Sub(sys) > s.cfg.Period {
		// The host clock stepped back (at the sample or during its
		// burst): re-anchor rather than wait for it to catch up with the
		// old schedule.
		s.due = sys.Add(s.cfg.Period)
	}
	s.timer = s.env.AfterFunc(s.due.Sub(sys), s.tick)
}

// burst reads the next pair of the burst under way.
func (s *Sampler) burst() {
	sys := s.sample()
	s.left--
	s.schedule(sys)
}

// tick is a scheduled sample: its burst's first pair.
func (s *Sampler) tick() {
	sys := s.sample()
	s.at = sys
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
	s.left = s.cfg.Burst - 1
	s.schedule(sys)
}

// sample reads S and R back to back (as one pair where the Env is a
// world.PairReader), stores the pair and returns S.
func (s *Sampler) sample() world.Time {
	p := s.read()
	s.push(p)
	return p.Sys
}

// read reads S and R back to back: as one pair where the Env is a
// world.PairReader, else S first.
func (s *Sampler) read() Pair {
	if pr, ok := s.env.(world.PairReader); ok {
		sys, tracer := pr.ReadPair()
		return Pair{Sys: sys, Tracer: tracer}
	}
	p := Pair{Sys: s.env.Host().Now()}
	p.Tracer = s.env.Tracer().Now()
	return p
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
	var p Pair
	if pr, ok := s.env.(world.PairReader); ok {
		p.Sys, p.Tracer = pr.ReadPair()
	} else if p.Sys = s.env.Host().Now(); p.Sys.Sub(s.at) >= s.cfg.Period/2 {
		p.Tracer = s.env.Tracer().Now() // R only when the pair is kept
	}
	if p.Sys.Sub(s.at) < s.cfg.Period/2 {
		return
	}
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
