package wire

import (
	"encoding/binary"
	"errors"
	"testing"
)

// cutter returns the chunk sizes cuts describes, in turn: each byte is a
// chunk of 1 to 256 bytes, then the sizes start over; no cuts means the
// whole stream at once.
func cutter(cuts []byte) func() int {
	i := 0
	return func() int {
		if len(cuts) == 0 {
			return 1 << 30
		}
		n := int(cuts[i%len(cuts)]) + 1
		i++
		return n
	}
}

// FuzzSplit (issue 18) writes frames of fuzzed sizes and contents, each
// within the cap, back to back, and feeds the stream to a Splitter cut at
// fuzzed points: it must yield exactly the frames written, in order, each
// its own allocation of exactly its length, hold nothing once the stream
// ends, and never buffer more of an incomplete frame than the cap and
// the prefix, nor reserve more than reserve or twice what arrived.
//
// sizes gives the frames' payload lengths, two bytes (big endian) each,
// cut to the cap; their bytes repeat fill (zeros when it is empty).
func FuzzSplit(f *testing.F) {
	frames, _ := stream(f)
	var sizes, fill []byte
	for _, fr := range frames {
		sizes = binary.BigEndian.AppendUint16(sizes, uint16(len(fr)-PrefixLen))
		fill = append(fill, fr[PrefixLen:]...)
	}
	f.Add(sizes, fill, []byte(nil), uint16(splitMax))
	f.Add(sizes, fill, []byte{0}, uint16(splitMax))
	f.Add(sizes, fill, []byte{2, 0, 6, 255, 4}, uint16(splitMax))
	f.Add(sizes, fill, []byte{3}, uint16(0))
	f.Add([]byte{0, 0, 0, 1, 0, 64, 0, 63}, []byte{0xab}, []byte{1, 4}, uint16(64))
	f.Add([]byte{0xff, 0xff, 0x10, 0x00}, []byte("frame"), []byte{255, 255, 0}, uint16(0))
	f.Add([]byte{}, []byte{}, []byte{}, uint16(1))
	f.Fuzz(func(t *testing.T, sizes, fill, cuts []byte, capArg uint16) {
		capN := limit(int(capArg))
		// At most 64 frames: a 9 KB input of sizes otherwise asks for
		// 4,700 frames of up to 4 KiB each, fed a byte at a time (17 s
		// for one input, which the fuzzer took for a hang).
		sizes = sizes[:min(len(sizes), 2*64)]
		var want [][]byte
		var data []byte
		at := 0
		for ; len(sizes) >= 2; sizes = sizes[2:] {
			n := min(int(binary.BigEndian.Uint16(sizes)), capN)
			payload := make([]byte, n)
			for i := range payload {
				if len(fill) > 0 {
					payload[i] = fill[at%len(fill)]
					at++
				}
			}
			fr := frameOf(payload)
			want = append(want, fr)
			data = append(data, fr...)
		}
		s := NewSplitter(int(capArg))
		got := feed(t, s, data, cutter(cuts))
		equalFrames(t, got, want)
		for i, fr := range got {
			if cap(fr) != len(fr) {
				t.Fatalf("frame %d: %d bytes in a buffer of %d", i, len(fr), cap(fr))
			}
			for j := range i {
				if &fr[0] == &got[j][0] {
					t.Fatalf("frames %d and %d share their bytes", j, i)
				}
			}
		}
		if b := s.Buffered(); b != 0 {
			t.Fatalf("%d bytes buffered at the end of a stream of whole frames", b)
		}
	})
}

// FuzzSplitStream feeds arbitrary bytes, cut at fuzzed points, to a
// Splitter with a fuzzed cap, and checks it against a reading of the
// stream by the format: the frames are the stream's leading length-
// prefixed pieces, up to the first prefix that declares more than the
// cap, where Feed fails with ErrOversize (before any of that frame's
// payload is buffered) and keeps failing with the same error; what is
// left of a cut frame stays buffered. However the stream is cut, the
// Splitter yields exactly those frames, never one over the cap, and never
// holds or reserves more than the bounds of FuzzSplit.
func FuzzSplitStream(f *testing.F) {
	frames, data := stream(f)
	f.Add(data, []byte(nil), uint16(splitMax))
	f.Add(data, []byte{0, 1, 2, 3}, uint16(splitMax))
	f.Add(data[:len(data)-3], []byte{7}, uint16(splitMax))
	f.Add(data, []byte{5}, uint16(64)) // the frame of splitMax bytes is over the cap
	f.Add(append(frames[0], withPrefix(70000000, []byte{1, 2, 3})...), []byte{1}, uint16(0))
	f.Add(withPrefix(1<<20, make([]byte, 100)), []byte{255}, uint16(0))
	f.Add(withPrefix(1<<32-1, nil), []byte{0}, uint16(1))
	f.Add([]byte{0, 0, 0}, []byte(nil), uint16(0))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 1, 9}, []byte{0}, uint16(1))
	f.Fuzz(func(t *testing.T, data, cuts []byte, capArg uint16) {
		capN := limit(int(capArg))
		// The stream read by the format.
		var want [][]byte
		var wantOversize bool
		rest := data
		for len(rest) >= PrefixLen {
			declared := uint64(binary.BigEndian.Uint32(rest))
			if declared > uint64(capN) {
				wantOversize = true
				break
			}
			n := PrefixLen + int(declared)
			if len(rest) < n {
				break
			}
			want, rest = append(want, rest[:n]), rest[n:]
		}

		s := NewSplitter(int(capArg))
		var got [][]byte
		var ferr error
		chunk := cutter(cuts)
		for in := data; len(in) > 0; {
			n := min(chunk(), len(in))
			err := s.Feed(in[:n])
			in = in[n:]
			switch {
			case err != nil && ferr != nil && err != ferr:
				t.Fatalf("Feed after the error %v = %v, want the same error", ferr, err)
			case err != nil && !errors.Is(err, ErrOversize):
				t.Fatalf("Feed = %v, which does not wrap ErrOversize", err)
			case err != nil:
				ferr = err
			}
			checkBound(t, s)
			if c := cap(s.cur); c > max(reserve, 2*s.Buffered()) {
				t.Fatalf("%d bytes of an incomplete frame held in a buffer of %d", s.Buffered(), c)
			}
			for fr, ok := s.Next(); ok; fr, ok = s.Next() {
				if len(fr) < PrefixLen || uint64(binary.BigEndian.Uint32(fr)) != uint64(len(fr)-PrefixLen) || len(fr)-PrefixLen > capN {
					t.Fatalf("frame of %d bytes (% x...), cap %d", len(fr), fr[:min(len(fr), PrefixLen)], capN)
				}
				got = append(got, fr)
			}
		}
		equalFrames(t, got, want)
		if (ferr != nil) != wantOversize {
			t.Fatalf("Feed error %v; want one: %v", ferr, wantOversize)
		}
		if wantOversize {
			if s.cur != nil || s.Buffered() > PrefixLen {
				t.Fatalf("%d bytes of the oversize frame buffered", s.Buffered())
			}
			if err := s.Feed([]byte{0}); err != ferr {
				t.Fatalf("Feed after the error %v = %v", ferr, err)
			}
			if _, ok := s.Next(); ok {
				t.Fatal("a frame after the oversize prefix")
			}
		}
		if b := s.Buffered(); !wantOversize && b != len(rest) {
			t.Fatalf("%d bytes buffered at the end, want the %d of the cut frame", b, len(rest))
		}
	})
}
