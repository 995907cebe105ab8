package combine

import (
	"io"
	"sync"
)

// pipeWriter writes chunks to w in a goroutine of its own, in order, so
// that producing the next chunk overlaps writing (compressing) this one.
// Chunks circulate between a free list and the writer; the producer blocks
// only when every buffer is in flight. After an error of w the goroutine
// drops what follows, and write and close report the error.
type pipeWriter struct {
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

// newPipeWriter starts the goroutine with n buffers of capacity size.
func newPipeWriter(w io.Writer, n, size int) *pipeWriter {
	p := &pipeWriter{jobs: make(chan chunk, n), free: make(chan []byte, n), done: make(chan struct{})}
	for range n {
		p.free <- make([]byte, 0, size)
	}
	go func() {
		defer close(p.done)
		for c := range p.jobs {
			if p.error() == nil {
				if _, err := w.Write(c.b[c.from:]); err != nil {
					p.mu.Lock()
					p.err = err
					p.mu.Unlock()
				}
			}
			p.free <- c.b[:0]
		}
	}()
	return p
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
