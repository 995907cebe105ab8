package offsets

import "fmt"

// records finds a record that repeats another of the same file (issue 30):
// in offsets.jsonl one record per round and node, in rounds.jsonl one
// round line per round and one edge per round, source and destination.
// The writers never write two; a file that has two says two things of one
// node-round, and no reader may pick one of them (the last used to win
// unseen). Memory is one entry per record read.
type records struct {
	first map[recordKey]int // the key of a record → its line
}

// recordKey is what a record is one of: its kind ('o' offset, 'e' edge,
// 'r' round line), its round, and its node or its edge's nodes.
type recordKey struct {
	kind  byte
	round uint64
	a, b  int
}

// add records rec, read at line, or says which earlier line has its key:
// "round 3 node 2: a second record (first at line 5)".
func (r *records) add(rec any, line int) error {
	var k recordKey
	var what string
	switch rec := rec.(type) {
	case *Offset:
		k = recordKey{'o', rec.RoundID, rec.NodeID, 0}
		what = fmt.Sprintf("round %d node %d", rec.RoundID, rec.NodeID)
	case *Edge:
		k = recordKey{'e', rec.RoundID, rec.Src, rec.Dst}
		what = fmt.Sprintf("round %d edge %d→%d", rec.RoundID, rec.Src, rec.Dst)
	case *Round:
		k = recordKey{'r', rec.RoundID, 0, 0}
		what = fmt.Sprintf("round %d", rec.RoundID)
	default:
		return nil
	}
	if r.first == nil {
		r.first = map[recordKey]int{}
	}
	if first, ok := r.first[k]; ok {
		return fmt.Errorf("%s: a second record (first at line %d)", what, first)
	}
	r.first[k] = line
	return nil
}
