package validate

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// ops builds one key's invocations from [start, end] pairs.
func ops(key string, bounds ...[2]int64) []Op {
	out := make([]Op, len(bounds))
	for i, b := range bounds {
		out[i] = Op{Key: key, StartNs: b[0], EndNs: b[1]}
	}
	return out
}

func TestCheck(t *testing.T) {
	cases := []struct {
		name                                    string
		nodes                                   []Node
		violations, overlaps, warnings, compare int
	}{
		{"empty", nil, 0, 0, 0, 0},
		{"one node", []Node{{ID: 0, Ops: ops("x", [2]int64{0, 10})}}, 0, 0, 0, 0},
		{"overlap", []Node{
			{ID: 0, Ops: ops("x", [2]int64{0, 10})},
			{ID: 1, Ops: ops("x", [2]int64{5, 15})},
		}, 0, 1, 0, 1},
		{"contained", []Node{
			{ID: 0, Ops: ops("x", [2]int64{0, 100})},
			{ID: 1, Ops: ops("x", [2]int64{40, 60})},
		}, 0, 1, 0, 1},
		{"a ends before b starts", []Node{
			{ID: 0, Ops: ops("x", [2]int64{0, 10})},
			{ID: 1, Ops: ops("x", [2]int64{11, 20})},
		}, 1, 0, 0, 1},
		{"b ends before a starts", []Node{
			{ID: 0, Ops: ops("x", [2]int64{30, 40})},
			{ID: 1, Ops: ops("x", [2]int64{0, 29})},
		}, 1, 0, 0, 1},
		// Closed intervals: an end stamped at the instant of the other's
		// start is an overlap, not a violation.
		{"touching a then b", []Node{
			{ID: 0, Ops: ops("x", [2]int64{0, 10})},
			{ID: 1, Ops: ops("x", [2]int64{10, 20})},
		}, 0, 1, 0, 1},
		{"touching b then a", []Node{
			{ID: 0, Ops: ops("x", [2]int64{10, 20})},
			{ID: 1, Ops: ops("x", [2]int64{0, 10})},
		}, 0, 1, 0, 1},
		{"zero-length ops at one instant", []Node{
			{ID: 0, Ops: ops("x", [2]int64{5, 5})},
			{ID: 1, Ops: ops("x", [2]int64{5, 5})},
		}, 0, 1, 0, 1},
		{"i-th matches i-th, unsorted input", []Node{
			{ID: 0, Ops: ops("x", [2]int64{100, 110}, [2]int64{0, 10}, [2]int64{50, 60})},
			{ID: 1, Ops: ops("x", [2]int64{5, 15}, [2]int64{200, 210}, [2]int64{55, 65})},
		}, 1, 2, 0, 3},
		{"mismatched counts", []Node{
			{ID: 0, Ops: ops("x", [2]int64{0, 10}, [2]int64{20, 30}, [2]int64{40, 50})},
			{ID: 1, Ops: ops("x", [2]int64{0, 10}, [2]int64{20, 30})},
		}, 0, 2, 1, 2},
		{"missing key", []Node{
			{ID: 0, Ops: append(ops("x", [2]int64{0, 10}), ops("y", [2]int64{20, 30})...)},
			{ID: 1, Ops: ops("x", [2]int64{5, 15})},
		}, 0, 1, 1, 1},
		{"three nodes, one skewed", []Node{
			{ID: 0, Ops: ops("x", [2]int64{0, 10}, [2]int64{20, 30})},
			{ID: 1, Ops: ops("x", [2]int64{2, 12}, [2]int64{22, 32})},
			{ID: 2, Ops: ops("x", [2]int64{100, 110}, [2]int64{120, 130})}, // 100 ns ahead
		}, 4, 2, 0, 6},
		{"three nodes, key missing on one, counts differ", []Node{
			{ID: 7, Ops: append(ops("x", [2]int64{0, 10}, [2]int64{20, 30}), ops("y", [2]int64{0, 5})...)},
			{ID: 3, Ops: ops("x", [2]int64{0, 10})},
			{ID: 5, Ops: append(ops("x", [2]int64{11, 19}, [2]int64{20, 30}), ops("y", [2]int64{6, 9})...)},
		}, 3, 2, 3, 5},
		{"op that ends before it starts", []Node{
			{ID: 0, Ops: ops("x", [2]int64{10, 0})}, // compared as given
			{ID: 1, Ops: ops("x", [2]int64{5, 6})},
		}, 1, 0, 1, 1},
		{"duplicate node id", []Node{
			{ID: 1, Ops: ops("x", [2]int64{0, 10})},
			{ID: 1, Ops: ops("x", [2]int64{20, 30})},
		}, 1, 0, 1, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Check(tc.nodes)
			got := [4]int{r.Violations, r.Overlaps, r.Warnings, r.Compared}
			if want := [4]int{tc.violations, tc.overlaps, tc.warnings, tc.compare}; got != want {
				t.Errorf("violations, overlaps, warnings, compared = %v, want %v; warnings %q", got, want, r.WarningsText)
			}
			if r.Violations+r.Overlaps != r.Compared || r.Warnings != len(r.WarningsText) {
				t.Errorf("counts do not add up: %+v", r)
			}
			var v, o, c int
			for _, op := range r.Ops {
				v, o, c = v+op.Violations, o+op.Overlaps, c+op.Compared
			}
			if v != r.Violations || o != r.Overlaps || c != r.Compared {
				t.Errorf("per-op counts %d, %d, %d do not sum to the totals", v, o, c)
			}
			if r.Violations > 0 && len(r.Examples) == 0 {
				t.Error("violations without examples")
			}
		})
	}
}

