package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/chronosync/chronosync/phasegap/params"
)

// arg is one entry of manifest.json's args layout.
type arg struct {
	kind argKind
	key  string
	own  any // argOwn: the value
}

// argKind says where an arg's value comes from.
type argKind int

const (
	argOwn   argKind = iota // Config's own value
	argParam                // the table's parameter key, from Config.Params
	argRest                 // the table's parameters the layout does not name, in the table's order
	argOmit                 // the table's parameter key, not written
)

// own is Config's own value v under key.
func own(key string, v any) arg { return arg{kind: argOwn, key: key, own: v} }

// param is the table's parameters of keys, in that order.
func param(keys ...string) []arg {
	out := make([]arg, len(keys))
	for i, k := range keys {
		out[i] = arg{kind: argParam, key: k}
	}
	return out
}

// argsLayout is manifest.json's args, in order: the table's parameters
// (params.Fields; their values from c.Params) among Config's own values.
// A parameter added to the table is written after B, where the layout
// writes those it does not name, without an edit here; pure_comm, the
// launcher's alone, is not written.
func (c *Config) argsLayout() []arg {
	p := &c.Params
	return slices.Concat(
		param("mode", "ranks", "threads", "N", "halo", "kernel", "radius", "timesteps"),
		[]arg{own("B", c.B), {kind: argRest}, {kind: argOmit, key: "pure_comm"},
			own("mpi_thread", c.MPIThreadRequested), own("mpi_thread_provided", c.MPIThreadProvided)},
		param("progress", "omp_schedule", "omp_chunk"),
		[]arg{own("omp_bind", c.OMPBind), own("omp_places", c.OMPPlaces), own("omp_num_threads", c.OMPNumThreads)},
		param("flops_per_point", "bytes_per_point", "iters", "warmup"),
		[]arg{own("check", p.Check)},
		param("check_every"),
		[]arg{own("poison_ghost", p.PoisonGhost)},
		param("sync"),
		[]arg{own("trace", c.Trace), own("trace_iters", c.TraceIters), own("trace_detail", c.TraceDetail),
			own("transport", c.Transport), own("out_dir", c.OutDir), own("run_id", c.RunID), own("csv", c.CSV),
			own("csv_mode", c.CSVMode), own("manifest", c.Manifest),
			own("platform", c.Platform), own("hostname", c.Hostname), own("git_sha", c.GitSHA),
			own("timestamp", c.Timestamp), own("mpi_impl", c.MPIImpl), own("mpi_version", c.MPIVersion),
			own("impairment", c.Impairment), own("elem_size", c.ElemSize)},
	)
}

// MarshalJSON writes c as manifest.json's args: one object, its keys in
// argsLayout's order, each parameter's key and value from the table.
func (c Config) MarshalJSON() ([]byte, error) {
	layout := c.argsLayout()
	named := map[string]bool{}
	for _, a := range layout {
		if a.kind == argParam || a.kind == argOmit {
			if _, ok := params.FieldByKey(a.key); !ok {
				return nil, fmt.Errorf("manifest args: no parameter %q", a.key)
			}
			named[a.key] = true
		}
	}
	var b bytes.Buffer
	b.WriteByte('{')
	write := func(key string, v any) error {
		val, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("manifest args: %s: %w", key, err)
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(val)
		return nil
	}
	for _, a := range layout {
		switch a.kind {
		case argOwn:
			if err := write(a.key, a.own); err != nil {
				return nil, err
			}
		case argParam:
			f, _ := params.FieldByKey(a.key)
			if err := write(f.Key, f.Value(&c.Params)); err != nil {
				return nil, err
			}
		case argRest:
			for _, f := range params.Fields() {
				if named[f.Key] {
					continue
				}
				if err := write(f.Key, f.Value(&c.Params)); err != nil {
					return nil, err
				}
			}
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
