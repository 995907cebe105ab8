package wire

import (
	"testing"

	"github.com/chronosync/chronosync/rounds/syncpb"
)

// benchEnvelope is a node's report for a window with 64 edges.
func benchEnvelope() *syncpb.Envelope {
	return &syncpb.Envelope{Body: &syncpb.Envelope_Window{Window: windowData(5, 64)}}
}

func BenchmarkMarshal(b *testing.B) {
	env := benchEnvelope()
	b.ReportAllocs()
	var n int
	for b.Loop() {
		f, err := Marshal(env, 0)
		if err != nil {
			b.Fatal(err)
		}
		n = len(f)
	}
	b.SetBytes(int64(n))
}

// BenchmarkAppendFrame frames into a reused buffer, as a writer loop does.
func BenchmarkAppendFrame(b *testing.B) {
	env := benchEnvelope()
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = AppendFrame(buf[:0], env, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkUnmarshal(b *testing.B) {
	frame := mustMarshal(b, benchEnvelope())
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Unmarshal(frame, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSplitter cuts a stream of such frames read 4 KiB at a time.
func BenchmarkSplitter(b *testing.B) {
	frame := mustMarshal(b, benchEnvelope())
	var data []byte
	for range 64 {
		data = append(data, frame...)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		s := NewSplitter(0)
		for rest := data; len(rest) > 0; {
			n := min(4096, len(rest))
			if err := s.Feed(rest[:n]); err != nil {
				b.Fatal(err)
			}
			rest = rest[n:]
			for _, ok := s.Next(); ok; _, ok = s.Next() {
			}
		}
	}
}
