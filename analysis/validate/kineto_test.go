package validate

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/trace/kineto"
)

// realdata is the directory of the project's real traces.
const realdata = "../../testdata/realdata"

func TestFromKinetoSampledRanks(t *testing.T) {
	var nodes []Node
	for _, f := range []string{"sampled_rank-0.json.gz", "sampled_rank-1.json.gz"} {
		tr, err := kineto.Read(filepath.Join(realdata, f))
		if err != nil {
			t.Fatal(err)
		}
		n := FromKineto(tr.Rank, tr)
		if n.Source != tr.Name || len(n.Ops) != len(kineto.Collectives(tr)) {
			t.Errorf("%s: node %+v", f, n)
		}
		nodes = append(nodes, n)
	}
	r := Check(nodes)
	t.Log(r.Summary())
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	t.Logf("report:\n%s", b.String())

	// Each rank has 10 collectives, all on NCCL's SendRecv kernel, named by
	// the nccl:<name> annotation they were launched under, with its message
	// size. Being sampled, each rank lacks some of the other's: pairing the
	// i-th kernel with the i-th (as Check did by kernel name) made 6
	// violations out of 10 pairs. Aligned on (name, size) in time order,
	// four pair, all overlapping, ending within 0.2 ms of each other:
	//   rank 0 #2, rank 1 #2: all_reduce of 19618307 elements
	//   rank 0 #4, rank 1 #4: _all_gather_base of 16777216
	//   rank 0 #8, rank 1 #8: all_reduce of 5716654
	//   rank 0 #9, rank 1 #9: _all_gather_base of 16777216
	// Plain LCS also has other pairings of 4 (e.g. rank 0 #0 with rank 1
	// #5, all_to_all of 384, then #2/#6, #8/#8, #9/#9), which make
	// violations; the least displacement picks the one above.
	if got := r.Summary(); got != "Violations: 0, Overlaps: 4, Warnings: 3" {
		t.Errorf("Summary() = %q", got)
	}
	if r.PairedByOrder != 4 || r.PairedBySeq != 0 || r.Unpaired != 12 {
		t.Errorf("paired by order %d, by seq %d, unpaired %d; want 4, 0, 12", r.PairedByOrder, r.PairedBySeq, r.Unpaired)
	}
	if got, want := r.Pairing(), "pairing: 4 pairs by name, message size and order within the process group; 12 invocations without a counterpart"; got != want {
		t.Errorf("Pairing() = %q, want %q", got, want)
	}
	type pair struct {
		key        string
		size       int64
		a, b       int
		endApartNs int64
	}
	var got []pair
	for _, p := range pairsOf(nodes[0], nodes[1]) {
		got = append(got, pair{p.x.Key, p.x.Size, p.i, p.j, abs64(p.x.EndNs - p.y.EndNs)})
	}
	want := []pair{
		{"all_reduce", 19618307, 2, 2, 55_000},
		{"_all_gather_base", 16777216, 4, 4, 332_000},
		{"all_reduce", 5716654, 8, 8, 8_000},
		{"_all_gather_base", 16777216, 9, 9, 189_000},
	}
	if !slices.Equal(got, want) {
		t.Errorf("pairs:\n got %+v\nwant %+v", got, want)
	}
	wantOps := map[string][2]int{"_all_gather_base": {2, 2}, "all_reduce": {4, 2}, "all_to_all": {4, 0}} // invocations per rank, compared
	for _, op := range r.Ops {
		w := wantOps[op.Key]
		if !slices.Equal(op.Invocations, []int{w[0], w[0]}) || op.Compared != w[1] || op.Violations != 0 {
			t.Errorf("op %+v; want %d invocations per rank, %d compared, no violation", op, w[0], w[1])
		}
	}
	if len(r.Ops) != len(wantOps) {
		t.Errorf("%d ops, want %d", len(r.Ops), len(wantOps))
	}
	if got := r.Coverage(); got != "Nodes: 2 of 128 declared; missing: 2-127" {
		t.Errorf("Coverage() = %q", got)
	}
	if w := r.CoverageWarnings(); len(w) != 1 || !strings.HasPrefix(w[0], "126 of 128 declared nodes are missing (2-127)") || r.WarningsText[0] != w[0] {
		t.Errorf("CoverageWarnings() = %q; WarningsText %q", w, r.WarningsText)
	}
	wantWarn := []string{
		`op "all_reduce": node 0 has 4 invocations, node 1 has 4; 2 paired by order, the others have no counterpart`,
		`op "all_to_all": node 0 has 4 invocations, node 1 has 4; none has a counterpart`,
	}
	if !slices.Equal(r.WarningsText[1:], wantWarn) {
		t.Errorf("warnings %q, want %q", r.WarningsText[1:], wantWarn)
	}
}

func TestFromKineto(t *testing.T) {
	tr := &kineto.Trace{Name: "r.json", BaseTimeNs: 1_000_000, Rank: 4, WorldSize: 8, Events: []kineto.Event{
		{Ph: "X", Cat: "kernel", Name: "ncclKernel_B", TsNs: 300, DurNs: 10},
		{Ph: "X", Cat: "cpu_op", Name: "nccl:all_reduce", TsNs: 100, DurNs: 5},
		{Ph: "X", Cat: "kernel", Name: "ncclKernel_A", TsNs: 200, DurNs: 50},
		{Ph: "X", Cat: "kernel", Name: "ncclKernel_B", TsNs: 100, DurNs: 20},
	}}
	got := FromKineto(4, tr)
	want := Node{ID: 4, Source: "r.json", Declared: 8, Ops: []Op{
		{Key: "ncclKernel_B", StartNs: 1_000_100, EndNs: 1_000_120},
		{Key: "ncclKernel_A", StartNs: 1_000_200, EndNs: 1_000_250},
		{Key: "ncclKernel_B", StartNs: 1_000_300, EndNs: 1_000_310},
	}}
	if len(got.Ops) != len(want.Ops) || got.ID != want.ID || got.Source != want.Source || got.Declared != want.Declared {
		t.Fatalf("FromKineto = %+v, want %+v", got, want)
	}
	for i := range got.Ops {
		if got.Ops[i] != want.Ops[i] {
			t.Errorf("op %d = %+v, want %+v", i, got.Ops[i], want.Ops[i])
		}
	}
}
