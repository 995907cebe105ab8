package probelog

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"

	"github.com/chronosync/chronosync/estimate"
)

// FuzzReader feeds arbitrary bytes to the reader: it must never panic, never
// allocate more than the input justifies, and every block it accepts must
// survive a write and a read unchanged.
func FuzzReader(f *testing.F) {
	rng := rand.New(rand.NewPCG(11, 12))
	valid, starts := encode(f, Meta{Nodes: 64}, []*Block{realisticBlock(rng, 0, 1, 1, 0, 5), randomBlock(rng), {Src: 2}})
	f.Add(valid)
	f.Add(valid[:starts[1]+7])
	f.Add(valid[:starts[0]])
	f.Add([]byte(Magic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r, err := NewReader(bytes.NewReader(data))
		var blocks []*Block
		for err == nil {
			var b *Block
			if b, err = r.Next(); err == nil {
				blocks = append(blocks, b)
			}
		}
		runtime.ReadMemStats(&after)
		// The reader's fixed buffers (bufio, first chunk) plus a bounded
		// factor of the input: 40 bytes of Probe per 6 bytes of payload.
		if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20+64*uint64(len(data)) {
			t.Fatalf("allocated %d bytes for %d bytes of input", n, len(data))
		}
		if len(blocks) == 0 {
			return
		}
		again, _, err := readAll(mustEncode(t, r.Meta(), blocks))
		if !isEOF(err) || !reflect.DeepEqual(again, blocks) {
			t.Fatalf("re-encoding the accepted blocks: %v", err)
		}
	})
}

func mustEncode(t *testing.T, m Meta, blocks []*Block) []byte {
	data, _ := encode(t, m, blocks)
	return data
}

// BenchmarkWriteRead writes and reads back 5000-probe blocks of a realistic
// stream; MB/s counts encoded bytes.
func BenchmarkWriteRead(b *testing.B) {
	rng := rand.New(rand.NewPCG(13, 14))
	blocks := make([]*Block, 8)
	for i := range blocks {
		blocks[i] = realisticBlock(rng, i, (i+1)%8, uint64(i), int64(i)*2e9, 2500)
		blocks[i].Probes = blocks[i].Probes[:min(5000, len(blocks[i].Probes))]
		for len(blocks[i].Probes) < 5000 { // refill what loss took
			blocks[i].Probes = append(blocks[i].Probes, blocks[i].Probes[len(blocks[i].Probes)-1])
		}
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testMeta)
	if err != nil {
		b.Fatal(err)
	}
	r, err := NewReader(&buf)
	if err != nil {
		b.Fatal(err)
	}
	var encoded int64
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		n := buf.Len()
		if err := w.Write(blocks[i%len(blocks)]); err != nil {
			b.Fatal(err)
		}
		encoded += int64(buf.Len() - n)
		got, err := r.Next()
		if err != nil || len(got.Probes) != 5000 {
			b.Fatalf("read back: %v", err)
		}
	}
	per := float64(encoded) / float64(b.N) / 5000
	b.ReportMetric(per, "bytes/probe")
	b.ReportMetric(float64(encoded)/1e6/b.Elapsed().Seconds(), "MB/s")
}

func ExampleWriter() {
	var file bytes.Buffer // an *os.File opened with O_APPEND in a run
	w, err := NewWriter(&file, Meta{RunID: "quickstart", Nodes: 2, Source: "sim"})
	if err != nil {
		panic(err)
	}
	err = w.Write(&Block{
		Src: 0, Dst: 1, RoundID: 1, WindowID: 1, WindowStart: 1_000_000, WindowEnd: 2_600_000,
		SentPairs: 2, Lost: 1,
		Probes: []estimate.Probe{
			{T1: 1_000_000, T2: 51_030_000, T3: 51_040_000, T4: 1_060_000, Pair: 0, Slot: 0, T3Source: estimate.T3Kernel},
			{T1: 1_003_000, T2: 51_035_000, T3: 51_045_000, T4: 1_070_000, Pair: 0, Slot: 1, T3Source: estimate.T3Kernel},
			{T1: 1_800_000, T2: 51_829_000, T3: 51_839_000, T4: 1_858_000, Pair: 1, Slot: 0, T3Source: estimate.T3User},
		},
	})
	if err != nil {
		panic(err)
	}
	r, err := NewReader(&file)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%+v\n", r.Meta())
	b, err := r.Next()
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d→%d round %d: %d pairs sent, %d probes answered, %d lost\n", b.Src, b.Dst, b.RoundID, b.SentPairs, len(b.Probes), b.Lost)
	fmt.Println(b.Probes[2])
	_, err = r.Next()
	fmt.Println(err)
	// Output:
	// {Schema:2 RunID:quickstart Nodes:2 Units:ns Source:sim}
	// 0→1 round 1: 2 pairs sent, 3 probes answered, 1 lost
	// {1800000 51829000 51839000 1858000 1 0 user}
	// EOF
}
