package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/chronosync/chronosync/analysis/combine"
	"github.com/chronosync/chronosync/analysis/validate"
	"github.com/chronosync/chronosync/trace/kineto"
	"github.com/chronosync/chronosync/trace/xspace"
)

func newCombineCmd() *cobra.Command {
	var (
		traces, snapshots []string
		offsetsPath       string
		runDir, output    string
		autoDiscover      bool
		noCorrection      bool
		printEvents       bool
		planePrefix       string
		doValidate        bool
		noJSON            bool
	)
	cmd := &cobra.Command{
		Use:   "combine",
		Short: "Align per-node traces onto the global timeline and merge them",
		Long: `Align per-node XSpace traces (node<i>.xplane.pb, stamped on each node's
tracer clock) onto one timeline: tracer clock to host clock by the node's
snapshot pairs (--snapshots), host clock to global time by GraphCalc's
offsets.jsonl or a legacy midpoint file (--offsets). A trace may also be a
PyTorch profiler (Kineto) trace (*.json, *.json.gz, e.g. *.pt.trace.json.gz):
it is converted to XSpace planes (/host:CPU, one line per thread;
/device:GPU:<n>, one line per stream), is on the host clock already (no
snapshot file; give "" in --snapshots for it when others have one), and the
combined trace then counts its times from a Unix time base (time_base_ns). Planes are renamed so
that every node shows as its own devices (node 0's /host:CPU kept; other
nodes' host planes become /device:GPU:<10000·node>, GPU planes
/device:GPU:<node·64+local>) and merged into --output (combined.xplane.pb),
<base>.trace.json.gz (Chrome trace events for Perfetto) and
<base>.metadata.json. Every output is written atomically.

A trace's node id is taken from its file name (node<i>.xplane.pb) or else
its position in --traces; a Kineto trace's from its distributedInfo.rank,
else its file name (node<i>.json[.gz], node<i>.pt.trace.json[.gz]), else it
is an error; --snapshots, when given, pairs with --traces in
order. --run_dir with --auto_discover finds node<i>.xplane.pb,
node<i>.snapshots.pb and offsets.jsonl there.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var inputs []combine.Input
			switch {
			case autoDiscover:
				if runDir == "" {
					return errors.New("--auto_discover needs --run_dir")
				}
				in, offs, err := combine.Discover(runDir)
				if err != nil {
					return err
				}
				inputs = in
				if offsetsPath == "" {
					offsetsPath = offs
				}
			case len(traces) == 0:
				return errors.New("no traces: give --traces, or --run_dir with --auto_discover")
			default:
				if len(snapshots) > 0 && len(snapshots) != len(traces) {
					return fmt.Errorf("%d --snapshots for %d --traces: give one per trace, in the same order", len(snapshots), len(traces))
				}
				for i, t := range traces {
					n, err := combine.NodeOfTrace(t, i)
					if err != nil {
						return err
					}
					in := combine.Input{Node: n, Trace: t}
					if len(snapshots) > 0 {
						in.Snapshots = snapshots[i]
					}
					inputs = append(inputs, in)
				}
			}
			if output == "" {
				dir := runDir
				if dir == "" {
					dir = "."
				}
				output = filepath.Join(dir, "combined.xplane.pb")
			}
			o := combine.Options{Offsets: offsetsPath, NoCorrection: noCorrection, PlanePrefix: planePrefix,
				Output: output, NoTraceJSON: noJSON, Validate: doValidate,
				Logger: slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))}
			if printEvents {
				o.PrintEvents = cmd.OutOrStdout()
			}
			res, err := combine.Combine(inputs, o)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			md := res.Metadata
			fmt.Fprintf(w, "combined %d nodes, %d planes, %d events\n", len(md.Nodes), md.Planes, md.Events)
			for _, n := range md.Nodes {
				fmt.Fprintf(w, "  node %d (%s): %d events, max correction %d ns, uncertainty p50 %.0f ns, %d snapshot pairs, %d offset windows\n",
					n.ID, n.Hostname, n.Events, n.MaxCorrectionNS, n.UncertaintyP50NS, n.SnapshotPairs, n.OffsetWindows)
			}
			if res.Report != nil {
				printReport(w, res.Report)
			}
			for _, f := range res.Files {
				fmt.Fprintf(w, "wrote %s\n", f)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&traces, "traces", nil, "per-node XSpace or Kineto files (repeat or comma-separate)")
	f.StringSliceVar(&snapshots, "snapshots", nil, "per-node snapshot files, in the order of --traces")
	f.StringVar(&offsetsPath, "offsets", "", "GraphCalc offsets.jsonl, or a legacy midpoint file")
	f.StringVar(&runDir, "run_dir", "", "run directory (with --auto_discover; default place of the outputs)")
	f.BoolVar(&autoDiscover, "auto_discover", false, "find the inputs in --run_dir")
	f.StringVar(&output, "output", "", "combined XSpace path (default <run_dir or .>/combined.xplane.pb)")
	f.BoolVar(&noCorrection, "no_correction", false, "merge and rename only; keep every timestamp")
	f.BoolVar(&printEvents, "print_events", false, "print every event with its aligned time")
	f.StringVar(&planePrefix, "plane_prefix", "", "prefix for the /node:<id> plane names, e.g. /clusterA")
	f.BoolVar(&doValidate, "validate", false, "check collective happens-before on the result")
	f.BoolVar(&noJSON, "no_trace_json", false, "skip the Chrome trace export")
	return cmd
}

func newValidateCmd() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "validate TRACE...",
		Short: "Check collective happens-before across nodes",
		Long: `Check that no collective appears to end on one node before it started on
another. Each TRACE is an XSpace (*.xplane.pb: per-node files, one node each,
or a combined trace, whose planes carry their node_id) or a PyTorch profiler
(Kineto) JSON trace, plain or gzipped (one node each). For XSpace the
collectives are the GPU events whose name contains rccl or nccl and that
carry hlo_op, grouped by hlo_op; for Kineto the collective kernels, grouped
by kernel name. The i-th invocation of each op is compared across every pair
of nodes: a violation when one ends before the other starts, an overlap
otherwise; warnings for missing or mismatched counts. Prints
"Violations: X, Overlaps: Y, Warnings: Z", then how many nodes it saw out of
how many the traces declare (a Kineto trace's distributedInfo.world_size, an
XSpace plane's world_size stat; "Nodes: 2 of 128 declared; missing: 2-127",
or "Nodes: 3 (the traces declare no total)"), with a warning line when
declared nodes are missing or the traces disagree about their number. Only
the nodes present are checked: counts of 0 say nothing about the missing
ones. --output writes the JSON report.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var nodes []validate.Node
			for i, path := range args {
				got, err := loadCollectives(path, i)
				if err != nil {
					return err
				}
				nodes = append(nodes, got...)
			}
			rep := validate.Check(nodes)
			if output != "" {
				if err := xspace.WriteFile(output, rep.WriteJSON); err != nil {
					return err
				}
			}
			printReport(cmd.OutOrStdout(), rep)
			return nil
		},
	}
	cmd.Flags().StringVar(&output, "output", "", "write the JSON report to `FILE`")
	return cmd
}

// printReport prints a validate report's counts, the nodes it saw against
// those declared, and the warnings about missing nodes.
func printReport(w io.Writer, rep *validate.Report) {
	fmt.Fprintln(w, rep.Summary())
	fmt.Fprintln(w, rep.Coverage())
	for _, warn := range rep.CoverageWarnings() {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
}

// loadCollectives reads one trace for validate: XSpace by its extension,
// otherwise Kineto JSON. Node ids come from the planes' node_id stats,
// node<i> file names, a Kineto trace's rank, or the argument's position;
// the number of nodes declared from world_size (see combine.Collectives,
// validate.FromKineto).
func loadCollectives(path string, pos int) ([]validate.Node, error) {
	node := pos
	if n, ok := combine.NodeOf(path); ok {
		node = n
	}
	if filepath.Ext(path) == ".pb" {
		space, err := xspace.Read(path)
		if err != nil {
			return nil, err
		}
		return combine.Collectives(space, node, path), nil
	}
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	t, err := kineto.Read(path)
	if err != nil {
		return nil, err
	}
	if t.Rank >= 0 {
		node = t.Rank
	}
	return []validate.Node{validate.FromKineto(node, t)}, nil
}
