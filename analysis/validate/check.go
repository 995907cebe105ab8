package validate

import (
	"cmp"
	"fmt"
	"slices"
)

// Check compares the collective invocations of nodes.
//
// Pairing: the ops of each node are split by process group (Op.Group), and
// every two nodes that have a group pair their ops of it by one of two
// rules:
//
//   - seq (RuleSeq): when every op of both nodes in the group has a
//     sequence number (Op.HasSeq), the ops with equal Seq are paired (the
//     k-th in time with the k-th where a node has several of one Seq). A
//     pair whose keys differ is compared all the same, with a warning.
//   - order (RuleOrder): otherwise each node's ops of the group are
//     ordered by start time (then end time, key and size), and the two
//     sequences are aligned on the token (Key, Size): the longest common
//     subsequence, and among those the one whose pairs lie nearest the
//     diagonal, with the least total displacement Σ|i−j| of the paired
//     positions i and j. So an op is paired only with one of the same key
//     and size, pairs keep the time order on both nodes, and a node whose
//     trace lacks some collectives (it starts later, or is sampled) leaves
//     their counterparts unpaired instead of shifting every later pair.
//     Identical sequences pair position by position, the i-th with the
//     i-th.
//
// A pair is a violation when one invocation ends strictly before the other
// starts (a.EndNs < b.StartNs or b.EndNs < a.StartNs); otherwise an
// overlap. Intervals are closed: two that touch (a.EndNs == b.StartNs)
// overlap, since a collective's end and its counterpart's start may be
// stamped at the same instant. Invocations that find no counterpart on some
// other node that has their group are counted in Unpaired.
//
// Coverage: the report counts the distinct node ids it saw against the
// number of nodes the traces declare (Node.Declared; the largest when they
// disagree) and lists the declared ids 0..N-1 that are missing. Their
// warnings (see CoverageWarnings) come first.
//
// Warnings: a key that some nodes have and others lack (one per missing
// node per key); a key that two nodes both have but whose invocations they
// did not all pair (one per key and pair of nodes, saying how many were
// paired and by which rule); pairs made by seq whose keys differ (one per
// group and pair of nodes); sequences too long to align (below; one per
// group and pair of nodes); an invocation that ends before it starts (one
// per node and key), and a node id given more than once (one per id; such
// nodes are compared as distinct nodes).
//
// Cost: every pair of nodes is paired in each group both have. The seq rule
// sorts, O(K log K) for K invocations. The order rule first pairs the
// common prefix of the two token sequences position by position: identical
// sequences take O(K) and no allocation. The rest, n and m tokens, is
// aligned by a dynamic program over the prefix pairs (i, j) in a band of
// diagonals, j−i within [min(0, m−n)−W, max(0, m−n)+W] (W = AlignBand),
// which holds both ends' diagonals: O(n·(|m−n|+2W+1)) time, one byte of
// memory per cell. Where that exceeds MaxAlignCells cells, the k-th
// invocation of a (key, size) on one node is paired with the k-th on the
// other instead, with a warning. Comparing a pair allocates nothing. nodes
// is not modified.
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
	keys, keyIdx := keysOf(nodes)
	toks := map[token]int32{}
	ns := make([]*prepared, len(nodes)) // in ID order
	for x, i := range order {
		n := &nodes[i]
		r.Nodes[x] = NodeInfo{ID: n.ID, Source: n.Source, Ops: len(n.Ops)}
		ns[x] = prepare(n, keyIdx, toks)
	}
	r.cover(nodes)
	r.WarningsText = append(r.WarningsText, r.CoverageWarnings()...)
	for x := 0; x < len(ns); {
		y := x + 1
		for y < len(ns) && ns[y].id == ns[x].id {
			y++
		}
		if y-x > 1 {
			r.warn("node id %d is given %d times; they are compared as distinct nodes", ns[x].id, y-x)
		}
		x = y
	}

	c := &checker{r: r, ns: ns, ex: examples{cap: MaxExamples}, keyWarn: make([][]string, len(keys)),
		pairedA: make([]int, len(keys)), pairedB: make([]int, len(keys)), bySeq: make([]int, len(keys)), byOrder: make([]int, len(keys))}
	for k, key := range keys {
		op := OpReport{Key: key, Invocations: make([]int, len(ns))}
		for x, n := range ns {
			op.Invocations[x] = n.count[k]
			if n.count[k] > 0 {
				op.Nodes++
			}
		}
		for _, n := range ns {
			if n.bad[k] > 0 {
				c.keyWarn[k] = append(c.keyWarn[k], fmt.Sprintf("op %q: node %d has %d invocations that end before they start", key, n.id, n.bad[k]))
			}
		}
		for _, n := range ns {
			if n.count[k] == 0 {
				c.keyWarn[k] = append(c.keyWarn[k], fmt.Sprintf("op %q: node %d has no invocations (%d of %d nodes have some)", key, n.id, op.Nodes, len(ns)))
			}
		}
		r.Ops = append(r.Ops, op)
	}
	for a := range ns {
		for b := a + 1; b < len(ns); b++ {
			c.pairNodes(a, b)
		}
	}

	for _, w := range c.keyWarn {
		r.WarningsText = append(r.WarningsText, w...)
	}
	slices.SortStableFunc(c.groupWarn, func(v, w groupWarning) int { return cmp.Compare(v.group, w.group) })
	for _, w := range c.groupWarn {
		r.WarningsText = append(r.WarningsText, w.text)
	}
	for _, op := range r.Ops {
		r.Violations += op.Violations
		r.Overlaps += op.Overlaps
		r.Compared += op.Compared
	}
	for _, n := range ns {
		for _, g := range n.groups {
			for _, lone := range g.lone {
				if lone {
					r.Unpaired++
				}
			}
		}
	}
	r.Examples = append(r.Examples, c.ex.list...)
	r.Warnings = len(r.WarningsText)
	return r
}

