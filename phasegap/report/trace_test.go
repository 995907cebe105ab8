package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// traceRanks gives two ranks of five iterations with two threads each.
func traceRanks() []Rank {
	var out []Rank
	for r := range 2 {
		rk := Rank{Rank: r}
		for i := range 5 {
			s := nb(i, int64(100*i+r), 1, 40, int64(2+r), 3, 0, 12)
			s.TestCalls = i
			s.CommStart += 500 // packing the send buffers precedes the post
			s.CommEnd += 500
			s.Threads = []Span{{s.InteriorStart, s.InteriorStart + 39*us1}, {s.InteriorStart, s.WaitStart}}
			rk.Samples = append(rk.Samples, s)
		}
		out = append(out, rk)
	}
	return out
}

type traceFile struct {
	TraceEvents     []map[string]any `json:"traceEvents"`
	DisplayTimeUnit string           `json:"displayTimeUnit"`
	OtherData       map[string]any   `json:"otherData"`
}

func writeTrace(t *testing.T, ranks []Rank, last int, detail string) ([]byte, traceFile) {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteTrace(&buf, testConfig(), ranks, last, detail); err != nil {
		t.Fatal(err)
	}
	var tf traceFile
	dec := json.NewDecoder(bytes.NewReader(buf.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&tf); err != nil {
		t.Fatalf("trace is not the JSON object format: %v\n%s", err, buf.Bytes())
	}
	return buf.Bytes(), tf
}

func TestWriteTrace(t *testing.T) {
	ranks := traceRanks()
	slices.Reverse(ranks) // input order must not matter
	_, tf := writeTrace(t, ranks, 3, "thread")
	if tf.DisplayTimeUnit != "ns" || tf.OtherData["trace_schema_version"] != 1.0 {
		t.Errorf("displayTimeUnit %q, otherData %v", tf.DisplayTimeUnit, tf.OtherData)
	}
	if conf, _ := tf.OtherData["config"].(map[string]any); conf["P"] != 2.0 || conf["mode"] != "phase_nb" || conf["B"] != 1.0 {
		t.Errorf("otherData config = %v", tf.OtherData["config"])
	}
	type key struct {
		pid, tid int
		ph, name string
	}
	seen := map[key][]int{}           // iterations per (pid, tid, ph, name)
	lane := map[[2]int][][2]float64{} // tid 0 spans per (pid, iter): iteration first
	var meta []string
	for _, e := range tf.TraceEvents {
		pid, tid := int(e["pid"].(float64)), int(e["tid"].(float64))
		ph, name := e["ph"].(string), e["name"].(string)
		args, _ := e["args"].(map[string]any)
		switch ph {
		case "M":
			meta = append(meta, fmt.Sprintf("%d/%d %s %v", pid, tid, name, args["name"]))
		case "X", "b":
			seen[key{pid, tid, ph, name}] = append(seen[key{pid, tid, ph, name}], int(args["iter"].(float64)))
			if ph == "X" && tid == 0 {
				k := [2]int{pid, int(args["iter"].(float64))}
				lane[k] = append(lane[k], [2]float64{e["ts"].(float64), e["ts"].(float64) + e["dur"].(float64)})
			}
			if ph == "X" && name == "iteration" && tid == 0 {
				i := int(args["iter"].(float64))
				if want := float64(100*i+pid) * 1; e["ts"] != want || e["dur"] != 46.0+float64(pid) {
					t.Errorf("rank %d iteration %d: ts %v dur %v, want %v µs", pid, i, e["ts"], e["dur"], want)
				}
			}
		case "C":
			seen[key{pid, tid, ph, name}] = append(seen[key{pid, tid, ph, name}], 0)
		case "i":
			conf, _ := args["config"].(map[string]any)
			env, _ := args["env"].(map[string]any)
			if name != "run_config" || e["s"] != "g" || conf["H"] != 256.0 || conf["kernel"] != "stencil3" ||
				env["mpi_thread_provided"] != "funneled" || env["omp_proc_bind"] != true {
				t.Errorf("instant event %v", e)
			}
		}
	}
	// tid 0 must nest: the phases lie inside their iteration, one after another.
	for k, spans := range lane {
		it, phases := spans[0], spans[1:]
		for i, p := range phases {
			if p[0] < it[0] || p[1] > it[1] || (i > 0 && p[0] < phases[i-1][1]) {
				t.Errorf("rank %d iteration %d: phase %v does not nest in %v after %v", k[0], k[1], p, it, phases[:i])
			}
		}
	}
	for pid := range 2 {
		last3 := []int{2, 3, 4}
		for _, k := range []key{
			{pid, 0, "X", "iteration"}, {pid, 0, "X", "comm_post"}, {pid, 0, "X", "interior_compute"},
			{pid, 0, "X", "waitall"}, {pid, 0, "X", "boundary_compute"},
			{pid, 1, "X", "interior_compute"}, {pid, 2, "X", "interior_compute"},
			{pid, 0, "b", "comm_window"},
		} {
			if got := seen[k]; !reflect.DeepEqual(got, last3) {
				t.Errorf("%+v: iterations %v, want the last three %v", k, got, last3)
			}
		}
		for _, c := range []string{"bytes_total", "mpi_test_calls", "t_wait", "wait_frac"} {
			if n := len(seen[key{pid, 0, "C", c}]); n != 3 {
				t.Errorf("rank %d counter %s: %d events, want 3", pid, c, n)
			}
		}
		for _, m := range []string{
			fmt.Sprintf("%d/0 process_name rank %d", pid, pid), fmt.Sprintf("%d/0 thread_name iterations", pid),
			fmt.Sprintf("%d/1 thread_name omp thread 0", pid), fmt.Sprintf("%d/2 thread_name omp thread 1", pid),
		} {
			if !slices.Contains(meta, m) {
				t.Errorf("missing metadata %q in %q", m, meta)
			}
		}
	}
}

func TestWriteTraceDetail(t *testing.T) {
	// detail rank: no thread lanes; lastIters 0: every iteration.
	_, tf := writeTrace(t, traceRanks(), 0, "rank")
	iters := 0
	for _, e := range tf.TraceEvents {
		if e["tid"] != 0.0 {
			t.Errorf("detail rank wrote tid %v: %v", e["tid"], e)
		}
		if e["name"] == "iteration" {
			iters++
		}
	}
	if iters != 10 {
		t.Errorf("%d iteration spans, want all 10", iters)
	}
	counter := func(name string) []any {
		var out []any
		for _, e := range tf.TraceEvents {
			if e["ph"] == "C" && e["name"] == name && e["pid"] == 1.0 {
				for _, v := range e["args"].(map[string]any) {
					out = append(out, v)
				}
			}
		}
		return out
	}
	if got := counter("mpi_test_calls"); !reflect.DeepEqual(got, []any{0.0, 1.0, 2.0, 3.0, 4.0}) {
		t.Errorf("mpi_test_calls = %v", got)
	}
	if got := counter("wait_frac"); len(got) != 5 || got[0] != 3.0/47 {
		t.Errorf("wait_frac = %v, want 3/47 each", got)
	}
	if got := counter("bytes_total"); len(got) != 5 || got[0] != 4096.0 {
		t.Errorf("bytes_total = %v", got)
	}
	if err := WriteTrace(&bytes.Buffer{}, testConfig(), nil, 3, "threads"); err == nil ||
		!strings.Contains(err.Error(), "threads") {
		t.Errorf("bad detail: err = %v", err)
	}
}

func TestOutputsDeterministic(t *testing.T) {
	hash := func(ranks []Rank) [3][32]byte {
		var out [3][32]byte
		var buf bytes.Buffer
		if err := WriteTrace(&buf, testConfig(), ranks, 3, "thread"); err != nil {
			t.Fatal(err)
		}
		out[0] = sha256.Sum256(buf.Bytes())
		var sums []RankSummary
		for _, r := range ranks {
			sums = append(sums, Summarize(r))
		}
		row := Aggregate(testConfig(), sums, 42)
		buf.Reset()
		if err := WriteCSV(&buf, []Row{row}, true); err != nil {
			t.Fatal(err)
		}
		out[1] = sha256.Sum256(buf.Bytes())
		buf.Reset()
		if err := WriteManifest(&buf, testManifest(row)); err != nil {
			t.Fatal(err)
		}
		out[2] = sha256.Sum256(buf.Bytes())
		return out
	}
	want := hash(traceRanks())
	for i := range 20 { // map iteration order differs run to run
		ranks := traceRanks()
		if i%2 == 1 {
			slices.Reverse(ranks)
		}
		if got := hash(ranks); got != want {
			t.Fatalf("run %d: output hashes %x, want %x", i, got, want)
		}
	}
}
