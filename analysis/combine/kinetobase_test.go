package combine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/trace/kineto"
)

// rankText is a small Kineto trace: a host event at Unix time host, a
// kernel 1 ms later, with base (none when 0) and a distributedInfo with
// the rank when rank ≥ 0.
func rankText(rank int, base, host int64) string {
	var top []string
	if rank >= 0 {
		top = append(top, fmt.Sprintf(`"distributedInfo": {"backend": "nccl", "rank": %d, "world_size": 2}`, rank))
	}
	ts := func(u int64) string { return fmt.Sprintf("%d.%03d", (u-base)/1000, (u-base)%1000) }
	top = append(top, `"traceEvents": [`+
		fmt.Sprintf(`{"ph": "X", "cat": "cuda_runtime", "name": "hipLaunchKernel", "pid": 9, "tid": 9, "ts": %s, "dur": 5}, `, ts(host))+
		fmt.Sprintf(`{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 1, "ts": %s, "dur": 5, "args": {"device": 0, "stream": 1}}]`, ts(host+1e6)))
	if base != 0 {
		top = append(top, fmt.Sprintf(`"baseTimeNanoseconds": %d`, base))
	}
	return "{" + strings.Join(top, ", ") + "}"
}

// TestKinetoSharedBase: the aligned copies of one Combine share one base
// (the smallest of the inputs' when no event maps before it, else the
// earliest event's second), their ts count from it on global time, and a
// copy names its rank even where the input does not.
func TestKinetoSharedBase(t *testing.T) {
	tests := []struct {
		name    string
		base    [2]int64 // the inputs' bases (0: none, absolute ts)
		host    [2]int64 // their host events' Unix times
		rank    [2]int   // their distributedInfo.rank (-1: none)
		ahead   [2]float64
		want    int64    // the shared base
		wantTs0 [2]int64 // each copy's host event ts
	}{
		{"one base kept", [2]int64{9e9, 9e9}, [2]int64{9.5e9, 9.6e9}, [2]int{0, 1}, [2]float64{}, 9e9, [2]int64{0.5e9, 0.6e9}},
		{"the smaller base", [2]int64{9e9, 8e9}, [2]int64{9.001e9, 8.999e9}, [2]int{0, 1}, [2]float64{}, 8e9, [2]int64{1.001e9, 0.999e9}},
		{"rank without distributedInfo", [2]int64{9e9, 8e9}, [2]int64{9.001e9, 8.999e9}, [2]int{0, -1}, [2]float64{}, 8e9, [2]int64{1.001e9, 0.999e9}},
		{"a clock ahead maps before every base", [2]int64{9e9, 9e9}, [2]int64{9.2e9, 9.2e9}, [2]int{0, 1}, [2]float64{0, 0.5e9}, 8e9, [2]int64{1.2e9, 0.7e9}},
		{"an input without a base: absolute", [2]int64{0, 8e9}, [2]int64{9.001e9, 8.999e9}, [2]int{0, 1}, [2]float64{}, 0, [2]int64{9.001e9, 8.999e9}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var in []Input
			for i := range 2 {
				p := filepath.Join(dir, fmt.Sprintf("node%d.json", i))
				if err := os.WriteFile(p, []byte(rankText(tc.rank[i], tc.base[i], tc.host[i])), 0o644); err != nil {
					t.Fatal(err)
				}
				in = append(in, Input{Node: i, Trace: p})
			}
			o := Options{Output: filepath.Join(dir, "c.xplane.pb"), NoTraceJSON: true, NoCorrection: true}
			if tc.ahead != [2]float64{} {
				o.NoCorrection, o.Offsets = false, writeConstantOffsets(t, dir, 5e9, tc.ahead[:])
			}
			res, err := Combine(in, o)
			if err != nil {
				t.Fatal(err)
			}
			if res.Metadata.KinetoBaseNS != tc.want {
				t.Errorf("metadata: shared base %d, want %d", res.Metadata.KinetoBaseNS, tc.want)
			}
			for i := range 2 {
				got, err := kineto.Read(filepath.Join(dir, "c.kineto", fmt.Sprintf("node%d.json", i)))
				if err != nil {
					t.Fatal(err)
				}
				if got.BaseTimeNs != tc.want || got.Rank != i {
					t.Errorf("copy %d: base %d rank %d, want %d, %d", i, got.BaseTimeNs, got.Rank, tc.want, i)
				}
				if got.Events[0].TsNs != tc.wantTs0[i] || got.Events[1].TsNs != tc.wantTs0[i]+1e6 {
					t.Errorf("copy %d: ts %d, %d; want %d, %d", i, got.Events[0].TsNs, got.Events[1].TsNs, tc.wantTs0[i], tc.wantTs0[i]+1e6)
				}
				if tc.rank[i] < 0 && (got.Backend != "" || got.WorldSize != 0) {
					t.Errorf("copy %d: backend %q world size %d made up", i, got.Backend, got.WorldSize)
				}
				if n := res.Metadata.Nodes[i].KinetoBeforeBase; n != 0 {
					t.Errorf("copy %d: %d events before the base", i, n)
				}
			}
		})
	}
}
