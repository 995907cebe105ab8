package kineto

import (
	"cmp"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The args by which PyTorch describes a collective: on its
// record_param_comms op, on its nccl:<name> annotation ("Input Dims"), and,
// in newer Kineto versions, on the collective's kernel itself.
const (
	argCollective  = "Collective name"
	argGroup       = "Process Group Name"
	argSeq         = "Seq"
	argSeqLower    = "seq" // older PyTorch's spelling
	argInNelems    = "In msg nelems"
	argInputDims   = "Input Dims"
	argCorrelation = "correlation"
)

// Collectives returns the GPU collective kernels of t in time order: the
// complete ("X") events of category "kernel" (any case) whose name contains
// "nccl" or "rccl" (any case). Ties in start time are ordered by end time,
// device, stream, name and position in the file.
//
// Each kernel is described (Collective, Group, Seq, Size) from its own
// args first, then from the host ops it was launched under: the runtime
// call with the same "correlation" arg (category cuda_runtime or
// cuda_driver, any case; the first in the file when several have it), and
// the innermost record_param_comms op and the innermost nccl:<name> or
// rccl:<name> annotation (categories cpu_op and user_annotation) on the
// launch's pid and tid that contain it in time, bounds included; and the
// innermost c10d::<name> op that contains that record_param_comms.
//
//   - Collective: the "Collective name" arg (kernel, record_param_comms),
//     else the annotation's <name>, else the c10d op's <name> without
//     trailing underscores ("c10d::allreduce_" gives "allreduce"), else "".
//   - Group: the "Process Group Name" arg (kernel, record_param_comms).
//   - Seq, HasSeq: the "Seq" (or "seq") arg, an integer (kernel,
//     record_param_comms).
//   - Size: the "In msg nelems" arg (kernel, record_param_comms), else the
//     product of the first "Input Dims" entry of the annotation, else of
//     the record_param_comms, when it is a non-empty list of positive
//     integers whose product fits an int64.
//
// Where an arg or a link is missing, the fields stay zero. Linking indexes
// the host ops by thread and sweeps each thread's ops in time order once:
// O(E + H log H) for E events and H host ops of the kinds above, not a
// search per kernel.
func Collectives(t *Trace) []Kernel {
	var ks []Kernel
	for i := range t.Events {
		e := &t.Events[i]
		if e.Ph != "X" || !strings.EqualFold(e.Cat, "kernel") || !isCollective(e.Name) {
			continue
		}
		ks = append(ks, Kernel{
			Name: e.Name, StartNs: e.TsNs, EndNs: e.EndNs(),
			Device: e.Pid, Stream: e.Tid, Index: i, Args: e.Args,
		})
	}
	ls := hostLinks(t, ks)
	for k := range ks {
		ks[k].describe(t, ls[k])
	}
	slices.SortFunc(ks, func(a, b Kernel) int {
		return cmp.Or(
			cmp.Compare(a.StartNs, b.StartNs),
			cmp.Compare(a.EndNs, b.EndNs),
			cmp.Compare(a.Device, b.Device),
			cmp.Compare(a.Stream, b.Stream),
			cmp.Compare(a.Name, b.Name),
			cmp.Compare(a.Index, b.Index),
		)
	})
	return ks
}

// isCollective reports whether a kernel name names an NCCL or RCCL kernel.
func isCollective(name string) bool {
	n := strings.ToLower(name)
	return strings.Contains(n, "nccl") || strings.Contains(n, "rccl")
}

// links are the host events (indices into Trace.Events, -1 for none) a
// kernel was launched under.
type links struct {
	comms, annot, c10d int
}

// hostKind is the kind of a host event that Collectives links through; the
// containers come first, so that at equal bounds a container is on its
// stack before the events it contains are looked up.
type hostKind uint8

const (
	kindC10d    hostKind = iota // a c10d::<name> op
	kindAnnot                   // an nccl:<name> or rccl:<name> annotation
	kindComms                   // a record_param_comms op
	kindLaunch                  // a runtime call that launched a collective kernel
	nContainers = kindLaunch
)

// hostSpan is one host event of a thread.
type hostSpan struct {
	start, end int64
	ev         int
	kind       hostKind
}

// hostKindOf says which kind of host event e is, if any.
func hostKindOf(e *Event) (hostKind, bool) {
	switch strings.ToLower(e.Cat) {
	case "cuda_runtime", "cuda_driver":
		return kindLaunch, true
	case "cpu_op", "user_annotation":
	default:
		return 0, false
	}
	switch {
	case e.Name == "record_param_comms":
		return kindComms, true
	case strings.HasPrefix(e.Name, "nccl:"), strings.HasPrefix(e.Name, "rccl:"):
		return kindAnnot, true
	case strings.HasPrefix(e.Name, "c10d::"):
		return kindC10d, true
	}
	return 0, false
}

// hostLinks returns, for each kernel of ks, the host events it was
// launched under (see Collectives).
func hostLinks(t *Trace, ks []Kernel) []links {
	out := make([]links, len(ks))
	wanted := map[string]bool{} // correlations of the kernels
	for k := range ks {
		out[k] = links{comms: -1, annot: -1, c10d: -1}
		if c := ks[k].Args[argCorrelation]; c != "" {
			wanted[c] = true
		}
	}
	if len(wanted) == 0 {
		return out
	}
	threads := map[[2]string][]hostSpan{}
	launched := map[string]bool{} // correlations whose launch is taken
	for i := range t.Events {
		e := &t.Events[i]
		if e.Ph != "X" {
			continue
		}
		kind, ok := hostKindOf(e)
		if !ok {
			continue
		}
		if kind == kindLaunch {
			c := e.Args[argCorrelation]
			if !wanted[c] || launched[c] {
				continue
			}
			launched[c] = true
		}
		th := [2]string{e.Pid, e.Tid}
		threads[th] = append(threads[th], hostSpan{start: e.TsNs, end: e.EndNs(), ev: i, kind: kind})
	}
	byCorr := map[string]links{}    // correlation → links of its launch
	parent := map[int]int{}         // record_param_comms → enclosing c10d op
	for _, spans := range threads { // threads are independent: order is irrelevant
		sweep(t, spans, byCorr, parent)
	}
	for k := range ks {
		l, ok := byCorr[ks[k].Args[argCorrelation]]
		if !ok {
			continue
		}
		if p, ok := parent[l.comms]; ok && l.comms >= 0 {
			l.c10d = p
		}
		out[k] = l
	}
	return out
}

// sweep goes through one thread's host events in time order with a stack
// of open events per container kind, and records for each launch the
// innermost record_param_comms and annotation that contain it (in byCorr,
// by the launch's correlation), and for each record_param_comms the
// innermost c10d op that contains it (in parent). Events on a thread nest,
// so the stacks stay as deep as the nesting.
func sweep(t *Trace, spans []hostSpan, byCorr map[string]links, parent map[int]int) {
	slices.SortFunc(spans, func(a, b hostSpan) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(b.end, a.end),
			cmp.Compare(a.kind, b.kind), cmp.Compare(a.ev, b.ev))
	})
	var open [nContainers][]hostSpan
	for _, s := range spans {
		for k := range open {
			st := open[k]
			for len(st) > 0 && st[len(st)-1].end < s.start {
				st = st[:len(st)-1]
			}
			open[k] = st
		}
		switch s.kind {
		case kindLaunch:
			byCorr[t.Events[s.ev].Args[argCorrelation]] = links{
				comms: innermost(open[kindComms], s), annot: innermost(open[kindAnnot], s), c10d: -1,
			}
			continue
		case kindComms:
			if p := innermost(open[kindC10d], s); p >= 0 {
				parent[s.ev] = p
			}
		}
		open[s.kind] = append(open[s.kind], s)
	}
}