// keysOf returns the distinct keys of nodes' ops, sorted, and their
// positions.
func keysOf(nodes []Node) ([]string, map[string]int32) {
	idx := map[string]int32{}
	var keys []string
	for i := range nodes {
		for _, op := range nodes[i].Ops {
			if _, ok := idx[op.Key]; !ok {
				idx[op.Key] = 0
				keys = append(keys, op.Key)
			}
		}
	}
	slices.Sort(keys)
	for k, key := range keys {
		idx[key] = int32(k)
	}
	return keys, idx
}

// token identifies what the order rule pairs on: a key (its position) and
// a size.
type token struct {
	key  int32
	size int64
}

// prepared is one node's ops, ready to pair.
type prepared struct {
	id     int
	count  []int    // invocations per key
	bad    []int    // per key: invocations that end before they start
	groups []*group // by name
}

// group is one node's ops of one process group.
type group struct {
	name string
	ops  []Op    // by start, end, key and size (then as given)
	key  []int32 // per op: its key's position
	tok  []int32 // per op: its token (interned)
	idx  []int   // per op: its rank in time among the node's ops of its key
	lone []bool  // per op: it found no counterpart on some other node
	seq  bool    // every op has a Seq
}

// prepare sorts n's ops and splits them by group; toks interns the tokens.
func prepare(n *Node, keyIdx map[string]int32, toks map[token]int32) *prepared {
	ops := slices.Clone(n.Ops)
	slices.SortStableFunc(ops, func(a, b Op) int {
		return cmp.Or(cmp.Compare(a.StartNs, b.StartNs), cmp.Compare(a.EndNs, b.EndNs),
			cmp.Compare(a.Key, b.Key), cmp.Compare(a.Size, b.Size))
	})
	p := &prepared{id: n.ID, count: make([]int, len(keyIdx)), bad: make([]int, len(keyIdx))}
	sizes := map[string]int{}
	for _, o := range ops {
		sizes[o.Group]++
	}
	byName := make(map[string]*group, len(sizes))
	for name, size := range sizes {
		g := &group{name: name, seq: true, ops: make([]Op, 0, size), key: make([]int32, 0, size),
			tok: make([]int32, 0, size), idx: make([]int, 0, size), lone: make([]bool, size)}
		byName[name] = g
		p.groups = append(p.groups, g)
	}
	for _, o := range ops {
		g := byName[o.Group]
		k := keyIdx[o.Key]
		t, ok := toks[token{k, o.Size}]
		if !ok {
			t = int32(len(toks))
			toks[token{k, o.Size}] = t
		}
		g.ops = append(g.ops, o)
		g.key = append(g.key, k)
		g.tok = append(g.tok, t)
		g.idx = append(g.idx, p.count[k])
		g.seq = g.seq && o.HasSeq
		p.count[k]++
		if o.EndNs < o.StartNs {
			p.bad[k]++
		}
	}
	slices.SortFunc(p.groups, func(a, b *group) int { return cmp.Compare(a.name, b.name) })
	return p
}

// checker is the state of one Check past the preparation.
type checker struct {
	r         *Report
	ns        []*prepared
	ex        examples
	al        aligner
	keyWarn   [][]string // per key: its warnings, in order
	groupWarn []groupWarning
	// Per key, for the pair of nodes being paired: the pairs made, counted
	// on A's side (by A's key) and B's, and by rule (by A's key).
	pairedA, pairedB, bySeq, byOrder []int
	seenA, seenB                     []bool // per op of the group being paired: paired
}

// groupWarning is a warning about a group.
type groupWarning struct {
	group, text string
}

