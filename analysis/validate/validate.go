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
	"slices"
	"strings"
)

// MaxExamples is the most violations a Report lists in Examples.
const MaxExamples = 20

// Op is one invocation of a collective on one node, on the common timeline.
type Op struct {
	// Key names the collective: invocations with the same key on different
	// nodes are matched by their rank in time (see Check).
	Key string
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
	// Ops are the per-key results, by key.
	Ops []OpReport `json:"ops"`
	// Examples are up to MaxExamples violations: the largest gaps first,
	// ties by key, index and nodes.
	Examples []Violation `json:"examples"`
	// WarningsText are the warnings, in a deterministic order: the
	// coverage warnings first (CoverageWarnings), then duplicate node ids,
	// then by key: ops that end before they start, keys missing on nodes,
	// mismatched invocation counts.
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
	// (0 where the node has none).
	Invocations []int `json:"invocations"`
	Compared    int   `json:"compared"`
	Violations  int   `json:"violations"`
	Overlaps    int   `json:"overlaps"`
	// MaxGapNs is the largest gap over the key's violations: the time from
	// the end of one invocation to the start of its counterpart; 0 when
	// there is none.
	MaxGapNs int64 `json:"max_gap_ns"`
}

// Violation is one pair of matching invocations that do not overlap.
type Violation struct {
	Key string `json:"key"`
	// Index is the invocation's 0-based rank in time on both nodes.
	Index int `json:"index"`
	// A and B are the two nodes' ids, A < B (or A == B for duplicate ids).
	A int `json:"a"`
	B int `json:"b"`
	// First is the node (A or B) whose invocation ended before the other's
	// started.
	First int `json:"first"`
	// GapNs is the time from the end of First's invocation to the start of
	// the other's: positive.
	GapNs int64 `json:"gap_ns"`
}

// Check compares the collective invocations of nodes.
//
// Ops are grouped by key and, within each node, ordered by start time (then
// end time). The i-th invocation of a key on one node is taken to match the
// i-th on every other node: Check compares it across every pair of nodes
// that both have an i-th. A pair is a violation when one invocation ends
// strictly before the other starts (a.EndNs < b.StartNs or b.EndNs <
// a.StartNs); otherwise an overlap. Intervals are closed: two that touch
// (a.EndNs == b.StartNs) overlap, since a collective's end and its
// counterpart's start may be stamped at the same instant.
//
// Coverage: the report counts the distinct node ids it saw against the
// number of nodes the traces declare (Node.Declared; the largest when they
// disagree) and lists the declared ids 0..N-1 that are missing. Their
// warnings (see CoverageWarnings) come first.
//
// Warnings: a key that some nodes have and others lack (one per missing node
// per key), different invocation counts of a key on two nodes (one per key
// and pair; only the first min(count) invocations are compared), an
// invocation that ends before it starts (one per node and key), and a node id
// given more than once (one per id; such nodes are compared as distinct
// nodes).
//
// For N nodes and K invocations of a key Check makes N(N-1)/2·K comparisons,
// none of which allocates. nodes is not modified.
func Check(nodes []Node) *Report {
	order := make([]int, len(nodes))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(nodes[x].ID, nodes[y].ID) })

	r := &Report{
		Nodes:        make([]NodeInfo, len(nodes)),
		Ops:          []OpReport{},
		Examples:     []Violation{},
		WarningsText: []string{},
	}
	ids := make([]int, len(nodes))
	byKey := make([]map[string][]Op, len(nodes)) // per node (in ID order)
	var keys []string
	seenKey := map[string]bool{}
	for x, i := range order {
		n := &nodes[i]
		ids[x] = n.ID
		r.Nodes[x] = NodeInfo{ID: n.ID, Source: n.Source, Ops: len(n.Ops)}
		m := map[string][]Op{}
		for _, op := range n.Ops {
			m[op.Key] = append(m[op.Key], op)
			if !seenKey[op.Key] {
				seenKey[op.Key] = true
				keys = append(keys, op.Key)
			}
		}
		for _, ops := range m {
			slices.SortStableFunc(ops, func(a, b Op) int {
				return cmp.Or(cmp.Compare(a.StartNs, b.StartNs), cmp.Compare(a.EndNs, b.EndNs))
			})
		}
		byKey[x] = m
	}
	slices.Sort(keys)
	r.cover(nodes)
	r.WarningsText = append(r.WarningsText, r.CoverageWarnings()...)

	for x := 0; x < len(ids); {
		y := x + 1
		for y < len(ids) && ids[y] == ids[x] {
			y++
		}
		if y-x > 1 {
			r.warn("node id %d is given %d times; they are compared as distinct nodes", ids[x], y-x)
		}
		x = y
	}

	ex := examples{cap: MaxExamples}
	lists := make([][]Op, len(ids))
	for _, key := range keys {
		op := OpReport{Key: key, Invocations: make([]int, len(ids))}
		for x := range ids {
			lists[x] = byKey[x][key]
			op.Invocations[x] = len(lists[x])
			if len(lists[x]) > 0 {
				op.Nodes++
			}
		}
		for x, l := range lists {
			bad := 0
			for _, o := range l {
				if o.EndNs < o.StartNs {
					bad++
				}
			}
			if bad > 0 {
				r.warn("op %q: node %d has %d invocations that end before they start", key, ids[x], bad)
			}
		}
		for x, l := range lists {
			if len(l) == 0 {
				r.warn("op %q: node %d has no invocations (%d of %d nodes have some)", key, ids[x], op.Nodes, len(ids))
			}
		}
		for a := range lists {
			for b := a + 1; b < len(lists); b++ {
				la, lb := lists[a], lists[b]
				if len(la) == 0 || len(lb) == 0 {
					continue
				}
				if len(la) != len(lb) {
					r.warn("op %q: node %d has %d invocations, node %d has %d; the first %d are compared",
						key, ids[a], len(la), ids[b], len(lb), min(len(la), len(lb)))
				}
				op.compare(&ex, ids[a], ids[b], la, lb)
			}
		}
		r.Violations += op.Violations
		r.Overlaps += op.Overlaps
		r.Compared += op.Compared
		r.Ops = append(r.Ops, op)
	}
	r.Examples = append(r.Examples, ex.list...)
	r.Warnings = len(r.WarningsText)
	return r
}

// compare compares the matching invocations of nodes a and b.
func (op *OpReport) compare(ex *examples, a, b int, la, lb []Op) {
	n := min(len(la), len(lb))
	op.Compared += n
	for i := range n {
		x, y := &la[i], &lb[i]
		var gap int64
		var first int
		switch {
		case x.EndNs < y.StartNs:
			gap, first = y.StartNs-x.EndNs, a
		case y.EndNs < x.StartNs:
			gap, first = x.StartNs-y.EndNs, b
		default:
			op.Overlaps++
			continue
		}
		op.Violations++
		op.MaxGapNs = max(op.MaxGapNs, gap)
		ex.add(Violation{Key: op.Key, Index: i, A: a, B: b, First: first, GapNs: gap})
	}
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
// first, then by key, index, A and B.
func before(v, w *Violation) bool {
	if v.GapNs != w.GapNs {
		return v.GapNs > w.GapNs
	}
	return cmp.Or(
		cmp.Compare(v.Key, w.Key),
		cmp.Compare(v.Index, w.Index),
		cmp.Compare(v.A, w.A),
		cmp.Compare(v.B, w.B),
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
//   - "no collective appears on two nodes": the nodes' keys differ.
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
	return fmt.Sprintf("no collective appears on two nodes: the %d nodes with collectives have no op in common", len(ids))
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
