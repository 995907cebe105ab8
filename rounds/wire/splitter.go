package wire

import "encoding/binary"

// reserve is how many bytes a Splitter allocates for a frame before they
// arrive (less when the frame is smaller).
const reserve = 64 << 10

// Splitter cuts a byte stream (TCP) into frames. Feed it the bytes as they
// are read, then take the frames that became complete with Next until it
// reports none:
//
//	for {
//		n, err := conn.Read(buf)
//		if ferr := s.Feed(buf[:n]); ferr != nil {
//			return ferr // the stream cannot be resynchronized
//		}
//		for frame, ok := s.Next(); ok; frame, ok = s.Next() {
//			env, err := wire.Unmarshal(frame, max)
//			...
//		}
//		if err != nil {
//			// s.Buffered() > 0 here means the stream stopped mid-frame.
//			return err
//		}
//	}
//
// Feed copies what it is given. The bytes of the frame being assembled are
// held in a buffer sized from the frame's length prefix, which is checked
// against the cap first, so that buffer never exceeds the cap plus the
// 4-byte prefix, whatever the peer sends. Complete frames wait, each in its
// own allocation, until Next hands them over.
//
// A Splitter is not safe for concurrent use.
type Splitter struct {
	max int

	// prefix collects the length prefix of the next frame while it is
	// incomplete; nprefix is how many of its bytes have arrived.
	prefix  [PrefixLen]byte
	nprefix int

	// cur is the frame being assembled, prefix included, once its prefix
	// is known; want is its full length. cur is nil between frames.
	cur  []byte
	want int

	// ready holds complete frames from ready[head] on.
	ready [][]byte
	head  int

	err error
}

// NewSplitter returns a Splitter for frames whose payload is at most max
// bytes (max <= 0 means DefaultMaxFrame).
func NewSplitter(max int) *Splitter {
	return &Splitter{max: limit(max)}
}

// Feed appends b to the stream. It fails with an error wrapping ErrOversize
// as soon as a length prefix declares more than the cap, before any of that
// frame's payload is buffered; the stream cannot be resynchronized after
// that, so every later Feed returns the same error. Frames completed before
// the bad prefix are still returned by Next.
func (s *Splitter) Feed(b []byte) error {
	if s.err != nil {
		return s.err
	}
	for len(b) > 0 {
		if s.cur == nil {
			k := copy(s.prefix[s.nprefix:], b)
			s.nprefix += k
			b = b[k:]
			if s.nprefix < PrefixLen {
				return nil
			}
			declared := uint64(binary.BigEndian.Uint32(s.prefix[:]))
			if declared > uint64(s.max) {
				s.err = errorf(ErrOversize, nil, "wire: frame declares %d bytes, cap %d", declared, s.max)
				return s.err
			}
			s.want = PrefixLen + int(declared)
			// One exact allocation for a frame of up to reserve bytes or
			// one that has arrived whole; a larger one grows as it
			// arrives, so that a peer that declares a large frame and
			// stalls pins little more than it sent.
			s.cur = make([]byte, PrefixLen, min(s.want, max(reserve, PrefixLen+len(b))))
			copy(s.cur, s.prefix[:])
			s.nprefix = 0
		}
		k := min(s.want-len(s.cur), len(b))
		if len(s.cur)+k > cap(s.cur) {
			grown := make([]byte, len(s.cur), min(s.want, max(2*cap(s.cur), len(s.cur)+k)))
			copy(grown, s.cur)
			s.cur = grown
		}
		s.cur = append(s.cur, b[:k]...)
		b = b[k:]
		if len(s.cur) == s.want {
			s.ready = append(s.ready, s.cur)
			s.cur = nil
		}
	}
	return nil
}

// Next returns the next complete frame, length prefix included, and true;
// or nil and false when no frame is complete yet. The frame belongs to the
// caller: the Splitter keeps no reference to it.
func (s *Splitter) Next() ([]byte, bool) {
	if s.head == len(s.ready) {
		return nil, false
	}
	f := s.ready[s.head]
	s.ready[s.head] = nil
	s.head++
	if s.head == len(s.ready) {
		s.ready = s.ready[:0]
		s.head = 0
	}
	return f, true
}

// Buffered returns how many bytes of an incomplete frame the Splitter
// holds. At the end of a stream, a nonzero count means the stream was cut
// in the middle of a frame.
func (s *Splitter) Buffered() int {
	if s.cur == nil {
		return s.nprefix
	}
	return len(s.cur)
}
