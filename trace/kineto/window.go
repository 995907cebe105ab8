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
	// reads counts the calls of Read and rescan the bytes held from the
	// mark at each: at most what the json.Decoder scans again after it
	// (for the tests of its cost).
	reads  int
	rescan int64
}

// Read reads from the underlying reader, keeping what it reads. It fills
// p whole unless the reader ends or fails first, as io.ReadFull does: the
// json.Decoder looks for the next token from the same place after each
// read (a run of white space is scanned again every time), and grows its
// buffer only once it is full, so a reader that returns a few KiB a call
// (a gzip reader) would make a long run of white space cost time
// quadratic in its length. Filled whole, the buffer doubles on every read
// and the scans add up to at most twice the run.
func (w *window) Read(p []byte) (int, error) {
	w.reads++
	w.rescan += w.total - w.off
	n, err, idle := 0, error(nil), 0
	for n < len(p) && err == nil {
		var m int
		m, err = w.r.Read(p[n:])
		n += m
		if m > 0 {
			idle = 0
		} else if idle++; idle >= 100 && err == nil {
			err = io.ErrNoProgress
		}
	}
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
