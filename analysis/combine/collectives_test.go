package combine

import (
	"testing"

	"github.com/chronosync/chronosync/trace/xplanepb"
	"github.com/chronosync/chronosync/trace/xspace"
)

// TestCollectivesNodes: Collectives returns every node that has a plane,
// with or without collectives, by its node_id stat, else the one node the
// trace's planes name, else the node given, with the largest world_size
// its planes declare.
func TestCollectivesNodes(t *testing.T) {
	plane := func(id int64, name string, node, worldSize int64, collectives int) *xplanepb.XPlane {
		b := xspace.NewPlaneBuilder(id, name)
		if node >= 0 {
			b.AddStat(xspace.Int(statNodeID, node))
		}
		if worldSize != 0 {
			b.AddStat(xspace.Int(StatWorldSize, worldSize))
		}
		lb := b.Line(0, "stream 0", 0)
		lb.Add("compute", 0, 10)
		for i := range collectives {
			lb.Add("rcclAllReduce", int64(100*(i+1)), 10, xspace.Str(statHloOp, "all-reduce.1"))
		}
		return b.Plane()
	}
	cases := []struct {
		name   string
		planes []*xplanepb.XPlane
		want   [][3]int // id, declared, ops
	}{
		{"per-node trace without collectives", []*xplanepb.XPlane{plane(0, "/host:CPU", 5, 8, 0), plane(1, "/device:GPU:0", -1, 0, 0)},
			[][3]int{{5, 8, 0}}},
		{"per-node trace named by its host plane", []*xplanepb.XPlane{plane(0, "/host:CPU", 5, 8, 0), plane(1, "/device:GPU:0", -1, 0, 2)},
			[][3]int{{5, 8, 2}}},
		{"per-node trace, node from the caller", []*xplanepb.XPlane{plane(0, "/host:CPU", -1, 0, 0), plane(1, "/device:GPU:0", -1, 0, 3)},
			[][3]int{{7, 0, 3}}},
		{"combined trace", []*xplanepb.XPlane{
			plane(0, "/host:CPU", 0, 3, 0), plane(1, "/device:GPU:0", 0, 0, 2),
			plane(2, "/device:GPU:10000", 2, 4, 0), plane(3, "/device:GPU:128", 2, 0, 0)},
			[][3]int{{0, 3, 2}, {2, 4, 0}}},
		// Planes without a node_id in a trace of several nodes go to the
		// node given.
		{"several nodes named", []*xplanepb.XPlane{
			plane(0, "/host:CPU", 0, 0, 0), plane(1, "/host:CPU", 1, 0, 0), plane(2, "/device:GPU:0", -1, 0, 1)},
			[][3]int{{0, 0, 0}, {1, 0, 0}, {7, 0, 1}}},
		{"no planes", nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Collectives(&xplanepb.XSpace{Planes: tc.planes}, 7, "t.xplane.pb")
			if len(got) != len(tc.want) {
				t.Fatalf("%d nodes %+v, want %v", len(got), got, tc.want)
			}
			for i, n := range got {
				if w := tc.want[i]; n.ID != w[0] || n.Declared != w[1] || len(n.Ops) != w[2] || n.Source != "t.xplane.pb" {
					t.Errorf("node %d: id %d declared %d, %d ops, source %q; want %v", i, n.ID, n.Declared, len(n.Ops), n.Source, w)
				}
			}
		})
	}
}
