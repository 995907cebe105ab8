//go:build !race

// docs/figures.md: the simulated figures the README and docs/ quote,
// rendered from what TestAccept's runs measured, and the copies of its
// tables that the README and docs/*.md hold between <!-- figures:KEY -->
// markers. `make figures` rewrites them (the -update flag); otherwise
// TestAccept/figures fails while any of them differs from what the code
// gives, naming that command.

package harness

import (
	"flag"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chronosync/chronosync/harness/pingrun"
	"github.com/chronosync/chronosync/harness/syncrun"

	"github.com/chronosync/chronosync/analysis/groundtruth"
	"github.com/chronosync/chronosync/analysis/offsets"
	"github.com/chronosync/chronosync/analysis/stats"
	"github.com/chronosync/chronosync/estimate"
	"github.com/chronosync/chronosync/scenario"
)

const (
	// figuresFile is docs/figures.md, from the package's directory.
	figuresFile = "../docs/figures.md"
	// figuresCommand regenerates figuresFile.
	figuresCommand = "make figures (go test -count=1 -run '^TestAccept$' ./harness/ -update)"
	// updateFlag names the test flag that rewrites figuresFile.
	updateFlag = "update"
	// platformPrefix starts the line of figuresFile that names the
	// platform its figures were generated on.
	platformPrefix = "Platform: "
)

// init registers -update. The flag's value lives in the flag package's
// command line, read back by updatingFigures, so that this package holds
// no mutable state of its own.
func init() {
	flag.Bool(updateFlag, false, "rewrite docs/figures.md from TestAccept's runs")
}

// updatingFigures reports whether the test binary was given -update.
func updatingFigures() bool {
	f := flag.Lookup(updateFlag)
	return f != nil && f.Value.String() == "true"
}

// docFigures collects what TestAccept's runs measured, in the order they
// ran, and which of them failed or did not run (a -run filter): the page
// is rendered only from a complete, passing set.
type docFigures struct {
	runs       []libraryFigures
	steps      []stepFigures
	asym       []asymFigures
	incomplete []string
}

// libraryFigures is one library scenario's run.
type libraryFigures struct {
	Name        string
	Description string
	Summary     Summary
	// Calibration is nil for a scenario that is not a sync run.
	Calibration *CalibrationResult
}

// stepFigures is one run of TestAccept/steps: train4's workload on 8
// nodes with node Node's clock stepped by By at 11s.
type stepFigures struct {
	Node int
	By   time.Duration
	// TrueAt is the node's clock reading when it stepped.
	TrueAt float64
	Trace  syncrun.TraceSummary
	// Recorded are the steps offsets.jsonl records on the stepped node.
	Recorded []offsets.Step
	// Within3 of Points node-round errors lie within 3 of their σ.
	Points, Within3 int
}

// asymFigures is one run of TestAccept/asymmetric-link: a ring or a full
// mesh of Nodes nodes whose link 2→3 has 10µs more delay one way.
type asymFigures struct {
	Topology string
	Nodes    int
	// Round3 is rounds.jsonl's line of round 3.
	Round3 offsets.Round
	// Largest is the node-round error of largest magnitude, with its σ;
	// WorstSigmas the largest |error|/σ over the Points node-round errors.
	Largest     groundtruth.PointError
	Points      int
	WorstSigmas float64
}

// addRun records a library run from its result, calibration and run
// directory (whose scenario.yaml gives the description).
func (f *docFigures) addRun(t *testing.T, res *Result, dir string, cal *CalibrationResult) {
	t.Helper()
	sc, err := scenario.Load(filepath.Join(dir, FileScenario))
	if err != nil {
		t.Fatal(err)
	}
	f.runs = append(f.runs, libraryFigures{Name: sc.Name, Description: sc.Description, Summary: res.Summary, Calibration: cal})
}

