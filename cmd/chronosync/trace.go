package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/chronosync/chronosync/analysis/combine"
	"github.com/chronosync/chronosync/analysis/validate"
	"github.com/chronosync/chronosync/harness"
	"github.com/chronosync/chronosync/trace/kineto"
	"github.com/chronosync/chronosync/trace/xplanepb"
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
		noFail            bool
		noJSON            bool
		noPerfetto        bool
		window            string
		kinetoOut         string
		noKinetoOut       bool
		ranksPerNode      int
		layout            string
		tbRun, tbHost     string
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
/device:GPU:<n>, one line per stream), is on the host clock already, and
the combined trace then counts its times from a Unix time base
(time_base_ns). Its GPU events were converted to host time by the profiler
with an offset taken at its start; a snapshot file of the GPU clock, when
given, corrects that conversion (a line under the table says by how much;
give "" in --snapshots for a trace without one). Each Kineto
trace is also written aligned, in PyTorch's format and under its own file
name, to --kineto-out (default <base>.kineto/), so that Holistic Trace
Analysis or TensorBoard read the aligned directory as they read the raw
one. Planes are renamed so that xprof (TensorBoard) shows every node's
devices as devices of their own kind: GPU planes become
/device:GPU:<node·64+local>, TPU planes /device:TPU:<node·64+local>;
node 0's other planes keep their names; a later node's /host:CPU becomes
/device:GPU:<10000·node> in a job with GPU planes, /host:CPU/node:<id>
(shown by xprof's streaming trace viewer) in one without, and its other
planes (/host:snapshots, /host:metadata, ...) /node:<id>/<name>, which no
viewer takes for a device. Every plane keeps its own name in an
original_plane_name stat. xprof shows no TPU plane of a job that has GPU
planes. The planes are merged into --output (combined.xplane.pb), or with
--layout tensorboard into
<dir of --output>/plugins/profile/<--tb-run>/<--tb-host>.xplane.pb, where
"tensorboard --logdir <dir of --output>" and xprof find it (the other
outputs stay beside --output),
<base>.trace.json.gz (Chrome trace events for Perfetto),
<base>.perfetto-trace (Perfetto's native protobuf trace; --no-perfetto
skips it) and <base>.metadata.json. The outputs are one set: written into a staging
directory beside them and renamed into place together once all are whole,
so that a failure leaves no new output and every old one as it was. An
output that is one of the inputs (the same file, also through a link) is
refused before anything is read.

A trace's node id is taken from its file name (node<i>.xplane.pb) or else
its position in --traces; a Kineto trace's rank from its
distributedInfo.rank, else its file name (node<i>.json[.gz],
node<i>.pt.trace.json[.gz]), else it is an error. A rank runs on node
rank, or with --ranks-per-node N on node rank/N (torchrun's placement):
the ranks of one node share its offsets and snapshot pairs; --snapshots, when given, pairs with --traces in
order. --run-dir with --auto-discover finds node<i>.xplane.pb,
node<i>.snapshots.pb and offsets.jsonl there.

--validate checks collective happens-before on the result and prints what
chronosync validate prints; like validate, the command then exits 1 (after
writing every output) when the check finds violations or compares nothing,
unless --no-fail. Underscore spellings of the flags (--run_dir) work too.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var inputs []combine.Input
			switch {
			case autoDiscover:
				if runDir == "" {
					return errors.New("--auto-discover needs --run-dir RUN_DIR: the directory to discover the inputs in")
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
				return errors.New("no traces: give --traces FILE,..., or --run-dir RUN_DIR with --auto-discover")
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
			var rankNodes map[int]int
			if ranksPerNode > 0 {
				rankNodes = map[int]int{}
				for _, in := range inputs {
					rankNodes[in.Node] = in.Node / ranksPerNode
				}
			}
			o := combine.Options{Offsets: offsetsPath, NoCorrection: noCorrection, PlanePrefix: planePrefix,
				Output: output, NoTraceJSON: noJSON, Validate: doValidate, KinetoDir: kinetoOut, NoKinetoOut: noKinetoOut, RankNodes: rankNodes}
			if terminal(cmd.ErrOrStderr()) == nil {
				// Not a terminal (a log, CI): a progress line about
				// every 10 s, as an input is done, so that a long combine
				// is not silent; a short one prints none. A person at a
				// terminal waits for the table below, which they repeat.
				o.Logger = throttle(logger(cmd), progressEvery)
			}
			switch layout {
			case "", "default":
			case combine.LayoutTensorBoard:
				o.Layout, o.TensorBoardRun, o.TensorBoardHost = combine.LayoutTensorBoard, tbRun, tbHost
				if o.TensorBoardRun == "" && runDir != "" {
					if abs, err := filepath.Abs(runDir); err == nil && !strings.HasPrefix(filepath.Base(abs), ".") && filepath.Base(abs) != string(filepath.Separator) {
						o.TensorBoardRun = filepath.Base(abs)
					}
				}
			default:
				return fmt.Errorf("--layout %q: use default or tensorboard", layout)
			}
			if printEvents {
				o.PrintEvents = cmd.OutOrStdout()
			}
			o.NoPerfetto = noPerfetto
			o.Window = window
			res, err := combine.Combine(inputs, o)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			printCombined(w, &res.Metadata)
			if res.Report != nil {
				printReport(w, res.Report)
			}
			for _, f := range res.Files {
				fmt.Fprintf(w, "wrote %s\n", f)
			}
			if res.Report != nil && !noFail {
				return verdict(res.Report, "combine --validate", "; the outputs are written")
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&traces, "traces", nil, "per-node XSpace or Kineto files (repeat or comma-separate)")
	f.StringSliceVar(&snapshots, "snapshots", nil, "per-node snapshot files, in the order of --traces")
	f.StringVar(&offsetsPath, "offsets", "", "GraphCalc offsets.jsonl, or a legacy midpoint file")
	f.StringVar(&runDir, "run-dir", "", "run directory (with --auto-discover; default place of the outputs)")
	f.BoolVar(&autoDiscover, "auto-discover", false, "find the inputs in --run-dir")
	f.StringVar(&output, "output", "", "combined XSpace path (default <run-dir or .>/combined.xplane.pb)")
	f.BoolVar(&noCorrection, "no-correction", false, "merge and rename only; keep every timestamp")
	f.BoolVar(&printEvents, "print-events", false, "print every event with its aligned time")
	f.StringVar(&planePrefix, "plane-prefix", "", "prefix for the /node:<id> plane names, e.g. /clusterA")
	f.BoolVar(&doValidate, "validate", false, "check collective happens-before on the result; exit 1 on violations or when nothing was compared")
	f.BoolVar(&noFail, "no-fail", false, "with --validate: exit 0 whatever the check finds")
	f.BoolVar(&noJSON, "no-trace-json", false, "skip the Chrome trace export")
	f.StringVar(&window, "window", combine.WindowAll, "what the Chrome and Perfetto traces span: all, or workload (the traced workload's span; the XSpace keeps everything)")
	f.BoolVar(&noPerfetto, "no-perfetto", false, "skip the native Perfetto trace (<base>.perfetto-trace)")
	f.StringVar(&kinetoOut, "kineto-out", "", "directory for the aligned Kineto traces (default <base>.kineto beside --output)")
	f.BoolVar(&noKinetoOut, "no-kineto-out", false, "write no aligned Kineto traces")
	f.StringVar(&layout, "layout", "default", "where the combined XSpace goes: default (--output) or tensorboard (<dir of --output>/plugins/profile/<run>/<host>.xplane.pb, for tensorboard --logdir)")
	f.StringVar(&tbRun, "tb-run", "", "with --layout tensorboard: the profile run's name (default the --run-dir's name, else "+combine.DefaultTensorBoardRun+")")
	f.StringVar(&tbHost, "tb-host", "", "with --layout tensorboard: the host name xprof shows (default "+combine.DefaultTensorBoardHost+")")
	f.IntVar(&ranksPerNode, "ranks-per-node", 0, "Kineto ranks per node, placed as torchrun does (rank r on node r/N): a node's ranks share its clock model; 0: one rank per node")
	return cmd
}

func newValidateCmd() *cobra.Command {
	var (
		output string
		noFail bool
	)
	cmd := &cobra.Command{
		Use:   "validate TRACE...",
		Short: "Check collective happens-before across nodes",
		Long: `Check that no collective appears to end on one node before it started on
another. Each TRACE is an XSpace (*.xplane.pb: per-node files, one node each,
or a combined trace, whose planes carry their node_id) or a PyTorch profiler
(Kineto) JSON trace, plain or gzipped (one node each). For XSpace the
collectives are the GPU events whose name contains rccl or nccl and that
carry hlo_op, named by hlo_op; for Kineto the NCCL/RCCL kernels, named by
the collective PyTorch recorded for them ("Collective name", or the
nccl:<name> annotation the kernel was launched under; else the kernel's
name), with their process group, sequence number and message size where
the trace records them.

Every two nodes pair their invocations within each process group: by
sequence number when both record one for every invocation of the group;
otherwise in time order, aligning the two sequences on (name, message size)
as their longest common subsequence, the pairs nearest the diagonal among
ties, so that an invocation one node's trace lacks (a later start, a sampled
trace) leaves its counterpart unpaired instead of shifting later pairs.
Each pair is compared: a violation when one ends before the other starts,
an overlap otherwise; warnings for missing ops and unpaired invocations.
Prints "Violations: X, Overlaps: Y, Warnings: Z", then how the pairs were
made and how many invocations found no counterpart ("pairing: 4 pairs by
name, message size and order within the process group; 12 invocations
without a counterpart"), then how many nodes it saw out of how many the
traces declare (a Kineto trace's distributedInfo.world_size, an XSpace
plane's world_size stat; "Nodes: 2 of 128 declared; missing: 2-127", or
"Nodes: 3 (the traces declare no total)"), with a warning line when
declared nodes are missing or the traces disagree about their number. Only
the nodes present are checked: counts of 0 say nothing about the missing
ones. --output writes the JSON report, with every warning.

When the check compares nothing (one node's trace, traces without
collectives, no collective on two nodes) it prints "nothing to compare: "
and why, instead of counts of 0. A snapshot-pairs file (node<i>.snapshots.pb)
is not a trace: it is skipped, with a line that says so.

Exit status: 1 when the check finds violations or compares nothing, with
the reason on stderr; 0 when every compared pair overlaps. --no-fail exits
0 in every case where the traces could be read.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			w := cmd.OutOrStdout()
			var nodes []validate.Node
			var traces []validate.Trace
			records := map[string]*xspace.TraceRecord{}
			for i, path := range args {
				var got []validate.Node
				var err error
				if filepath.Ext(path) == ".pb" {
					var tr *validate.Trace
					if got, tr, err = loadXSpace(path, i, records); tr != nil {
						traces = append(traces, *tr)
					}
				} else {
					got, err = loadCollectives(path, i)
				}
				if errors.Is(err, errSnapshotFile) {
					fmt.Fprintf(w, "skipped %s: %v\n", path, err)
					continue
				}
				if err != nil {
					return err
				}
				nodes = append(nodes, got...)
			}
			rep := validate.CheckTraces(nodes, traces)
			if output != "" {
				if err := xspace.WriteFile(output, rep.WriteJSON); err != nil {
					return err
				}
			}
			printReport(w, rep)
			if noFail {
				return nil
			}
			return verdict(rep, "validate", "")
		},
	}
	cmd.Flags().StringVar(&output, "output", "", "write the JSON report to `FILE`")
	cmd.Flags().BoolVar(&noFail, "no-fail", false, "exit 0 even when the check finds violations or compares nothing")
	return cmd
}

// printReport prints a validate report's counts and how its pairs were
// made (or, when it compared no pair of invocations, "nothing to compare: "
// and why), the nodes it saw against those declared (when it saw any), and
// the warnings about missing nodes.
func printReport(w io.Writer, rep *validate.Report) {
	if why := rep.NothingCompared(); why != "" {
		fmt.Fprintf(w, "nothing to compare: %s\n", why)
	} else {
		fmt.Fprintln(w, rep.Summary())
		fmt.Fprintln(w, rep.Pairing())
	}
	if len(rep.Nodes) > 0 {
		fmt.Fprintln(w, rep.Coverage())
		for _, warn := range rep.CoverageWarnings() {
			fmt.Fprintf(w, "warning: %s\n", warn)
		}
	}
	for _, line := range rep.TraceCounts() {
		fmt.Fprintln(w, line)
	}
	for _, warn := range rep.TraceWarnings() {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
}

// verdict is the exit status of a check whose report was printed: an
// error (exit 1) when it found violations or compared nothing. what names
// the command; more is added to the message.
func verdict(rep *validate.Report, what, more string) error {
	switch {
	case rep.Compared == 0:
		return fmt.Errorf("%s compared nothing, so it found no result%s (--no-fail exits 0)", what, more)
	case rep.Violations > 0:
		n := fmt.Sprintf("%d violations", rep.Violations)
		if rep.Violations == 1 {
			n = "1 violation"
		}
		return fmt.Errorf("%s found %s: collectives that end on one node before their counterpart starts on another%s (--no-fail exits 0)",
			what, n, more)
	}
	return nil
}

// printCombined prints what combine did, one row per node; the times of
// each column in one unit, named in its header.
func printCombined(w io.Writer, md *combine.Metadata) {
	fmt.Fprintf(w, "combined %s nodes, %s planes, %s events\n", harness.Count(len(md.Nodes)), harness.Count(md.Planes), harness.Count(md.Events))
	var corr, unc []float64
	for _, n := range md.Nodes {
		corr = append(corr, float64(n.MaxCorrectionNS))
		unc = append(unc, n.UncertaintyP50NS)
	}
	cu, uu := harness.UnitFor(corr...), harness.UnitFor(unc...)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "node\thost\tplanes\tevents\tmax correction (%s)\tuncertainty p50 (%s)\tsnapshot pairs\toffset windows\t\n", cu.Name, uu.Name)
	for _, n := range md.Nodes {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", n.ID, n.Hostname, harness.Count(n.TracePlanes), harness.Count(n.Events+n.UntimedEvents),
			cu.Format(float64(n.MaxCorrectionNS)), uu.Format(n.UncertaintyP50NS), harness.Count(n.SnapshotPairs), harness.Count(n.OffsetWindows))
	}
	tw.Flush()
	if line := recordLine(md); line != "" {
		fmt.Fprintln(w, line)
	}
	for _, n := range md.Nodes {
		if n.Format == "kineto" && n.Snapshots != "" {
			u := harness.UnitFor(float64(n.GPUConversionCorrectionMaxNS))
			fmt.Fprintf(w, "node %d: the snapshot pairs moved its GPU events by up to %s %s from the profiler's own conversion to host time\n",
				n.ID, u.Format(float64(n.GPUConversionCorrectionMaxNS)), u.Name)
		}
	}
}

// recordLine says whether the XSpace inputs' counts were checked against
// what their runs recorded (a traces.json beside them; combine refuses a
// trace whose counts differ): "counts: as their runs recorded
// (traces.json), nodes 0-3", "counts: no record to compare with
// (traces.json), nodes 0-3: what the files hold, unchecked"; "" without
// XSpace inputs.
func recordLine(md *combine.Metadata) string {
	var with, without []int
	for _, n := range md.Nodes {
		switch {
		case n.Format == "kineto":
		case n.Recorded != nil:
			with = append(with, n.ID)
		default:
			without = append(without, n.ID)
		}
	}
	var parts []string
	if len(with) > 0 {
		parts = append(parts, fmt.Sprintf("as their runs recorded (%s), %s", xspace.FileTraceRecord, idList(with)))
	}
	if len(without) > 0 {
		parts = append(parts, fmt.Sprintf("no record to compare with (%s), %s: what the files hold, unchecked", xspace.FileTraceRecord, idList(without)))
	}
	if len(parts) == 0 {
		return ""
	}
	return "counts: " + strings.Join(parts, "; ")
}

// idList names ascending node ids, runs as ranges: "node 2", "nodes
// 0-3, 7".
func idList(ids []int) string {
	var parts []string
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		p := strconv.Itoa(ids[i])
		if j > i {
			p += "-" + strconv.Itoa(ids[j])
		}
		parts = append(parts, p)
		i = j + 1
	}
	if len(ids) == 1 {
		return "node " + parts[0]
	}
	return "nodes " + strings.Join(parts, ", ")
}

// errSnapshotFile marks a validate input that is a snapshot-pairs file,
// not a trace.
var errSnapshotFile = errors.New("a snapshot-pairs file (node<i>.snapshots.pb), not a trace: it has no collectives")

// loadCollectives reads one trace for validate: XSpace by its extension,
// otherwise Kineto JSON. Node ids come from the planes' node_id stats,
// node<i> file names, a Kineto trace's rank, or the argument's position;
// the number of nodes declared from world_size (see combine.Collectives,
// validate.FromKineto). A snapshot-pairs file gives errSnapshotFile.
func loadCollectives(path string, pos int) ([]validate.Node, error) {
	node := pos
	if n, ok := combine.NodeOf(path); ok {
		node = n
	}
	if filepath.Ext(path) == ".pb" {
		got, _, err := loadXSpace(path, pos, nil)
		return got, err
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

// loadXSpace reads an XSpace trace for validate, as loadCollectives does,
// and also returns what the file holds (its size, planes and events) and,
// when the traces.json beside it records the file (records caches them by
// directory; nil reads none), what its run recorded. The trace's node is
// the one its collectives name, -1 when they name several (a combined
// trace), else its node<i> name's or its position's. A snapshot-pairs file
// gives errSnapshotFile.
func loadXSpace(path string, pos int, records map[string]*xspace.TraceRecord) ([]validate.Node, *validate.Trace, error) {
	node := pos
	if n, ok := combine.NodeOf(path); ok {
		node = n
	}
	space, counts, err := xspace.ReadCounted(path)
	if err != nil {
		return nil, nil, err
	}
	if snapshotFile(space, path) {
		return nil, nil, errSnapshotFile
	}
	got := combine.Collectives(space, node, path)
	tr := &validate.Trace{Source: path, Node: node, Counts: counts}
	for i, n := range got {
		if i == 0 {
			tr.Node = n.ID
		} else if n.ID != tr.Node {
			tr.Node = -1
		}
	}
	if records == nil {
		return got, tr, nil
	}
	dir := filepath.Dir(path)
	rec, seen := records[dir]
	if !seen {
		if rec, err = xspace.ReadTraceRecord(dir); err != nil {
			return nil, nil, err
		}
		records[dir] = rec
	}
	if e, ok := rec.Lookup(filepath.Base(path)); ok && !otherRun(space, rec.RunID) {
		tr.Recorded = &e.Counts
	}
	return got, tr, nil
}

// otherRun reports whether space's planes carry a run_id stat other than
// runID (a record of another run is no record of the trace); false when
// either is unknown.
func otherRun(space *xplanepb.XSpace, runID string) bool {
	if runID == "" {
		return false
	}
	for _, p := range space.GetPlanes() {
		if st, ok := xspace.StatByName(p, p.GetStats(), "run_id"); ok && xspace.StatString(p, st) != runID {
			return true
		}
	}
	return false
}

// snapshotFile reports whether space, read from path as an XSpace, is a
// snapshot-pairs file: its "planes" (the pairs, field 1 of both messages)
// have neither a name nor a line, which an XSpace's never lack, and the
// file reads as SnapshotPairs with a pair that holds a clock reading (an
// XSpace of empty planes reads as pairs of zeros: it is an empty trace,
// not a snapshot file).
func snapshotFile(space *xplanepb.XSpace, path string) bool {
	if len(space.Planes) == 0 {
		return false
	}
	for _, p := range space.Planes {
		if p.Name != "" || len(p.Lines) > 0 {
			return false
		}
	}
	sp, err := xspace.ReadSnapshots(path)
	if err != nil {
		return false
	}
	for _, q := range sp.Pairs {
		if q.GetSysClockNs() != 0 || q.GetTracerClockNs() != 0 {
			return true
		}
	}
	return false
}
