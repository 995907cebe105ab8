package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/chronosync/chronosync/phasegap/params"
)

// TestConfigArgs pins manifest.json's args: the keys in their order (the
// manifest's bytes depend on it), each parameter's value from the table,
// check and poison_ghost from Config.Params, and pure_comm left out.
func TestConfigArgs(t *testing.T) {
	c := testConfig()
	c.Params.Flops, c.Params.Bytes, c.Params.Chunk, c.Params.PureComm, c.Params.PoisonGhost = 11, 12, 13, 14, true
	c.B, c.OMPNumThreads, c.ElemSize, c.CSV = 3, 4, 8, "all.csv"
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var got []string
	vals := map[string]any{}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("%s: starts %v %v", b, tok, err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		got = append(got, tok.(string))
		vals[tok.(string)] = v
	}
	want := []string{"mode", "ranks", "threads", "N", "halo", "kernel", "radius", "timesteps", "B", "poll_every",
		"mpi_thread", "mpi_thread_provided", "progress", "omp_schedule", "omp_chunk", "omp_bind", "omp_places",
		"omp_num_threads", "flops_per_point", "bytes_per_point", "iters", "warmup", "check", "check_every",
		"poison_ghost", "sync", "trace", "trace_iters", "trace_detail", "transport", "out_dir", "run_id", "csv",
		"csv_mode", "manifest", "platform", "hostname", "git_sha", "timestamp", "mpi_impl", "mpi_version",
		"impairment", "elem_size"}
	if !slices.Equal(got, want) {
		t.Errorf("args keys\n%q\nwant\n%q", got, want)
	}
	for _, f := range params.Fields() {
		v, ok := vals[f.Key]
		if f.Key == "pure_comm" {
			if ok {
				t.Errorf("args write pure_comm")
			}
			continue
		}
		if want := fmt.Sprint(f.Value(&c.Params)); fmt.Sprint(v) != want {
			t.Errorf("%s = %v, want %v", f.Key, v, want)
		}
	}
	for k, want := range map[string]string{"B": "3", "omp_num_threads": "4", "check": "true", "poison_ghost": "true",
		"mpi_thread": "funneled", "csv": "all.csv", "hostname": "host,a", "elem_size": "8"} {
		if fmt.Sprint(vals[k]) != want {
			t.Errorf("%s = %v, want %s", k, vals[k], want)
		}
	}
}

// TestTraceConfig pins which parameters the trace files with the run
// configuration and which with the environment.
func TestTraceConfig(t *testing.T) {
	c := testConfig()
	run, env := runConfig(c, Derive(c)), envSummary(c)
	want := []string{"B", "H", "N", "P", "T", "bytes_per_point", "flops_per_point", "iters", "kernel", "mode", "poll_every", "radius", "timesteps", "warmup"}
	if got := keys(run); !reflect.DeepEqual(got, want) {
		t.Errorf("run_config keys %v, want %v", got, want)
	}
	for _, k := range []string{"progress", "omp_schedule", "omp_chunk", "mpi_impl", "hostname"} {
		if _, ok := env[k]; !ok {
			t.Errorf("env lacks %s: %v", k, env)
		}
	}
	if run["P"] != c.Params.Ranks || run["poll_every"] != c.Params.PollEvery || env["omp_schedule"] != c.Params.Schedule {
		t.Errorf("values: run %v env %v", run, env)
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