// check renders the page, and the copies of its tables in the README and
// docs/, and compares them with the files; with -update it writes the
// files that differ.
func (f *docFigures) check(t *testing.T) {
	if len(f.incomplete) > 0 {
		msg := fmt.Sprintf("docs/figures.md needs every run of TestAccept; %s failed or did not run", strings.Join(f.incomplete, ", "))
		if updatingFigures() {
			t.Fatal(msg + ": not rewritten")
		}
		t.Skip(msg + ": not checked")
	}
	tables := map[string]string{}
	for _, ft := range f.tables() {
		tables[ft.key] = ft.text
	}
	paths, err := figureCopyFiles()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{figuresFile: f.render()} // by path: what the file should hold
	have := map[string]string{}
	for _, path := range append([]string{figuresFile}, paths...) {
		b, err := os.ReadFile(path)
		if err != nil && (path != figuresFile || !updatingFigures()) {
			t.Fatalf("%v; generate it with %s", err, figuresCommand)
		}
		have[path] = string(b)
		if path == figuresFile {
			continue
		}
		copied, err := replaceFigureCopies(string(b), tables)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		want[path] = copied
	}
	if updatingFigures() {
		for _, path := range append([]string{figuresFile}, paths...) {
			if w, ok := want[path]; ok && w != have[path] {
				if err := os.WriteFile(path, []byte(w), 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("wrote %s", path)
			}
		}
		return
	}
	if have[figuresFile] != want[figuresFile] {
		if p := committedPlatform(have[figuresFile]); p != "" && p != figuresPlatform() {
			t.Skipf("docs/figures.md was generated on %s and this is %s, whose floating point may round differently (docs/decisions.md, scope of determinism): not checked", p, figuresPlatform())
		}
	}
	for _, path := range append([]string{figuresFile}, paths...) {
		w, ok := want[path]
		if !ok || w == have[path] {
			continue
		}
		// One line: make accept shows only the lines that name this file.
		line, had, gives := firstDifferentLine(have[path], w)
		t.Errorf("%s is stale: its line %d reads %q where the runs give %q; regenerate it with %s and commit it",
			strings.TrimPrefix(path, "../"), line, had, gives, figuresCommand)
	}
}

// figureCopyFiles returns the documents that may copy the page's tables:
// the README and every other page of docs/.
func figureCopyFiles() ([]string, error) {
	docs, err := filepath.Glob("../docs/*.md")
	if err != nil {
		return nil, err
	}
	paths := []string{"../README.md"}
	for _, d := range docs {
		if d != figuresFile {
			paths = append(paths, d)
		}
	}
	return paths, nil
}

// The markers around a copy of one of the page's tables in another
// document: "<!-- figures:KEY -->" and "<!-- /figures:KEY -->" on lines of
// their own, KEY being the table's (sync/mesh8-jitter, rounds,
// calibration, trace/train4, steps, asymmetric-link, ping/quickstart).
const (
	copyBegin = "<!-- figures:"
	copyEnd   = "<!-- /figures:"
	copyClose = " -->"
)

// replaceFigureCopies returns doc with what lies between each pair of
// markers replaced by the table they name, set off by blank lines.
func replaceFigureCopies(doc string, tables map[string]string) (string, error) {
	lines := strings.SplitAfter(doc, "\n")
	var out strings.Builder
	for i := 0; i < len(lines); i++ {
		out.WriteString(lines[i])
		l := strings.TrimSpace(lines[i])
		key, ok := strings.CutPrefix(l, copyBegin)
		if !ok {
			continue
		}
		key, ok = strings.CutSuffix(key, copyClose)
		if !ok {
			return "", fmt.Errorf("line %d: %q: want %sKEY%s", i+1, l, copyBegin, copyClose)
		}
		table, ok := tables[key]
		if !ok {
			known := slices.Sorted(maps.Keys(tables))
			return "", fmt.Errorf("line %d: no table %q in docs/figures.md; it has %s", i+1, key, strings.Join(known, ", "))
		}
		end := copyEnd + key + copyClose
		j := i + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) != end {
			j++
		}
		if j == len(lines) {
			return "", fmt.Errorf("line %d: %s has no %s after it", i+1, l, end)
		}
		out.WriteString("\n" + table + "\n")
		i = j - 1 // the end marker is written next
	}
	return out.String(), nil
}

