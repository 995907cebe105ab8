package offsets

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

func TestLookup(t *testing.T) {
	offs := []Offset{
		{RoundID: 1, NodeID: 1, WindowStartNS: 0, WindowEndNS: 100},
		{RoundID: 2, NodeID: 1, WindowStartNS: 100, WindowEndNS: 200},
		{RoundID: 2, NodeID: 2, WindowStartNS: 50, WindowEndNS: 150},
		{RoundID: 3, NodeID: 1, WindowStartNS: 300, WindowEndNS: 400},
		{RoundID: 4, NodeID: 1, WindowStartNS: 350, WindowEndNS: 500}, // overlaps round 3
		{RoundID: 5, NodeID: 3, WindowStartNS: 0, WindowEndNS: 10},
		{RoundID: 6, NodeID: 3, WindowStartNS: 19, WindowEndNS: 30},
	}
	ix := NewIndex(offs)
	for _, tc := range []struct {
		node    int
		local   int64
		round   uint64
		covered bool
	}{
		{1, 0, 1, true},
		{1, 99, 1, true},
		{1, 100, 2, true}, // windows are half-open
		{1, -5, 1, false},
		{1, 249, 2, false}, // 50 past round 2's end, 51 before round 3
		{1, 250, 3, false}, // 51 past round 2's last covered instant, 50 before round 3
		{3, 14, 6, false},  // 5 from both: a tie goes to the later start
		{1, 360, 4, true},  // both cover: the later start
		{1, 450, 4, true},
		{1, 1e18, 4, false},
		{2, 0, 2, false},
		{7, 0, 0, false},
	} {
		for name, lookup := range map[string]func(int, int64) (Offset, bool){
			"Lookup": func(n int, l int64) (Offset, bool) { return Lookup(offs, n, l) },
			"Index":  ix.Lookup,
		} {
			o, ok := lookup(tc.node, tc.local)
			if o.RoundID != tc.round || ok != tc.covered || tc.round != 0 && o.NodeID != tc.node {
				t.Errorf("%s(%d, %d) = round %d, %v; want round %d, %v", name, tc.node, tc.local, o.RoundID, ok, tc.round, tc.covered)
			}
		}
	}
}

// TestIndexMatchesLookup checks the index against the scan on random,
// overlapping, gapped and degenerate windows.
func TestIndexMatchesLookup(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for range 200 {
		var offs []Offset
		for i := range rng.IntN(30) {
			start := rng.Int64N(1000) - 500
			end := start + rng.Int64N(200) - 20
			if rng.IntN(10) == 0 {
				start, end = math.MinInt64+rng.Int64N(3), math.MaxInt64-rng.Int64N(3)
			}
			offs = append(offs, Offset{RoundID: uint64(rng.IntN(5)), WindowID: uint64(i), NodeID: rng.IntN(3), WindowStartNS: start, WindowEndNS: end})
		}
		ix := NewIndex(offs)
		for range 200 {
			node, local := rng.IntN(4), rng.Int64N(1400)-700
			if rng.IntN(20) == 0 {
				local = []int64{math.MinInt64, math.MaxInt64}[rng.IntN(2)]
			}
			a, aok := Lookup(offs, node, local)
			b, bok := ix.Lookup(node, local)
			if !reflect.DeepEqual(a, b) || aok != bok {
				t.Fatalf("node %d at %d: Lookup %+v %v, Index %+v %v\nrecords %+v", node, local, a, aok, b, bok, offs)
			}
		}
	}
}

// TestLookupUntil: the record LookupUntil returns is Lookup's answer for
// every reading in [local, until), on random overlapping windows.
func TestLookupUntil(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for trial := range 300 {
		var offs []Offset
		for k := range 1 + r.IntN(8) {
			start := int64(r.IntN(100))
			offs = append(offs, Offset{NodeID: 1, RoundID: uint64(k + 1), WindowStartNS: start, WindowEndNS: start + 1 + int64(r.IntN(40))})
		}
		ix := NewIndex(offs)
		for local := int64(-5); local < 150; local++ {
			o, covered, until := ix.LookupUntil(1, local)
			if want, wantCov := ix.Lookup(1, local); !reflect.DeepEqual(o, want) || covered != wantCov {
				t.Fatalf("trial %d, %d: LookupUntil %v %v, Lookup %v %v", trial, local, o, covered, want, wantCov)
			}
			if !covered && until != local+1 {
				t.Fatalf("trial %d, %d: not covered but until %d", trial, local, until)
			}
			for s := local; s < until; s++ {
				if got, _ := Lookup(offs, 1, s); !reflect.DeepEqual(got, o) {
					t.Fatalf("trial %d: LookupUntil(%d) = %+v until %d, but Lookup(%d) = %+v", trial, local, o, until, s, got)
				}
			}
		}
	}
}
