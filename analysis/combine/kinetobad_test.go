package combine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCombineKinetoBadInput: a truncated rank, a rank beyond its job's
// world_size, two files claiming one rank and timestamps that overflow
// are refused with an error naming the file (and, inside it, the byte and
// the member), and nothing is written: no output, no aligned copy, no
// directory for them.
func TestCombineKinetoBadInput(t *testing.T) {
	dir := t.TempDir()
	good := `{"distributedInfo":{"rank":1,"world_size":2},"traceEvents":[` +
		`{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1000,"dur":5},` +
		`{"ph":"X","cat":"kernel","name":"ncclKernel_AllReduce","pid":0,"tid":7,"ts":1010,"dur":5}]}`
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	rank0 := write("rank-0.json", strings.Replace(good, `"rank":1`, `"rank":0`, 1))
	rank1 := write("rank-1.json", good)
	for _, tc := range []struct {
		name  string
		files []string
		nodes []int
		want  []string // the error says each
	}{
		{"truncated", []string{rank0, write("cut.json", good[:len(good)-30])}, []int{0, 1},
			[]string{"cut.json", "byte ", "traceEvents[1]"}},
		{"rank beyond world_size", []string{rank0, write("rank-5.json", strings.Replace(good, `"rank":1`, `"rank":5`, 1))}, []int{0, 5},
			[]string{"rank-5.json", "byte 27", "distributedInfo.rank", "not below the job's world_size 2"}},
		{"negative rank", []string{rank0, write("neg.json", strings.Replace(good, `"rank":1`, `"rank":-3`, 1))}, []int{0, 1},
			[]string{"neg.json", "distributedInfo.rank", "-3"}},
		{"two files, one rank", []string{rank0, rank1, write("copy.json", good)}, []int{0, 1, 1},
			[]string{"rank-1.json", "copy.json", "both claim rank 1"}},
		{"rank given as another node", []string{rank0, rank1}, []int{0, 3},
			[]string{"rank-1.json", "rank 1, given as node 3"}},
		{"timestamp overflow", []string{rank0, write("huge.json", strings.Replace(good, `"ts":1010`, `"ts":9.3e18`, 1))}, []int{0, 1},
			[]string{"huge.json", "traceEvents[1].ts", "out of range"}},
		{"duration overflow", []string{rank0, write("long.json", strings.Replace(good, `"dur":5}]`, `"dur":4e15}]`, 1))}, []int{0, 1},
			[]string{"long.json", "traceEvents[1]", "out of range"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in []Input
			for i, f := range tc.files {
				in = append(in, Input{Node: tc.nodes[i], Trace: f})
			}
			outDir := filepath.Join(dir, "out-"+strings.ReplaceAll(tc.name, " ", "-"))
			_, err := Combine(in, Options{Output: filepath.Join(outDir, "combined.xplane.pb"), Validate: true})
			if err == nil {
				t.Fatal("Combine accepted it")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if left, _ := filepath.Glob(filepath.Join(outDir, "*")); len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}
