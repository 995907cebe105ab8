package validate

import (
	"bytes"
	"path/filepath"
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

	// Every pair of nodes compares the first min(count) invocations of each
	// key both have.
	pairs := 0
	for _, op := range r.Ops {
		for a := range op.Invocations {
			for b := a + 1; b < len(op.Invocations); b++ {
				pairs += min(op.Invocations[a], op.Invocations[b])
			}
		}
	}
	if r.Overlaps+r.Violations != pairs || r.Compared != pairs {
		t.Errorf("overlaps %d + violations %d, compared %d; want %d compared pairs", r.Overlaps, r.Violations, r.Compared, pairs)
	}
	// What the two sampled ranks hold: 10 SendRecv kernels each, matched in
	// time order. The traces are sampled (kernels dropped), so the i-th
	// kernels are not always the same collective: most pairs miss each other.
	// They are 2 ranks of a 128-rank job, which the one warning says.
	if got := r.Summary(); got != "Violations: 6, Overlaps: 4, Warnings: 1" {
		t.Errorf("Summary() = %q", got)
	}
	if got := r.Coverage(); got != "Nodes: 2 of 128 declared; missing: 2-127" {
		t.Errorf("Coverage() = %q", got)
	}
	if w := r.CoverageWarnings(); len(w) != 1 || !strings.HasPrefix(w[0], "126 of 128 declared nodes are missing (2-127)") || r.WarningsText[0] != w[0] {
		t.Errorf("CoverageWarnings() = %q; WarningsText %q", w, r.WarningsText)
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
