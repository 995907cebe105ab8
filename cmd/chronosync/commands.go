package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/chronosync/chronosync/harness"
	"github.com/chronosync/chronosync/scenario"
	"github.com/chronosync/chronosync/scenarios"
)

func newRunCmd() *cobra.Command {
	var (
		seed       uint64
		backend    string
		out        string
		trace      string
		noEventLog bool
	)
	cmd := &cobra.Command{
		Use:   "run SCENARIO",
		Short: "Run a scenario file and write a run directory",
		Long: `Run a scenario file and write a run directory (default runs/<name>-seed<seed>)
holding manifest.json, summary.json, scenario.yaml, run.log, events.ckpt and
events.log.gz. SCENARIO is a path, or the name of a scenario of the built-in
library (see scenarios/README.md).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sc, path, err := loadScenario(args[0])
			if err != nil {
				return err
			}
			opts := harness.Options{
				Out:          out,
				ScenarioFile: path,
				TraceEvents:  trace,
				NoEventLog:   noEventLog,
				Backend:      backend,
				Progress:     terminal(cmd.OutOrStdout()),
			}
			// SIGINT or SIGTERM ends a real run early; it still removes
			// its namespaces and records what it measured.
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			opts.Context = ctx
			if cmd.Flags().Changed("seed") {
				opts.Seed = &seed
			}
			res, err := harness.Run(sc, opts)
			if err != nil {
				return err
			}
			res.Print(cmd.OutOrStdout())
			return nil
		},
	}
	f := cmd.Flags()
	f.Uint64Var(&seed, "seed", 0, "override the scenario's seed")
	f.StringVar(&backend, "backend", "sim", "where to run: sim or real")
	f.StringVar(&out, "out", "", "run directory (default runs/<scenario>-seed<seed>)")
	f.StringVar(&trace, "trace-events", "", "also write the event log, one line per event, to `FILE` (legend: chronosync events legend)")
	f.BoolVar(&noEventLog, "no-event-log", false, "keep only the event-log checkpoints, not events.log.gz, in the run directory")
	return cmd
}

func newReplayCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "replay RUN_DIR",
		Short: "Re-run a recorded run and check that its event log is reproduced",
		Long: `Re-run the scenario and seed recorded in RUN_DIR and compare the event log
with the recorded one. It fails, naming the first differing event, if they
differ.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := harness.Replay(args[0], terminal(cmd.OutOrStdout()))
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "replay of %s matches: %d events, event-log hash %s\n", args[0], res.Events, res.Hash)
			return nil
		},
	}
}

func newScenarioCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "scenario", Short: "Work with scenario files"}
	cmd.AddCommand(&cobra.Command{
		Use:   "check FILE...",
		Short: "Decode, validate and resolve scenario files",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var errs []error
			for _, path := range args {
				sc, err := scenario.Load(path)
				if err == nil {
					_, err = sc.Resolve(sc.Seed)
				}
				if err != nil {
					fmt.Fprintln(cmd.ErrOrStderr(), err)
					errs = append(errs, err)
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: ok (%s: %d nodes, %v)\n", path, sc.Name, sc.Nodes, sc.Duration)
			}
			if len(errs) > 0 {
				return fmt.Errorf("%d of %d scenario files are invalid", len(errs), len(args))
			}
			return nil
		},
	})
	return cmd
}

func newEventsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "events", Short: "About the event log"}
	cmd.AddCommand(&cobra.Command{
		Use:   "legend",
		Short: "Print the legend of the event log's line format",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, args []string) {
			fmt.Fprint(cmd.OutOrStdout(), harness.EventLegend())
		},
	})
	return cmd
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, args []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "chronosync %s\n", harness.Version())
		},
	}
}

// loadScenario loads a scenario file, or a scenario of the built-in library
// by name when no such file exists.
func loadScenario(arg string) (*scenario.Scenario, string, error) {
	sc, err := scenario.Load(arg)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return sc, arg, err
	}
	name := arg + ".yaml"
	data, libErr := fs.ReadFile(scenarios.FS(), name)
	if libErr != nil {
		return nil, arg, err
	}
	lib, err := scenario.Parse("scenarios/"+name, data)
	return lib, "scenarios/" + name, err
}

// terminal returns w if it is a terminal, so that progress is shown only
// to a person watching.
func terminal(w io.Writer) io.Writer {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return w
}
