package training

import (
	"fmt"

	"github.com/chronosync/chronosync/world"
)

// Plane says which timeline an event belongs to.
type Plane uint8

// The planes.
const (
	HostPlane Plane = iota + 1 // the host thread that launches kernels
	GPUPlane                   // the GPU's streams
)

// String returns "host" or "gpu".
func (p Plane) String() string {
	switch p {
	case HostPlane:
		return "host"
	case GPUPlane:
		return "gpu"
	}
	return fmt.Sprintf("Plane(%d)", uint8(p))
}

// Kind says what an event is.
type Kind uint8

// The event kinds.
const (
	Compute    Kind = iota + 1 // a compute kernel on a GPU stream
	Collective                 // a collective kernel on a GPU stream
	Launch                     // a kernel launch call on the host thread
)

// String returns "compute", "collective" or "launch".
func (k Kind) String() string {
	switch k {
	case Compute:
		return "compute"
	case Collective:
		return "collective"
	case Launch:
		return "launch"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// HostThread is the Line of every host event: the one thread that launches
// the kernels.
const HostThread = 0

// LaunchName is the Name of every host launch event, as the ROCm tracer
// names the HIP API call.
const LaunchName = "hipLaunchKernel"

// Collective kernel names, as Kineto (and the ROCm tracer) record RCCL's
// kernels, demangled: RCCL and NCCL before 2.19 name a kernel
// ncclKernel_<collective>_<algorithm>_<protocol>_<reduction>_<type>, data
// movement (all-gather, broadcast) with the placeholder Sum_int8_t. They
// contain "nccl", which is how a happens-before validator picks collective
// events out of a GPU plane (seed 001, validate_collectives), and they match
// HolisticTraceAnalysis's communication-kernel pattern (hta/common/types.py,
// CommunicateKernelGroupingPattern: "^nccl" among others), so HTA counts them
// as communication, not computation.
const (
	AllReduceKernel = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"
	AllGatherKernel = "ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"
	BroadcastKernel = "ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"
)

// Compute kernel names rotate through a Tensile GEMM (as rocBLAS and
// hipBLASLt name them) and XLA fusions.
const (
	GEMMKernel     = "Cijk_Ailk_Bljk_SB_MT128x128x16_MI32x32x2x1_SN_1LDSB0_GRVW4"
	AddFusion      = "loop_add_fusion"
	ReduceFusion   = "input_reduce_fusion"
	MultiplyFusion = "loop_multiply_fusion"
)

// CollectiveName returns the kernel name and hlo_op of collective index
// (0-based, within a step): kinds rotate all-reduce, all-gather, broadcast,
// and the hlo_op is "<opcode>.<index>", e.g. "all-gather.1". The same
// hlo_op recurs every step, so the i-th invocation of an hlo_op on one node
// matches the i-th on every other.
func CollectiveName(index int) (kernel, hloOp string) {
	switch index % 3 {
	case 0:
		return AllReduceKernel, fmt.Sprintf("all-reduce.%d", index)
	case 1:
		return AllGatherKernel, fmt.Sprintf("all-gather.%d", index)
	default:
		return BroadcastKernel, fmt.Sprintf("broadcast.%d", index)
	}
}

// ComputeName returns the kernel name of compute kernel index (0-based,
// within a step).
func ComputeName(index int) string {
	switch index % 4 {
	case 0:
		return GEMMKernel
	case 1:
		return AddFusion
	case 2:
		return ReduceFusion
	default:
		return MultiplyFusion
	}
}

// Event is one finished event of a node's trace. Start and end are on the
// node's tracer clock R, each read at the instant the event started or
// ended.
type Event struct {
	ID    uint64 // unique per node, increasing in order of start
	Plane Plane  // HostPlane or GPUPlane
	Line  int    // HostThread, or the GPU stream
	Name  string // kernel name, or LaunchName
	HloOp string // collectives only
	Kind  Kind
	// Step is the training step. Index is the kernel's number within the
	// step among its kind (compute kernels 0..ComputePerStep-1, collectives
	// 0..CollectivesPerStep-1); for a launch it is the launched kernel's
	// position in the step's launch order.
	Step, Index int
	// Correlation is the same on a launch and the kernel it launched, as
	// the tracer's correlation_id; unique per node.
	Correlation  uint64
	StartR, EndR world.Time
}

// Observer receives a node's events as they happen, on the node's event
// loop. The harness uses it to record traces and ground truth; it must not
// call back into the node.
type Observer interface {
	// Started runs right after the tracer clock was read for the start of
	// event id on node.
	Started(node world.NodeID, id uint64)
	// Finished runs right after the tracer clock was read for the end of
	// the event.
	Finished(node world.NodeID, ev Event)
}
