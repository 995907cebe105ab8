package validate

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// madePair is one pair that Check's pairing makes between two nodes: the
// positions i and j of the ops in their node's group, in time order.
type madePair struct {
	group string
	i, j  int
	x, y  Op
	rule  string
}

// pairsOf returns the pairs Check makes between nodes a and b, group by
// group.
func pairsOf(a, b Node) []madePair {
	nodes := []Node{a, b}
	_, keyIdx := keysOf(nodes)
	toks := map[token]int32{}
	pa, pb := prepare(&nodes[0], keyIdx, toks), prepare(&nodes[1], keyIdx, toks)
	var al aligner
	var out []madePair
	for _, ga := range pa.groups {
		for _, gb := range pb.groups {
			if ga.name != gb.name {
				continue
			}
			pairs, rule, _ := al.pair(ga, gb)
			for _, p := range pairs {
				out = append(out, madePair{ga.name, p[0], p[1], ga.ops[p[0]], gb.ops[p[1]], rule})
			}
		}
	}
	return out
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// indexPairing is the rule Check had before it paired by group, seq and
// order: the i-th invocation of a key on one node with the i-th on every
// other (ops by start, then end). It returns the violations and overlaps.
func indexPairing(nodes []Node) (violations, overlaps int) {
	byKey := make([]map[string][]Op, len(nodes))
	for x, n := range nodes {
		byKey[x] = map[string][]Op{}
		for _, o := range n.Ops {
			byKey[x][o.Key] = append(byKey[x][o.Key], o)
		}
		for _, l := range byKey[x] {
			slices.SortStableFunc(l, func(a, b Op) int {
				return cmp.Or(cmp.Compare(a.StartNs, b.StartNs), cmp.Compare(a.EndNs, b.EndNs))
			})
		}
	}
	for a := range nodes {
		for b := a + 1; b < len(nodes); b++ {
			for key, la := range byKey[a] {
				lb := byKey[b][key]
				for i := range min(len(la), len(lb)) {
					if la[i].EndNs < lb[i].StartNs || lb[i].EndNs < la[i].StartNs {
						violations++
					} else {
						overlaps++
					}
				}
			}
		}
	}
	return violations, overlaps
}

// op is an invocation of key with size at start, lasting 500 ns.
func op(key string, size, start int64) Op {
	return Op{Key: key, Size: size, StartNs: start, EndNs: start + 500}
}

// seqOp is op in group with sequence number seq.
func seqOp(group string, seq int64, key string, start int64) Op {
	o := op(key, 0, start)
	o.Group, o.Seq, o.HasSeq = group, seq, true
	return o
}

// steps is a run's collectives, one every 1000 ns from start: an
// all-reduce and an all-gather of sizes that repeat every three steps,
// skipping the positions in drop; every op shifted by skew.
func steps(n int, skew int64, drop ...int) []Op {
	var ops []Op
	for i := range n {
		if slices.Contains(drop, i) {
			continue
		}
		key := []string{"all_reduce", "all_gather"}[i%2]
		ops = append(ops, op(key, int64(1+i%3), int64(i)*1000+skew))
	}
	return ops
}

func TestCheckPairing(t *testing.T) {
	cases := []struct {
		name  string
		nodes []Node
		// want: violations, overlaps, paired by seq, by order, unpaired.
		want [5]int
		// pairs are the pairs of nodes 0 and 1, "group:i-j" (positions
		// in time order within the group); nil: not checked.
		pairs []string
		// indexViolations are what pairing the i-th of a key with the
		// i-th would find: the case's point, where it is > 0.
		indexViolations int
		warning         string // a warning Check must give, if any
	}{
		{
			name: "seq across groups",
			nodes: []Node{
				{ID: 0, Ops: []Op{
					seqOp("tp", 0, "all_reduce", 0), seqOp("dp", 0, "all_gather", 100),
					seqOp("tp", 1, "all_reduce", 1000), seqOp("dp", 1, "all_gather", 1100),
					seqOp("tp", 2, "all_reduce", 2000), seqOp("dp", 2, "all_gather", 2100),
					seqOp("tp", 3, "all_reduce", 3000),
				}},
				// Node 1's trace starts after tp's seq 0; its dp seq 2 is
				// another op (a warning, compared all the same).
				{ID: 1, Ops: []Op{
					seqOp("dp", 0, "all_gather", 150),
					seqOp("tp", 1, "all_reduce", 1050), seqOp("dp", 1, "all_gather", 1150),
					seqOp("tp", 2, "all_reduce", 2050), seqOp("dp", 2, "broadcast", 2150),
					seqOp("tp", 3, "all_reduce", 3050),
				}},
			},
			want:            [5]int{0, 6, 6, 0, 1},
			pairs:           []string{"dp:0-0", "dp:1-1", "dp:2-2", "tp:1-0", "tp:2-1", "tp:3-2"},
			indexViolations: 3,
			warning:         `process group "dp": nodes 0 and 1 run different ops at 1 sequence number (first: seq 2, "all_gather" on node 0, "broadcast" on node 1); they are compared all the same`,
		},
		{
			name: "seq on one node only: order",
			nodes: []Node{
				{ID: 0, Ops: []Op{seqOp("g", 7, "all_reduce", 0), seqOp("g", 8, "all_reduce", 1000)}},
				{ID: 1, Ops: []Op{{Key: "all_reduce", Group: "g", StartNs: 1000, EndNs: 1500}}},
			},
			// Order pairs the first with the first: times play no part.
			want:  [5]int{1, 0, 0, 1, 1},
			pairs: []string{"g:0-0"},
		},
		{
			name: "groups apart",
			nodes: []Node{
				{ID: 0, Ops: []Op{{Key: "x", Group: "a", StartNs: 0, EndNs: 10}, {Key: "x", Group: "b", StartNs: 1000, EndNs: 1010}}},
				{ID: 1, Ops: []Op{{Key: "x", Group: "b", StartNs: 1000, EndNs: 1010}}},
			},
			// Node 0's x in group a has no counterpart to miss: node 1
			// is not in group a.
			want:            [5]int{0, 1, 0, 1, 0},
			pairs:           []string{"b:0-0"},
			indexViolations: 1,
		},
		{
			name:            "rank starts later",
			nodes:           []Node{{ID: 0, Ops: steps(12, 0)}, {ID: 1, Ops: steps(12, 10, 0, 1, 2)}},
			want:            [5]int{0, 9, 0, 9, 3},
			pairs:           []string{":3-0", ":4-1", ":5-2", ":6-3", ":7-4", ":8-5", ":9-6", ":10-7", ":11-8"},
			indexViolations: 9,
		},
		{
			name:            "rank ends earlier",
			nodes:           []Node{{ID: 0, Ops: steps(12, 0)}, {ID: 1, Ops: steps(12, 10, 9, 10, 11)}},
			want:            [5]int{0, 9, 0, 9, 3},
			pairs:           []string{":0-0", ":1-1", ":2-2", ":3-3", ":4-4", ":5-5", ":6-6", ":7-7", ":8-8"},
			indexViolations: 0,
		},
		{
			name:            "dropped in the middle",
			nodes:           []Node{{ID: 0, Ops: steps(12, 0, 5)}, {ID: 1, Ops: steps(12, 10)}},
			want:            [5]int{0, 11, 0, 11, 1},
			pairs:           []string{":0-0", ":1-1", ":2-2", ":3-3", ":4-4", ":5-6", ":6-7", ":7-8", ":8-9", ":9-10", ":10-11"},
			indexViolations: 3,
		},
		{
			name: "different sizes do not pair",
			nodes: []Node{
				{ID: 0, Ops: []Op{op("all_reduce", 64, 0), op("all_reduce", 128, 1000)}},
				{ID: 1, Ops: []Op{op("all_reduce", 128, 1000)}},
			},
			want:            [5]int{0, 1, 0, 1, 1},
			pairs:           []string{":1-0"},
			indexViolations: 1,
		},
		// Displacement tie-break: one pair either way; the one nearer the
		// diagonal is right, and it is the first of node 0's in one case,
		// the last in the other.
		{
			name: "tie: nearer pair is later",
			nodes: []Node{
				{ID: 0, Ops: []Op{op("x", 1, 0), op("y", 1, 1000)}},
				{ID: 1, Ops: []Op{op("y", 1, 1000), op("q", 1, 2000), op("x", 1, 3000)}},
			},
			want:            [5]int{0, 1, 0, 1, 3},
			pairs:           []string{":1-0"},
			indexViolations: 1,
		},
		{
			name: "tie: nearer pair is earlier",
			nodes: []Node{
				{ID: 0, Ops: []Op{op("x", 1, 1000), op("w", 1, 2000), op("y", 1, 3000)}},
				{ID: 1, Ops: []Op{op("y", 1, 0), op("x", 1, 1000)}},
			},
			want:            [5]int{0, 1, 0, 1, 3},
			pairs:           []string{":0-1"},
			indexViolations: 1,
		},
		{
			name:  "identical sequences, one node late",
			nodes: []Node{{ID: 0, Ops: steps(6, 0)}, {ID: 1, Ops: steps(6, 600)}},
			want:  [5]int{6, 0, 0, 6, 0},
			pairs: []string{":0-0", ":1-1", ":2-2", ":3-3", ":4-4", ":5-5"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Check(tc.nodes)
			got := [5]int{r.Violations, r.Overlaps, r.PairedBySeq, r.PairedByOrder, r.Unpaired}
			if got != tc.want {
				t.Errorf("violations, overlaps, by seq, by order, unpaired = %v, want %v; warnings %q", got, tc.want, r.WarningsText)
			}
			if r.Compared != r.PairedBySeq+r.PairedByOrder || r.Compared != r.Violations+r.Overlaps {
				t.Errorf("compared %d: the pairs do not add up", r.Compared)
			}
			if tc.pairs != nil {
				var pairs []string
				for _, p := range pairsOf(tc.nodes[0], tc.nodes[1]) {
					pairs = append(pairs, fmt.Sprintf("%s:%d-%d", p.group, p.i, p.j))
				}
				if !slices.Equal(pairs, tc.pairs) {
					t.Errorf("pairs %q, want %q", pairs, tc.pairs)
				}
			}
			if v, _ := indexPairing(tc.nodes); v != tc.indexViolations && tc.indexViolations > 0 {
				t.Errorf("index pairing finds %d violations, want %d: the case does not test what it says", v, tc.indexViolations)
			}
			if tc.warning != "" && !slices.Contains(r.WarningsText, tc.warning) {
				t.Errorf("warnings %q lack %q", r.WarningsText, tc.warning)
			}
		})
	}
}

// TestCheckPairingReport pins how the pairing shows in the report: the
// per-violation rule and indices, the Pairing line and the warnings.
func TestCheckPairingReport(t *testing.T) {
	r := Check([]Node{
		{ID: 0, Ops: []Op{seqOp("g", 1, "all_reduce", 0), seqOp("g", 2, "all_reduce", 1000)}},
		{ID: 1, Ops: []Op{seqOp("g", 2, "all_reduce", 5000)}},
		{ID: 2, Ops: []Op{op("x", 4, 0), op("x", 4, 1000)}},
		{ID: 3, Ops: []Op{op("x", 4, 0)}},
	})
	want := []Violation{
		{Key: "all_reduce", Group: "g", Index: 1, IndexB: 0, A: 0, B: 1, First: 0, GapNs: 3500, Rule: RuleSeq},
	}
	if !slices.Equal(r.Examples, want) {
		t.Errorf("Examples %+v, want %+v", r.Examples, want)
	}
	if got, want := r.Pairing(), "pairing: 1 pair by sequence number and 1 by name, message size and order within the process group; 2 invocations without a counterpart"; got != want {
		t.Errorf("Pairing() = %q, want %q", got, want)
	}
	wantWarn := []string{
		`op "all_reduce": node 2 has no invocations (2 of 4 nodes have some)`,
		`op "all_reduce": node 3 has no invocations (2 of 4 nodes have some)`,
		`op "all_reduce": node 0 has 2 invocations, node 1 has 1; 1 paired by seq, the others have no counterpart`,
		`op "x": node 0 has no invocations (2 of 4 nodes have some)`,
		`op "x": node 1 has no invocations (2 of 4 nodes have some)`,
		`op "x": node 2 has 2 invocations, node 3 has 1; 1 paired by order, the others have no counterpart`,
	}
	if !slices.Equal(r.WarningsText, wantWarn) {
		t.Errorf("warnings:\n%s\nwant\n%s", strings.Join(r.WarningsText, "\n"), strings.Join(wantWarn, "\n"))
	}
	for _, tc := range []struct {
		r    Report
		want string
	}{
		{Report{}, ""},
		{Report{Compared: 1, PairedByOrder: 1}, "pairing: 1 pair by name, message size and order within the process group; every invocation has a counterpart"},
		{Report{Compared: 3, PairedBySeq: 3, Unpaired: 1}, "pairing: 3 pairs by sequence number within the process group; 1 invocation without a counterpart"},
	} {
		if got := tc.r.Pairing(); got != tc.want {
			t.Errorf("Pairing() of %+v = %q, want %q", tc.r, got, tc.want)
		}
	}
}

// randomNodes are n nodes with the same sequence of k ops of a few keys
// (no size, group or seq, as XSpace gives them), each node's times
// jittered so that some pairs overlap and some do not.
func randomNodes(rng *rand.Rand, n, k int) []Node {
	keys := make([]string, k)
	for i := range keys {
		keys[i] = []string{"all-reduce.1", "all-gather.2", "reduce-scatter.3"}[rng.IntN(3)]
	}
	nodes := make([]Node, n)
	for id := range nodes {
		nodes[id].ID = id
		for i, key := range keys {
			start := int64(i)*1000 + rng.Int64N(400)
			nodes[id].Ops = append(nodes[id].Ops, Op{Key: key, StartNs: start, EndNs: start + 50 + rng.Int64N(200)})
		}
		rng.Shuffle(len(nodes[id].Ops), func(i, j int) { nodes[id].Ops[i], nodes[id].Ops[j] = nodes[id].Ops[j], nodes[id].Ops[i] })
	}
	return nodes
}

// TestCheckIdenticalSequences: where every node has the same sequence of
// ops, Check pairs the i-th of a key with the i-th, as it did before it
// aligned: the same counts as indexPairing, every pair by order.
func TestCheckIdenticalSequences(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 50 {
		nodes := randomNodes(rng, 2+trial%3, 1+rng.IntN(40))
		r := Check(nodes)
		v, o := indexPairing(nodes)
		if r.Violations != v || r.Overlaps != o || r.PairedByOrder != v+o || r.Unpaired != 0 || r.Warnings != 0 {
			t.Fatalf("trial %d: %s, by order %d, unpaired %d; index pairing: %d violations, %d overlaps",
				trial, r.Summary(), r.PairedByOrder, r.Unpaired, v, o)
		}
		for _, e := range r.Examples {
			if e.Index != e.IndexB || e.Rule != RuleOrder {
				t.Fatalf("trial %d: example %+v pairs the %d-th with the %d-th", trial, e, e.Index, e.IndexB)
			}
		}
	}
}

// bestScore is the optimum of the order rule by a full dynamic program:
// the most pairs of equal tokens, keeping order, and for those the least
// Σ|i−j|.
func bestScore(a, b []int32) (pairs, disp int) {
	type score struct{ pairs, disp int }
	better := func(x, y score) bool { return x.pairs > y.pairs || x.pairs == y.pairs && x.disp < y.disp }
	s := make([][]score, len(a)+1)
	for i := range s {
		s[i] = make([]score, len(b)+1)
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			best := s[i-1][j]
			if better(s[i][j-1], best) {
				best = s[i][j-1]
			}
			if a[i-1] == b[j-1] {
				if d := (score{s[i-1][j-1].pairs + 1, s[i-1][j-1].disp + abs(i-j)}); better(d, best) {
					best = d
				}
			}
			s[i][j] = best
		}
	}
	return s[len(a)][len(b)].pairs, s[len(a)][len(b)].disp
}

