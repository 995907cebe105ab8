package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/chronosync/chronosync/auth"
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
		eventLog   bool
		noEventLog bool
		strict     bool
		force      bool
		keyFile    string
		noReport   bool
	)
	cmd := &cobra.Command{
		Use:   "run SCENARIO",
		Short: "Run a scenario file and write a run directory",
		Long: `Run a scenario file and write a run directory (default runs/<name>-seed<seed>)
holding manifest.json, summary.json, scenario.yaml, run.log and events.ckpt
(the event-log hash every 1024 events: enough to replay the run; --event-log
adds events.log.gz, the whole log), and at the end report.html (chronosync report; --no-report
leaves it out). SCENARIO is a path, or the name of a scenario of the built-in
library (chronosync scenario list; see scenarios/README.md).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sc, path, err := loadScenarioFor(args[0], backend)
			if err != nil {
				return err
			}
			opts := harness.Options{
				Out:          out,
				ScenarioFile: path,
				TraceEvents:  trace,
				EventLog:     eventLog,
				Backend:      backend,
				Progress:     terminal(cmd.OutOrStdout()),
				// Not a terminal: a line at each tenth of the run on
				// stderr instead of the bar (a log, CI).
				ProgressLines: cmd.ErrOrStderr(),
				Force:         force,
				LogLevel:      runLogLevel(cmd),
				LogJSON:       runLogJSON(cmd),
				Report:        !noReport,
			}
			// SIGINT or SIGTERM ends a real run early; it still removes
			// its namespaces and records what it measured.
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			opts.Context = ctx
			if cmd.Flags().Changed("seed") {
				opts.Seed = &seed
			}
			if keyFile != "" {
				if opts.Key, err = auth.LoadKey(keyFile); err != nil {
					return err
				}
			}
			res, err := harness.Run(sc, opts)
			if err != nil {
				return err
			}
			res.Print(cmd.OutOrStdout())
			if err := failedRun(res); err != nil {
				return err
			}
			if strict && res.Summary.Status == harness.StatusDegraded {
				over := 0
				for _, c := range res.Summary.Conditions {
					if c.Over {
						over++
					}
				}
				return &codedError{code: exitDegraded, err: fmt.Errorf("--strict: the run is degraded: %d of its measured conditions crossed their bounds (the warnings above; summary.json conditions)", over)}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.Uint64Var(&seed, "seed", 0, "override the scenario's seed")
	f.StringVar(&backend, "backend", "sim", "where to run: sim or real")
	f.StringVar(&out, "out", "", "run directory (default runs/<scenario>-seed<seed>)")
	f.StringVar(&trace, "trace-events", "", "also write the event log, one line per event, to `FILE` (legend: chronosync events legend)")
	f.BoolVar(&eventLog, "event-log", false, "also write events.log.gz, the whole event log, into the run directory (replay then names the exact first differing event; without it the checkpoints name its block of 1024)")
	f.BoolVar(&noEventLog, "no-event-log", false, "no events.log.gz (the default since 2026-11-27; kept for old command lines)")
	f.MarkHidden("no-event-log")
	f.BoolVar(&strict, "strict", false, fmt.Sprintf("exit %d when the run is degraded (a measured condition of a real run crossed its bound)", exitDegraded))
	f.BoolVar(&force, "force", false, "run a real-backend scenario that needs more CPU than the machine has instead of refusing it")
	f.BoolVar(&noReport, "no-report", false, "do not write report.html (chronosync report) into the run directory at the end")
	f.StringVar(&keyFile, "key", "", "with --backend=real, seal every datagram and stream frame with the shared key in `FILE` (hex, mode 0600: openssl rand -hex 32)")
	return cmd
}

func newReplayCmd() *cobra.Command {
	var trace string
	cmd := &cobra.Command{
		Use:   "replay RUN_DIR [--trace-events FILE]",
		Short: "Re-run a recorded run and check that its event log is reproduced",
		Long: `Re-run the scenario and seed recorded in RUN_DIR and compare the event log
with the recorded one. It fails if they differ: naming the first differing
event, with both lines, when the run kept events.log.gz (run --event-log);
else naming the block of 1024 events in which the checkpoints (events.ckpt)
part. --trace-events writes the replay's own event log, one line per event:
the log on demand, for a run that kept only its checkpoints.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// A bar on a terminal, else a line at each tenth on stderr.
			res, err := harness.Replay(args[0], harness.ReplayOptions{Progress: terminal(cmd.OutOrStdout()),
				ProgressLines: cmd.ErrOrStderr(), TraceEvents: trace})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "replay of %s matches: %d events, event-log hash %s\n", args[0], res.Events, res.Hash)
			return nil
		},
	}
	cmd.Flags().StringVar(&trace, "trace-events", "", "write the replay's event log, one line per event, to `FILE` (legend: chronosync events legend)")
	return cmd
}

func newScenarioCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "scenario", Short: "Work with scenario files and the built-in library"}
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List the scenarios of the built-in library, with their descriptions",
		Long: `List the scenarios of the built-in library (scenarios/*.yaml, embedded in
the binary), one per line: the name, which every command that takes a
SCENARIO accepts, and the scenario's description.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return listScenarios(cmd.OutOrStdout())
		},
	}, &cobra.Command{
		Use:   "check SCENARIO...",
		Short: "Decode, validate and resolve scenario files or library scenarios",
		Long: `Decode, validate and resolve each SCENARIO: a file, or the name of a
scenario of the built-in library (chronosync scenario list). Errors name the
file and line.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var errs []error
			for _, arg := range args {
				sc, _, err := loadScenario(arg)
				if err == nil {
					_, err = sc.Resolve(sc.Seed)
				}
				if err != nil {
					fmt.Fprintln(cmd.ErrOrStderr(), err)
					errs = append(errs, err)
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: ok (%s: %d nodes, %v)\n", arg, sc.Name, sc.Nodes, sc.Duration)
			}
			if len(errs) > 0 {
				return fmt.Errorf("%d of %d scenarios are invalid", len(errs), len(args))
			}
			return nil
		},
	})
	return cmd
}

// listScenarios writes the library's scenarios, one a line: the name,
// padded so that the descriptions line up, then the description.
func listScenarios(w io.Writer) error {
	names := scenarios.Names()
	width := 0
	for _, n := range names {
		width = max(width, len(n))
	}
	for _, n := range names {
		sc, err := scenarios.Load(n)
		if err != nil {
			return err
		}
		desc := strings.Join(strings.Fields(sc.Description), " ")
		fmt.Fprintf(w, "%-*s  %s\n", width, n, desc)
	}
	return nil
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
// by name when no such file exists. It returns the scenario and the name of
// its file (scenarios/<name>.yaml for the library). When neither exists the
// error lists the library's names nearest to arg.
func loadScenario(arg string) (*scenario.Scenario, string, error) {
	sc, err := scenario.Load(arg)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return sc, arg, err
	}
	name := arg + ".yaml"
	data, libErr := fs.ReadFile(scenarios.FS(), name)
	if libErr != nil {
		return nil, arg, unknownScenario(arg)
	}
	lib, err := scenario.Parse("scenarios/"+name, data)
	return lib, "scenarios/" + name, err
}

// unknownScenario is the error for a SCENARIO that is neither a file nor a
// library name: it names the near matches in the library, if any.
func unknownScenario(arg string) error {
	near := nearNames(strings.TrimSuffix(filepath.Base(arg), ".yaml"), scenarios.Names())
	if len(near) == 0 {
		return fmt.Errorf("no scenario %q: no such file, and no library scenario of that name (chronosync scenario list)", arg)
	}
	return fmt.Errorf("no scenario %q: no such file; did you mean %s? (chronosync scenario list)", arg, orList(near))
}

// nearNames returns the names near to s, ignoring case, nearest first (ties
// by name): those within an edit distance of a quarter of s's length (at
// least 1), and those that contain s, for s of 3 letters or more.
func nearNames(s string, names []string) []string {
	type cand struct {
		name string
		dist int
	}
	var out []cand
	lower := strings.ToLower(s)
	for _, n := range names {
		d := scenario.EditDistance(lower, strings.ToLower(n))
		if d <= max(1, len(s)/4) || (len(s) >= 3 && strings.Contains(n, lower)) {
			out = append(out, cand{n, d})
		}
	}
	slices.SortFunc(out, func(a, b cand) int { return cmp.Or(cmp.Compare(a.dist, b.dist), cmp.Compare(a.name, b.name)) })
	names = names[:0:0]
	for _, c := range out {
		names = append(names, c.name)
	}
	return names
}

// orList writes names as "a", "a or b", "a, b or c".
func orList(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
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
