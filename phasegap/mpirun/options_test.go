package mpirun

import (
	"strings"
	"testing"

	"github.com/chronosync/chronosync/phasegap/params"
)

// TestThreadLevel: the thread level is recorded exactly as asked: a
// progress thread without --mpi-thread asks for multiple; with an
// explicit level below it, the run is refused, never silently raised.
func TestThreadLevel(t *testing.T) {
	for _, c := range []struct {
		name     string
		progress string
		level    string
		set      bool
		want     string // the level asked of MPI_Init_thread; "" refused
	}{
		{"default", "inline_poll", "funneled", false, "funneled"},
		{"explicit serialized", "inline_poll", "serialized", true, "serialized"},
		{"progress thread, level left out", "progress_thread", "funneled", false, "multiple"},
		{"progress thread, multiple given", "progress_thread", "multiple", true, "multiple"},
		{"progress thread, funneled given", "progress_thread", "funneled", true, ""},
		{"progress thread, serialized given", "progress_thread", "serialized", true, ""},
	} {
		p := params.DefaultParams()
		p.Progress = c.progress
		o := Options{Params: p, MPIThread: c.level, MPIThreadSet: c.set, Places: "cores", TraceDetail: "rank",
			Transport: "auto", CSVMode: "write", TraceIters: 10, OutDir: t.TempDir()}
		err := o.Check()
		switch {
		case c.want == "" && err == nil:
			t.Errorf("%s: accepted, asking %s; want a refusal", c.name, o.MPIThread)
		case c.want == "" && !strings.Contains(err.Error(), "--mpi-thread "+c.level+" with --progress progress_thread"):
			t.Errorf("%s: err %v; want it to name both flags", c.name, err)
		case c.want != "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && o.MPIThread != c.want:
			t.Errorf("%s: asks %s, want %s", c.name, o.MPIThread, c.want)
		}
	}
}
