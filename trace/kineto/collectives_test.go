package kineto

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/trace/xspace"
)

// x is a complete event on (pid 10, tid tid), args as key, value pairs.
func x(cat, name, tid string, ts, dur int64, args ...string) Event {
	e := Event{Ph: "X", Cat: cat, Name: name, Pid: "10", Tid: tid, TsNs: ts, DurNs: dur}
	if len(args) > 0 {
		e.Args = map[string]string{}
		for i := 0; i+1 < len(args); i += 2 {
			e.Args[args[i]] = args[i+1]
		}
	}
	return e
}

// ncclKernel is a collective kernel on GPU 0 launched with correlation.
func ncclKernel(ts int64, args ...string) Event {
	e := x("kernel", "ncclDevKernel_SendRecv(ncclDevComm*)", "7", ts, 50, args...)
	e.Pid = "0"
	return e
}

// launch is the runtime call of correlation corr on tid 11.
func launch(ts int64, corr string) Event {
	return x("cuda_runtime", "cudaLaunchKernel", "11", ts, 10, "correlation", corr)
}

func TestCollectivesDescribed(t *testing.T) {
	cases := []struct {
		name   string
		events []Event
		// want: Collective, Group, Seq (or "-" when !HasSeq), Size, Key.
		want [5]string
	}{
		{"kernel's own args win", []Event{
			x("user_annotation", "nccl:all_gather", "11", 90, 100, "Input Dims", "[[5]]"),
			x("cpu_op", "record_param_comms", "11", 95, 50, "Collective name", "broadcast", "Process Group Name", "9", "Seq", "1"),
			launch(100, "7"),
			ncclKernel(200, "correlation", "7", "Collective name", "allreduce", "Process Group Name", "0", "Seq", "12", "In msg nelems", "1024"),
		}, [5]string{"allreduce", "0", "12", "1024", "allreduce"}},
		{"nccl annotation", []Event{
			x("user_annotation", "nccl:all_reduce", "11", 90, 110, "Input Dims", "[[4,8]]"),
			launch(100, "7"),
			ncclKernel(200, "correlation", "7"),
		}, [5]string{"all_reduce", "", "-", "32", "all_reduce"}},
		{"record_param_comms args, seq spelt seq", []Event{
			x("cpu_op", "record_param_comms", "11", 90, 110, "Collective name", "allgather", "Process Group Name", "pg1", "seq", "5",
				"In msg nelems", "64", "Input Dims", "[[2]]"),
			x("user_annotation", "nccl:_all_gather_base", "11", 95, 50, "Input Dims", "[[3]]"),
			launch(100, "7"),
			ncclKernel(200, "correlation", "7"),
		}, [5]string{"allgather", "pg1", "5", "64", "allgather"}},
		{"c10d op around record_param_comms", []Event{
			x("cpu_op", "c10d::allreduce_", "11", 0, 1000),
			x("cpu_op", "record_param_comms", "11", 10, 500, "Input Dims", "[[16], [], []]"),
			launch(20, "7"),
			ncclKernel(200, "correlation", "7"),
		}, [5]string{"allreduce", "", "-", "16", "allreduce"}},
		{"rccl annotation, cuda_driver launch", []Event{
			x("user_annotation", "rccl:broadcast", "11", 0, 1000),
			x("cuda_driver", "cuLaunchKernel", "11", 20, 5, "correlation", "7"),
			ncclKernel(200, "correlation", "7"),
		}, [5]string{"broadcast", "", "-", "0", "broadcast"}},
		{"innermost annotation", []Event{
			x("user_annotation", "nccl:outer", "11", 0, 1000),
			x("user_annotation", "nccl:inner", "11", 100, 100),
			x("user_annotation", "nccl:later", "11", 300, 100),
			launch(150, "7"),
			ncclKernel(200, "correlation", "7"),
		}, [5]string{"inner", "", "-", "0", "inner"}},
		{"bounds are inclusive", []Event{
			x("user_annotation", "nccl:all_reduce", "11", 100, 10),
			launch(100, "7"),
			ncclKernel(200, "correlation", "7"),
		}, [5]string{"all_reduce", "", "-", "0", "all_reduce"}},
		{"launch ends after the annotation", []Event{
			x("user_annotation", "nccl:all_reduce", "11", 90, 19),
			launch(100, "7"),
			ncclKernel(200, "correlation", "7"),
		}, [5]string{"", "", "-", "0", "ncclDevKernel_SendRecv(ncclDevComm*)"}},
		{"annotation on another thread", []Event{
			x("user_annotation", "nccl:all_reduce", "12", 0, 1000),
			launch(100, "7"),
			ncclKernel(200, "correlation", "7"),
		}, [5]string{"", "", "-", "0", "ncclDevKernel_SendRecv(ncclDevComm*)"}},
		{"GPU annotation is no launch context", []Event{
			x("gpu_user_annotation", "nccl:all_reduce", "11", 0, 1000),
			launch(100, "7"),
			ncclKernel(200, "correlation", "7"),
		}, [5]string{"", "", "-", "0", "ncclDevKernel_SendRecv(ncclDevComm*)"}},
		{"another correlation", []Event{
			x("user_annotation", "nccl:all_reduce", "11", 0, 1000),
			launch(100, "8"),
			ncclKernel(200, "correlation", "7"),
		}, [5]string{"", "", "-", "0", "ncclDevKernel_SendRecv(ncclDevComm*)"}},
		{"no correlation", []Event{
			x("user_annotation", "nccl:all_reduce", "11", 0, 1000),
			launch(100, "7"),
			ncclKernel(200),
		}, [5]string{"", "", "-", "0", "ncclDevKernel_SendRecv(ncclDevComm*)"}},
		{"bad args", []Event{
			x("user_annotation", "nccl:all_reduce", "11", 0, 1000, "Input Dims", "[[]]"),
			x("cpu_op", "record_param_comms", "11", 50, 500, "Seq", "next", "In msg nelems", "-4", "Input Dims", "[[9223372036854775807, 2]]"),
			launch(100, "7"),
			ncclKernel(200, "correlation", "7"),
		}, [5]string{"all_reduce", "", "-", "0", "all_reduce"}},
		{"size from record_param_comms when the annotation has none", []Event{
			x("user_annotation", "nccl:all_reduce", "11", 0, 1000, "Input Dims", "[[], [2]]"),
			x("cpu_op", "record_param_comms", "11", 50, 500, "Input Dims", "[[8, 2], [2]]"),
			launch(100, "7"),
			ncclKernel(200, "correlation", "7"),
		}, [5]string{"all_reduce", "", "-", "16", "all_reduce"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ks := Collectives(&Trace{Events: tc.events})
			if len(ks) != 1 {
				t.Fatalf("%d kernels, want 1", len(ks))
			}
			k := ks[0]
			seq := "-"
			if k.HasSeq {
				seq = fmt.Sprint(k.Seq)
			}
			got := [5]string{k.Collective, k.Group, seq, fmt.Sprint(k.Size), k.Key()}
			if got != tc.want {
				t.Errorf("collective, group, seq, size, key = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestCollectivesLinkScales links 100,000 kernels, each launched inside its
// own annotation on one thread among other host ops: the linking indexes
// the host ops, so this takes well under a second, not the hours of a
// search per kernel.
func TestCollectivesLinkScales(t *testing.T) {
	const n = 100_000
	events := make([]Event, 0, 4*n)
	for i := range int64(n) {
		corr := fmt.Sprint(i)
		events = append(events,
			x("cpu_op", "aten::add", "11", i*100, 5),
			x("user_annotation", "nccl:all_reduce", "11", i*100+10, 30, "Input Dims", fmt.Sprintf("[[%d]]", i+1)),
			launch(i*100+20, corr),
			ncclKernel(i*100+50, "correlation", corr))
	}
	start := time.Now()
	ks := Collectives(&Trace{Events: events})
	t.Logf("%d kernels linked in %v", len(ks), time.Since(start))
	for i, k := range ks {
		if k.Collective != "all_reduce" || k.Size != int64(i+1) {
			t.Fatalf("kernel %d: %+v", i, k)
		}
	}
}

// TestCollectivesRealRanks describes the real sampled ranks' kernels:
// every one was launched under an nccl: annotation that gives its
// collective and size (the traces predate Seq and process group names).
func TestCollectivesRealRanks(t *testing.T) {
	want := map[string][]string{
		"sampled_rank-0.json.gz": {"all_to_all 384", "all_to_all 419430400", "all_reduce 19618307", "all_reduce 26955536",
			"_all_gather_base 16777216", "all_to_all 419430400", "all_to_all 2846720", "all_reduce 26258430",
			"all_reduce 5716654", "_all_gather_base 16777216"},
		"sampled_rank-1.json.gz": {"all_to_all 339738624", "all_to_all 2846720", "all_reduce 19618307", "all_reduce 26258430",
			"_all_gather_base 16777216", "all_to_all 384", "all_reduce 19618307", "all_to_all 394073856",
			"all_reduce 5716654", "_all_gather_base 16777216"},
	}
	for f, w := range want {
		tr, err := Read(filepath.Join(realdata, f))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, k := range Collectives(tr) {
			if k.Group != "" || k.HasSeq {
				t.Errorf("%s: kernel %d has group %q, seq %v", f, k.Index, k.Group, k.HasSeq)
			}
			got = append(got, fmt.Sprintf("%s %d", k.Key(), k.Size))
		}
		if !slices.Equal(got, w) {
			t.Errorf("%s:\n got %q\nwant %q", f, got, w)
		}
	}
}

// TestToXSpaceCollectiveStats: a collective kernel's hlo_op is its
// pairing key, with its group, seq and size as stats; an arg that has a
// stat's name keeps it, and the stat gets "event." before its name.
func TestToXSpaceCollectiveStats(t *testing.T) {
	const trace = `{"traceEvents": [
	 {"ph": "X", "cat": "user_annotation", "name": "nccl:all_reduce", "pid": 10, "tid": 11, "ts": 1, "dur": 10, "args": {"Input Dims": [[4, 256]]}},
	 {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 10, "tid": 11, "ts": 1, "dur": 9,
	  "args": {"Process Group Name": "3", "Seq": 41}},
	 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 11, "ts": 2, "dur": 1, "args": {"correlation": 99}},
	 {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "pid": 1, "tid": 7, "ts": 20, "dur": 5,
	  "args": {"correlation": 99, "collective_size": "mine"}},
	 {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_SendRecv", "pid": 1, "tid": 7, "ts": 30, "dur": 5}
	]}`
	tr, err := DecodeWith(strings.NewReader(trace), "t.json", DecodeOptions{Raw: true})
	if err != nil {
		t.Fatal(err)
	}
	space, err := ToXSpace(tr)
	if err != nil {
		t.Fatal(err)
	}
	gpu := space.Planes[len(space.Planes)-1]
	if gpu.Name != "/device:GPU:1" || len(gpu.Lines) != 1 || len(gpu.Lines[0].Events) != 2 {
		t.Fatalf("planes %v", planeNames(space))
	}
	want := [][]string{
		{"correlation=99", "collective_size=mine", "hlo_op=all_reduce", "collective_group=3", "collective_seq=41", "event.collective_size=1024"},
		{"hlo_op=ncclDevKernel_SendRecv"},
	}
	for i, ev := range gpu.Lines[0].Events {
		var got []string
		for _, st := range ev.Stats {
			got = append(got, gpu.StatMetadata[st.MetadataId].Name+"="+xspace.StatString(gpu, st))
		}
		if !slices.Equal(got, want[i]) {
			t.Errorf("kernel %d stats %q, want %q", i, got, want[i])
		}
	}
	for _, name := range []string{StatCollectiveGroup, StatCollectiveSeq, StatCollectiveSize} {
		if !strings.HasPrefix(name, "collective_") {
			t.Errorf("stat name %q", name)
		}
	}
}
