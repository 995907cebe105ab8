package combine

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/trace/kineto"
	"github.com/chronosync/chronosync/trace/snapshotpb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// writeKinetoBench writes ranks gzipped Kineto traces of about perRank
// events each, as a PyTorch NCCL job writes them: per step a cpu_op, a
// runtime launch, its kernel and the flow between them (every 10th a
// record_param_comms with an nccl:all_reduce annotation and an NCCL
// kernel), their GPU clock's snapshot pairs and offsets with 2 s windows.
// It returns the inputs, the offsets path and the bytes of JSON text.
func writeKinetoBench(b *testing.B, dir string, ranks, perRank int) ([]Input, string, int64) {
	w, err := offsets.Create(filepath.Join(dir, "offsets.jsonl"), offsets.Meta{File: "offsets", RunID: "bench", Estimator: "svm", Mode: "rounds"})
	if err != nil {
		b.Fatal(err)
	}
	const base = int64(1_700_000_000e9)
	const gap = 20_000 // ns between steps
	steps := perRank / 6
	span := int64(steps+1) * gap
	var inputs []Input
	var text int64
	for r := range ranks {
		for ws := int64(-2e9); ws < span+4e9; ws += 2e9 {
			if err := w.Append(offsets.Offset{NodeID: r, RoundID: uint64(ws/2e9 + 2), WindowID: uint64(ws/2e9 + 2),
				WindowStartNS: base + ws, WindowEndNS: base + ws + 2e9, OffsetNS: float64(r) * 1e5, DriftPPM: float64(r), UncertaintyNS: 15}); err != nil {
				b.Fatal(err)
			}
		}
		var buf bytes.Buffer
		fmt.Fprintf(&buf, `{"schemaVersion":1,"distributedInfo":{"backend":"nccl","rank":%d,"world_size":%d},"baseTimeNanoseconds":%d,"traceEvents":[`, r, ranks, base)
		buf.WriteString(`{"ph":"M","name":"process_labels","pid":0,"tid":0,"args":{"labels":"GPU 0"}}`)
		for s := range steps {
			t := int64(s)*gap + 1e6
			us := func(ns int64) string { return strconv.FormatFloat(float64(ns)/1000, 'f', 3, 64) }
			corr := s + 1
			if s%10 == 0 {
				fmt.Fprintf(&buf, `,{"ph":"X","cat":"cpu_op","name":"record_param_comms","pid":100,"tid":100,"ts":%s,"dur":%s,"args":{"Collective name":"all_reduce","In msg nelems":%d,"Process Group Name":"0","Seq":%d}}`,
					us(t), us(3000), 1024+s%7, s/10)
				fmt.Fprintf(&buf, `,{"ph":"X","cat":"user_annotation","name":"nccl:all_reduce","pid":100,"tid":100,"ts":%s,"dur":%s}`, us(t+100), us(2800))
			} else {
				fmt.Fprintf(&buf, `,{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":100,"tid":100,"ts":%s,"dur":%s,"args":{"External id":%d}}`, us(t), us(3000), s)
			}
			fmt.Fprintf(&buf, `,{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":100,"tid":100,"ts":%s,"dur":%s,"args":{"correlation":%d}}`, us(t+500), us(1000), corr)
			fmt.Fprintf(&buf, `,{"ph":"s","id":%d,"pid":100,"tid":100,"ts":%s,"cat":"ac2g","name":"ac2g"}`, corr, us(t+500))
			name := "ampere_sgemm_128x64_nn"
			if s%10 == 0 {
				name = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"
			}
			fmt.Fprintf(&buf, `,{"ph":"X","cat":"kernel","name":%q,"pid":0,"tid":7,"ts":%s,"dur":%s,"args":{"correlation":%d,"stream":7,"device":0}}`, name, us(t+4000), us(10000), corr)
			fmt.Fprintf(&buf, `,{"ph":"f","id":%d,"pid":0,"tid":7,"ts":%s,"cat":"ac2g","name":"ac2g","bp":"e"}`, corr, us(t+4000))
		}
		buf.WriteString("]}")
		text += int64(buf.Len())
		trace := filepath.Join(dir, fmt.Sprintf("rank-%d.json.gz", r))
		f, err := os.Create(trace)
		if err != nil {
			b.Fatal(err)
		}
		zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
		if _, err := zw.Write(buf.Bytes()); err != nil {
			b.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		sp := &snapshotpb.SnapshotPairs{NodeId: int64(r), SamplingPeriodNs: 1e9}
		for s := base - 2e9; s < base+span+4e9; s += 1e9 {
			sp.Pairs = append(sp.Pairs, &snapshotpb.SnapshotPair{SysClockNs: s, TracerClockNs: s + s%1e12/100_000 + int64(r)*7e6})
		}
		snap := filepath.Join(dir, fmt.Sprintf("rank-%d.snapshots.pb", r))
		if err := xspace.Write(snap, sp); err != nil {
			b.Fatal(err)
		}
		inputs = append(inputs, Input{Node: r, Trace: trace, Snapshots: snap})
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return inputs, filepath.Join(dir, "offsets.jsonl"), text
}

// asXSpace converts Kineto inputs to XSpace files (on the host clock,
// without snapshot files), to combine the same events from XSpace.
func asXSpace(b *testing.B, dir string, in []Input) []Input {
	var out []Input
	for _, k := range in {
		t, err := kineto.ReadWith(k.Trace, kineto.DecodeOptions{Raw: true})
		if err != nil {
			b.Fatal(err)
		}
		space, err := kineto.ToXSpace(t)
		if err != nil {
			b.Fatal(err)
		}
		path := filepath.Join(dir, fmt.Sprintf("node%d.xplane.pb", k.Node))
		if err := xspace.Write(path, space); err != nil {
			b.Fatal(err)
		}
		out = append(out, Input{Node: k.Node, Trace: path})
	}
	return out
}

// BenchmarkCombineKineto combines 8 ranks of PyTorch profiler traces
// (about 200k events each; 5k with -short; CHRONOSYNC_BENCH_EVENTS sets
// the events per rank) with their snapshot pairs and offsets: decoding,
// the GPU conversion correction, the aligned Kineto copies, the Chrome
// export and validation included. It reports events/s and MB/s of JSON
// text, the peak live heap, and kineto/xspace: its time over that of
// combining the same events already converted to XSpace, measured in the
// same run.
func BenchmarkCombineKineto(b *testing.B) {
	const ranks = 8
	perRank := 200_000
	if testing.Short() {
		perRank = 5_000
	}
	if v := os.Getenv("CHRONOSYNC_BENCH_EVENTS"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			perRank = n
		}
	}
	dir := b.TempDir()
	inputs, offs, text := writeKinetoBench(b, dir, ranks, perRank)
	xs := asXSpace(b, b.TempDir(), inputs)
	out := filepath.Join(dir, "combined.xplane.pb")
	runtime.GC()
	var peak atomic.Uint64
	stop, done := make(chan struct{}), make(chan struct{})
	go sampleHeap(&peak, stop, done)
	b.ResetTimer()
	var kin, xsp time.Duration
	var events int64
	for i := 0; i < b.N; i++ {
		start := time.Now()
		res, err := Combine(inputs, Options{Offsets: offs, Output: out, Validate: true})
		if err != nil {
			b.Fatal(err)
		}
		kin += time.Since(start)
		events += res.Metadata.Events
		start = time.Now()
		if _, err := Combine(xs, Options{Offsets: offs, Output: out, Validate: true, NoKinetoOut: true}); err != nil {
			b.Fatal(err)
		}
		xsp += time.Since(start)
	}
	b.StopTimer()
	close(stop)
	<-done
	b.ReportMetric(float64(events)/kin.Seconds(), "events/s")
	b.ReportMetric(float64(text)*float64(b.N)/kin.Seconds()/1e6, "json-MB/s")
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
	b.ReportMetric(kin.Seconds()/xsp.Seconds(), "kineto/xspace")
}
