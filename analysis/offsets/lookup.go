package offsets

import (
	"cmp"
	"math"
	"slices"
)

// Lookup finds the clock model of node for a reading local of its clock: the
// record whose window [WindowStartNS, WindowEndNS) covers local, and true.
// When several cover it, the one with the latest WindowStartNS wins (then the
// larger RoundID, then the later in offs). When none covers it, Lookup
// returns the nearest window (by the distance from local to the window; ties
// go to the later start, as above) and false; when offs holds no record of
// node, the zero Offset and false.
//
// Lookup scans offs; for many lookups in the same records build an Index.
func Lookup(offs []Offset, node int, local int64) (Offset, bool) {
	best, bestDist := -1, uint64(0)
	for i := range offs {
		o := &offs[i]
		if o.NodeID != node {
			continue
		}
		d := distance(o, local)
		if best < 0 || d < bestDist || d == bestDist && !later(&offs[best], o) {
			best, bestDist = i, d
		}
	}
	if best < 0 {
		return Offset{}, false
	}
	return offs[best], bestDist == 0
}

// distance is how far local lies outside o's window; 0 when it covers local.
func distance(o *Offset, local int64) uint64 {
	switch {
	case local < o.WindowStartNS:
		return uint64(o.WindowStartNS) - uint64(local)
	case local >= o.WindowEndNS:
		return min(uint64(local)-uint64(o.WindowEndNS), math.MaxUint64-1) + 1
	}
	return 0
}

// later reports whether a ranks strictly after b: a later start, then a
// larger round.
func later(a, b *Offset) bool {
	return cmpRank(a, b) > 0
}

func cmpRank(a, b *Offset) int {
	return cmp.Or(cmp.Compare(a.WindowStartNS, b.WindowStartNS), cmp.Compare(a.RoundID, b.RoundID))
}

// Index answers Lookup's question for many readings without scanning all the
// records each time. It is immutable and safe for concurrent use.
type Index struct {
	nodes map[int]*nodeIndex
}

// nodeIndex holds one node's records sorted by rank (start, round, position
// in the input) and, for every prefix, the position of the record with the
// latest end (the later position on ties).
type nodeIndex struct {
	offs   []Offset
	maxEnd []int
}

// NewIndex indexes offs (which it does not modify) for Index.Lookup.
func NewIndex(offs []Offset) *Index {
	ix := &Index{nodes: map[int]*nodeIndex{}}
	for _, o := range offs {
		n := ix.nodes[o.NodeID]
		if n == nil {
			n = &nodeIndex{}
			ix.nodes[o.NodeID] = n
		}
		n.offs = append(n.offs, o)
	}
	for _, n := range ix.nodes {
		slices.SortStableFunc(n.offs, func(a, b Offset) int { return cmpRank(&a, &b) })
		n.maxEnd = make([]int, len(n.offs))
		for i := range n.offs {
			if i > 0 && n.offs[n.maxEnd[i-1]].WindowEndNS > n.offs[i].WindowEndNS {
				n.maxEnd[i] = n.maxEnd[i-1]
			} else {
				n.maxEnd[i] = i
			}
		}
	}
	return ix
}

// Records returns node's records, ordered by window start (then round,
// then their order in the input). The slice is the index's own: do not
// modify it.
func (ix *Index) Records(node int) []Offset {
	if n := ix.nodes[node]; n != nil {
		return n.offs
	}
	return nil
}

// Has reports whether the index holds a record of node.
func (ix *Index) Has(node int) bool { return ix.nodes[node] != nil }

// Lookup returns what the function Lookup returns for the indexed records.
func (ix *Index) Lookup(node int, local int64) (Offset, bool) {
	o, covered, _ := ix.LookupUntil(node, local)
	return o, covered
}

// LookupUntil is Lookup that also says how far the answer holds: when the
// record covers local, Lookup gives the same record for every reading in
// [local, until); otherwise until is local+1. A caller mapping readings in
// increasing order can skip the lookups in between.
func (ix *Index) LookupUntil(node int, local int64) (o Offset, covered bool, until int64) {
	n := ix.nodes[node]
	if n == nil {
		return Offset{}, false, local + 1
	}
	// i: the last record that starts at or before local.
	i, _ := slices.BinarySearchFunc(n.offs, local, func(o Offset, t int64) int {
		if o.WindowStartNS <= t {
			return -1
		}
		return 1
	})
	i--
	// The covering record with the latest rank is the first one found
	// walking back, and none is left once no earlier record ends after local.
	for j := i; j >= 0 && n.offs[n.maxEnd[j]].WindowEndNS > local; j-- {
		if n.offs[j].WindowEndNS > local {
			// A later reading is answered otherwise once the window ends
			// or the next record starts; none of the records between j and
			// i covered local, so none covers a later reading either.
			until = n.offs[j].WindowEndNS
			if i+1 < len(n.offs) {
				until = min(until, n.offs[i+1].WindowStartNS)
			}
			return n.offs[j], true, until
		}
	}
	// None covers local: the nearest is the earlier record that ends last,
	// or the first one that starts after local, the later start on ties.
	best := -1
	if i >= 0 {
		best = n.maxEnd[i]
	}
	if next := i + 1; next < len(n.offs) {
		last := next // the last of the records that share next's start
		for last+1 < len(n.offs) && n.offs[last+1].WindowStartNS == n.offs[next].WindowStartNS {
			last++
		}
		if best < 0 || distance(&n.offs[last], local) <= distance(&n.offs[best], local) {
			best = last
		}
	}
	return n.offs[best], false, local + 1
}
