package perfetto

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sync/atomic"

	"github.com/klauspost/compress/zlib"
	"google.golang.org/protobuf/encoding/protowire"
)

// sink compresses (Options.Deflate) and writes the Writer's chunks of
// packets in a goroutine of its own, so that encoding the next chunk
// overlaps compressing and writing this one. Chunks circulate between the
// Writer and the goroutine through two channels: the Writer blocks only
// when both buffers are in flight. After an error (of the writer, or a
// panic) the goroutine drops what follows; close returns the error.
type sink struct {
	jobs chan job
	free chan []byte
	done chan struct{}
	// Set by the goroutine; read after done is closed.
	err   error
	bytes int64
	// failed is set by the goroutine with err, for send to see.
	failed atomic.Bool
}

// errSinkFailed is send's error once the goroutine has failed: close
// returns the goroutine's error itself.
var errSinkFailed = errors.New("perfetto: writing the trace failed")

// job is one chunk: its first raw bytes are written as they are, the rest
// compressed (with deflate).
type job struct {
	b   []byte
	raw int
}

// sinkBuffers is the number of chunk buffers; the Writer fills one while
// the goroutine empties the other.
const sinkBuffers = 2

func newSink(w io.Writer, deflate bool) *sink {
	s := &sink{jobs: make(chan job), free: make(chan []byte, sinkBuffers), done: make(chan struct{})}
	for range sinkBuffers - 1 { // the Writer holds the other
		s.free <- nil
	}
	go s.run(w, deflate)
	return s
}

// send hands b (its first raw bytes not to compress) to the goroutine and
// returns an empty buffer for the next chunk, or the goroutine's error.
func (s *sink) send(b []byte, raw int) ([]byte, error) {
	if s.failed.Load() {
		return b[:0], errSinkFailed
	}
	select {
	case s.jobs <- job{b, raw}:
	case <-s.done:
		return b[:0], s.err
	}
	select {
	case nb := <-s.free:
		return nb[:0], nil
	case <-s.done:
		return nil, s.err
	}
}

// close waits for the goroutine to write what it was sent.
func (s *sink) close() error {
	close(s.jobs)
	<-s.done
	return s.err
}

func (s *sink) run(w io.Writer, deflate bool) {
	defer close(s.done)
	defer func() {
		if v := recover(); v != nil {
			s.err = fmt.Errorf("perfetto: panic while writing the trace: %v\n%s", v, debug.Stack())
			s.failed.Store(true)
		}
	}()
	var z *zlib.Writer
	var zbuf bytes.Buffer
	var out []byte
	for j := range s.jobs {
		if s.err == nil {
			b := j.b
			if deflate && len(b) > j.raw {
				zbuf.Reset()
				if z == nil {
					var err error
					if z, err = zlib.NewWriterLevel(&zbuf, zlib.BestSpeed); err != nil {
						s.err = fmt.Errorf("perfetto: compress: %w", err)
					}
				} else {
					z.Reset(&zbuf)
				}
				if s.err == nil {
					s.err = compress(z, b[j.raw:])
				}
				// The raw prefix, then a packet of compressed_packets.
				out = append(out[:0], b[:j.raw]...)
				pkt := protowire.AppendTag(nil, fPacketCompressed, protowire.BytesType)
				pkt = protowire.AppendVarint(pkt, uint64(zbuf.Len()))
				out = protowire.AppendTag(out, fTracePacket, protowire.BytesType)
				out = protowire.AppendVarint(out, uint64(len(pkt)+zbuf.Len()))
				out = append(out, pkt...)
				out = append(out, zbuf.Bytes()...)
				b = out
			}
			if s.err == nil {
				n, err := w.Write(b)
				s.bytes += int64(n)
				if err != nil {
					s.err = fmt.Errorf("perfetto: write: %w", err)
				}
			}
		}
		if s.err != nil {
			s.failed.Store(true)
		}
		s.free <- j.b
	}
}

// compress writes b through z, which writes a whole zlib stream.
func compress(z *zlib.Writer, b []byte) error {
	if _, err := z.Write(b); err != nil {
		return fmt.Errorf("perfetto: compress: %w", err)
	}
	if err := z.Close(); err != nil {
		return fmt.Errorf("perfetto: compress: %w", err)
	}
	return nil
}