// pairNodes pairs and compares nodes a and b (positions in c.ns) in every
// group both have.
func (c *checker) pairNodes(a, b int) {
	na, nb := c.ns[a], c.ns[b]
	clear(c.pairedA)
	clear(c.pairedB)
	clear(c.bySeq)
	clear(c.byOrder)
	for i, j := 0, 0; i < len(na.groups) && j < len(nb.groups); {
		switch ga, gb := na.groups[i], nb.groups[j]; cmp.Compare(ga.name, gb.name) {
		case -1:
			i++
		case 1:
			j++
		default:
			c.pairGroup(na.id, nb.id, ga, gb)
			i, j = i+1, j+1
		}
	}
	for k := range c.pairedA {
		if na.count[k] == 0 || nb.count[k] == 0 || (c.pairedA[k] == na.count[k] && c.pairedB[k] == nb.count[k]) {
			continue
		}
		var paired string
		switch {
		case c.pairedA[k] == 0:
			paired = "none has a counterpart"
		case c.bySeq[k] == 0:
			paired = fmt.Sprintf("%d paired by order, the others have no counterpart", c.byOrder[k])
		case c.byOrder[k] == 0:
			paired = fmt.Sprintf("%d paired by seq, the others have no counterpart", c.bySeq[k])
		default:
			paired = fmt.Sprintf("%d paired by seq and %d by order, the others have no counterpart", c.bySeq[k], c.byOrder[k])
		}
		c.keyWarn[k] = append(c.keyWarn[k], fmt.Sprintf("op %q: node %d has %d invocations, node %d has %d; %s",
			c.r.Ops[k].Key, na.id, na.count[k], nb.id, nb.count[k], paired))
	}
}

// pairGroup pairs and compares the ops of group ga of node a and gb of
// node b (the same group).
func (c *checker) pairGroup(a, b int, ga, gb *group) {
	pairs, rule, aligned := c.al.pair(ga, gb)
	if !aligned {
		c.groupWarn = append(c.groupWarn, groupWarning{ga.name, fmt.Sprintf(
			"%s: nodes %d and %d have %d and %d invocations: aligning them would take more than %d cells, so the k-th of each name and message size is paired with the k-th instead",
			groupLabel(ga.name), a, b, len(ga.ops), len(gb.ops), MaxAlignCells)})
	}
	c.seenA, c.seenB = grow(c.seenA, len(ga.ops)), grow(c.seenB, len(gb.ops))
	clear(c.seenA)
	clear(c.seenB)
	mismatches, first := 0, [2]int{}
	for _, p := range pairs {
		i, j := p[0], p[1]
		c.seenA[i], c.seenB[j] = true, true
		ka, kb := ga.key[i], gb.key[j]
		c.pairedA[ka]++
		c.pairedB[kb]++
		if rule == RuleSeq {
			c.bySeq[ka]++
		} else {
			c.byOrder[ka]++
		}
		if ka != kb {
			if mismatches == 0 {
				first = p
			}
			mismatches++
		}
		c.compare(rule, a, b, ga, gb, i, j)
	}
	for i, seen := range c.seenA {
		ga.lone[i] = ga.lone[i] || !seen
	}
	for j, seen := range c.seenB {
		gb.lone[j] = gb.lone[j] || !seen
	}
	if rule == RuleSeq {
		c.r.PairedBySeq += len(pairs)
	} else {
		c.r.PairedByOrder += len(pairs)
	}
	if mismatches > 0 {
		x, y := &ga.ops[first[0]], &gb.ops[first[1]]
		c.groupWarn = append(c.groupWarn, groupWarning{ga.name, fmt.Sprintf(
			"%s: nodes %d and %d run different ops at %d sequence %s (first: seq %d, %q on node %d, %q on node %d); they are compared all the same",
			groupLabel(ga.name), a, b, mismatches, plural(mismatches, "number", "numbers"), x.Seq, x.Key, a, y.Key, b)})
	}
}

// groupLabel names a group in a warning.
func groupLabel(name string) string {
	if name == "" {
		return "ops without a process group"
	}
	return fmt.Sprintf("process group %q", name)
}

// compare compares op i of group ga of node a with op j of gb of node b.
func (c *checker) compare(rule string, a, b int, ga, gb *group, i, j int) {
	x, y := &ga.ops[i], &gb.ops[j]
	op := &c.r.Ops[ga.key[i]]
	op.Compared++
	var gap int64
	var first int
	switch {
	case x.EndNs < y.StartNs:
		gap, first = y.StartNs-x.EndNs, a
	case y.EndNs < x.StartNs:
		gap, first = x.StartNs-y.EndNs, b
	default:
		op.Overlaps++
		return
	}
	op.Violations++
	op.MaxGapNs = max(op.MaxGapNs, gap)
	c.ex.add(Violation{Key: op.Key, Group: ga.name, Index: ga.idx[i], IndexB: gb.idx[j], A: a, B: b,
		First: first, GapNs: gap, Rule: rule})
}
