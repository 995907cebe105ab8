package combine

import (
	"fmt"
	"io"
	"runtime/debug"
	"sync"
)

// PanicError is a panic in a goroutine that Combine started (a line
// worker, a node's median uncertainty, the writer of an output, the read
// ahead of the next trace), recovered there and returned by Combine as its
// error: Combine stops its other goroutines and leaves no output behind. A
// panic on the caller's own goroutine is not recovered.
type PanicError struct {
	// What says what the goroutine was doing: the trace, node, plane and
	// line, where known.
	What string
	// Value is the value the goroutine panicked with.
	Value any
	// Stack is the panicking goroutine's stack, taken at the recover
	// (runtime/debug.Stack): it shows where the panic happened.
	Stack []byte
}

// Error is what the goroutine was doing, the panic value and the stack.
func (e *PanicError) Error() string {
	return fmt.Sprintf("combine: panic %s: %v\n\n%s", e.What, e.Value, e.Stack)
}

// Unwrap returns the panic value when it is an error.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// recoverPanic, deferred by a goroutine's work, turns a panic into a
// *PanicError in *err; what says what the goroutine was doing, and is
// called only on a panic.
func recoverPanic(err *error, what func() string) {
	if v := recover(); v != nil {
		*err = &PanicError{What: what(), Value: v, Stack: debug.Stack()}
	}
}

// pipeWriter writes chunks to w in a goroutine of its own, in order, so
// that producing the next chunk overlaps writing (compressing) this one.
// Chunks circulate between a free list and the writer; the producer blocks
// only when every buffer is in flight. After an error of w the goroutine
// drops what follows, and write and close report the error; a panic of w
// is such an error (a *PanicError naming what, what the writer writes).
type pipeWriter struct {
	what string
	jobs chan chunk
	free chan []byte
	done chan struct{}
	once sync.Once
	mu   sync.Mutex
	err  error
}

// chunk is a buffer to write from offset from on.
type chunk struct {
	b    []byte
	from int
}

// newPipeWriter starts the goroutine with n buffers of capacity size;
// what names what it writes (for the error of a panic of w).
func newPipeWriter(w io.Writer, what string, n, size int) *pipeWriter {
	p := &pipeWriter{what: what, jobs: make(chan chunk, n), free: make(chan []byte, n), done: make(chan struct{})}
	for range n {
		p.free <- make([]byte, 0, size)
	}
	go func() {
		defer close(p.done)
		for c := range p.jobs {
			if p.error() == nil {
				if err := p.writeChunk(w, c); err != nil {
					p.mu.Lock()
					p.err = err
					p.mu.Unlock()
				}
			}
			// Even after an error the buffer goes back, so that the
			// producer never waits for one in vain.
			p.free <- c.b[:0]
		}
	}()
	return p
}

// writeChunk writes c to w, in the goroutine, recovering a panic of w.
func (p *pipeWriter) writeChunk(w io.Writer, c chunk) (err error) {
	defer recoverPanic(&err, func() string {
		return fmt.Sprintf("writing %s (a chunk of %d bytes)", p.what, len(c.b)-c.from)
	})
	_, err = w.Write(c.b[c.from:])
	return err
}

func (p *pipeWriter) error() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// buffer takes an empty buffer.
func (p *pipeWriter) buffer() []byte { return <-p.free }

// write hands b to the goroutine (which owns it from then on) and returns
// an empty buffer.
func (p *pipeWriter) write(b []byte) ([]byte, error) { return p.writeFrom(b, 0) }

// writeFrom is write of b[from:]; the buffer comes back whole, b[:0].
func (p *pipeWriter) writeFrom(b []byte, from int) ([]byte, error) {
	if err := p.error(); err != nil {
		return b[:0], err
	}
	p.jobs <- chunk{b, from}
	return <-p.free, nil
}

// close waits for every chunk to be written and ends the goroutine; it may
// be called more than once.
func (p *pipeWriter) close() error {
	p.once.Do(func() { close(p.jobs) })
	<-p.done
	return p.error()
}