// innermost returns the event of the latest-starting span of a stack
// (ordered by start) that contains s, or -1.
func innermost(stack []hostSpan, s hostSpan) int {
	for i := len(stack) - 1; i >= 0; i-- {
		if c := stack[i]; c.start <= s.start && c.end >= s.end {
			return c.ev
		}
	}
	return -1
}

// describe fills in k's Collective, Group, Seq and Size from its args and
// the host events of l (see Collectives).
func (k *Kernel) describe(t *Trace, l links) {
	args := func(ev int) map[string]string {
		if ev < 0 {
			return nil
		}
		return t.Events[ev].Args
	}
	comms, annot := args(l.comms), args(l.annot)
	// arg is the first of names in the kernel's args, else in comms's.
	arg := func(names ...string) string {
		for _, m := range [...]map[string]string{k.Args, comms} {
			for _, n := range names {
				if v := m[n]; v != "" {
					return v
				}
			}
		}
		return ""
	}
	switch {
	case arg(argCollective) != "":
		k.Collective = arg(argCollective)
	case l.annot >= 0:
		k.Collective = t.Events[l.annot].Name[len("nccl:"):] // or "rccl:"
	case l.c10d >= 0:
		k.Collective = strings.TrimRight(strings.TrimPrefix(t.Events[l.c10d].Name, "c10d::"), "_")
	}
	k.Group = arg(argGroup)
	if v, err := strconv.ParseInt(strings.TrimSpace(arg(argSeq, argSeqLower)), 10, 64); err == nil {
		k.Seq, k.HasSeq = v, true
	}
	if v, err := strconv.ParseInt(strings.TrimSpace(arg(argInNelems)), 10, 64); err == nil && v > 0 {
		k.Size = v
		return
	}
	k.Size = firstDims(annot[argInputDims])
	if k.Size == 0 {
		k.Size = firstDims(comms[argInputDims])
	}
}

// firstDims is the product of the first entry of an "Input Dims" arg
// ("[[4,1024],[],...]" gives 4096), or 0 when that entry is not a non-empty
// list of positive integers or the product overflows.
func firstDims(dims string) int64 {
	var entries []json.RawMessage
	if dims == "" || json.Unmarshal([]byte(dims), &entries) != nil || len(entries) == 0 {
		return 0
	}
	var first []int64
	if json.Unmarshal(entries[0], &first) != nil || len(first) == 0 {
		return 0
	}
	p := int64(1)
	for _, d := range first {
		if d <= 0 || p > math.MaxInt64/d {
			return 0
		}
		p *= d
	}
	return p
}
