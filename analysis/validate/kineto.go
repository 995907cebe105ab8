package validate

import "github.com/chronosync/chronosync/trace/kineto"

// FromKineto returns the node of one rank's Kineto trace: its NCCL/RCCL
// collective kernels (kineto.Collectives), keyed by kernel name, at their
// Unix times on the rank's own clock (t.BaseTimeNs added, so that ranks with
// different bases share one epoch; no clock correction). Source is t.Name;
// Declared is t.WorldSize (distributedInfo.world_size).
//
// Matching assumption: Check takes the i-th invocation of a kernel name on
// one rank to be the same collective as the i-th on every other rank. That
// holds when every rank runs the same sequence of collectives on one
// communicator over the same traced window. It fails, and reports false
// violations or overlaps, when
//   - the ranks' traces cover different windows (different start steps, or
//     sampled/filtered traces that drop some kernels on some ranks);
//   - one kernel name serves several collectives or communicators (NCCL's
//     SendRecv kernel carries all-to-all, send/recv and pipeline exchanges
//     alike; sub-groups run the same kernels on different rank sets), since
//     the i-th invocations then need not be the same operation;
//   - ranks do not all take part in every collective (pipeline or tensor
//     parallel sub-groups), so counts differ (Check warns);
//   - NCCL picks a different algorithm or protocol on some ranks, which
//     changes the kernel's name (counts differ or keys are missing; warned).
func FromKineto(nodeID int, t *kineto.Trace) Node {
	ks := kineto.Collectives(t)
	ops := make([]Op, len(ks))
	for i, k := range ks {
		ops[i] = Op{Key: k.Name, StartNs: t.UnixNs(k.StartNs), EndNs: t.UnixNs(k.EndNs)}
	}
	return Node{ID: nodeID, Source: t.Name, Ops: ops, Declared: t.WorldSize}
}
