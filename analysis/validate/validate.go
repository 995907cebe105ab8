// Package validate is the collective happens-before check: a test of how
// well the traces of several nodes sit on one timeline.
//
// A collective operation (all-reduce, all-gather, send/receive, ...) cannot
// finish on one node before it has started on another: every participant
// waits for the others. So, once the nodes' traces are on a common timeline,
// the matching invocations of a collective must overlap in time. An
// invocation that ends before its counterpart on another node starts is a
// violation: physically impossible, so a sign of clock error (or of a wrong
// matching of invocations). Raw traces of unsynchronised clocks show many;
// well-aligned traces show none.
//
// Check works on plain intervals (Op), independent of any trace format;
// FromKineto builds a Node from a PyTorch profiler trace.
package validate

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// MaxExamples is the most violations a Report lists in Examples.
const MaxExamples = 20

// Op is one invocation of a collective on one node, on the common timeline.
type Op struct {
	// Key names the collective (e.g. "all_reduce", an XLA hlo_op, a kernel
	// name): only invocations with the same key (and Size) are paired by
	// order, see Check.
	Key string
	// Group names the process group (communicator) the invocation ran in:
	// invocations are paired only within a group. "" when not recorded:
	// all such ops are one group.
	Group string
	// Seq is the invocation's sequence number in its group, valid when
	// HasSeq: when every op of two nodes in a group has one, they are
	// paired by it.
	Seq int64
	// HasSeq reports that Seq is known.
	HasSeq bool
	// Size is the message size in elements, 0 when unknown: ops of
	// different sizes are not paired by order.
	Size int64
	// StartNs and EndNs bound the invocation, in nanoseconds.
	StartNs, EndNs int64
}

// Node is one node's collective invocations.
type Node struct {
	// ID identifies the node in the report (a rank, a node id).
	ID int
	// Source says where the ops came from (a file name), for the report.
	Source string
	// Ops are the node's invocations, in any order.
	Ops []Op
	// Declared is how many nodes (ranks) the node's trace says the job
	// has: Kineto's distributedInfo.world_size, an XSpace plane's
	// world_size stat; 0 when it says nothing.
	Declared int
}

// Report is the outcome of Check.
type Report struct {
	// Violations counts the compared pairs of invocations that do not
	// overlap: one ends before the other starts.
	Violations int `json:"violations"`
	// Overlaps counts the compared pairs that overlap (touching counts).
	Overlaps int `json:"overlaps"`
	// Warnings is len(WarningsText).
	Warnings int `json:"warnings"`
	// Compared is the number of compared pairs: Violations + Overlaps.
	Compared int `json:"compared"`
	// PairedBySeq and PairedByOrder count the compared pairs that each
	// rule paired (RuleSeq, RuleOrder; see Check): they sum to Compared.
	PairedBySeq   int `json:"paired_by_seq"`
	PairedByOrder int `json:"paired_by_order"`
	// Unpaired counts the invocations that found no counterpart on some
	// other node that has their group: each is counted once, however
	// many nodes lack its counterpart.
	Unpaired int `json:"unpaired"`
	// NodesSeen is the number of distinct node ids checked.
	NodesSeen int `json:"nodes_seen"`
	// NodesDeclared is how many nodes the traces say the job has (the
	// largest number when they disagree); 0 when none says.
	NodesDeclared int `json:"nodes_declared"`
	// Declared are the numbers of nodes the traces declare, ascending,
	// each with the nodes that declare it: more than one is a
	// disagreement.
	Declared []Declaration `json:"declared"`
	// NodesMissing counts the declared ids, 0..NodesDeclared-1, that no
	// trace supplied: their collectives are not checked.
	NodesMissing int `json:"nodes_missing"`
	// MissingNodes lists them, ascending, when NodesDeclared is at most
	// MaxMissingListed (else it is empty).
	MissingNodes []int `json:"missing_nodes"`
	// Nodes are the nodes checked, by ID.
	Nodes []NodeInfo `json:"nodes"`
	// Traces are the trace files the nodes were read from, with what each
	// holds, when the caller gave them (CheckTraces).
	Traces []Trace `json:"traces,omitempty"`
	// Ops are the per-key results, by key.
	Ops []OpReport `json:"ops"`
	// Examples are up to MaxExamples violations: the largest gaps first,
	// ties by key, index and nodes.
	Examples []Violation `json:"examples"`
	// WarningsText are the warnings, in a deterministic order: the
	// coverage warnings first (CoverageWarnings), then the traces' own
	// (TraceWarnings: empty and cut traces), then duplicate node ids,
	// then by key: ops that end before they start, keys missing on nodes,
	// invocations left without a counterpart between two nodes; then by
	// process group: ops that differ at a sequence number, sequences too
	// far apart to align.
	WarningsText []string `json:"warnings_text"`
}

