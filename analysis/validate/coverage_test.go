package validate

import (
	"slices"
	"strings"
	"testing"
)

// TestCoverage: the report counts the nodes it saw against those the
// traces declare, lists the missing ones, and warns when some are missing,
// when the traces disagree about their number, and when a node id lies
// outside the declared ones.
func TestCoverage(t *testing.T) {
	op := ops("x", [2]int64{0, 10})
	node := func(id, declared int) Node { return Node{ID: id, Ops: op, Declared: declared} }
	cases := []struct {
		name               string
		nodes              []Node
		seen, declared     int
		missing            []int
		line               string
		warnings           []string // prefixes, in order
		disagree, nMissing int
	}{
		{name: "no total declared", nodes: []Node{node(0, 0), node(1, 0), node(2, 0)},
			seen: 3, line: "Nodes: 3 (the traces declare no total)"},
		{name: "nothing", seen: 0, line: "Nodes: 0 (the traces declare no total)"},
		{name: "all present", nodes: []Node{node(1, 2), node(0, 2)},
			seen: 2, declared: 2, line: "Nodes: 2 of 2 declared"},
		{name: "one rank of 128", nodes: []Node{node(0, 128)},
			seen: 1, declared: 128, missing: seq(1, 128), nMissing: 127,
			line:     "Nodes: 1 of 128 declared; missing: 1-127",
			warnings: []string{"127 of 128 declared nodes are missing (1-127): "}},
		{name: "gaps", nodes: []Node{node(1, 8), node(4, 8), node(5, 8)},
			seen: 3, declared: 8, missing: []int{0, 2, 3, 6, 7}, nMissing: 5,
			line:     "Nodes: 3 of 8 declared; missing: 0, 2-3, 6-7",
			warnings: []string{"5 of 8 declared nodes are missing (0, 2-3, 6-7): "}},
		// Only some traces declare a total: the others count as seen.
		{name: "some declare", nodes: []Node{node(0, 0), node(1, 4)},
			seen: 2, declared: 4, missing: []int{2, 3}, nMissing: 2,
			line:     "Nodes: 2 of 4 declared; missing: 2-3",
			warnings: []string{"2 of 4 declared nodes are missing (2-3)"}},
		{name: "disagree", nodes: []Node{node(0, 4), node(1, 4), node(2, 8), node(3, 4)},
			seen: 4, declared: 8, missing: seq(4, 8), nMissing: 4, disagree: 2,
			line: "Nodes: 4 of 8 declared; missing: 4-7",
			warnings: []string{
				"the traces disagree about the number of nodes: 4 (nodes 0-1, 3), 8 (node 2); the largest, 8, is taken",
				"4 of 8 declared nodes are missing (4-7)"}},
		{name: "id outside", nodes: []Node{node(0, 2), node(1, 2), node(5, 2)},
			seen: 3, declared: 2, line: "Nodes: 3 of 2 declared",
			warnings: []string{"node 5 is outside the declared ids 0-1"}},
		// A duplicate id is seen once; its warning comes after coverage's.
		{name: "duplicate id", nodes: []Node{node(0, 3), node(0, 3)},
			seen: 1, declared: 3, missing: []int{1, 2}, nMissing: 2,
			line:     "Nodes: 1 of 3 declared; missing: 1-2",
			warnings: []string{"2 of 3 declared nodes are missing (1-2)", "node id 0 is given 2 times"}},
		{name: "too many to list", nodes: []Node{node(0, MaxMissingListed+1)},
			seen: 1, declared: MaxMissingListed + 1, nMissing: MaxMissingListed,
			line:     "Nodes: 1 of 131073 declared; missing: 131072 ids, too many to list",
			warnings: []string{"131072 of 131073 declared nodes are missing (131072 ids, too many to list)"}},
		{name: "many ranges", nodes: evens(40, 40),
			seen: 20, declared: 40, missing: odds(40), nMissing: 20,
			line: "Nodes: 20 of 40 declared; missing: 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31, ... (4 more ids)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Check(tc.nodes)
			declarations := tc.disagree // distinct totals declared
			if declarations == 0 && tc.declared > 0 {
				declarations = 1
			}
			if r.NodesSeen != tc.seen || r.NodesDeclared != tc.declared || r.NodesMissing != tc.nMissing || len(r.Declared) != declarations {
				t.Errorf("seen %d of %d declared, %d missing, declarations %+v; want %d of %d, %d missing",
					r.NodesSeen, r.NodesDeclared, r.NodesMissing, r.Declared, tc.seen, tc.declared, tc.nMissing)
			}
			if !slices.Equal(r.MissingNodes, tc.missing) {
				t.Errorf("missing %v, want %v", r.MissingNodes, tc.missing)
			}
			if got := r.Coverage(); got != tc.line {
				t.Errorf("Coverage() = %q, want %q", got, tc.line)
			}
			if len(r.WarningsText) < len(tc.warnings) {
				t.Fatalf("warnings %q, want %q first", r.WarningsText, tc.warnings)
			}
			for i, w := range tc.warnings {
				if !strings.HasPrefix(r.WarningsText[i], w) {
					t.Errorf("warning %d = %q, want %q...", i, r.WarningsText[i], w)
				}
			}
			cw := r.CoverageWarnings()
			if !slices.Equal(cw, r.WarningsText[:len(cw)]) {
				t.Errorf("CoverageWarnings() %q are not the first warnings %q", cw, r.WarningsText)
			}
		})
	}
}

// seq returns from..to-1.
func seq(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// evens returns nodes 0, 2, ..., n-2, each declaring declared.
func evens(n, declared int) []Node {
	var out []Node
	for i := 0; i < n; i += 2 {
		out = append(out, Node{ID: i, Declared: declared})
	}
	return out
}

// odds returns 1, 3, ..., n-1.
func odds(n int) []int {
	var out []int
	for i := 1; i < n; i += 2 {
		out = append(out, i)
	}
	return out
}
