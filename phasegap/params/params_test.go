package params

import (
	"errors"
	"strings"
	"testing"
)

// TestFields checks the table: unique keys, one accessor each, the
// defaults within their own bounds, every scenario key also a sweep key,
// and each accessor reaching its own field.
func TestFields(t *testing.T) {
	seen := map[string]bool{}
	def := DefaultParams()
	for _, f := range Fields() {
		if seen[f.Key] {
			t.Errorf("key %s twice", f.Key)
		}
		seen[f.Key] = true
		if (f.Int == nil) == (f.Str == nil) {
			t.Errorf("%s: want exactly one of Int and Str", f.Key)
		}
		if f.Doc == "" {
			t.Errorf("%s: no doc", f.Key)
		}
		if f.Scenario && !f.Sweep {
			t.Errorf("%s: a scenario key that a sweep's base cannot set", f.Key)
		}
		if err := f.Check(&def); err != nil {
			t.Errorf("%s: default refused: %v", f.Key, err)
		}
		// Each accessor reaches a field of its own: setting one changes
		// no other.
		var p Params
		if f.Int != nil {
			*f.Int(&p) = 7
		} else {
			*f.Str(&p) = "x"
		}
		for _, g := range Fields() {
			if g.Key == f.Key {
				continue
			}
			if (g.Int != nil && *g.Int(&p) != 0) || (g.Str != nil && *g.Str(&p) != "") {
				t.Errorf("setting %s set %s", f.Key, g.Key)
			}
		}
	}
	for _, k := range []string{"mode", "poll_every", "omp_schedule", "ranks", "pure_comm", "sync"} {
		if !seen[k] {
			t.Errorf("no field %s", k)
		}
	}
	if f, ok := FieldByKey("poll_every"); !ok || f.Flag() != "poll-every" || !f.Scenario {
		t.Errorf("FieldByKey(poll_every) = %+v, %v", f, ok)
	}
}

// TestValidate checks the refusals: the field each names, the message as
// the CLI shows it and as a scenario does.
func TestValidate(t *testing.T) {
	tests := []struct {
		name     string
		set      func(*Params)
		key, cli string
		keyed    string
	}{
		{"mode", func(p *Params) { p.Mode = "fast" }, "mode", `--mode "fast": expected one of [phase_nb phase_blk nb_test phase_persist omp_tasks]`, `mode "fast"`},
		{"threads", func(p *Params) { p.Threads = 0 }, "threads", "--threads 0: expected 1 to 1024", "threads 0"},
		{"poll_every", func(p *Params) { p.PollEvery = 0 }, "poll_every", "--poll-every 0: expected 1 to 1073741824", "poll_every 0"},
		{"schedule", func(p *Params) { p.Schedule = "auto" }, "omp_schedule", `--omp-schedule "auto": expected one of [static dynamic guided]`, `omp_schedule "auto"`},
		{"ranks", func(p *Params) { p.Ranks = 3 }, "ranks", "--ranks 3, but the communicator has 1 ranks", "ranks 3, but"},
		{"radius", func(p *Params) { p.Kernel, p.Radius = KernelStencil5, 1 }, "radius", "--radius 1 is smaller than kernel stencil5's own radius 2", "radius 1 is"},
		{"halo below B", func(p *Params) { p.Halo, p.Timesteps = 3, 4 }, "halo", "--halo 3 is smaller than B = radius × timesteps = 1 × 4 = 4", "halo 3 is"},
		{"halo above N", func(p *Params) { p.Halo, p.N = 20, 10 }, "halo", "--halo 20 is wider than the 10 points a rank owns (--N)", "halo 20 is wider than the 10 points a rank owns (N)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := DefaultParams()
			tt.set(&p)
			_, err := p.Validate(1)
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v; want a *FieldError", err)
			}
			if fe.Key != tt.key {
				t.Errorf("key %q; want %q", fe.Key, tt.key)
			}
			if !strings.Contains(err.Error(), tt.cli) {
				t.Errorf("error %q; want %q", err, tt.cli)
			}
			if got := fe.Text(func(k string) string { return k }); !strings.HasPrefix(got, tt.keyed) {
				t.Errorf("keyed %q; want prefix %q", got, tt.keyed)
			}
		})
	}
	p := DefaultParams()
	d, err := p.Validate(1)
	if err != nil || d != (Derived{Radius: 1, B: 1, Interior: 100_000 - 2}) {
		t.Errorf("defaults: %+v, %v", d, err)
	}
}

// TestColAndValue checks the results' names (the plan's letters for P, T
// and H, the key otherwise) and that Value reads the field's own value.
func TestColAndValue(t *testing.T) {
	p := DefaultParams()
	p.Ranks, p.Halo, p.Kernel = 4, 256, KernelStencil5
	for _, c := range []struct {
		key, col string
		val      any
	}{
		{"ranks", "P", 4},
		{"threads", "T", 1},
		{"halo", "H", 256},
		{"N", "N", 100_000},
		{"kernel", "kernel", KernelStencil5},
		{"poll_every", "poll_every", 1024},
		{"progress", "progress", "inline_poll"},
	} {
		f, ok := FieldByKey(c.key)
		if !ok {
			t.Fatalf("no field %s", c.key)
		}
		if f.Col() != c.col || f.Value(&p) != c.val {
			t.Errorf("%s: Col %q Value %v, want %q %v", c.key, f.Col(), f.Value(&p), c.col, c.val)
		}
	}
}