func TestCheckDetails(t *testing.T) {
	r := Check([]Node{
		{ID: 7, Source: "rank7.json", Ops: append(ops("x", [2]int64{0, 10}, [2]int64{20, 30}), ops("y", [2]int64{0, 5})...)},
		{ID: 3, Source: "rank3.json", Ops: ops("x", [2]int64{0, 10})},
		{ID: 5, Source: "rank5.json", Ops: append(ops("x", [2]int64{11, 19}, [2]int64{20, 30}), ops("y", [2]int64{6, 9})...)},
	})
	want := &Report{
		Violations: 3, Overlaps: 2, Warnings: 3, Compared: 5, PairedByOrder: 5,
		// Nodes 5 and 7 each have a y and a second x that node 3 lacks.
		Unpaired:  4,
		NodesSeen: 3, Declared: []Declaration{}, MissingNodes: []int{},
		Nodes: []NodeInfo{{3, "rank3.json", 1}, {5, "rank5.json", 3}, {7, "rank7.json", 3}},
		Ops: []OpReport{
			{Key: "x", Nodes: 3, Invocations: []int{1, 2, 2}, Compared: 4, Violations: 2, Overlaps: 2, MaxGapNs: 1},
			{Key: "y", Nodes: 2, Invocations: []int{0, 1, 1}, Compared: 1, Violations: 1, Overlaps: 0, MaxGapNs: 1},
		},
		Examples: []Violation{
			// Node 3's one x pairs with the nearer of node 5's two.
			{Key: "x", Index: 0, IndexB: 0, A: 3, B: 5, First: 3, GapNs: 1, Rule: RuleOrder},
			{Key: "x", Index: 0, IndexB: 0, A: 5, B: 7, First: 7, GapNs: 1, Rule: RuleOrder},
			{Key: "y", Index: 0, IndexB: 0, A: 5, B: 7, First: 7, GapNs: 1, Rule: RuleOrder},
		},
		WarningsText: []string{
			`op "x": node 3 has 1 invocations, node 5 has 2; 1 paired by order, the others have no counterpart`,
			`op "x": node 3 has 1 invocations, node 7 has 2; 1 paired by order, the others have no counterpart`,
			`op "y": node 3 has no invocations (2 of 3 nodes have some)`,
		},
	}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("Check:\n got %+v\nwant %+v", r, want)
	}
	if got := r.Summary(); got != "Violations: 3, Overlaps: 2, Warnings: 3" {
		t.Errorf("Summary() = %q", got)
	}
}