// NodeInfo describes one node of a Report.
type NodeInfo struct {
	ID     int    `json:"id"`
	Source string `json:"source"`
	// Ops is the number of the node's invocations, all keys together.
	Ops int `json:"ops"`
}

// OpReport is the result for one key.
type OpReport struct {
	Key string `json:"key"`
	// Nodes is the number of nodes with at least one invocation.
	Nodes int `json:"nodes"`
	// Invocations is each node's invocation count, in Report.Nodes order
	// (0 where the node has none), all groups together.
	Invocations []int `json:"invocations"`
	// Compared, Violations and Overlaps count the compared pairs whose
	// first node's (A's) invocation has the key.
	Compared   int `json:"compared"`
	Violations int `json:"violations"`
	Overlaps   int `json:"overlaps"`
	// MaxGapNs is the largest gap over the key's violations: the time from
	// the end of one invocation to the start of its counterpart; 0 when
	// there is none.
	MaxGapNs int64 `json:"max_gap_ns"`
}

// The rules by which Check pairs invocations (Violation.Rule).
const (
	// RuleSeq pairs the invocations with equal sequence numbers (Op.Seq).
	RuleSeq = "seq"
	// RuleOrder pairs invocations of equal key and size by their order in
	// time.
	RuleOrder = "order"
)

// Violation is one pair of matching invocations that do not overlap.
type Violation struct {
	// Key is node A's invocation's key (node B's is the same, except
	// where the seq rule paired different keys, which Check warns about).
	Key string `json:"key"`
	// Group is the invocations' process group.
	Group string `json:"group"`
	// Index is the 0-based rank in time of A's invocation among node A's
	// invocations of Key; IndexB that of B's among node B's invocations
	// of its key.
	Index  int `json:"index"`
	IndexB int `json:"index_b"`
	// A and B are the two nodes' ids, A < B (or A == B for duplicate ids).
	A int `json:"a"`
	B int `json:"b"`
	// First is the node (A or B) whose invocation ended before the other's
	// started.
	First int `json:"first"`
	// GapNs is the time from the end of First's invocation to the start of
	// the other's: positive.
	GapNs int64 `json:"gap_ns"`
	// Rule is the rule that paired the invocations: RuleSeq or RuleOrder.
	Rule string `json:"rule"`
}

// warn adds a warning.
func (r *Report) warn(format string, args ...any) {
	r.WarningsText = append(r.WarningsText, fmt.Sprintf(format, args...))
}

// examples keeps the cap violations that come first in example order.
type examples struct {
	cap  int
	list []Violation
}

// before reports whether v comes before w in example order: the larger gap
// first, then by key, index, A and B (then group, IndexB and rule).
func before(v, w *Violation) bool {
	if v.GapNs != w.GapNs {
		return v.GapNs > w.GapNs
	}
	return cmp.Or(
		cmp.Compare(v.Key, w.Key),
		cmp.Compare(v.Index, w.Index),
		cmp.Compare(v.A, w.A),
		cmp.Compare(v.B, w.B),
		cmp.Compare(v.Group, w.Group),
		cmp.Compare(v.IndexB, w.IndexB),
		cmp.Compare(v.Rule, w.Rule),
	) < 0
}

// add offers v; it allocates only while the list grows to cap.
func (e *examples) add(v Violation) {
	if e.cap <= 0 {
		return
	}
	if len(e.list) == e.cap {
		if !before(&v, &e.list[len(e.list)-1]) {
			return
		}
		e.list = e.list[:len(e.list)-1]
	}
	i := len(e.list)
	e.list = append(e.list, v)
	for i > 0 && before(&v, &e.list[i-1]) {
		e.list[i] = e.list[i-1]
		i--
	}
	e.list[i] = v
}

