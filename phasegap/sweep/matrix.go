// Package sweep runs PhaseGap's experiment matrix: a file of sweeps, each
// the product of its axes (ranks, threads, halo, intensity, mode, link
// preset), over one or more transports (the simulator's model, the real
// backend's TCP streams between namespaces, MPI). Every run gets a run
// directory of its own and a line in an index CSV; a sweep that was
// interrupted resumes where it stopped, without redoing a finished run.
//
// The package plans and keeps the books; a Runner, given by the caller,
// runs one point on one transport.
package sweep

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/chronosync/chronosync/infile"
	"github.com/chronosync/chronosync/phasegap/params"
	"github.com/chronosync/chronosync/scenario"
	"github.com/chronosync/chronosync/workload/halo"
)

// The transports a point runs on.
const (
	TransportSim  = "sim"  // the simulator's model (workload/halo), virtual time
	TransportReal = "real" // the same model over the real backend's TCP streams, shaped links
	TransportMPI  = "mpi"  // the MPI benchmark (mpirun), this machine's shared memory
	// TransportMPINet is the MPI benchmark with a rank per network
	// namespace of the real backend, OpenMPI's TCP transport over its
	// links, which the shaper impairs as it does the real transport's.
	TransportMPINet = "mpi-net"
)

// Transports lists the transports in the order a sweep runs them.
func Transports() []string {
	return []string{TransportSim, TransportReal, TransportMPI, TransportMPINet}
}

// Matrix is a sweep file: what every run shares, and the sweeps.
type Matrix struct {
	// Name names the matrix (the index says it); default the file's base
	// name.
	Name string `yaml:"name"`
	// Transports are the transports every sweep runs on unless it names
	// its own; default [sim].
	Transports []string `yaml:"transports"`
	// Base are the phasegap parameters every point starts from; the axes
	// replace them.
	Base Base `yaml:"base"`
	// Link is the link every sim and real run starts from (both
	// directions of every ring edge); a point's preset is applied over it.
	Link Link `yaml:"link"`
	// Costs is the cost model's file for the sim and real runs (phasegap
	// calibrate), relative to the matrix file; "" is the model's defaults.
	Costs string `yaml:"costs"`
	// Duration caps each sim and real run; default 120s.
	Duration time.Duration `yaml:"duration"`
	// Seed is the seed of the sim and real runs; default 1.
	Seed uint64 `yaml:"seed"`
	// Sweeps are run in order.
	Sweeps []Sweep `yaml:"sweeps"`

	dir  string     // the matrix file's directory
	file string     // its path, for errors
	root *yaml.Node // its document, for the lines of errors
}

// Link is the base link of the sim and real runs: a one-way delay and its
// jitter, before a preset's settings (which replace what they set).
type Link struct {
	Delay  time.Duration `yaml:"delay"`
	Jitter time.Duration `yaml:"jitter"`
}

// Sweep is one sweep: the product of its axes. An axis left out keeps the
// base's value. Split, when given, replaces Ranks and Threads with its
// (P, T) pairs (the rank/thread split at a constant core budget).
type Sweep struct {
	Name       string   `yaml:"name"`
	Transports []string `yaml:"transports"`
	Ranks      []int    `yaml:"ranks"`
	Threads    []int    `yaml:"threads"`
	Split      [][2]int `yaml:"split"`
	Halo       []int    `yaml:"halo"`
	Flops      []int    `yaml:"flops_per_point"`
	Bytes      []int    `yaml:"bytes_per_point"`
	Modes      []string `yaml:"mode"`
	Presets    []string `yaml:"preset"`
	Progress   []string `yaml:"progress"`
}

// Limits on a sweep file, checked before anything is expanded: its size,
// its YAML nodes with every alias expanded (counted on the parsed document,
// stopping at the limit), and the points its sweeps plan (counted from the
// axes' lengths).
const (
	// MaxMatrixBytes is the largest sweep file Load and Parse accept (as
	// infile.MaxConfig, the cap of every file a person writes).
	MaxMatrixBytes = infile.MaxConfig
	// MaxPoints is the most points a sweep file may plan, all its sweeps
	// and transports together: at a second a point, more than a day.
	MaxPoints = 100_000
	// MaxMatrixNodes is the most YAML nodes a sweep file may hold with its
	// aliases expanded. A file of MaxMatrixBytes without aliases has
	// fewer (a node takes at least two bytes), so only aliases reach it.
	MaxMatrixNodes = 1 << 20
	// MaxAliasExpansion is how many times its own nodes a sweep file's
	// aliases may expand it to, beyond AliasAllowance nodes.
	MaxAliasExpansion = 10
	// AliasAllowance is the number of nodes a sweep file may always expand
	// to, whatever its own size (an axis anchored once and named by every
	// sweep): as many as the points it may plan.
	AliasAllowance = MaxPoints
)

// Load reads and checks a sweep file (a regular file of at most
// MaxMatrixBytes). Every error names the file and the line.
func Load(path string) (*Matrix, error) {
	b, err := infile.ReadFile(path, infile.SweepMatrix)
	if err != nil {
		return nil, err
	}
	return Parse(b, path)
}

