package real

import (
	"sync"
	"sync/atomic"
	"time"
)

// loop is a node's event loop: an unbounded FIFO of callbacks run one at a
// time by a single goroutine. Posting never blocks, so a callback may post
// to its own loop and reader goroutines never stall on a slow node.
type loop struct {
	mu      sync.Mutex
	queue   []posted
	closed  bool
	wake    chan struct{}
	done    chan struct{}
	serial  *sync.Mutex // world-wide lock held around each callback, or nil
	recover func(v any) // called with a panic value from a callback
	// slow delays every callback by that many ns after its post (a
	// slow_node fault); 0 runs them as soon as the loop gets to them.
	slow atomic.Int64
	// backlog holds a token for each callback from the network queued
	// (postNet).
	backlog chan struct{}
}

// posted is a queued callback and, while the loop is slow, when it was
// posted (ns on the monotonic clock; 0 otherwise).
type posted struct {
	f  func()
	at time.Time
}

// maxBacklog bounds the callbacks from the network (datagrams, stream
// messages) a loop holds: a node that cannot keep up must not hold an
// unbounded queue of what its peers sent.
const maxBacklog = 1 << 16

func newLoop(serial *sync.Mutex, recover func(any)) *loop {
	return &loop{wake: make(chan struct{}, 1), done: make(chan struct{}), serial: serial, recover: recover,
		backlog: make(chan struct{}, maxBacklog)}
}

// postNet posts f, a callback from the network, within maxBacklog. With
// wait (a stream's reader) it waits for room, so that TCP's flow control
// holds the sender back; without (a datagram's reader) it drops f when
// the loop is full. It reports false when f was not posted (dropped, or
// the loop stopped).
func (l *loop) postNet(f func(), wait bool) bool {
	if wait {
		select {
		case l.backlog <- struct{}{}:
		case <-l.done:
			return false
		}
	} else {
		select {
		case l.backlog <- struct{}{}:
		default:
			return false
		}
	}
	if !l.post(func() { <-l.backlog; f() }) {
		<-l.backlog
		return false
	}
	return true
}

// start starts the loop's goroutine; what was posted before runs first.
func (l *loop) start() { go l.run() }

// post queues f; it reports false once the loop is stopped.
func (l *loop) post(f func()) bool {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return false
	}
	var at time.Time
	if l.slow.Load() > 0 {
		at = time.Now()
	}
	l.queue = append(l.queue, posted{f, at})
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
	return true
}

// stop makes the loop exit after the callback running now, dropping the
// rest of the queue, and waits for it unless called from the loop itself.
// The loop must have been started.
func (l *loop) stop(fromLoop bool) {
	l.mu.Lock()
	l.closed = true
	l.queue = nil
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
	if !fromLoop {
		<-l.done
	}
}

func (l *loop) run() {
	defer close(l.done)
	var batch []posted
	for {
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			return
		}
		batch, l.queue = l.queue, batch[:0]
		l.mu.Unlock()
		if len(batch) == 0 {
			<-l.wake
			continue
		}
		for i, p := range batch {
			if l.isClosed() {
				return
			}
			l.delay(p.at)
			l.call(p.f)
			batch[i] = posted{}
		}
	}
}

// delay waits until the loop's slowness has passed since a callback was
// posted at at (zero: posted while the loop was not slow).
func (l *loop) delay(at time.Time) {
	if at.IsZero() {
		return
	}
	if d := time.Duration(l.slow.Load()) - time.Since(at); d > 0 {
		time.Sleep(d)
	}
}

func (l *loop) isClosed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

func (l *loop) call(f func()) {
	if l.serial != nil {
		l.serial.Lock()
		defer l.serial.Unlock()
	}
	defer func() {
		if v := recover(); v != nil {
			l.recover(v)
		}
	}()
	f()
}
