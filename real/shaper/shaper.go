//go:build linux

package shaper

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/chronosync/chronosync/model/netem"
	"github.com/chronosync/chronosync/model/rng"
)

// Frame sizes.
const (
	ethHeader = 14
	// readBuf is each reader's buffer: far above the 1514-byte frames of a
	// netlab link, whose offloads are off.
	readBuf = 64 << 10
)

// Config configures a Shaper.
type Config struct {
	// Links returns the link model for frames from node from to node to;
	// false means there is no link and such frames are dropped. It is
	// called once per ordered pair of distinct nodes, by New.
	Links func(from, to int) (netem.Params, bool)
	// Seed seeds every directed link's own random stream (see the
	// package doc).
	Seed uint64
	// Logger gets the frames the relay cannot handle; nil discards.
	Logger *slog.Logger
}

// dlink is one directed link and its counters.
type dlink struct {
	from, to int

	mu       sync.Mutex
	link     *netem.Link // nil: no link
	corrupt  *rand.Rand  // which bit a corrupted copy gets flipped
	unrouted uint64

	written, writeDropped atomic.Uint64
	late                  lateness

	// cut counts, by Cut, the faults that cut the link now; cutDropped
	// the frames dropped because of them.
	cut        [numCuts]atomic.Int32
	cutDropped [numCuts]atomic.Uint64
}

// Cut is why a fault cuts a directed link (see SetCut).
type Cut int

// The cuts.
const (
	CutPartition Cut = iota // its nodes are in different groups of a partition
	CutLinkDown             // the link is down (a link flap)
	numCuts
)

// SetCut cuts the directed link from → to for why (on) or lifts one such
// cut (off): while any cut holds, every frame offered to the link is
// dropped before the link model sees it, and counted (LinkStats.Partitioned,
// LinkDown); frames the link holds already are still delivered. Cuts
// nest: a link cut twice for one reason (two overlapping flaps) stays cut
// until both are lifted. It may be called while Run runs.
func (s *Shaper) SetCut(from, to int, why Cut, on bool) error {
	if from < 0 || to < 0 || from >= len(s.links) || to >= len(s.links) || from == to {
		return fmt.Errorf("shaper: cut %d->%d: no such link among %d ports", from, to, len(s.links))
	}
	if why < 0 || why >= numCuts {
		return fmt.Errorf("shaper: cut %d->%d: unknown reason %d", from, to, why)
	}
	c := &s.links[from][to].cut[why]
	if on {
		c.Add(1)
	} else if c.Add(-1) < 0 {
		c.Add(1)
		return fmt.Errorf("shaper: lift a cut of %d->%d that is not there", from, to)
	}
	return nil
}

// Shaper relays frames between ports through the directed links of
// Config.Links. Make one with New; Run it once.
type Shaper struct {
	ports []Port
	links [][]*dlink // [from][to]; nil when from == to
	log   *slog.Logger
	ran   atomic.Bool

	onWrite func(it *item, now int64) // test hook, set before Run
	items   itemPool                  // the copies' items, reused
	// anyThread: every thread of the process runs under SCHED_FIFO (a
	// shaper child's, setProcessRealTime); see scheduler.anyThread. Set
	// before Run.
	anyThread bool

	sched        atomic.Pointer[scheduler] // Run's, for Info
	gcStart      atomic.Uint64             // gcCycles when Run started
	gcEnd        atomic.Uint64             // gcCycles when Run returned, once ended
	ended        atomic.Bool               // Run has returned
	kernelStamps atomic.Uint64             // frames dated by their kernel stamp
	clockStamps  atomic.Uint64             // frames dated by a clock read

	macMu sync.RWMutex
	macs  map[[6]byte]int // learnt source MAC -> port
}

