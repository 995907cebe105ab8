package kineto

import "io"

// window is the reader a decoder's json.Decoder reads through: it keeps
// the bytes read from a mark on, so that the start of the token the
// decoder reads next can be found exactly, whatever the token's text (a
// string's escapes, invalid UTF-8). The decoder moves the mark up to where
// it stands before each token and each value, so the window holds at most
// one value and the decoder's read-ahead.
type window struct {
	r     io.Reader
	buf   []byte // buf[head:] are the bytes from offset off on
	head  int
	off   int64
	total int64 // the bytes read
}

// Read reads from the underlying reader, keeping what it reads.
func (w *window) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	if n > 0 {
		if w.head > 0 && w.head >= len(w.buf)-w.head {
			// Drop the bytes before the mark once they are at least half:
			// each byte is moved a bounded number of times.
			w.buf = w.buf[:copy(w.buf, w.buf[w.head:])]
			w.head = 0
		}
		w.buf = append(w.buf, p[:n]...)
		w.total += int64(n)
	}
	return n, err
}

// keepFrom moves the mark up to off (at most the bytes read): the bytes
// before it are no longer needed.
func (w *window) keepFrom(off int64) {
	if off > w.off && off <= w.total {
		w.head += int(off - w.off)
		w.off = off
	}
}

// skip returns the offset of the first byte from off on (off at or after
// the mark) that is neither space nor ',' nor ':': the start of the token
// the decoder read from off. Past the bytes read, it is their end.
func (w *window) skip(off int64) int64 {
	i := w.head + int(off-w.off)
	for i < len(w.buf) && (isSpace(w.buf[i]) || w.buf[i] == ',' || w.buf[i] == ':') {
		i++
	}
	return w.off + int64(i-w.head)
}