func TestExamples(t *testing.T) {
	// Node 1 runs late by a gap that varies with the invocation, so that
	// gaps tie; two keys, three nodes.
	var nodes []Node
	for id := range 3 {
		n := Node{ID: id}
		for _, key := range []string{"b", "a"} {
			for i := range 40 {
				start := int64(i * 1000)
				if id == 1 {
					start += 100 + int64(i%7)
				}
				n.Ops = append(n.Ops, Op{Key: key, StartNs: start, EndNs: start + 50})
			}
		}
		nodes = append(nodes, n)
	}
	r := Check(nodes)
	if r.Violations != 160 || r.Overlaps != 80 {
		t.Fatalf("violations %d, overlaps %d; want 160, 80", r.Violations, r.Overlaps)
	}
	// Every violation, in example order, by brute force.
	var all []Violation
	for _, key := range []string{"a", "b"} {
		for i := range 40 {
			gap := int64(50 + i%7)
			all = append(all, Violation{Key: key, Index: i, IndexB: i, A: 0, B: 1, First: 0, GapNs: gap, Rule: RuleOrder},
				Violation{Key: key, Index: i, IndexB: i, A: 1, B: 2, First: 2, GapNs: gap, Rule: RuleOrder})
		}
	}
	slices.SortFunc(all, func(v, w Violation) int {
		return cmp.Or(-cmp.Compare(v.GapNs, w.GapNs), cmp.Compare(v.Key, w.Key), cmp.Compare(v.Index, w.Index), cmp.Compare(v.A, w.A), cmp.Compare(v.B, w.B))
	})
	if !reflect.DeepEqual(r.Examples, all[:MaxExamples]) {
		t.Errorf("Examples:\n got %+v\nwant %+v", r.Examples, all[:MaxExamples])
	}
	for _, op := range r.Ops {
		if op.MaxGapNs != 56 {
			t.Errorf("op %q: MaxGapNs %d, want 56", op.Key, op.MaxGapNs)
		}
	}
}

func TestCheckDoesNotModifyInput(t *testing.T) {
	nodes := []Node{
		{ID: 2, Ops: ops("x", [2]int64{30, 40}, [2]int64{0, 10})},
		{ID: 1, Ops: ops("x", [2]int64{50, 60}, [2]int64{5, 15})},
	}
	before := fmt.Sprint(nodes)
	Check(nodes)
	if after := fmt.Sprint(nodes); after != before {
		t.Errorf("nodes changed:\n%s\n%s", before, after)
	}
}