// figuresPlatform is the platform the figures are generated on.
func figuresPlatform() string { return runtime.GOOS + "/" + runtime.GOARCH }

// committedPlatform returns the platform a rendered page names, or "".
func committedPlatform(page string) string {
	for l := range strings.Lines(page) {
		if rest, ok := strings.CutPrefix(l, platformPrefix); ok {
			p, _, _ := strings.Cut(strings.TrimPrefix(rest, "`"), "`")
			return p
		}
	}
	return ""
}

// firstDifferentLine returns the number of the first line in which a and b
// differ, and that line of each ("(end of file)" past the end).
func firstDifferentLine(a, b string) (int, string, string) {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	at := func(ls []string, i int) string {
		if i < len(ls) {
			return ls[i]
		}
		return "(end of file)"
	}
	i := 0
	for i < len(la) && i < len(lb) && la[i] == lb[i] {
		i++
	}
	return i + 1, at(la, i), at(lb, i)
}

// figureTable is one table of the page under the key by which other
// documents copy it (see copyFigureTables).
type figureTable struct {
	key, text string
}

// tables returns the page's tables, in the page's order.
func (f *docFigures) tables() []figureTable {
	var ts []figureTable
	for _, r := range f.runs {
		if r.Summary.Sync != nil {
			ts = append(ts, figureTable{"sync/" + r.Name, syncTable(r.Summary.Sync)})
		}
	}
	ts = append(ts, figureTable{"rounds", roundsTable(f.runs)}, figureTable{"calibration", calibrationTable(f.runs)})
	for _, r := range f.runs {
		if r.Summary.Trace != nil {
			ts = append(ts, figureTable{"trace/" + r.Name, traceTable(r.Summary.Trace)})
		}
	}
	ts = append(ts, figureTable{"steps", stepsTable(f.steps)}, figureTable{"asymmetric-link", asymTable(f.asym)})
	for _, r := range f.runs {
		if r.Summary.Ping != nil {
			ts = append(ts, figureTable{"ping/" + r.Name, pingTable(r.Summary.Ping)})
		}
	}
	return ts
}

