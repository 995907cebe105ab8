package validate

import (
	"strings"
	"testing"
)

// TestNothingCompared pins why a check that compared no pair of
// invocations compared nothing, and that one that compared some says
// nothing.
func TestNothingCompared(t *testing.T) {
	op := func(key string, start int64) Op { return Op{Key: key, StartNs: start, EndNs: start + 10} }
	tests := []struct {
		name  string
		nodes []Node
		want  string // "" when something was compared
	}{
		{"compared", []Node{
			{ID: 0, Source: "a", Ops: []Op{op("ar", 0)}},
			{ID: 1, Source: "b", Ops: []Op{op("ar", 5)}},
		}, ""},
		{"violation compared", []Node{
			{ID: 0, Source: "a", Ops: []Op{op("ar", 0)}},
			{ID: 1, Source: "b", Ops: []Op{op("ar", 100)}},
		}, ""},
		{"no nodes", nil, "no traces to check"},
		{"no collectives", []Node{{ID: 0, Source: "a.json"}, {ID: 1, Source: "b.json"}},
			"no collectives in a.json, b.json (collectives: "},
		{"no collectives, many files", []Node{{ID: 0, Source: "a"}, {ID: 1, Source: "b"}, {ID: 2, Source: "c"}, {ID: 3, Source: "d"}, {ID: 4, Source: "e"}},
			"no collectives in a, b, c and 2 more ("},
		{"one node", []Node{{ID: 3, Source: "node3.xplane.pb", Ops: []Op{op("ar", 0), op("ar", 50)}}},
			"only one node, node 3 (node3.xplane.pb): collectives are compared between nodes; give the traces of two or more nodes, or a combined trace"},
		{"one node with collectives", []Node{
			{ID: 0, Source: "a", Ops: []Op{op("ar", 0)}},
			{ID: 1, Source: "b"}, {ID: 2, Source: "c"},
		}, "only node 0 (a) has collectives; the other 2 nodes have none"},
		{"one other node without", []Node{
			{ID: 0, Source: "a", Ops: []Op{op("ar", 0)}},
			{ID: 1, Source: "b"},
		}, "only node 0 (a) has collectives; the other node has none"},
		{"keys differ", []Node{
			{ID: 0, Source: "a", Ops: []Op{op("all-reduce", 0)}},
			{ID: 1, Source: "b", Ops: []Op{op("all-gather", 0)}},
		}, "no collective appears on two nodes: the 2 nodes with collectives have no op in common"},
	}
	for _, tc := range tests {
		r := Check(tc.nodes)
		got := r.NothingCompared()
		if tc.want == "" {
			if got != "" || r.Compared == 0 {
				t.Errorf("%s: compared %d, NothingCompared %q; want pairs compared and \"\"", tc.name, r.Compared, got)
			}
			continue
		}
		if r.Compared != 0 || !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: compared %d, NothingCompared %q; want 0 and a text starting %q", tc.name, r.Compared, got, tc.want)
		}
	}
}
