package syncrun

import (
	"math"
	"slices"
	"testing"

	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/workload/training"
)

// TestLaunchSlots checks the layout of a step's launches against the
// workload's: compute kernels spread evenly before the collectives.
func TestLaunchSlots(t *testing.T) {
	for _, tc := range []struct {
		c, k int
		want []int
	}{
		{3, 4, []int{-1, 0, -1, 1, -1, -1, 2}},
		{3, 0, []int{0, 1, 2}},
		{2, 4, []int{-1, -1, 0, -1, -1, 1}},
	} {
		if got := launchSlots(training.Config{CollectivesPerStep: tc.c, ComputePerStep: tc.k}); !slices.Equal(got, tc.want) {
			t.Errorf("%d collectives, %d compute: %v; want %v", tc.c, tc.k, got, tc.want)
		}
	}
}

// TestStatInt: an event id stat is read whether int64 (a Kineto arg) or
// uint64 (the harness's XSpace).
func TestStatInt(t *testing.T) {
	for _, tc := range []struct {
		st   *xplanepb.XStat
		want int64
		ok   bool
	}{
		{&xplanepb.XStat{Value: &xplanepb.XStat_Int64Value{Int64Value: 7}}, 7, true},
		{&xplanepb.XStat{Value: &xplanepb.XStat_Uint64Value{Uint64Value: 7}}, 7, true},
		{&xplanepb.XStat{Value: &xplanepb.XStat_Uint64Value{Uint64Value: math.MaxUint64}}, 0, false},
		{&xplanepb.XStat{Value: &xplanepb.XStat_DoubleValue{DoubleValue: 7}}, 0, false},
		{&xplanepb.XStat{}, 0, false},
	} {
		if got, ok := statInt(tc.st); got != tc.want || ok != tc.ok {
			t.Errorf("statInt(%v) = %d, %v; want %d, %v", tc.st, got, ok, tc.want, tc.ok)
		}
	}
}

// TestKinetoGPUConversion: host events keep their host readings, and GPU
// events are converted by the offset at the node's first event, P = R − R0
// + S0, whatever the host clock did since.
func TestKinetoGPUConversion(t *testing.T) {
	cfg := training.Config{CollectivesPerStep: 1, ComputePerStep: 1, Streams: 2}
	n := &tracedNode{p: &tracedProtocol{train: cfg, nodes: make([]*tracedNode, 2)}, id: 1, events: []tracedEvent{
		{ev: training.Event{ID: 1, Plane: training.HostPlane, Name: training.LaunchName, Index: 0, Correlation: 1, StartR: 5000, EndR: 5005}, hostStart: 1000, hostEnd: 1005},
		{ev: training.Event{ID: 3, Plane: training.HostPlane, Name: training.LaunchName, Index: 1, Correlation: 2, StartR: 5020, EndR: 5025}, hostStart: 1030, hostEnd: 1036},
		{ev: training.Event{ID: 2, Plane: training.GPUPlane, Line: 0, Name: training.GEMMKernel, Correlation: 1, StartR: 5010, EndR: 5210}},
		{ev: training.Event{ID: 4, Plane: training.GPUPlane, Line: 1, Name: training.AllReduceKernel, Correlation: 2, StartR: 5030, EndR: 5000}},
	}}
	_, evs := n.kinetoEvents()
	type got struct {
		cat, name string
		ts, dur   int64
	}
	var gots []got
	for _, e := range evs {
		if e.Ph == "X" {
			gots = append(gots, got{e.Cat, e.Name, e.Ts, e.Dur})
		}
	}
	want := []got{
		{"cuda_runtime", training.LaunchName, 1000, 5},
		{"user_annotation", "nccl:all_reduce", 1030, 6},
		{"cpu_op", "record_param_comms", 1030, 6},
		{"cuda_runtime", training.LaunchName, 1030, 6},
		{"kernel", training.GEMMKernel, 1010, 200},    // 5010 − 5000 + 1000
		{"kernel", training.AllReduceKernel, 1030, 0}, // ended before it started on R
	}
	if !slices.Equal(gots, want) {
		t.Errorf("events %v\nwant %v", gots, want)
	}
}