// render writes the page.
func (f *docFigures) render() string {
	tables := map[string]string{}
	for _, t := range f.tables() {
		tables[t.key] = t.text
	}
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p(`# Figures

<!-- Generated by make figures from TestAccept's runs; do not edit by hand. -->

Every figure on this page comes from the acceptance runs of `+"`TestAccept`"+`
(harness/accept_test.go): the scenario library in the simulator, each
scenario with the seed in its file, train4's workload with clock steps, and
one asymmetric link in rings and meshes. `+"`make figures`"+` reruns them and
rewrites this page, and the copies of its tables in the README and docs/
(between `+"`<!-- figures:KEY -->`"+` markers); `+"`make accept`"+` (part of
`+"`make test`"+`) reruns them and fails while this page or a copy differs
from what they give. The simulator is deterministic (the same scenario,
seed and build give the same run, byte for byte), so the page changes when
the code does, and only then.

%s`+"`%s`"+` (a simulated run is exact on one platform; on another the
floating-point arithmetic may round differently, and the check says so
rather than fail).

Times are rounded to three significant digits (whole ns from 10 ns up);
drifts in ppm to three significant digits.

`, platformPrefix, figuresPlatform())

	p("## Sync accuracy\n\n")
	p("|error| of every node's clock model against true time, relative to the\n" +
		"reference node, at the start, middle and end of every window from round\n" +
		"`converged_from` on (summary.json's `sync`; `chronosync run NAME` prints it).\n" +
		"\"exported\" is offsets.jsonl, what the run's own estimator gave; the other\n" +
		"rows are every estimator re-run with GraphCalc on the same recorded probe\n" +
		"stream (`chronosync estimate RUN_DIR`). \"converged at\" is the first round\n" +
		"from which every round's worst |error| stays under 1 µs.\n\n")
	for _, r := range f.runs {
		sy := r.Summary.Sync
		if sy == nil {
			continue
		}
		p("### %s (seed %d)\n\n%s\n\n", r.Name, r.Summary.Seed, r.Description)
		p("Mode `%s`, %d rounds, reference node %d, |error| from round %d; %s probe pairs sent, %s probes lost.\n\n",
			sy.Mode, sy.Rounds, sy.Reference, sy.ConvergedFrom, figGroup(float64(sy.Probes.PairsSent)), figGroup(float64(sy.Probes.Lost)))
		p("%s\n", tables["sync/"+r.Name])
		if sy.Mode == "consensus" {
			p("Per window of the reference node, the worst |error| of any node:\n\n")
			p("| window | nodes | p99 | max |\n|---|---|---|---|\n")
			for _, pr := range sy.Online.PerRound {
				p("| %d | %d | %s | %s |\n", pr.Round, pr.Nodes, figNS(pr.OffsetP99NS), figNS(pr.OffsetMaxNS))
			}
			p("\n")
		}
	}

	p("## Rounds\n\n")
	p("The control plane of the runs with a master, on its clock (p50 over the\n" +
		"rounds; summary.json's `sync.control`): from ROUND_END to the next\n" +
		"ROUND_START, how long the master waited for the reports, how far apart\n" +
		"the nodes' ROUND_STARTs arrived, the NodeWindowData gathered per round\n" +
		"(mean), and the retries.\n\n")
	p("%s\n", tables["rounds"])

	p("## Calibration\n\n")
	p("Do the reported uncertainties contain the errors? Every node-round error\n" +
		"from round `from` on, at the window's start, middle and end, in units of\n" +
		"the 1σ its records report, as `chronosync calibrate RUN_DIR` prints it\n" +
		"(a run is calibrated when at least 99%% of the points lie within 3σ).\n" +
		"The real backend's scenarios (real2-idle, real2-onoff, real4-jitter) are\n" +
		"run here in the simulator.\n\n")
	p("%s\n", tables["calibration"])

	for _, r := range f.runs {
		tr := r.Summary.Trace
		if tr == nil {
			continue
		}
		p("## Trace pipeline: %s (seed %d)\n\n%s\n\n", r.Name, r.Summary.Seed, r.Description)
		p("`chronosync validate` on the raw per-node traces (each on its own tracer\n"+
			"clock) and on the combined trace; then the %s events (on %d nodes; %d\n"+
			"snapshot pairs) aligned onto the global timeline against their true\n"+
			"start, in ns and in the σ each event reports (summary.json's `trace`):\n\n",
			figGroup(float64(tr.Events)), tr.Nodes, tr.Snapshots)
		p("%s\n", tables["trace/"+r.Name])
	}

	p("## Clock steps in the trace pipeline\n\n")
	p("train4's workload on 8 nodes, with one node's host clock stepped at 11 s of\n" +
		"true time, inside round 6's window while the training runs\n" +
		"(`TestAccept/steps`). The combined trace's validate figures and alignment\n" +
		"errors, the step offsets.jsonl records on the stepped node (size ± 1σ;\n" +
		"where, on the node's clock, ± the half-width of its bracket), and the\n" +
		"node-round errors of the clock models within 3σ:\n\n")
	p("%s\n", tables["steps"])

	p("## One asymmetric link\n\n")
	p("Rings and full meshes of 4, 6 and 8 nodes on 50 µs links whose link 2→3\n" +
		"has 10 µs more delay one way (`TestAccept/asymmetric-link`; svm, 2 s\n" +
		"windows, 6 rounds). Round 3's consistency (rounds.jsonl), what GraphCalc\n" +
		"did about it, and every node-round error from round 3 on against its\n" +
		"reported σ:\n\n")
	p("%s\n", tables["asymmetric-link"])

	for _, r := range f.runs {
		pg := r.Summary.Ping
		if pg == nil {
			continue
		}
		p("## Ping: %s (seed %d)\n\n%s\n\n", r.Name, r.Summary.Seed, r.Description)
		p("%s pings sent, %s replies; the round trip without the peer's turnaround, and\n"+
			"|NTP offset estimate − true offset| (summary.json's `ping`):\n\n", figGroup(float64(pg.Sent)), figGroup(float64(pg.Received)))
		p("%s\n", tables["ping/"+r.Name])
	}
	return b.String()
}