// checkAlignment checks that pairs align a and b: in order on both, of
// equal tokens, with the optimum's count and displacement.
func checkAlignment(t *testing.T, what string, a, b []int32, pairs [][2]int) {
	t.Helper()
	disp := 0
	for k, p := range pairs {
		if a[p[0]] != b[p[1]] || k > 0 && (p[0] <= pairs[k-1][0] || p[1] <= pairs[k-1][1]) {
			t.Fatalf("%s: pair %d %v of %v: not equal tokens in order", what, k, p, pairs)
		}
		disp += abs(p[0] - p[1])
	}
	if n, d := bestScore(a, b); len(pairs) != n || disp != d {
		t.Fatalf("%s: %d pairs, displacement %d; the optimum is %d, %d\na %v\nb %v\npairs %v", what, len(pairs), disp, n, d, a, b, pairs)
	}
}

func TestAlignOptimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var al aligner
	tokens := func(n, alphabet int) []int32 {
		s := make([]int32, n)
		for i := range s {
			s[i] = int32(rng.IntN(alphabet))
		}
		return s
	}
	// Short sequences: the band holds the whole table.
	for trial := range 2000 {
		a, b := tokens(rng.IntN(12), 1+rng.IntN(4)), tokens(rng.IntN(12), 1+rng.IntN(4))
		pairs, ok := al.byOrder(a, b)
		if !ok {
			t.Fatal("short sequences not aligned")
		}
		checkAlignment(t, fmt.Sprintf("trial %d", trial), a, b, pairs)
	}
	// Long sequences, one a copy of the other with ops dropped and
	// added (fewer than the band's width): the band holds the optimum.
	for trial := range 20 {
		a := tokens(1500+rng.IntN(500), 6)
		var b []int32
		for _, x := range a {
			switch rng.IntN(20) {
			case 0: // dropped
			case 1:
				b = append(b, x, int32(rng.IntN(6)))
			default:
				b = append(b, x)
			}
		}
		pairs, ok := al.byOrder(a, b)
		if !ok {
			t.Fatal("long sequences not aligned")
		}
		checkAlignment(t, fmt.Sprintf("long trial %d", trial), a, b, pairs)
	}
}

