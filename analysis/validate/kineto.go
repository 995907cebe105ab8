package validate

import "github.com/chronosync/chronosync/trace/kineto"

// FromKineto returns the node of one rank's Kineto trace: its NCCL/RCCL
// collective kernels (kineto.Collectives), each an Op keyed by
// kineto.Kernel.Key (the collective's name, "all_reduce", when the trace
// records it; else the kernel's name) with the kernel's process group,
// sequence number and message size where the trace records them, at their
// Unix times on the rank's own clock (t.BaseTimeNs added, so that ranks
// with different bases share one epoch; no clock correction). Source is
// t.Name; Declared is t.WorldSize (distributedInfo.world_size).
//
// Matching: Check pairs the ranks' invocations within each process group:
// by sequence number where both ranks record one for every collective of
// the group (PyTorch's "Seq", which counts the group's collectives on
// every rank alike), else by aligning the two ranks' sequences in time
// order on (collective name, message size), as the longest common
// subsequence nearest the diagonal. That holds up when the ranks' traces
// cover different windows or are sampled (each lacks some collectives: the
// counterparts of those are left unpaired and counted, not compared with
// the wrong invocation), and when one kernel name serves several
// collectives (NCCL's SendRecv kernel carries all-to-all, send/recv and
// all-gather alike: the collective's name and size tell them apart). It
// can still pair wrongly, and report false violations or overlaps, when
//   - the trace records no collective name, group or size (older PyTorch,
//     or no record_shapes): pairing falls back to the kernel's name and
//     order, and sub-groups' collectives on the same kernel name mix;
//   - a window misses collectives that repeat with the same name and size
//     (each training step's all-reduce of one bucket): the alignment may
//     pair an invocation with one a step away; sequence numbers do not;
//   - NCCL picks a different algorithm or protocol on some ranks, which
//     changes the kernel's name where that is the key (keys missing;
//     warned).
func FromKineto(nodeID int, t *kineto.Trace) Node {
	ks := kineto.Collectives(t)
	ops := make([]Op, len(ks))
	for i := range ks {
		k := &ks[i]
		ops[i] = Op{Key: k.Key(), Group: k.Group, Seq: k.Seq, HasSeq: k.HasSeq, Size: k.Size,
			StartNs: t.UnixNs(k.StartNs), EndNs: t.UnixNs(k.EndNs)}
	}
	return Node{ID: nodeID, Source: t.Name, Ops: ops, Declared: t.WorldSize}
}