// syncTable is a sync run's accuracy: what it exported, then every
// estimator on the same probe stream.
func syncTable(sy *syncrun.SyncSummary) string {
	var b strings.Builder
	b.WriteString("| estimator | p50 | p95 | p99 | max | drift p99 (ppm) | drift max (ppm) | converged at |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	row := func(name string, a groundtruth.Accuracy) {
		conv := "never"
		if a.ConvergedRound > 0 {
			conv = fmt.Sprintf("round %d", a.ConvergedRound)
		}
		e := a.OffsetError
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", name,
			figNS(e.P50), figNS(e.P95), figNS(e.P99), figNS(e.Max), figPPM(a.DriftError.P99), figPPM(a.DriftError.Max), conv)
	}
	exported := "**exported** (" + sy.Estimator + ")"
	if sy.Mode == "consensus" {
		exported = "**exported** (consensus, " + sy.Estimator + " fits)"
	}
	row(exported, sy.Online)
	for _, k := range estimate.Kinds() {
		if a, ok := sy.Estimators[string(k)]; ok {
			row(string(k), a)
		}
	}
	return b.String()
}

// roundsTable is the control-plane figures of every run with a master.
func roundsTable(runs []libraryFigures) string {
	var b strings.Builder
	b.WriteString("| run | rounds | ROUND_END→ROUND_START | gather wait | sequence skew | bytes per round | retries |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, r := range runs {
		sy := r.Summary.Sync
		if sy == nil || sy.Control.EndToStart.N == 0 {
			continue
		}
		c := sy.Control
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %d |\n", r.Name, sy.Rounds,
			figNS(c.EndToStart.P50), figNS(c.GatherWait.P50), figNS(c.SequenceSkew.P50), figGroup(math.Round(c.MessageBytes.Mean)), c.Retries)
	}
	return b.String()
}

// calibrationTable is every sync run's calibration, one row per run as
// `chronosync calibrate` prints it.
func calibrationTable(runs []libraryFigures) string {
	var b strings.Builder
	b.WriteString("| run | from | points | ≤1σ | ≤2σ | ≤3σ | max σ | RMS σ | \\|err\\| p50 | p99 | σ p50 | |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range runs {
		c := r.Calibration
		if c == nil {
			continue
		}
		verdict := "ok"
		if !c.Calibrated() {
			verdict = "NOT CALIBRATED"
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %.1f%% | %.1f%% | %.2f%% | %.2f | %.2f | %s | %s | %s | %s |\n",
			r.Name, c.From, c.Points, 100*c.Within1, 100*c.Within2, 100*c.Within3, c.Sigmas.Max, c.RMSSigmas,
			figNS(c.ErrorNS.P50), figNS(c.ErrorNS.P99), figNS(c.SigmaNS.P50), verdict)
	}
	return b.String()
}

// traceTable is a traced run's happens-before checks and alignment errors.
func traceTable(tr *syncrun.TraceSummary) string {
	var b strings.Builder
	b.WriteString("| | violations | overlaps | warnings |\n|---|---|---|---|\n")
	fmt.Fprintf(&b, "| raw per-node traces | %d | %d | %d |\n", tr.Raw.Violations, tr.Raw.Overlaps, tr.Raw.Warnings)
	fmt.Fprintf(&b, "| combined trace | %d | %d | %d |\n\n", tr.Combined.Violations, tr.Combined.Overlaps, tr.Combined.Warnings)
	fmt.Fprintf(&b, "| %s of %s events aligned | p50 | p95 | p99 | max |\n|---|---|---|---|---|\n",
		figGroup(float64(tr.AlignedEvents)), figGroup(float64(tr.Events)))
	e, s := tr.ErrorNS, tr.ErrorSigmas
	fmt.Fprintf(&b, "| \\|aligned − true start\\| | %s | %s | %s | %s |\n", figNS(e.P50), figNS(e.P95), figNS(e.P99), figNS(e.Max))
	fmt.Fprintf(&b, "| the same in reported σ | %.2f | %.2f | %.2f | %.2f |\n", s.P50, s.P95, s.P99, s.Max)
	return b.String()
}