// New returns a shaper over ports, port i being node i, with a netem.Link
// for every ordered pair of distinct nodes that cfg.Links connects. The
// shaper owns the ports: Run closes them when it returns.
func New(ports []Port, cfg Config) (*Shaper, error) {
	if len(ports) == 0 {
		return nil, errors.New("shaper: New: no ports")
	}
	if cfg.Links == nil {
		return nil, errors.New("shaper: New: Config.Links is nil")
	}
	s := &Shaper{ports: ports, log: cfg.Logger, macs: make(map[[6]byte]int)}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.links = make([][]*dlink, len(ports))
	for from := range ports {
		s.links[from] = make([]*dlink, len(ports))
		for to := range ports {
			if from == to {
				continue
			}
			dl := &dlink{from: from, to: to}
			if p, ok := cfg.Links(from, to); ok {
				name := fmt.Sprintf("link/%d/%d", from, to)
				l, err := netem.New(p, rng.Stream(cfg.Seed, name))
				if err != nil {
					return nil, fmt.Errorf("shaper: link %d->%d: %w", from, to, err)
				}
				dl.link, dl.corrupt = l, rng.Stream(cfg.Seed, name+"/corrupt")
			}
			s.links[from][to] = dl
		}
	}
	return s, nil
}

// Run relays until ctx is done, then returns nil, or until a port fails,
// then returns its error. One reader goroutine per port learns source
// MACs, picks the output ports by destination MAC, asks each directed
// link for the copies' release times and queues them; one scheduler
// writes each copy at its release time (see the package doc). Run closes
// the ports before it returns; it may be called only once.
func (s *Shaper) Run(ctx context.Context) error {
	if s.ran.Swap(true) {
		return errors.New("shaper: Run called twice")
	}
	// The shaper's clock is CLOCK_REALTIME, the clock of the kernel's
	// receive stamps (see the package doc).
	base := time.Now().UnixNano()
	clock := func() int64 { return time.Now().UnixNano() - base }
	var polled []pollPort // read by the scheduler's thread
	var polledIn, fds []int
	var others []int // read by a goroutine each
	for in, p := range s.ports {
		if pp, ok := p.(pollPort); ok {
			polled, polledIn, fds = append(polled, pp), append(polledIn, in), append(fds, pp.pollFD())
		} else {
			others = append(others, in)
		}
	}
	sched, err := newScheduler(clock, fds, s.log)
	if err != nil {
		return err
	}
	defer sched.close()
	sched.anyThread = s.anyThread
	s.gcStart.Store(gcCycles()) // before sched: Info reads it once sched is set
	s.sched.Store(sched)
	defer func() {
		s.gcEnd.Store(gcCycles())
		s.ended.Store(true)
	}()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var failOnce sync.Once
	var failure error
	fail := func(err error) {
		failOnce.Do(func() { failure = err })
		cancel()
	}
	schedDone := make(chan struct{})
	go func() {
		defer close(schedDone)
		buf, oob := make([]byte, readBuf), make([]byte, stampOOB)
		input := func(i int) error {
			return s.drain(sched, base, polledIn[i], polled[i], buf, oob)
		}
		if err := sched.run(ctx, s.write, input); err != nil {
			fail(err)
		}
	}()
	var wg sync.WaitGroup
	for _, in := range others {
		wg.Go(func() {
			if err := s.read(ctx, sched, in, s.ports[in]); err != nil {
				fail(err)
			}
		})
	}
	<-ctx.Done()
	// Close the ports the scheduler does not poll first: that wakes their
	// readers and a write of the scheduler's blocked on one. The polled
	// ones only once the scheduler has returned, as it uses their
	// descriptors.
	errs := make([]error, len(s.ports))
	for _, in := range others {
		errs[in] = s.ports[in].Close()
	}
	<-schedDone
	for k, p := range polled {
		errs[polledIn[k]] = p.Close()
	}
	wg.Wait()
	if failure != nil {
		return failure
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("shaper: close ports: %w", err)
	}
	return nil
}

// read is port in's reader, for a port the scheduler does not poll: it
// forwards every frame, dated by a clock read, until ctx is done (then it
// returns nil) or the port fails.
func (s *Shaper) read(ctx context.Context, sched *scheduler, in int, p Port) error {
	buf := make([]byte, readBuf)
	for {
		n, err := p.ReadFrame(buf)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, ErrFrameTooLarge) {
			s.log.Warn("shaper: frame lost", "port", in, "err", err)
			continue
		}
		if err != nil {
			return fmt.Errorf("shaper: port %d: %w", in, err)
		}
		s.clockStamps.Add(1)
		s.forward(sched, in, buf[:n], sched.clock(), true)
	}
}

// maxStampAhead is how far in the future of a clock read a kernel stamp
// may be before it is taken for a clock step and replaced by the read.
const maxStampAhead = int64(time.Millisecond)