func TestWriteJSON(t *testing.T) {
	nodes := []Node{
		{ID: 0, Source: "a", Ops: ops("x", [2]int64{0, 10}), Declared: 3},
		{ID: 1, Source: "b", Ops: append(ops("x", [2]int64{20, 30}), ops("y", [2]int64{0, 1})...), Declared: 3},
	}
	var b1, b2 bytes.Buffer
	if err := Check(nodes).WriteJSON(&b1); err != nil {
		t.Fatal(err)
	}
	if err := Check(nodes).WriteJSON(&b2); err != nil {
		t.Fatal(err)
	}
	if b1.String() != b2.String() {
		t.Error("two runs differ")
	}
	want := `{
  "violations": 1,
  "overlaps": 0,
  "warnings": 2,
  "compared": 1,
  "paired_by_seq": 0,
  "paired_by_order": 1,
  "unpaired": 1,
  "nodes_seen": 2,
  "nodes_declared": 3,
  "declared": [
    {
      "total": 3,
      "nodes": [
        0,
        1
      ]
    }
  ],
  "nodes_missing": 1,
  "missing_nodes": [
    2
  ],
  "nodes": [
    {
      "id": 0,
      "source": "a",
      "ops": 1
    },
    {
      "id": 1,
      "source": "b",
      "ops": 2
    }
  ],
  "ops": [
    {
      "key": "x",
      "nodes": 2,
      "invocations": [
        1,
        1
      ],
      "compared": 1,
      "violations": 1,
      "overlaps": 0,
      "max_gap_ns": 10
    },
    {
      "key": "y",
      "nodes": 1,
      "invocations": [
        0,
        1
      ],
      "compared": 0,
      "violations": 0,
      "overlaps": 0,
      "max_gap_ns": 0
    }
  ],
  "examples": [
    {
      "key": "x",
      "group": "",
      "index": 0,
      "index_b": 0,
      "a": 0,
      "b": 1,
      "first": 0,
      "gap_ns": 10,
      "rule": "order"
    }
  ],
  "warnings_text": [
    "1 of 3 declared nodes are missing (2): their collectives are not checked, so the counts say nothing about them",
    "op \"y\": node 0 has no invocations (1 of 2 nodes have some)"
  ]
}
`
	if b1.String() != want {
		t.Errorf("WriteJSON:\n%s\nwant\n%s", b1.String(), want)
	}
	var back Report
	if err := json.Unmarshal(b1.Bytes(), &back); err != nil || !reflect.DeepEqual(&back, Check(nodes)) {
		t.Errorf("round trip: %v, %+v", err, back)
	}

	// An empty report has empty lists, not nulls.
	var b3 bytes.Buffer
	if err := Check(nil).WriteJSON(&b3); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b3.String(), "null") {
		t.Errorf("empty report has nulls:\n%s", b3.String())
	}

	if err := Check(nodes).WriteJSON(failWriter{}); err == nil || !strings.HasPrefix(err.Error(), "write report: ") {
		t.Errorf("failing writer: %v", err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, fmt.Errorf("disk full") }

// scaleNodes is n nodes with k invocations of one collective each, every
// node offset by its id in µs, so that about half the pairs violate.
func scaleNodes(n, k int) []Node {
	nodes := make([]Node, n)
	for id := range nodes {
		o := make([]Op, k)
		for i := range o {
			start := int64(i)*100_000 + int64(id)*1_000
			o[i] = Op{Key: "ncclKernel_AllReduce", StartNs: start, EndNs: start + 8_000}
		}
		nodes[id] = Node{ID: id, Ops: o}
	}
	return nodes
}

func TestCheckScales(t *testing.T) {
	nodes := scaleNodes(16, 10_000)
	r := Check(nodes)
	if want := 16 * 15 / 2 * 10_000; r.Compared != want || r.Violations+r.Overlaps != want {
		t.Fatalf("compared %d, want %d", r.Compared, want)
	}
	// Node b starts (b-a) µs after node a and each op lasts 8 µs: the pairs
	// with b-a ≤ 8 overlap (b-a == 8 touches), the others violate.
	overlapPairs := 0
	for a := range 16 {
		for b := a + 1; b < 16; b++ {
			if b-a <= 8 {
				overlapPairs++
			}
		}
	}
	if r.Overlaps != overlapPairs*10_000 {
		t.Errorf("overlaps %d, want %d", r.Overlaps, overlapPairs*10_000)
	}
	// No allocation per comparison: 1.2 million comparisons, a few hundred
	// allocations (grouping, sorting, the report).
	allocs := testing.AllocsPerRun(2, func() { Check(nodes) })
	t.Logf("%d comparisons, %.0f allocations", r.Compared, allocs)
	if allocs > 2_000 {
		t.Errorf("%.0f allocations for %d comparisons", allocs, r.Compared)
	}
}

func BenchmarkCheck16x10k(b *testing.B) {
	nodes := scaleNodes(16, 10_000)
	b.ReportAllocs()
	for b.Loop() {
		Check(nodes)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(120*10_000), "ns/comparison")
}