// Parse decodes a sweep file's bytes; file names it in errors and relative
// paths (costs) are taken from its directory. It refuses, before decoding
// into the matrix, more than MaxMatrixBytes and a document whose aliases
// expand it beyond its node budget (MaxMatrixNodes, MaxAliasExpansion),
// and, before expanding a sweep, more than MaxPoints points.
func Parse(b []byte, file string) (*Matrix, error) {
	if len(b) > MaxMatrixBytes {
		return nil, fmt.Errorf("%s: %d bytes: larger than %d bytes (sweep.MaxMatrixBytes): expected a sweep matrix", file, len(b), MaxMatrixBytes)
	}
	m := &Matrix{file: file, dir: filepath.Dir(file)}
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, yamlError(file, err)
	}
	m.root = &root
	if err := checkNodes(&root, file); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(m); err != nil {
		return nil, yamlError(file, err)
	}
	if m.Name == "" {
		m.Name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	if len(m.Transports) == 0 {
		m.Transports = []string{TransportSim}
	}
	if m.Duration == 0 {
		m.Duration = 120 * time.Second
	}
	if m.Seed == 0 {
		m.Seed = 1
	}
	if err := m.check(); err != nil {
		return nil, err
	}
	return m, nil
}

// checkNodes refuses a document whose aliases expand it beyond
// min(MaxMatrixNodes, max(AliasAllowance, MaxAliasExpansion × its own
// nodes)), and an alias inside the node it names. It walks the parsed
// document, following aliases, and stops as soon as the count passes the
// budget: it costs at most the budget's steps, whatever the aliases ask.
func checkNodes(root *yaml.Node, file string) error {
	own := countOwn(root)
	budget := min(MaxMatrixNodes, max(AliasAllowance, MaxAliasExpansion*own))
	c := nodeCounter{limit: budget, active: map[*yaml.Node]bool{}}
	err := c.walk(root)
	if errors.Is(err, errTooManyNodes) {
		return fmt.Errorf("%s: its %d YAML nodes expand through aliases to more than %d: expected at most max(%d, %d × its nodes) and never more than %d (sweep.AliasAllowance, sweep.MaxAliasExpansion, sweep.MaxMatrixNodes)",
			file, own, budget, AliasAllowance, MaxAliasExpansion, MaxMatrixNodes)
	}
	if err != nil {
		return fmt.Errorf("%s:%w", file, err)
	}
	return nil
}

// errTooManyNodes stops nodeCounter's walk at its limit.
var errTooManyNodes = errors.New("too many nodes")

// countOwn counts the nodes of the document as written (an alias is one
// node).
func countOwn(n *yaml.Node) int {
	c := 1
	for _, ch := range n.Content {
		c += countOwn(ch)
	}
	return c
}

// nodeCounter counts a document's nodes with its aliases expanded.
type nodeCounter struct {
	n, limit int
	active   map[*yaml.Node]bool // the anchored nodes being expanded
}

// walk counts n and what it holds, following aliases; it fails with
// errTooManyNodes once the count passes c.limit, and on an alias inside
// the node it names.
func (c *nodeCounter) walk(n *yaml.Node) error {
	c.n++
	if c.n > c.limit {
		return errTooManyNodes
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return nil
		}
		if c.active[n.Alias] {
			return fmt.Errorf("%d: alias *%s is inside the node it names: expected a node that ends", n.Line, n.Value)
		}
		c.active[n.Alias] = true
		defer delete(c.active, n.Alias)
		return c.walk(n.Alias)
	}
	for _, ch := range n.Content {
		if err := c.walk(ch); err != nil {
			return err
		}
	}
	return nil
}

// yamlError turns the YAML decoder's errors ("line 3: field x not
// found in type sweep.Matrix") into "file:3: field x not found, ..."
// lines.
func yamlError(file string, err error) error {
	var te *yaml.TypeError
	msgs := []string{strings.TrimPrefix(err.Error(), "yaml: ")}
	if errors.As(err, &te) {
		msgs = te.Errors
	}
	var errs []error
	for _, msg := range msgs {
		line, rest, ok := strings.Cut(strings.TrimPrefix(msg, "line "), ": ")
		if _, err := strconv.Atoi(line); !ok || err != nil {
			errs = append(errs, fmt.Errorf("%s: %s", file, msg))
			continue
		}
		rest = strings.Replace(rest, " in type sweep.Matrix", " (expected a key of the matrix)", 1)
		rest = strings.Replace(rest, " in type sweep.Sweep", " (expected a key of a sweep)", 1)
		rest = strings.Replace(rest, " in type sweep.Base", " (expected a phasegap parameter)", 1)
		rest = strings.Replace(rest, " in type sweep.Link", " (expected delay or jitter)", 1)
		errs = append(errs, fmt.Errorf("%s:%s: %s", file, line, rest))
	}
	return errors.Join(errs...)
}

