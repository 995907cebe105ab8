package validate

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Declaration is one number of nodes that some of the checked traces
// declare the job to have (Kineto's distributedInfo.world_size, an XSpace
// plane's world_size stat).
type Declaration struct {
	// Total is the declared number of nodes (ranks), ids 0..Total-1.
	Total int `json:"total"`
	// Nodes are the ids of the nodes whose traces declare it, ascending.
	Nodes []int `json:"nodes"`
}

// MaxMissingListed is the largest number of declared nodes for which
// Report.MissingNodes lists the missing ids; beyond it only
// Report.NodesMissing counts them.
const MaxMissingListed = 1 << 17

// maxRanges is the most id ranges a warning or the coverage line writes.
const maxRanges = 16

// cover fills in how many nodes r saw against how many the traces declare.
func (r *Report) cover(nodes []Node) {
	seen := map[int]bool{}
	declares := map[[2]int]bool{} // (total, id)
	byTotal := map[int][]int{}
	for _, n := range nodes {
		seen[n.ID] = true
		if k := [2]int{n.Declared, n.ID}; n.Declared > 0 && !declares[k] {
			declares[k] = true
			byTotal[n.Declared] = append(byTotal[n.Declared], n.ID)
		}
	}
	r.NodesSeen = len(seen)
	r.Declared = []Declaration{}
	for total, ids := range byTotal {
		slices.Sort(ids)
		r.Declared = append(r.Declared, Declaration{Total: total, Nodes: ids})
	}
	slices.SortFunc(r.Declared, func(a, b Declaration) int { return cmp.Compare(a.Total, b.Total) })
	r.MissingNodes = []int{}
	if len(r.Declared) == 0 {
		return
	}
	r.NodesDeclared = r.Declared[len(r.Declared)-1].Total
	r.NodesMissing = r.NodesDeclared
	for id := range seen {
		if id >= 0 && id < r.NodesDeclared {
			r.NodesMissing--
		}
	}
	if r.NodesDeclared > MaxMissingListed {
		return
	}
	for id := range r.NodesDeclared {
		if !seen[id] {
			r.MissingNodes = append(r.MissingNodes, id)
		}
	}
}

// outside returns the ids of r's nodes that are not among the declared
// ids 0..NodesDeclared-1, ascending.
func (r *Report) outside() []int {
	var ids []int
	if r.NodesDeclared == 0 {
		return nil
	}
	for _, n := range r.Nodes { // by id
		if (n.ID < 0 || n.ID >= r.NodesDeclared) && (len(ids) == 0 || ids[len(ids)-1] != n.ID) {
			ids = append(ids, n.ID)
		}
	}
	return ids
}

// Coverage returns the line that says how many nodes the check saw:
// "Nodes: 2 of 128 declared; missing: 2-127", "Nodes: 4 of 4 declared",
// or "Nodes: 3 (the traces declare no total)".
func (r *Report) Coverage() string {
	if r.NodesDeclared == 0 {
		return fmt.Sprintf("Nodes: %d (the traces declare no total)", r.NodesSeen)
	}
	s := fmt.Sprintf("Nodes: %d of %d declared", r.NodesSeen, r.NodesDeclared)
	if r.NodesMissing > 0 {
		s += "; missing: " + r.missing()
	}
	return s
}

// CoverageWarnings returns the warnings about the nodes seen against those
// declared (they are also the first of WarningsText): traces that disagree
// about the total, declared nodes that are missing, and node ids outside
// the declared ones.
func (r *Report) CoverageWarnings() []string {
	var out []string
	if len(r.Declared) > 1 {
		parts := make([]string, len(r.Declared))
		for i, d := range r.Declared {
			parts[i] = fmt.Sprintf("%d (%s %s)", d.Total, plural(len(d.Nodes), "node", "nodes"), idRanges(d.Nodes))
		}
		out = append(out, fmt.Sprintf("the traces disagree about the number of nodes: %s; the largest, %d, is taken",
			strings.Join(parts, ", "), r.NodesDeclared))
	}
	if r.NodesMissing > 0 {
		out = append(out, fmt.Sprintf("%d of %d declared nodes are missing (%s): their collectives are not checked, so the counts say nothing about them",
			r.NodesMissing, r.NodesDeclared, r.missing()))
	}
	if ids := r.outside(); len(ids) > 0 {
		out = append(out, fmt.Sprintf(plural(len(ids), "node %s is", "nodes %s are")+" outside the declared ids 0-%d", idRanges(ids), r.NodesDeclared-1))
	}
	return out
}

// missing names the missing nodes: their ids, or their count where they
// are too many to list.
func (r *Report) missing() string {
	if len(r.MissingNodes) == 0 {
		return fmt.Sprintf("%d ids, too many to list", r.NodesMissing)
	}
	return idRanges(r.MissingNodes)
}

// idRanges writes ascending ids as ranges, "0, 2-5, 9", the first
// maxRanges of them.
func idRanges(ids []int) string {
	var b strings.Builder
	for i, n := 0, 0; i < len(ids); n++ {
		if n == maxRanges {
			fmt.Fprintf(&b, ", ... (%d more ids)", len(ids)-i)
			break
		}
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(ids[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(ids[j]))
		}
		i = j + 1
	}
	return b.String()
}

// plural returns one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
