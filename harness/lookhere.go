package harness

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// look is an output of a run that a person opens next: in what, the
// files that hold it (any that exists, relative to the run directory) and
// how (%s: the files that exist).
type look struct {
	what  string
	files []string
	how   string
}

// looks are the outputs printWhereToLook names, in its order.
func looks() []look {
	return []look{
		{"Perfetto", []string{"combined.perfetto-trace", "combined-kineto.perfetto-trace"},
			"%s: every node's trace on the global timeline; https://ui.perfetto.dev, Open trace file (the .trace.json.gz beside each is the same as Chrome JSON)"},
		{"TensorBoard", []string{"tensorboard"},
			"tensorboard --logdir %s (xprof's trace viewer; one run per combined trace)"},
		{"HTA", []string{"combined-kineto.kineto"},
			"%s: the aligned PyTorch profiler traces, one per rank, on one time base: Holistic Trace Analysis' TraceAnalysis(trace_dir=...)"},
	}
}

// printWhereToLook ends a run's summary: the report, and each of the
// run's outputs that a tool opens, with the tool, for those the run
// wrote. It reads only which files exist, never the clock.
func printWhereToLook(w io.Writer, r *Result) {
	var lines []string
	if r.Report != "" {
		lines = append(lines, fmt.Sprintf("  %-11s %s: the run's figures and tables; open it in a browser", "report", r.Report))
	}
	for _, l := range looks() {
		var have []string
		for _, f := range l.files {
			if _, err := os.Stat(filepath.Join(r.Dir, f)); err == nil {
				have = append(have, filepath.Join(r.Dir, f))
			}
		}
		if len(have) > 0 {
			lines = append(lines, fmt.Sprintf("  %-11s "+l.how, l.what, strings.Join(have, " and ")))
		}
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w, "where to look:")
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}
