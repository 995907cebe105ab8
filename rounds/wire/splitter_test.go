package wire

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// stream returns the frames of every test envelope, and a few payloads
// with edge-case lengths, and their concatenation.
func stream(t testing.TB) ([][]byte, []byte) {
	var frames [][]byte
	for _, tc := range kinds {
		frames = append(frames, mustMarshal(t, tc.env))
	}
	// The Splitter does not decode: an empty payload and a payload of
	// exactly the cap are frames to it.
	frames = append(frames, frameOf(nil), frameOf(bytes.Repeat([]byte{0xab}, splitMax)), frameOf([]byte{1}))
	frames = append(frames, mustMarshal(t, kinds[0].env))
	return frames, bytes.Join(frames, nil)
}

// splitMax is the cap the Splitter tests use: larger than every test
// envelope, small enough that buffers near it are cheap to check.
const splitMax = 4096

// feed feeds data to s in chunks of the given sizes (the last chunk takes
// the rest), checking the buffer bound after every Feed, and returns the
// frames it yields.
func feed(t *testing.T, s *Splitter, data []byte, chunk func() int) [][]byte {
	t.Helper()
	var got [][]byte
	for len(data) > 0 {
		n := min(chunk(), len(data))
		if err := s.Feed(data[:n]); err != nil {
			t.Fatalf("Feed: %v", err)
		}
		data = data[n:]
		checkBound(t, s)
		for f, ok := s.Next(); ok; f, ok = s.Next() {
			got = append(got, f)
		}
	}
	return got
}

// checkBound fails if s holds, or has room for, more of an incomplete
// frame than the cap and the prefix.
func checkBound(t *testing.T, s *Splitter) {
	t.Helper()
	if c := cap(s.cur); c > s.max+PrefixLen {
		t.Fatalf("buffer capacity %d > max+%d = %d", c, PrefixLen, s.max+PrefixLen)
	}
	if b := s.Buffered(); b > s.max+PrefixLen-1 {
		t.Fatalf("%d bytes of an incomplete frame buffered, cap %d", b, s.max)
	}
}

func equalFrames(t *testing.T, got, want [][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d frames, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("frame %d: got %d bytes % x..., want %d bytes % x...",
				i, len(got[i]), got[i][:min(len(got[i]), 12)], len(want[i]), want[i][:min(len(want[i]), 12)])
		}
	}
}

func TestSplitterChunkings(t *testing.T) {
	want, data := stream(t)
	tests := []struct {
		name  string
		chunk func(r *rand.Rand) int
	}{
		{"whole stream at once", func(*rand.Rand) int { return len(data) }},
		{"one byte at a time", func(*rand.Rand) int { return 1 }},
		{"three bytes at a time", func(*rand.Rand) int { return 3 }},
		{"random 1..8", func(r *rand.Rand) int { return 1 + r.IntN(8) }},
		{"random 1..600", func(r *rand.Rand) int { return 1 + r.IntN(600) }},
		{"random 1..2*max", func(r *rand.Rand) int { return 1 + r.IntN(2*splitMax) }},
	}
	for _, tc := range tests {
		for seed := range uint64(20) {
			t.Run(fmt.Sprintf("%s/seed=%d", tc.name, seed), func(t *testing.T) {
				r := rand.New(rand.NewPCG(seed, 0x5eed))
				s := NewSplitter(splitMax)
				got := feed(t, s, data, func() int { return tc.chunk(r) })
				equalFrames(t, got, want)
				if s.Buffered() != 0 {
					t.Fatalf("%d bytes left buffered", s.Buffered())
				}
			})
		}
	}
}

// TestSplitterFramesDecode checks that what the Splitter yields is what
// Unmarshal takes.
func TestSplitterFramesDecode(t *testing.T) {
	var data []byte
	for _, tc := range kinds {
		data = append(data, mustMarshal(t, tc.env)...)
	}
	s := NewSplitter(0)
	got := feed(t, s, data, func() int { return 7 })
	if len(got) != len(kinds) {
		t.Fatalf("got %d frames, want %d", len(got), len(kinds))
	}
	for i, f := range got {
		env, err := Unmarshal(f, 0)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if Kind(env) != kinds[i].kind {
			t.Errorf("frame %d is %s, want %s", i, Kind(env), kinds[i].kind)
		}
	}
}

// TestSplitterFramesAreOwned checks that a frame from Next is not changed
// by later Feeds, including when the caller reuses its read buffer.
func TestSplitterFramesAreOwned(t *testing.T) {
	want, data := stream(t)
	s := NewSplitter(splitMax)
	buf := make([]byte, 5)
	var got [][]byte
	for len(data) > 0 {
		n := copy(buf, data)
		data = data[n:]
		if err := s.Feed(buf[:n]); err != nil {
			t.Fatal(err)
		}
		clear(buf)
		for f, ok := s.Next(); ok; f, ok = s.Next() {
			got = append(got, f)
		}
	}
	equalFrames(t, got, want)
}

