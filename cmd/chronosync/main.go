// Command chronosync runs clock-synchronization scenarios in the
// deterministic simulator (and, later, on real sockets and namespaces),
// replays recorded runs, and checks scenario files.
//
// Usage (chronosync help COMMAND for the rest):
//
//	chronosync run SCENARIO [--seed N] [--backend sim|real] [--out DIR] [--trace-events FILE]
//	chronosync replay RUN_DIR
//	chronosync combine --run-dir RUN_DIR --auto-discover [--validate [--no-fail]]
//	chronosync validate [--no-fail] TRACE...
//	chronosync scenario list
//	chronosync scenario check SCENARIO...
//	chronosync events legend
//	chronosync node --cluster FILE [--rank N]
//	chronosync status [--socket PATH | --cluster FILE [--rank N]] [--json]
//	chronosync version
//
// Every command takes --log-level debug|info|warn|error (default info) and
// --log-format text|json (default text): the log records it writes to
// stderr.
//
// Flags are written with hyphens (--run-dir); the underscore spellings of
// the origin plan (--run_dir) are accepted as hidden aliases. SCENARIO is a
// file or the name of a scenario of the built-in library.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/chronosync/chronosync/real/shaper"
)

func main() {
	shaper.MaybeChild() // a real run's link shaper runs in a child of this program
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line args and returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		if !errors.Is(err, errSilent) {
			fmt.Fprintf(stderr, "chronosync: %v\n", err)
		}
		var ce *codedError
		if errors.As(err, &ce) {
			return ce.code
		}
		return 1
	}
	return 0
}

// exitDegraded is the exit code of `run --strict` whose run was degraded:
// it ran and recorded everything, but a measured condition crossed its
// bound. 1 stays for a run that failed.
const exitDegraded = 3

// errSilent is an error already reported elsewhere (by MPI rank 0): run
// exits 1 without printing it again.
var errSilent = errors.New("reported by another rank")

// codedError is an error with its own exit code.
type codedError struct {
	code int
	err  error
}

func (e *codedError) Error() string { return e.err.Error() }
func (e *codedError) Unwrap() error { return e.err }

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "chronosync",
		Short: "A simulation-first testbed for distributed clock synchronization and multi-node trace alignment",
		Long: `chronosync runs scenario files: nodes with drifting clocks on impaired links,
running the sync protocol in a deterministic discrete-event simulator. The same
seed gives the same run, byte for byte; every run directory can be replayed.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	var lf logFlags
	lf.add(root)
	root.PersistentPreRunE = lf.setup
	root.AddCommand(newRunCmd(), newReplayCmd(), newEstimateCmd(), newCalibrateCmd(), newCombineCmd(), newValidateCmd(), newScenarioCmd(), newEventsCmd(), newVersionCmd(), newNetnsCmd(), newNodeCmd(), newPeersCmd(), newPhasegapCmd(), newStatusCmd(), newReportCmd())
	// Set after AddCommand so that it reaches every command's flags.
	root.SetGlobalNormalizationFunc(hyphenate)
	return root
}

// hyphenate is the flags' normalization: every flag is defined, and shown
// in help, with hyphens (--run-dir), and the same name with underscores
// (--run_dir, the origin plan's spelling) is taken as that flag.
func hyphenate(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	return pflag.NormalizedName(strings.ReplaceAll(name, "_", "-"))
}
