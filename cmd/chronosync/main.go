// Command chronosync runs clock-synchronization scenarios in the
// deterministic simulator (and, later, on real sockets and namespaces),
// replays recorded runs, and checks scenario files.
//
// Usage:
//
//	chronosync run SCENARIO [--seed N] [--backend sim|real] [--out DIR] [--trace-events FILE]
//	chronosync replay RUN_DIR
//	chronosync scenario check FILE...
//	chronosync events legend
//	chronosync version
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

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
		fmt.Fprintf(stderr, "chronosync: %v\n", err)
		return 1
	}
	return 0
}

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
	root.AddCommand(newRunCmd(), newReplayCmd(), newEstimateCmd(), newCalibrateCmd(), newCombineCmd(), newValidateCmd(), newScenarioCmd(), newEventsCmd(), newVersionCmd(), newNetnsCmd(), newNodeCmd(), newPeersCmd())
	return root
}