// Summary returns "Violations: X, Overlaps: Y, Warnings: Z".
func (r *Report) Summary() string {
	return fmt.Sprintf("Violations: %d, Overlaps: %d, Warnings: %d", r.Violations, r.Overlaps, r.Warnings)
}

// Pairing returns the line that says how the compared pairs were made and
// how many invocations found no counterpart, e.g. "pairing: 4 pairs by
// name, message size and order within the process group; 12 invocations
// without a counterpart", or "" when nothing was compared.
func (r *Report) Pairing() string {
	if r.Compared == 0 {
		return ""
	}
	var how string
	switch {
	case r.PairedByOrder == 0:
		how = fmt.Sprintf("%s by sequence number", count(r.PairedBySeq, "pair", "pairs"))
	case r.PairedBySeq == 0:
		how = fmt.Sprintf("%s by name, message size and order", count(r.PairedByOrder, "pair", "pairs"))
	default:
		how = fmt.Sprintf("%s by sequence number and %d by name, message size and order", count(r.PairedBySeq, "pair", "pairs"), r.PairedByOrder)
	}
	lone := "every invocation has a counterpart"
	if r.Unpaired > 0 {
		lone = count(r.Unpaired, "invocation", "invocations") + " without a counterpart"
	}
	return fmt.Sprintf("pairing: %s within the process group; %s", how, lone)
}

// count returns "1 one" or "n many".
func count(n int, one, many string) string {
	return fmt.Sprintf("%d %s", n, plural(n, one, many))
}

// NothingCompared returns why the check compared no pair of invocations,
// or "" when it compared some (Compared > 0). Counts of 0 from a check that
// compared nothing are no result, so a caller prints this instead of
// Summary:
//
//   - "no traces to check": no nodes were given;
//   - "no collectives in ...": no node has an invocation (a trace without
//     collectives, or a file that is not a trace);
//   - "one node's collectives ...": every invocation is on one node id (a
//     single node's trace: collectives are compared between nodes);
//   - "only node N ... has collectives": the other nodes have none;
//   - "no collective appears on two nodes": no invocation pairs with one
//     on another node (see Check: the same process group, and the same
//     key and size, or the same sequence number).
func (r *Report) NothingCompared() string {
	if r.Compared > 0 {
		return ""
	}
	if len(r.Nodes) == 0 {
		return "no traces to check"
	}
	var with []NodeInfo // nodes with invocations
	ids := map[int]bool{}
	for _, n := range r.Nodes {
		if n.Ops > 0 {
			with = append(with, n)
			ids[n.ID] = true
		}
	}
	switch {
	case len(with) == 0:
		return fmt.Sprintf("no collectives in %s (collectives: XSpace GPU events named rccl or nccl that carry hlo_op; Kineto nccl or rccl kernels)", sources(r.Nodes))
	case r.NodesSeen == 1:
		return fmt.Sprintf("only one node, node %d (%s): collectives are compared between nodes; give the traces of two or more nodes, or a combined trace",
			with[0].ID, sources(with))
	case len(ids) == 1:
		return fmt.Sprintf("only node %d (%s) has collectives; the other %s none",
			with[0].ID, sources(with), plural(r.NodesSeen-1, "node has", fmt.Sprintf("%d nodes have", r.NodesSeen-1)))
	}
	return fmt.Sprintf("no collective appears on two nodes: the %d nodes with collectives have no op in common (same process group, and same name and size or same sequence number)", len(ids))
}

// sources names the distinct sources of nodes, in order: the first three
// and how many more.
func sources(nodes []NodeInfo) string {
	var out []string
	seen := map[string]bool{}
	for _, n := range nodes {
		if !seen[n.Source] {
			seen[n.Source] = true
			out = append(out, n.Source)
		}
	}
	if len(out) > 3 {
		return fmt.Sprintf("%s and %d more", strings.Join(out[:3], ", "), len(out)-3)
	}
	return strings.Join(out, ", ")
}

// WriteJSON writes r as indented JSON, with a final newline.
func (r *Report) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("encode report: %w", err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}
