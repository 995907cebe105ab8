package report

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/chronosync/chronosync/phasegap/params"
)

// TestConfigParams checks that Config carries every parameter of the
// table (but pure_comm, which the launcher alone uses) under its key as
// the manifest's JSON name, and that Params reads each back from that
// field: a parameter added to the table without its Config field, or
// mapped to another field, fails here.
func TestConfigParams(t *testing.T) {
	var c Config
	v := reflect.ValueOf(&c).Elem()
	byTag := map[string]reflect.Value{}
	for i := range v.NumField() {
		tag, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		byTag[tag] = v.Field(i)
		switch fv := v.Field(i); fv.Kind() {
		case reflect.Int:
			fv.SetInt(int64(100 + i))
		case reflect.String:
			fv.SetString("s" + tag)
		case reflect.Bool:
			fv.SetBool(true)
		}
	}
	p := c.Params()
	for _, f := range params.Fields() {
		if f.Key == "pure_comm" {
			continue
		}
		fv, ok := byTag[f.Key]
		if !ok {
			t.Errorf("Config has no field tagged %q", f.Key)
			continue
		}
		if got, want := f.Value(&p), fv.Interface(); got != want {
			t.Errorf("%s: Params gives %v, Config's field holds %v", f.Key, got, want)
		}
	}
	if !p.Check || !p.PoisonGhost {
		t.Errorf("Check %v PoisonGhost %v, want both true", p.Check, p.PoisonGhost)
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
	if run["P"] != c.Ranks || run["poll_every"] != c.PollEvery || env["omp_schedule"] != c.OMPSchedule {
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
