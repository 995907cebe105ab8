package rounds

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/chronosync/chronosync/estimate"
	"github.com/chronosync/chronosync/probe/probelog"
)

// failingReader reads blocks and fails with err after the first n.
type failingReader struct {
	blocks []probelog.Block
	n      int
	err    error
	next   int
}

func (r *failingReader) Next() (*probelog.Block, error) {
	switch {
	case r.next == r.n:
		return nil, r.err
	case r.next == len(r.blocks):
		return nil, io.EOF
	}
	r.next++
	b := r.blocks[r.next-1]
	return &b, nil
}

// TestReportsKindsStream: the stream's reports are each (round, node)'s
// latest window fitted whole, however its blocks are spread over the
// stream; a read error keeps the reports of the blocks before it.
func TestReportsKindsStream(t *testing.T) {
	blk := func(src, dst int, round, window uint64) probelog.Block {
		b := *block(false)
		b.Src, b.Dst, b.RoundID, b.WindowID = src, dst, round, window
		return b
	}
	stream := []probelog.Block{
		blk(0, 1, 1, 1),
		blk(1, 0, 1, 1),
		blk(0, 2, 1, 1), // node 0's round 1 window, split by node 1's
		blk(0, 1, 2, 2),
		blk(1, 0, 1, 5), // node 1 restarted: its later window of round 1 counts
		blk(1, 2, 1, 5),
		blk(1, 0, 2, 2),
	}
	eo := estimate.Options{Kind: estimate.SVM}
	kinds := []estimate.Kind{estimate.SVM, estimate.Regression}
	// want[round][node] are the blocks of the report.
	want := func(n int) map[uint64]map[int][]probelog.Block {
		all := map[uint64]map[int][]probelog.Block{
			1: {0: {stream[0], stream[2]}, 1: {stream[4], stream[5]}},
			2: {0: {stream[3]}, 1: {stream[6]}},
		}
		if n == 3 { // the first three blocks
			all = map[uint64]map[int][]probelog.Block{1: {0: {stream[0], stream[2]}, 1: {stream[1]}}}
		}
		return all
	}
	boom := errors.New("torn block")
	for _, tc := range []struct {
		n       int
		wantErr error
	}{{len(stream), nil}, {3, boom}} {
		t.Run(fmt.Sprint(tc.n), func(t *testing.T) {
			opens := 0
			open := func() (BlockReader, error) {
				opens++
				return &failingReader{blocks: stream, n: tc.n, err: boom}, nil
			}
			if tc.wantErr == nil {
				open = func() (BlockReader, error) { opens++; return &sliceReader{blocks: stream}, nil }
			}
			visited := 0
			got, err := ReportsKindsStream(open, eo, kinds, func(*probelog.Block) { visited++ })
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			if opens != 2 || visited != tc.n {
				t.Errorf("opened %d times, visited %d blocks; want 2 and %d", opens, visited, tc.n)
			}
			w := want(tc.n)
			for k, kind := range kinds {
				if len(got[k]) != len(w) {
					t.Fatalf("%s: %d rounds, want %d", kind, len(got[k]), len(w))
				}
				for _, r := range got[k] {
					if len(r.Reports) != len(w[r.Round]) {
						t.Fatalf("%s round %d: %d reports, want %d", kind, r.Round, len(r.Reports), len(w[r.Round]))
					}
					for node, d := range r.Reports {
						o := eo
						o.Kind = kind
						if exp := FitWindow(node, 0, w[r.Round][node], o); !proto.Equal(d, exp) {
							t.Errorf("%s round %d node %d: report %v, want %v", kind, r.Round, node, d, exp)
						}
					}
				}
			}
		})
	}
}
