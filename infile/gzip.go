package infile

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
)

// Caps on what a gzip input decompresses to: at most GzipRatio times its
// compressed size, or GzipFloor for a small one, and never more than
// MaxDecompressed. The real Kineto traces (shared/realdata) compress 9.9
// to 14.2 times; gzip's own best is about 1,030 times (a run of one byte),
// and a decoder's memory grows with what it decompresses, so a ratio of 64
// leaves real traces more than 4 times their margin and refuses a bomb
// (a 2.6 MB file of 20 M events compresses about 290 times) after
// decompressing no more than 64 times its size, into io.Discard.
const (
	GzipRatio       = 64
	GzipFloor       = 8 << 20
	MaxDecompressed = MaxTrace
)

// GzipLimit is the most bytes a gzip input of compressed bytes may
// decompress to: max(GzipFloor, GzipRatio × compressed), at most
// MaxDecompressed.
func GzipLimit(compressed int64) int64 {
	switch {
	case compressed > MaxDecompressed/GzipRatio:
		return MaxDecompressed
	case compressed*GzipRatio > GzipFloor:
		return compressed * GzipRatio
	}
	return GzipFloor
}

// ErrTrailingData is wrapped by the error of bytes after the last member of
// a gzip stream that do not start another member.
var ErrTrailingData = errors.New("data after the last member")

// Gunzip reads a gzip stream's decompressed bytes: every member in turn (a
// file made with cat a.gz b.gz reads as gzip -d reads it), nothing after
// the last one, and no more than the decompressed-size cap ([GzipLimit]).
// Its errors begin "gzip: ".
type Gunzip struct {
	src   *counter
	br    *bufio.Reader
	zr    *gzip.Reader
	size  int64 // the compressed size, or -1: a running bound
	n     int64 // decompressed bytes returned
	limit int64
	err   error
}

// counter counts the bytes read through it.
type counter struct {
	r io.Reader
	n int64
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// NewGunzip starts reading the gzip stream r, of compressed bytes (the
// size of the rest of the file), or of unknown size when compressed is
// negative: the cap then follows the compressed bytes read so far, which
// refuses a stream whose every prefix decompresses past GzipLimit of it.
// It reads the first member's header.
func NewGunzip(r io.Reader, compressed int64) (*Gunzip, error) {
	src := &counter{r: r}
	g := &Gunzip{src: src, br: bufio.NewReader(src), size: compressed}
	g.limit = GzipLimit(compressed)
	zr, err := gzip.NewReader(g.br)
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("gzip: %w", err)
	}
	zr.Multistream(false)
	g.zr = zr
	return g, nil
}

// offset is the offset in the compressed stream of the next byte the gzip
// reader reads.
func (g *Gunzip) offset() int64 { return g.src.n - int64(g.br.Buffered()) }

// Read reads decompressed bytes.
func (g *Gunzip) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	for {
		n, err := g.zr.Read(p)
		g.n += int64(n)
		limit := g.limit
		if g.size < 0 {
			limit = GzipLimit(g.src.n)
		}
		if g.n > limit {
			g.err = g.tooLarge(limit)
			return n - int(min(g.n-limit, int64(n))), g.err
		}
		switch {
		case err == io.EOF:
			// The end of a member: the end of the stream, or another member.
			err = g.next()
			if err == nil && n == 0 {
				continue
			}
		case err != nil:
			err = fmt.Errorf("gzip: %w", err)
		}
		if err != nil {
			g.err = err
		}
		return n, err
	}
}

// next moves past the end of a member: io.EOF at the end of the stream,
// nil at the start of another member (its header read), else an error.
func (g *Gunzip) next() error {
	at := g.offset()
	head, err := g.br.Peek(2)
	if len(head) == 0 && err == io.EOF {
		return io.EOF
	}
	if len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		if err := g.zr.Reset(g.br); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("gzip: member at byte %d: %w", at, err)
		}
		g.zr.Multistream(false)
		return nil
	}
	if err != nil && err != io.EOF {
		return fmt.Errorf("gzip: %w", err)
	}
	return fmt.Errorf("gzip: %w at byte %d: expected the end of the file or another gzip member (1f 8b), got % x", ErrTrailingData, at, head)
}

// tooLarge is the error of a stream that decompresses past limit.
func (g *Gunzip) tooLarge(limit int64) error {
	of := fmt.Sprintf("a gzip input of %d bytes", g.size)
	if g.size < 0 {
		of = fmt.Sprintf("the first %d bytes of a gzip input", g.src.n)
	}
	return tooLarge(fmt.Sprintf("gzip: decompresses to more than %s (%d bytes): %s may decompress to max(%s (infile.GzipFloor), %d (infile.GzipRatio) × its size), at most %s (infile.MaxDecompressed)",
		Bytes(limit), limit, of, Bytes(GzipFloor), GzipRatio, Bytes(MaxDecompressed)))
}

// Close closes the gzip reader (not the stream it reads).
func (g *Gunzip) Close() error { return g.zr.Close() }

// CheckGzip reads the gzip stream from r's offset to its end into
// io.Discard, in constant memory, and returns the number of bytes it
// decompresses to, or the error of a stream that decompresses past its cap
// ([GzipLimit] of its compressed size) or is not well formed. It leaves r
// at the offset it found it at, so that the stream can then be decoded.
func CheckGzip(r io.ReadSeeker) (int64, error) {
	pos, err := r.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, err
	}
	end, err := r.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, err
	}
	if _, err := r.Seek(pos, io.SeekStart); err != nil {
		return 0, err
	}
	g, err := NewGunzip(r, end-pos)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(io.Discard, g)
	if err != nil {
		return n, err
	}
	if _, err := r.Seek(pos, io.SeekStart); err != nil {
		return n, err
	}
	return n, nil
}

// IsGzip reports whether b starts with gzip's magic bytes.
func IsGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }
