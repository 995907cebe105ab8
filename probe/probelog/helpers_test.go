package probelog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/chronosync/chronosync/estimate"
)

// testMeta is the meta data of the logs the tests write.
var testMeta = Meta{Schema: Schema, RunID: "test-run", Nodes: 64, Units: "ns", Source: "sim"}

// realisticBlock simulates one window of the edge src→dst: a pair every
// 800 µs (the two probes of a pair 2–8 µs apart), dst's clock off by up to
// ±50 ms and ±50 ppm from src's, one-way delays uniform in 20–50 µs, a
// turnaround of 5–15 µs, 50 ns of Gaussian read noise on every timestamp and
// 1% loss. It returns the block and the start of the next window.
func realisticBlock(rng *rand.Rand, src, dst int, round uint64, start int64, pairs int) *Block {
	offset := (rng.Float64()*2 - 1) * 50e6
	drift := (rng.Float64()*2 - 1) * 50e-6
	noise := func() float64 { return rng.NormFloat64() * 50 }
	dstClock := func(t float64) int64 { return int64(math.Round(t*(1+drift) + offset + noise())) }
	srcClock := func(t float64) int64 { return int64(math.Round(t + noise())) }
	b := &Block{Src: src, Dst: dst, RoundID: round, WindowID: round, WindowStart: start, SentPairs: pairs}
	t := float64(start)
	for k := range pairs {
		for slot := range 2 {
			send := t + float64(slot)*(2e3+rng.Float64()*6e3)
			if rng.Float64() < 0.01 {
				b.Lost++
				continue
			}
			arrive := send + 20e3 + rng.Float64()*30e3
			leave := arrive + 5e3 + rng.Float64()*10e3
			back := leave + 20e3 + rng.Float64()*30e3
			b.Probes = append(b.Probes, estimate.Probe{
				T1: srcClock(send), T2: dstClock(arrive), T3: dstClock(leave), T4: srcClock(back),
				Pair: uint32(round)*uint32(pairs) + uint32(k), Slot: uint8(slot), T3Source: estimate.T3Kernel,
			})
		}
		t += 800e3
	}
	b.WindowEnd = int64(t)
	return b
}

// randomBlock draws a block whose values range over everything the format
// must hold: nodes below 64, negative clocks, empty windows, values at the
// int64 limits.
func randomBlock(rng *rand.Rand) *Block {
	val := func() int64 {
		switch rng.IntN(6) {
		case 0:
			return math.MinInt64 + rng.Int64N(1000)
		case 1:
			return math.MaxInt64 - rng.Int64N(1000)
		case 2:
			return int64(rng.Uint64()) // anything
		default:
			return rng.Int64N(2e12) - 1e12 // negative or positive, ±1000 s
		}
	}
	b := &Block{
		Src: rng.IntN(64), Dst: rng.IntN(64), RoundID: rng.Uint64(), WindowID: rng.Uint64() >> rng.IntN(64),
		WindowStart: val(), WindowEnd: val(), SentPairs: rng.IntN(1 << 20), Lost: rng.IntN(100),
	}
	if b.WindowEnd < b.WindowStart {
		b.WindowStart, b.WindowEnd = b.WindowEnd, b.WindowStart
	}
	n := []int{0, 1, 2, rng.IntN(300)}[rng.IntN(4)]
	for range n {
		p := estimate.Probe{T1: val(), T2: val(), T3: val(), T4: val(), Pair: rng.Uint32(), Slot: uint8(rng.IntN(2)),
			T3Source: estimate.T3Source(rng.IntN(3))}
		switch rng.IntN(4) {
		case 0:
			p.Pair = 0
		case 1:
			p.Pair = math.MaxUint32
		}
		b.Probes = append(b.Probes, p)
	}
	return b
}

// encode writes a log of blocks and returns it with the offset each block
// starts at.
func encode(t testing.TB, m Meta, blocks []*Block) ([]byte, []int) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, m)
	if err != nil {
		t.Fatal(err)
	}
	var starts []int
	for _, b := range blocks {
		starts = append(starts, buf.Len())
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes(), starts
}

// readAll reads a log until the first error, which it returns (io.EOF at a
// clean end).
func readAll(data []byte) ([]*Block, *Reader, error) {
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, nil, err
	}
	var out []*Block
	for {
		b, err := r.Next()
		if err != nil {
			return out, r, err
		}
		out = append(out, b)
	}
}

// isEOF reports whether err is a clean end.
func isEOF(err error) bool { return errors.Is(err, io.EOF) }

// appendUvarint is binary.AppendUvarint.
func appendUvarint(dst []byte, v uint64) []byte { return binary.AppendUvarint(dst, v) }

// appendCRC appends the CRC-32C of payload to dst.
func appendCRC(dst, payload []byte) []byte {
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(payload, crc32.MakeTable(crc32.Castagnoli)))
}