func TestSplitterOversize(t *testing.T) {
	good := mustMarshal(t, kinds[0].env)
	tests := []struct {
		name     string
		max      int
		declared uint32
		msg      string
	}{
		{"default cap", 0, 70000000, "wire: frame declares 70000000 bytes, cap 1048576"},
		{"one over a small cap", 64, 65, "wire: frame declares 65 bytes, cap 64"},
		{"max uint32", 64, 1<<32 - 1, "wire: frame declares 4294967295 bytes, cap 64"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bad := withPrefix(tc.declared, nil)
			// A good frame, then the bad prefix one byte at a time: the
			// error comes with the prefix's last byte, before any payload.
			s := NewSplitter(tc.max)
			if err := s.Feed(good); err != nil {
				t.Fatal(err)
			}
			for i := range PrefixLen - 1 {
				if err := s.Feed(bad[i : i+1]); err != nil {
					t.Fatalf("Feed of prefix byte %d: %v", i, err)
				}
			}
			err := s.Feed(bad[PrefixLen-1:])
			if !errors.Is(err, ErrOversize) || err.Error() != tc.msg {
				t.Fatalf("Feed = %v, want %q wrapping ErrOversize", err, tc.msg)
			}
			if s.cur != nil || s.Buffered() > PrefixLen {
				t.Errorf("buffered %d bytes (cap %d) of the oversize frame", s.Buffered(), cap(s.cur))
			}
			// The error sticks; the good frame before it is still there.
			if err2 := s.Feed(make([]byte, 100)); err2 != err {
				t.Errorf("Feed after the error = %v, want the same error", err2)
			}
			f, ok := s.Next()
			if !ok || !bytes.Equal(f, good) {
				t.Errorf("frame before the bad prefix lost")
			}
			if _, ok := s.Next(); ok {
				t.Errorf("a frame after the bad prefix")
			}
		})
	}
}

// TestSplitterBoundedBuffer feeds frames of every size up to the cap in
// every chunking, plus a peer that declares a full frame and then stalls,
// and checks the buffer for the incomplete frame never passes max+4.
func TestSplitterBoundedBuffer(t *testing.T) {
	const max = 64
	var want [][]byte
	for n := range max + 1 {
		want = append(want, frameOf(bytes.Repeat([]byte{byte(n)}, n)))
	}
	data := bytes.Join(want, nil)
	r := rand.New(rand.NewPCG(1, 2))
	for _, maxChunk := range []int{1, 2, 5, max, max + PrefixLen, 3 * max, len(data)} {
		s := NewSplitter(max)
		got := feed(t, s, data, func() int { return 1 + r.IntN(maxChunk) })
		equalFrames(t, got, want)
	}

	// Declares the whole cap, then trickles: the buffer never passes the
	// frame.
	s := NewSplitter(max)
	if err := s.Feed(withPrefix(max, nil)); err != nil {
		t.Fatal(err)
	}
	if c := cap(s.cur); c > PrefixLen+max {
		t.Errorf("a bare prefix reserved %d bytes", c)
	}
	for i := range max - 1 {
		if err := s.Feed([]byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
		checkBound(t, s)
		if _, ok := s.Next(); ok {
			t.Fatalf("frame complete after %d of %d payload bytes", i+1, max)
		}
	}
	if s.Buffered() != PrefixLen+max-1 {
		t.Errorf("Buffered = %d, want %d", s.Buffered(), PrefixLen+max-1)
	}
	if err := s.Feed([]byte{0xee}); err != nil {
		t.Fatal(err)
	}
	f, ok := s.Next()
	if !ok || len(f) != PrefixLen+max || cap(f) > PrefixLen+max {
		t.Fatalf("last byte: frame %v, len %d cap %d", ok, len(f), cap(f))
	}
	if s.Buffered() != 0 {
		t.Errorf("Buffered = %d after the frame", s.Buffered())
	}
}

func TestSplitterBufferedAtEOF(t *testing.T) {
	good := mustMarshal(t, kinds[3].env)
	for cut := range len(good) {
		s := NewSplitter(0)
		if err := s.Feed(good[:cut]); err != nil {
			t.Fatal(err)
		}
		if _, ok := s.Next(); ok {
			t.Fatalf("frame from %d of %d bytes", cut, len(good))
		}
		if s.Buffered() != cut {
			t.Fatalf("Buffered = %d after %d bytes", s.Buffered(), cut)
		}
	}
}

func TestSplitterNoFrames(t *testing.T) {
	s := NewSplitter(0)
	if f, ok := s.Next(); ok || f != nil {
		t.Errorf("Next on a new Splitter = %v, %v", f, ok)
	}
	if err := s.Feed(nil); err != nil {
		t.Errorf("Feed(nil) = %v", err)
	}
	if s.Buffered() != 0 {
		t.Errorf("Buffered = %d", s.Buffered())
	}
}

// TestSplitterStalledPeer checks that a peer declaring a frame of the
// default cap and sending little pins little memory.
func TestSplitterStalledPeer(t *testing.T) {
	s := NewSplitter(0)
	if err := s.Feed(withPrefix(DefaultMaxFrame, nil)); err != nil {
		t.Fatal(err)
	}
	if c := cap(s.cur); c > reserve {
		t.Errorf("a bare prefix for %d bytes reserved %d bytes", DefaultMaxFrame, c)
	}
	sent := 0
	for sent < DefaultMaxFrame-1000 {
		n := min(1000, DefaultMaxFrame-1000-sent)
		if err := s.Feed(make([]byte, n)); err != nil {
			t.Fatal(err)
		}
		sent += n
		checkBound(t, s)
		if c := cap(s.cur); c > max(reserve, 2*(PrefixLen+sent)) {
			t.Fatalf("after %d bytes the buffer holds %d", sent, c)
		}
	}
}