// CostsPath is the costs file's path ("" for the model's defaults).
func (m *Matrix) CostsPath() string {
	if m.Costs == "" || filepath.IsAbs(m.Costs) {
		return m.Costs
	}
	return filepath.Join(m.dir, m.Costs)
}

// CheckCosts loads and validates the costs file the matrix names (no
// file: nothing to check), as every sim and real point would: Run calls
// it before the first point, so that a bad costs file is one error, not
// one failed run per point. The error names the matrix's line and the
// costs file's.
func (m *Matrix) CheckCosts() error {
	path := m.CostsPath()
	if path == "" {
		return nil
	}
	if _, err := halo.LoadCosts(path); err != nil {
		return m.errorf([]any{"costs"}, "costs: %v (no point run)", err)
	}
	return nil
}

// errorf is an error at the line of the key path (top-level keys, then
// "sweeps", index, key), or of the nearest node that exists.
func (m *Matrix) errorf(path []any, format string, a ...any) error {
	return fmt.Errorf("%s:%d: %s", m.file, m.line(path), fmt.Sprintf(format, a...))
}

// line finds the line of a key path in the document.
func (m *Matrix) line(path []any) int {
	if m.root == nil || len(m.root.Content) == 0 {
		return 1
	}
	n := m.root.Content[0]
	line := n.Line
	for _, step := range path {
		var next *yaml.Node
		switch s := step.(type) {
		case string:
			if n.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(n.Content); i += 2 {
					if n.Content[i].Value == s {
						line, next = n.Content[i].Line, n.Content[i+1]
					}
				}
			}
		case int:
			if n.Kind == yaml.SequenceNode && s < len(n.Content) {
				next = n.Content[s]
				line = next.Line
			}
		}
		if next == nil {
			return line
		}
		n = next
	}
	return line
}

// check refuses what no run could honour: an unknown transport, mode,
// preset or progress, an empty sweep, parameters phasegap refuses.
func (m *Matrix) check() error {
	var errs []error
	for _, t := range m.Transports {
		if !slices.Contains(Transports(), t) {
			errs = append(errs, m.errorf([]any{"transports"}, "transport %q: expected one of %v", t, Transports()))
		}
	}
	if len(m.Sweeps) == 0 {
		errs = append(errs, m.errorf(nil, "no sweeps; expected sweeps: [{name: threads, threads: [1, 2], ...}]"))
	}
	if m.Link.Delay < 0 || m.Link.Jitter < 0 {
		errs = append(errs, m.errorf([]any{"link"}, "link delay %v, jitter %v: expected durations >= 0", m.Link.Delay, m.Link.Jitter))
	}
	if m.Duration < 0 {
		errs = append(errs, m.errorf([]any{"duration"}, "duration %v: expected a duration > 0", m.Duration))
	}
	names := map[string]bool{}
	for i, s := range m.Sweeps {
		at := func(key string) []any { return []any{"sweeps", i, key} }
		if s.Name == "" || strings.ContainsAny(s.Name, `/\ `) || names[s.Name] {
			errs = append(errs, m.errorf(at("name"), "sweep name %q: expected a unique name without spaces or slashes", s.Name))
		}
		names[s.Name] = true
		for _, t := range s.Transports {
			if !slices.Contains(Transports(), t) {
				errs = append(errs, m.errorf(at("transports"), "transport %q: expected one of %v", t, Transports()))
			}
		}
		for _, mode := range s.Modes {
			if !slices.Contains(params.Modes(), mode) {
				errs = append(errs, m.errorf(at("mode"), "mode %q: expected one of %v", mode, params.Modes()))
			}
		}
		for _, p := range s.Presets {
			if _, ok := scenario.LinkPreset(p); !ok {
				errs = append(errs, m.errorf(at("preset"), "unknown link preset %q; expected one of %s", p, strings.Join(scenario.LinkPresets(), ", ")))
			}
		}
		if len(s.Split) > 0 && (len(s.Ranks) > 0 || len(s.Threads) > 0) {
			errs = append(errs, m.errorf(at("split"), "split gives the (ranks, threads) pairs; expected no ranks or threads axis beside it"))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	// The points, counted from the axes before any is expanded.
	if err := m.checkCount(); err != nil {
		return err
	}
	// Every point's parameters, as phasegap checks them, one at a time.
	for i := range m.Sweeps {
		var err error
		m.eachPoint(i, func(pt Point) bool {
			if r := pt.Params.Ranks; r < 1 || r > scenario.MaxNodes {
				err = m.errorf([]any{"sweeps", i}, "sweep %s, point %s: %d ranks: expected 1 to %d (scenario.MaxNodes)", pt.Sweep, pt.ID(), r, scenario.MaxNodes)
			} else if _, verr := pt.Params.Validate(pt.Params.Ranks); verr != nil {
				err = m.errorf([]any{"sweeps", i}, "sweep %s, point %s: %v", pt.Sweep, pt.ID(), verr)
			}
			return err == nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
