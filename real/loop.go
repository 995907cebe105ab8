package real

import (
	"sync"
)

// loop is a node's event loop: an unbounded FIFO of callbacks run one at a
// time by a single goroutine. Posting never blocks, so a callback may post
// to its own loop and reader goroutines never stall on a slow node.
type loop struct {
	mu      sync.Mutex
	queue   []func()
	closed  bool
	wake    chan struct{}
	done    chan struct{}
	serial  *sync.Mutex // world-wide lock held around each callback, or nil
	recover func(v any) // called with a panic value from a callback
}

func newLoop(serial *sync.Mutex, recover func(any)) *loop {
	return &loop{wake: make(chan struct{}, 1), done: make(chan struct{}), serial: serial, recover: recover}
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
	l.queue = append(l.queue, f)
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
	var batch []func()
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
		for i, f := range batch {
			if l.isClosed() {
				return
			}
			l.call(f)
			batch[i] = nil
		}
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
