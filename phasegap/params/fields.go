package params

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Field is one parameter: its key (in a scenario's phasegap section and a
// sweep file's base; the CLI's flag is the key with hyphens), its help,
// its bounds, and where it is set. Exactly one of Int and Str is set.
type Field struct {
	Key string // the key: poll_every
	Doc string // the flag's help
	// Column is the field's name in a run's results (results.csv, the
	// trace's metadata, a sweep's records): the plan's letter where it
	// has one (P, T, H), else the key.
	Column string
	// Unit names a value in a range error ("a thread count"); Called
	// names the parameter in a one-of error (default the key).
	Unit, Called string
	// Min and Max bound an integer, both included; Max 0 is no bound.
	Min, Max int
	// OneOf lists a string's values.
	OneOf []string
	// Scenario says the key is one of a scenario's phasegap section (a
	// Settings field); Sweep that it is one of a sweep file's base.
	Scenario, Sweep bool
	Int             func(*Params) *int
	Str             func(*Params) *string
}

// Flag is the field's CLI flag, without its dashes: the key with hyphens.
func (f Field) Flag() string { return strings.ReplaceAll(f.Key, "_", "-") }

// Col returns the field's name in a run's results: Column, or the key.
func (f Field) Col() string {
	if f.Column != "" {
		return f.Column
	}
	return f.Key
}

// Value returns the field's value in p: an int or a string.
func (f Field) Value(p *Params) any {
	if f.Int != nil {
		return *f.Int(p)
	}
	return *f.Str(p)
}

// Name returns how a one-of error names the field.
func (f Field) Name() string {
	if f.Called != "" {
		return f.Called
	}
	return f.Key
}

// flag names a key as the CLI's flag: --poll-every.
func flag(key string) string { return "--" + strings.ReplaceAll(key, "_", "-") }

// Fields returns the parameters' table, in the order a scenario's phasegap
// section writes them (the launcher-only ones last).
func Fields() []Field {
	return []Field{
		{Key: "mode", Called: "phasegap mode", OneOf: Modes(), Scenario: true, Sweep: true,
			Doc: "orchestration: phase_nb, phase_blk, nb_test, phase_persist or omp_tasks",
			Str: func(p *Params) *string { return &p.Mode }},
		{Key: "ranks", Column: "P", Sweep: true, Doc: "P: MPI ranks (must equal mpirun -np)",
			Int: func(p *Params) *int { return &p.Ranks }},
		{Key: "threads", Column: "T", Unit: "a thread count", Min: 1, Max: MaxThreads, Scenario: true, Sweep: true,
			Doc: "T: threads per rank", Int: func(p *Params) *int { return &p.Threads }},
		{Key: "N", Unit: "an element count", Min: 1, Max: MaxN, Scenario: true, Sweep: true,
			Doc: "owned elements per rank", Int: func(p *Params) *int { return &p.N }},
		{Key: "halo", Column: "H", Unit: "an element count", Min: 0, Max: MaxN, Scenario: true, Sweep: true,
			Doc: "H: halo width in elements (at least B = radius × timesteps)",
			Int: func(p *Params) *int { return &p.Halo }},
		{Key: "kernel", OneOf: Kernels(), Scenario: true, Sweep: true, Doc: "stencil3, stencil5 or axpy",
			Str: func(p *Params) *string { return &p.Kernel }},
		{Key: "radius", Unit: "a radius (0: the kernel's)", Min: 0, Max: MaxRadius, Scenario: true, Sweep: true,
			Doc: "R: stencil radius (0: the kernel's)", Int: func(p *Params) *int { return &p.Radius }},
		{Key: "timesteps", Unit: "a step count", Min: 1, Max: MaxSteps, Scenario: true, Sweep: true,
			Doc: "S: stencil steps per halo exchange", Int: func(p *Params) *int { return &p.Timesteps }},
		{Key: "flops_per_point", Unit: "a count", Min: 0, Max: MaxIntense, Scenario: true, Sweep: true,
			Doc: "extra arithmetic per point", Int: func(p *Params) *int { return &p.Flops }},
		{Key: "bytes_per_point", Unit: "a count", Min: 0, Max: MaxIntense, Scenario: true, Sweep: true,
			Doc: "extra bytes streamed per point from a side buffer", Int: func(p *Params) *int { return &p.Bytes }},
		{Key: "iters", Unit: "an iteration count", Min: 1, Max: MaxIters, Scenario: true, Sweep: true,
			Doc: "K: measured iterations", Int: func(p *Params) *int { return &p.Iters }},
		{Key: "warmup", Unit: "an iteration count", Min: 0, Max: MaxIters, Scenario: true, Sweep: true,
			Doc: "W: iterations before measuring", Int: func(p *Params) *int { return &p.Warmup }},
		{Key: "poll_every", Unit: "a point count", Min: 1, Max: MaxN, Scenario: true, Sweep: true,
			Doc: "points computed between two MPI_Testall (nb_test; the task size of omp_tasks)",
			Int: func(p *Params) *int { return &p.PollEvery }},
		{Key: "omp_schedule", OneOf: []string{"static", "dynamic", "guided"}, Scenario: true, Sweep: true,
			Doc: "interior schedule: static, dynamic or guided", Str: func(p *Params) *string { return &p.Schedule }},
		{Key: "omp_chunk", Unit: "a point count (0: the default)", Min: 0, Max: MaxN, Scenario: true, Sweep: true,
			Doc: "dynamic and guided chunk, in points (0: 1024)", Int: func(p *Params) *int { return &p.Chunk }},
		{Key: "progress", OneOf: []string{"inline_poll", "progress_thread"}, Scenario: true, Sweep: true,
			Doc: "inline_poll (the master tests) or progress_thread (a helper thread tests; needs MPI_THREAD_MULTIPLE)",
			Str: func(p *Params) *string { return &p.Progress }},
		{Key: "pure_comm", Unit: "an exchange count", Min: 0, Max: MaxIters,
			Doc: "exchanges timed with no computation after the warmup (for the OSU, IMB and SMB overlap figures)",
			Int: func(p *Params) *int { return &p.PureComm }},
		{Key: "check_every", Unit: "an iteration count", Min: 1, Max: MaxIters,
			Doc: "E: iterations between checksums", Int: func(p *Params) *int { return &p.CheckEvery }},
		{Key: "sync", OneOf: []string{"none", "barrier_start", "barrier_each"}, Doc: "none, barrier_start or barrier_each (diagnostic)",
			Str: func(p *Params) *string { return &p.Sync }},
	}
}

// FieldByKey returns the field of a key.
func FieldByKey(key string) (Field, bool) {
	for _, f := range Fields() {
		if f.Key == key {
			return f, true
		}
	}
	return Field{}, false
}

// FieldError is a refused parameter: the key it names, and a message
// that names parameters the way its reader spells them.
type FieldError struct {
	Key  string // the refused parameter's key
	text func(name func(key string) string) string
}

// Error names parameters as the CLI's flags (--poll-every).
func (e *FieldError) Error() string { return e.text(flag) }

// Text is the message with each parameter named by name(key): a scenario
// names its keys as written (poll_every).
func (e *FieldError) Text(name func(key string) string) string { return e.text(name) }

// fieldErr builds a FieldError whose message starts with the key's name.
func fieldErr(key, format string, a ...any) *FieldError {
	return &FieldError{Key: key, text: func(name func(string) string) string {
		return name(key) + " " + fmt.Sprintf(format, a...)
	}}
}

// Check checks the field's value in p on its own: its range, or its
// values. It returns a *FieldError or nil.
func (f Field) Check(p *Params) error {
	switch {
	case f.Int != nil && f.Max > 0:
		if v := *f.Int(p); v < f.Min || v > f.Max {
			return fieldErr(f.Key, "%d: expected %d to %d", v, f.Min, f.Max)
		}
	case f.Str != nil && f.OneOf != nil:
		if v := *f.Str(p); !slices.Contains(f.OneOf, v) {
			return fieldErr(f.Key, "%q: expected one of %v", v, f.OneOf)
		}
	}
	return nil
}

// Validate checks p, with the communicator's size, and returns the
// derived parameters. Every refusal is a *FieldError (joined when there
// are several) that names the parameter, the value and what was
// expected.
func (p *Params) Validate(size int) (Derived, error) {
	var errs []error
	for _, f := range Fields() {
		if err := f.Check(p); err != nil {
			errs = append(errs, err)
		}
	}
	if p.Ranks != size {
		errs = append(errs, &FieldError{Key: "ranks", text: func(name func(string) string) string {
			return fmt.Sprintf("%s %d, but the communicator has %d ranks (mpirun -np %d): they must agree", name("ranks"), p.Ranks, size, p.Ranks)
		}})
	}
	if len(errs) > 0 {
		return Derived{}, errors.Join(errs...)
	}
	d := Derived{Radius: p.Radius}
	if own := KernelRadius(p.Kernel); d.Radius == 0 {
		d.Radius = own
	} else if d.Radius < own {
		return Derived{}, fieldErr("radius", "%d is smaller than kernel %s's own radius %d: its updates would read past the halo", p.Radius, p.Kernel, own)
	}
	d.B = d.Radius * p.Timesteps
	if p.Halo < d.B {
		return Derived{}, fieldErr("halo", "%d is smaller than B = radius × timesteps = %d × %d = %d, the boundary points that depend on the halo: a halo must be at least B wide", p.Halo, d.Radius, p.Timesteps, d.B)
	}
	if p.Halo > p.N {
		halo, n := p.Halo, p.N
		return Derived{}, &FieldError{Key: "halo", text: func(name func(string) string) string {
			return fmt.Sprintf("%s %d is wider than the %d points a rank owns (%s): a neighbour cannot send more than it owns", name("halo"), halo, n, name("N"))
		}}
	}
	d.Interior = max(0, p.N-2*d.B)
	return d, nil
}