// stepsTable is the clock-step runs.
func stepsTable(steps []stepFigures) string {
	var b strings.Builder
	b.WriteString("| step | violations | aligned events | \\|err\\| p50 | p99 | max | p99 σ | max σ | recorded size | truth | recorded at (ns) | truth (ns) | within 3σ |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range steps {
		tr := s.Trace
		size, at := "none", "none"
		if len(s.Recorded) == 1 {
			st := s.Recorded[0]
			size = fmt.Sprintf("%s ± %.1f ns", figGroup(math.Round(st.SizeNS)), st.SizeUncertaintyNS)
			at = fmt.Sprintf("%s ± %s", figGroup(float64(st.AtNS)), figGroup(math.Round(st.AtUncertaintyNS)))
		} else if len(s.Recorded) > 1 {
			size, at = fmt.Sprintf("%d steps", len(s.Recorded)), "-"
		}
		by := s.By.String()
		if s.By > 0 {
			by = "+" + by
		}
		fmt.Fprintf(&b, "| %s on node %d | %d | %s of %s | %s | %s | %s | %.2f | %.2f | %s | %s ns | %s | %s | %d of %d |\n",
			by, s.Node, tr.Combined.Violations, figGroup(float64(tr.AlignedEvents)), figGroup(float64(tr.Events)),
			figNS(tr.ErrorNS.P50), figNS(tr.ErrorNS.P99), figNS(tr.ErrorNS.Max), tr.ErrorSigmas.P99, tr.ErrorSigmas.Max,
			size, figGroup(float64(s.By.Nanoseconds())), at, figGroup(math.Round(s.TrueAt)), s.Within3, s.Points)
	}
	return b.String()
}

// asymTable is the asymmetric-link runs.
func asymTable(asym []asymFigures) string {
	var b strings.Builder
	b.WriteString("| topology | round 3 χ² / dof | GraphCalc | node-round errors | largest \\|err\\| | its σ | max \\|err\\|/σ |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, a := range asym {
		r := a.Round3
		did := fmt.Sprintf("consistent after rejecting %d edges", r.Rejected)
		switch {
		case r.Inconsistent:
			did = "inconsistent: warns, uncertainties inflated"
		case r.Rejected == 0:
			did = "consistent"
		}
		fmt.Fprintf(&b, "| %s of %d | %.4g / %d | %s | %d | %s (node %d) | %s | %.2f |\n",
			strings.ReplaceAll(a.Topology, "_", " "), a.Nodes, r.Chi2, r.Chi2DOF, did, a.Points,
			figNS(math.Abs(a.Largest.ErrorNS)), a.Largest.Node, figNS(a.Largest.SigmaNS), a.WorstSigmas)
	}
	return b.String()
}

// pingTable is a ping run's round trips and offset errors.
func pingTable(pg *pingrun.Summary) string {
	var b strings.Builder
	b.WriteString("| | p50 | p95 | p99 | max |\n|---|---|---|---|---|\n")
	for _, s := range []struct {
		name string
		v    stats.Summary
	}{{"RTT", pg.RTT}, {"\\|offset error\\|", pg.OffsetError}} {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", s.name, figNS(s.v.P50), figNS(s.v.P95), figNS(s.v.P99), figNS(s.v.Max))
	}
	return b.String()
}

// figSig formats v with three significant digits in fixed notation and
// at most maxDec decimals, rounded (never truncated); "0" when that
// rounds to zero.
func figSig(v float64, maxDec int) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	dec := min(max(0, 2-int(math.Floor(math.Log10(math.Abs(v))))), maxDec)
	s := strconv.FormatFloat(v, 'f', dec, 64)
	if parseFig(s) == 0 {
		return "0"
	}
	return s
}

