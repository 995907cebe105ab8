package sweep

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/scenario"
)

// printedScenario is how a point's scenario was made before Scenario: a
// YAML file printed and parsed back. TestScenarioAsPrinted pins Scenario
// to it.
func printedScenario(m *Matrix, pt Point) []byte {
	q := pt.Params
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\nseed: %d\nduration: %s\nnodes: %d\n", pointName(m.Name+"-"+pt.Sweep+"-"+pt.ID()), m.Seed, m.Duration, q.Ranks)
	fmt.Fprintf(&b, "description: point %s of sweep %s of %s, on the %s transport\n", pt.ID(), pt.Sweep, m.Name, pt.Transport)
	topology := "ring"
	if q.Ranks < 2 {
		topology = "full_mesh"
	}
	fmt.Fprintf(&b, "topology: {kind: %s}\nlinks:\n  default:\n    preset: %s\n", topology, pt.Preset)
	preset, _ := scenario.LinkPreset(pt.Preset)
	if m.Link.Delay > 0 && preset.Delay == nil {
		fmt.Fprintf(&b, "    delay: %s\n", m.Link.Delay)
	}
	if m.Link.Jitter > 0 && preset.Jitter == nil {
		fmt.Fprintf(&b, "    jitter: %s\n", m.Link.Jitter)
	}
	b.WriteString("workload:\n  kind: phasegap\n")
	for _, kv := range [][2]string{
		{"mode", q.Mode}, {"threads", strconv.Itoa(q.Threads)}, {"N", strconv.Itoa(q.N)}, {"halo", strconv.Itoa(q.Halo)},
		{"kernel", q.Kernel}, {"radius", strconv.Itoa(q.Radius)}, {"timesteps", strconv.Itoa(q.Timesteps)},
		{"flops_per_point", strconv.Itoa(q.Flops)}, {"bytes_per_point", strconv.Itoa(q.Bytes)},
		{"iters", strconv.Itoa(q.Iters)}, {"warmup", strconv.Itoa(q.Warmup)}, {"poll_every", strconv.Itoa(q.PollEvery)},
		{"omp_schedule", q.Schedule}, {"omp_chunk", strconv.Itoa(q.Chunk)}, {"progress", q.Progress},
		{"trace_iters", "10"},
	} {
		fmt.Fprintf(&b, "  %s: %s\n", kv[0], kv[1])
	}
	if c := m.CostsPath(); c != "" {
		abs, _ := filepath.Abs(c)
		fmt.Fprintf(&b, "  costs: %s\n", strconv.Quote(abs))
	}
	return []byte(b.String())
}

// TestScenarioAsPrinted checks that every point's scenario, built
// directly, marshals to the same bytes as the scenario the sweep used to
// print and parse back, for matrices with and without a link, presets
// that set the delay and jitter or not, a costs file, and odd names.
func TestScenarioAsPrinted(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "c.yaml"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"plain": matrixYAML,
		"link": `name: Odd_Name
base: {N: 5000, iters: 5, warmup: 0, kernel: stencil5, halo: 8, poll_every: 77, omp_schedule: dynamic, omp_chunk: 9, flops_per_point: 3}
link: {delay: 1500us, jitter: 3us}
duration: 7s
seed: 42
costs: c.yaml
sweeps:
  - name: presets
    ranks: [1, 3]
    progress: [inline_poll, progress_thread]
    preset: [none, lat_1ms, jitter_5ms_2ms, loss_0.1, bw_100mbit]
`,
	}
	for name, text := range files {
		t.Run(name, func(t *testing.T) {
			m, err := Parse([]byte(text), filepath.Join(dir, name+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			for _, pt := range m.Plan() {
				if pt.Transport == TransportMPI {
					continue
				}
				built, err := m.Scenario(pt)
				if err != nil {
					t.Fatalf("%s: %v", pt.ID(), err)
				}
				parsed, err := scenario.Parse(pt.ID()+".yaml", printedScenario(m, pt))
				if err != nil {
					t.Fatalf("%s: printed: %v", pt.ID(), err)
				}
				got, err := built.Marshal()
				if err != nil {
					t.Fatal(err)
				}
				want, err := parsed.Marshal()
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != string(want) {
					t.Errorf("%s/%s: built\n%s\nprinted and parsed\n%s", pt.Sweep, pt.ID(), got, want)
				}
			}
		})
	}
}

// TestBaseKeys checks the base section's decoding through package
// params's table: every Sweep key is taken, a scenario-only or unknown key
// and a wrong type are refused at their line.
func TestBaseKeys(t *testing.T) {
	tests := []struct {
		name, base, err string
	}{
		{"every key", "{mode: nb_test, ranks: 2, threads: 2, N: 9000, halo: 8, kernel: axpy, radius: 3, timesteps: 2, flops_per_point: 1, bytes_per_point: 2, iters: 3, warmup: 1, poll_every: 5, omp_schedule: guided, omp_chunk: 7, progress: progress_thread}", ""},
		{"unknown key", "{polll_every: 5}", "m.yaml:2: field polll_every not found (expected a phasegap parameter)"},
		{"launcher-only key", "{pure_comm: 5}", "m.yaml:2: field pure_comm not found (expected a phasegap parameter)"},
		{"wrong type", "{threads: many}", "m.yaml:2: cannot unmarshal !!str `many` into int"},
		{"not a mapping", "[1]", "m.yaml:2: base: expected a mapping of phasegap parameters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse([]byte("name: b\nbase: "+tt.base+"\nsweeps: [{name: a}]\n"), "m.yaml")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v; want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			p := m.Plan()[0].Params
			if p.Mode != "nb_test" || p.Ranks != 2 || p.PollEvery != 5 || p.Chunk != 7 || p.Progress != "progress_thread" || p.Radius != 3 || p.Kernel != "axpy" {
				t.Errorf("base not applied: %+v", p)
			}
		})
	}
}