// distinct is n ops of distinct sizes, one every 1000 ns from skew.
func distinct(n int, skew int64) []Op {
	ops := make([]Op, n)
	for i := range ops {
		ops[i] = op("all_reduce", int64(i+1), int64(i)*1000+skew)
	}
	return ops
}

// TestAlignBand: the band follows the two ends' diagonals: a node that
// lacks the first 1000 of 3000 ops (more than the band's width) still
// pairs the other 2000 with their counterparts. (With ops that repeat, as
// steps' do every 6, the least displacement would pair them 996 early.)
func TestAlignBand(t *testing.T) {
	a, b := distinct(3000, 0), distinct(3000, 10)[1000:]
	r := Check([]Node{{ID: 0, Ops: a}, {ID: 1, Ops: b}})
	if r.Violations != 0 || r.PairedByOrder != 2000 || r.Unpaired != 1000 {
		t.Errorf("%s; by order %d, unpaired %d; want no violation, 2000 pairs, 1000 unpaired", r.Summary(), r.PairedByOrder, r.Unpaired)
	}
}

// TestAlignTooLarge: sequences whose table would exceed MaxAlignCells are
// paired per token, with a warning.
func TestAlignTooLarge(t *testing.T) {
	n := 8000
	a := []Op{op("first", 0, -1000)}
	for i := range n {
		a = append(a, op("x", int64(i), int64(i)*1000))
	}
	var b []Op
	for i := range n + MaxAlignCells/n {
		b = append(b, op("x", int64(i), int64(i)*1000+10))
	}
	r := Check([]Node{{ID: 0, Ops: a}, {ID: 1, Ops: b}})
	if r.Violations != 0 || r.PairedByOrder != n || r.Unpaired != 1+MaxAlignCells/n {
		t.Errorf("%s; by order %d, unpaired %d", r.Summary(), r.PairedByOrder, r.Unpaired)
	}
	if len(r.WarningsText) == 0 || !strings.Contains(r.WarningsText[len(r.WarningsText)-1], "aligning them would take more than") {
		t.Errorf("warnings %q", r.WarningsText)
	}
}

// BenchmarkAlign10k aligns two nodes' 10,000 collectives where one lacks
// the first: the band's O(n·(2W+2)) cells.
func BenchmarkAlign10k(b *testing.B) {
	nodes := []Node{{ID: 0, Ops: steps(10_000, 0)}, {ID: 1, Ops: steps(10_000, 10, 0)}}
	for b.Loop() {
		if r := Check(nodes); r.PairedByOrder != 9_999 {
			b.Fatalf("%d pairs", r.PairedByOrder)
		}
	}
}