// figNS formats a time given in ns in the unit that suits it, with three
// significant digits but no fraction of a ns from 10 ns up: "7.7 ns",
// "65 ns", "325 ns", "1.56 µs", "3.75 ms".
func figNS(v float64) string {
	units := []struct {
		name string
		ns   float64
	}{{"ns", 1}, {"µs", 1e3}, {"ms", 1e6}, {"s", 1e9}}
	i := 0
	for i+1 < len(units) && math.Abs(v) >= units[i+1].ns {
		i++
	}
	x := v / units[i].ns
	// 999.6 ns rounds to 1000: say 1.00 µs.
	if s := figSig(x, 1); i+1 < len(units) && math.Abs(parseFig(s)) >= 1000 {
		i++
		x = v / units[i].ns
	}
	if i > 0 {
		return figSig(x, 2) + " " + units[i].name
	}
	// Whole ns from 10 ns up (9.96 too, which rounds to 10); below, one
	// decimal.
	s := figSig(x, 1)
	if math.Abs(parseFig(s)) >= 10 {
		s = figSig(x, 0)
	}
	return s + " ns"
}

// parseFig parses a figure figSig wrote.
func parseFig(s string) float64 {
	v, _ := strconv.ParseFloat(s, 64)
	return v
}

// figPPM formats a drift in ppm with three significant digits.
func figPPM(v float64) string { return figSig(v, 6) }

// figGroup formats an integral value with its thousands separated by
// commas: 10,997,751,526.
func figGroup(v float64) string {
	s := strconv.FormatFloat(math.Abs(v), 'f', 0, 64)
	var out strings.Builder
	if v < 0 {
		out.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out.WriteByte(',')
		}
		out.WriteRune(c)
	}
	return out.String()
}

// TestAcceptFigureFormats pins how docs/figures.md writes its figures:
// three significant digits, rounded, in the unit that suits each.
func TestAcceptFigureFormats(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{figNS(0), "0 ns"},
		{figNS(0.04), "0 ns"},
		{figNS(7.72), "7.7 ns"},
		{figNS(64.6), "65 ns"},
		{figNS(16), "16 ns"},
		{figNS(9.96), "10 ns"},
		{figNS(9.94), "9.9 ns"},
		{figNS(325.4), "325 ns"},
		{figNS(999.6), "1.00 µs"},
		{figNS(1557.6), "1.56 µs"},
		{figNS(13015.4), "13.0 µs"},
		{figNS(-2.5e6), "-2.50 ms"},
		{figNS(3.2e9), "3.20 s"},
		{figPPM(0.0081549), "0.00815"},
		{figPPM(1942.3), "1942"},
		{figPPM(1e-9), "0"},
		{figGroup(10997751526), "10,997,751,526"},
		{figGroup(-2000009), "-2,000,009"},
		{figGroup(999), "999"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	page := "# Figures\n\n" + platformPrefix + "`plan9/mips` (...)\n"
	if p := committedPlatform(page); p != "plan9/mips" {
		t.Errorf("committedPlatform: %q", p)
	}
	if line, a, b := firstDifferentLine("a\nb\nc", "a\nx\nc"); line != 2 || a != "b" || b != "x" {
		t.Errorf("firstDifferentLine: %d %q %q", line, a, b)
	}
	tables := map[string]string{"t/one": "| a |\n|---|\n| 1 |\n"}
	doc := "intro\n<!-- figures:t/one -->\n| a |\n| 0 |\n<!-- /figures:t/one -->\nend\n"
	want := "intro\n<!-- figures:t/one -->\n\n| a |\n|---|\n| 1 |\n\n<!-- /figures:t/one -->\nend\n"
	if got, err := replaceFigureCopies(doc, tables); err != nil || got != want {
		t.Errorf("replaceFigureCopies:\n%s\n%v; want\n%s", got, err, want)
	}
	if got, err := replaceFigureCopies(want, tables); err != nil || got != want {
		t.Errorf("replaceFigureCopies of a fresh copy changed it:\n%s\n%v", got, err)
	}
	for _, bad := range []string{
		"<!-- figures:t/two -->\n<!-- /figures:t/two -->\n",
		"<!-- figures:t/one -->\n| a |\n",
		"<!-- figures:t/one\n",
	} {
		if _, err := replaceFigureCopies(bad, tables); err == nil {
			t.Errorf("replaceFigureCopies(%q): no error", bad)
		}
	}
}
