package validate

import (
	"cmp"
	"math"
	"slices"
)

// AlignBand is W, how far from the diagonals of its two ends the order
// rule's alignment may pair invocations (see Check).
const AlignBand = 256

// MaxAlignCells bounds the order rule's alignment table, one byte a cell
// (see Check): two sequences that need more are paired per token instead.
const MaxAlignCells = 1 << 26

// Moves of the alignment, stored per cell for the traceback.
const (
	moveNone  = iota // the origin (or a cell no path reaches)
	movePair         // pair a[i-1] with b[j-1]
	moveSkipA        // leave a[i-1] unpaired
	moveSkipB        // leave b[j-1] unpaired
)

// unreached is the score of a cell outside the band.
const unreached = math.MinInt64

// aligner pairs two nodes' invocations of a group; its buffers are reused
// from one pair of nodes to the next.
type aligner struct {
	pairs     [][2]int
	dir       []uint8
	prev, cur []int64
	ia, ib    []int
}

// pair pairs one node's ops of a group, ga, with another's, gb, by the
// seq rule when every op of both has a Seq, else by the order rule (see
// Check). It returns the pairs (positions in ga and gb, valid until the
// next call), the rule, and false when the order rule could not align
// within MaxAlignCells (see byOrder).
func (al *aligner) pair(ga, gb *group) ([][2]int, string, bool) {
	if ga.seq && gb.seq {
		return al.bySeq(ga.ops, gb.ops), RuleSeq, true
	}
	pairs, aligned := al.byOrder(ga.tok, gb.tok)
	return pairs, RuleOrder, aligned
}

// bySeq pairs the ops of a and b with equal Seq: the k-th in time with the
// k-th where a node has several. The pairs are valid until the next call.
func (al *aligner) bySeq(a, b []Op) [][2]int {
	al.pairs = al.pairs[:0]
	al.ia = bySeqOrder(al.ia, a)
	al.ib = bySeqOrder(al.ib, b)
	for i, j := 0, 0; i < len(al.ia) && j < len(al.ib); {
		switch sa, sb := a[al.ia[i]].Seq, b[al.ib[j]].Seq; {
		case sa < sb:
			i++
		case sa > sb:
			j++
		default:
			al.pairs = append(al.pairs, [2]int{al.ia[i], al.ib[j]})
			i++
			j++
		}
	}
	return al.pairs
}

// bySeqOrder returns the positions of ops (in time order) sorted by Seq,
// stably, in buf.
func bySeqOrder(buf []int, ops []Op) []int {
	buf = buf[:0]
	for i := range ops {
		buf = append(buf, i)
	}
	slices.SortStableFunc(buf, func(x, y int) int { return cmp.Compare(ops[x].Seq, ops[y].Seq) })
	return buf
}

// byOrder aligns token sequences a and b (see Check): it pairs their
// common prefix position by position, then aligns the rest by a dynamic
// program over the band of diagonals, maximizing the number of pairs, then
// minimizing the total displacement Σ|i−j|. It returns the pairs, in
// order, valid until the next call, and false when the table would exceed
// MaxAlignCells; the pairs are then made per token (perToken).
func (al *aligner) byOrder(a, b []int32) ([][2]int, bool) {
	al.pairs = al.pairs[:0]
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		al.pairs = append(al.pairs, [2]int{p, p})
		p++
	}
	a, b = a[p:], b[p:]
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return al.pairs, true
	}
	// Cells (i, j) are prefixes a[:i], b[:j]; d = j−i within [lo, hi], the
	// band clipped to the table; column d−lo.
	lo, hi := max(min(0, m-n)-AlignBand, -n), min(max(0, m-n)+AlignBand, m)
	width := hi - lo + 1
	if (n+1)*width > MaxAlignCells {
		al.perToken(a, b, p)
		return al.pairs, false
	}
	dir := grow(al.dir, (n+1)*width)
	prev, cur := grow(al.prev, width), grow(al.cur, width)
	for i := 0; i <= n; i++ {
		for c := range cur {
			cur[c] = unreached
		}
		row := dir[i*width : (i+1)*width]
		jlo, jhi := max(0, i+lo), min(m, i+hi)
		if i == 0 { // the first row: only skips of b from the origin
			for j := jlo; j <= jhi; j++ {
				cur[j-lo], row[j-lo] = 0, moveSkipB
			}
			row[-lo] = moveNone
			prev, cur = cur, prev
			continue
		}
		x := a[i-1]
		for j, c := jlo, jlo-i-lo; j <= jhi; j, c = j+1, c+1 {
			best, move := int64(unreached), uint8(moveNone)
			if j > 0 && x == b[j-1] && prev[c] != unreached {
				// One more pair outweighs any displacement: the total
				// displacement is below the cell count, < 2^32.
				best, move = prev[c]+1<<32-int64(abs(j-i)), movePair
			}
			if c+1 < width && prev[c+1] > best {
				best, move = prev[c+1], moveSkipA
			}
			if c > 0 && cur[c-1] > best {
				best, move = cur[c-1], moveSkipB
			}
			cur[c], row[c] = best, move
		}
		prev, cur = cur, prev
	}
	al.dir, al.prev, al.cur = dir, prev, cur
	start := len(al.pairs)
	for i, j := n, m; i > 0 || j > 0; {
		switch dir[i*width+j-i-lo] {
		case movePair:
			i, j = i-1, j-1
			al.pairs = append(al.pairs, [2]int{p + i, p + j})
		case moveSkipA:
			i--
		case moveSkipB:
			j--
		default:
			panic("validate: alignment traceback left the band") // cannot happen: (n, m) is reached from (0, 0)
		}
	}
	slices.Reverse(al.pairs[start:])
	return al.pairs, true
}

// perToken pairs the k-th occurrence of each token in a with its k-th in
// b; positions are offset by p.
func (al *aligner) perToken(a, b []int32, p int) {
	at := map[int32][]int{} // token → its positions in b
	for j, t := range b {
		at[t] = append(at[t], j)
	}
	for i, t := range a {
		if js := at[t]; len(js) > 0 {
			al.pairs = append(al.pairs, [2]int{p + i, p + js[0]})
			at[t] = js[1:]
		}
	}
}

// grow returns buf resized to n, reallocated only when too small.
func grow[T any](buf []T, n int) []T {
	if cap(buf) < n {
		return make([]T, n)
	}
	return buf[:n]
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