// drain forwards the frames queued on port in, polled by the scheduler,
// up to inputBatch of them, each dated by its kernel receive stamp: base
// is the CLOCK_REALTIME reading the shaper's clock counts from.
func (s *Shaper) drain(sched *scheduler, base int64, in int, p pollPort, buf, oob []byte) error {
	for range inputBatch {
		n, stamp, err := p.readStamped(buf, oob)
		switch {
		case err == unix.EAGAIN:
			return nil
		case errors.Is(err, ErrFrameTooLarge):
			s.log.Warn("shaper: frame lost", "port", in, "err", err)
			continue
		case err != nil:
			return fmt.Errorf("shaper: port %d: %w", in, err)
		}
		now := sched.clock()
		if at := stamp - base; stamp != 0 && at <= now+maxStampAhead {
			s.kernelStamps.Add(1)
			sched.readLag.record(now - at)
			now = at
		} else {
			s.clockStamps.Add(1)
		}
		s.forward(sched, in, buf[:n], now, false)
	}
	return nil
}

// forward learns frame's source MAC and sends it through the directed
// link to every output port it goes to: the learnt port of a unicast
// destination (none if that is in itself), every other port otherwise.
// wake is false when the scheduler's own thread forwards.
func (s *Shaper) forward(sched *scheduler, in int, frame []byte, now int64, wake bool) {
	if len(frame) < ethHeader {
		s.log.Warn("shaper: runt frame dropped", "port", in, "len", len(frame))
		return
	}
	dst, src := [6]byte(frame[0:6]), [6]byte(frame[6:12])
	if src[0]&1 == 0 {
		s.learn(src, in)
	}
	if dst[0]&1 == 0 {
		s.macMu.RLock()
		out, ok := s.macs[dst]
		s.macMu.RUnlock()
		if ok {
			if out != in {
				s.send(sched, s.links[in][out], frame, now, wake)
			}
			return
		}
	}
	for out := range s.ports {
		if out != in {
			s.send(sched, s.links[in][out], frame, now, wake)
		}
	}
}

// learn records that mac is behind port in.
func (s *Shaper) learn(mac [6]byte, in int) {
	s.macMu.RLock()
	port, ok := s.macs[mac]
	s.macMu.RUnlock()
	if ok && port == in {
		return
	}
	s.macMu.Lock()
	s.macs[mac] = in
	s.macMu.Unlock()
}

// send offers frame to dl at now and queues a copy per delivery; see
// scheduler.push for wake.
func (s *Shaper) send(sched *scheduler, dl *dlink, frame []byte, now int64, wake bool) {
	for why := range dl.cut {
		if dl.cut[why].Load() > 0 {
			dl.cutDropped[why].Add(1)
			return
		}
	}
	dl.mu.Lock()
	if dl.link == nil {
		dl.unrouted++
		dl.mu.Unlock()
		return
	}
	r := dl.link.Send(now, len(frame))
	flip := [2]int{-1, -1}
	for k := range r.N {
		if r.Out[k].Corrupt {
			flip[k] = dl.corrupt.IntN(len(frame) * 8)
		}
	}
	dl.mu.Unlock()
	// netem queues a duplicate before its original: on equal release
	// times the duplicate leaves first.
	for k := r.N - 1; k >= 0; k-- {
		it := s.items.get(frame)
		if b := flip[k]; b >= 0 {
			it.frame[b/8] ^= 1 << (b % 8)
		}
		it.at, it.arrival, it.port, it.link = r.Out[k].At, now, dl.to, dl
		sched.push(it, wake)
	}
}

// write is the scheduler's output: it writes it to its port at now.
func (s *Shaper) write(it *item, now int64) error {
	var err error
	if pp, ok := s.ports[it.port].(pollPort); ok {
		err = pp.writeNow(it.frame)
	} else {
		err = s.ports[it.port].WriteFrame(it.frame)
	}
	it.link.late.record(now - it.at)
	if s.onWrite != nil {
		s.onWrite(it, now)
	}
	link := it.link
	s.items.put(it)
	switch {
	case err == nil:
		link.written.Add(1)
	case errors.Is(err, ErrFrameDropped):
		link.writeDropped.Add(1)
	default:
		return fmt.Errorf("shaper: port %d: %w", it.port, err)
	}
	return nil
}
