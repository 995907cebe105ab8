package harness

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/chronosync/chronosync/scenario"
)

// TestDataDriven pins the simulator's behaviour on small scenarios: each
// `run` command takes a scenario as input and prints selected event-log
// lines. Arguments: kinds=a,b (only those kinds), from=N and lines=N (a
// window of the selected lines). Update with -rewrite after checking the
// new output by eye.
func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata/datadriven", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd != "run" {
				d.Fatalf(t, "unknown command %q", d.Cmd)
			}
			var kinds []string
			from, lines := 0, 1<<30
			for _, a := range d.CmdArgs {
				switch a.Key {
				case "kinds":
					kinds = a.Vals
				case "from":
					from, _ = strconv.Atoi(a.Vals[0])
				case "lines":
					lines, _ = strconv.Atoi(a.Vals[0])
				default:
					d.Fatalf(t, "unknown argument %q", a.Key)
				}
			}
			sc, err := scenario.Parse("scenario.yaml", []byte(d.Input))
			if err != nil {
				return err.Error() + "\n"
			}
			trace := filepath.Join(t.TempDir(), "events.txt")
			res, err := Run(sc, Options{Out: filepath.Join(t.TempDir(), "run"), TraceEvents: trace})
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			f, err := os.Open(trace)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var b strings.Builder
			sc2 := bufio.NewScanner(f)
			n := 0
			for sc2.Scan() {
				fields := strings.Fields(sc2.Text())
				if kinds != nil && !slices.Contains(kinds, fields[2]) {
					continue
				}
				if n >= from && n < from+lines {
					b.WriteString(sc2.Text())
					b.WriteByte('\n')
				}
				n++
			}
			fmt.Fprintf(&b, "selected %d of %d events\n", n, res.Summary.Events)
			return b.String()
		})
	})
}
